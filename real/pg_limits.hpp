// PostgreSQL's own limits, read from the server: max_connections (minus
// superuser_reserved_connections and the sessions already there) bounds the
// connections every pod's pool opens; max_locks_per_transaction x
// (max_connections + max_prepared_transactions) sizes the shared lock table
// that advisory and tuple locks live in. `lockbench lint --db` reads them, and
// a real run refuses at start, in one line, pools the server cannot take.
#pragma once

#include <string>

#include "core/settings.hpp"

namespace lockbench::real {

struct PgLimits {
  int max_connections = 0;
  int reserved_connections = 0;  // superuser_reserved_connections
  int max_locks_per_transaction = 0;
  int max_prepared_transactions = 0;
  int in_use = 0;  // client sessions connected now, the reading one excluded
};

// SHOW max_connections, superuser_reserved_connections, max_locks_per_transaction,
// max_prepared_transactions; count of pg_stat_activity's client backends.
// Throws SettingError naming --db when the server cannot be read.
PgLimits read_pg_limits(const std::string& url, const std::string& application_name);

// Throws SettingError (one line, naming --maximum-pool-size and --pods) when
// pods x maximum_pool_size + `own_sessions` exceed what the server accepts.
void check_connection_budget(const Settings& s, const PgLimits& l, int own_sessions);

}  // namespace lockbench::real

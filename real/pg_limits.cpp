#include "real/pg_limits.hpp"

#include "base/redact.hpp"
#include "real/pg_conn.hpp"

namespace lockbench::real {

PgLimits read_pg_limits(const std::string& url, const std::string& application_name) {
  try {
    auto c = open_session(url, application_name);
    pqxx::nontransaction tx(*c);
    const pqxx::row r = tx.exec1(
        "SELECT current_setting('max_connections')::int, current_setting('superuser_reserved_connections')::int, "
        "current_setting('max_locks_per_transaction')::int, current_setting('max_prepared_transactions')::int, "
        "(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid())::int");
    return PgLimits{r[0].as<int>(), r[1].as<int>(), r[2].as<int>(), r[3].as<int>(), r[4].as<int>()};
  } catch (const std::exception& e) {
    std::string why = redact_secrets(e.what());
    for (char& ch : why)
      if (ch == '\n' || ch == '\r') ch = ' ';
    throw SettingError("--db: cannot read the server's limits at " + redact_secrets(url) + ": " + why);
  }
}

void check_connection_budget(const Settings& s, const PgLimits& l, int own_sessions) {
  const int needed = s.pods * s.maximum_pool_size + own_sessions;
  const int available = l.max_connections - l.reserved_connections - l.in_use;
  if (needed <= available) return;
  throw SettingError("--maximum-pool-size: " + std::to_string(s.pods) + " pods x " +
                     std::to_string(s.maximum_pool_size) + " connections + " + std::to_string(own_sessions) +
                     " of lockbench's own = " + std::to_string(needed) + " exceed what the server accepts: " +
                     "max_connections " + std::to_string(l.max_connections) + " - superuser_reserved_connections " +
                     std::to_string(l.reserved_connections) + " - " + std::to_string(l.in_use) +
                     " sessions already there = " + std::to_string(available) +
                     " (lower --pods or --maximum-pool-size, or raise max_connections)");
}

}  // namespace lockbench::real

// `lockbench lint`: checks a configuration on paper before anyone runs it.
//  1. Can a lease be stolen from live work? The worst-case window of one
//     partner call is the sum of every attempt's connect and read timeouts plus
//     every backoff (partner-api.md G); the critical section makes
//     `calls_in_critical_section` of them; a lease TTL at or below that window
//     can expire while its owner is still working.
//  2. Will the pool be exhausted? Little's law: a strategy that holds a
//     connection through the partner calls keeps rate x hold connections busy
//     on average; at or above the pool size requests queue and time out.
//  3. Does the strategy exclude at all, across the pods it runs on, for a
//     record that may not exist yet? (strategies/registry.cpp says.)
//  4. PostgreSQL's own limits: pods x maximumPoolSize (+ lockbench's own
//     session) against max_connections - superuser_reserved_connections - the
//     sessions already there; the locks the strategy can hold at once
//     (StrategyProps::lock_table) against the shared lock table,
//     max_locks_per_transaction x (max_connections + max_prepared_transactions).
//  5. Connection acquisition (check_connection_acquisition): held-tx holds its
//     connection through the work before its first SQL unless the acquisition
//     is delayed; the finding says how much hold time and ceiling that costs.
#pragma once

#include <string>

#include <nlohmann/json.hpp>
#include <vector>

#include "core/partner_client.hpp"
#include "core/settings.hpp"
#include "base/units.hpp"

namespace lockbench::report {

struct LintInput {
  // The partner client (the service's HTTP client).
  Duration connect_timeout{};
  Duration read_timeout{};
  int max_attempts = 1;  // the first attempt included; 1 = no retry
  Duration backoff_base{};
  Duration backoff_cap{};
  RetryPolicy retry() const { return {connect_timeout, read_timeout, max_attempts, backoff_base, backoff_cap}; }
  int calls_in_critical_section = 2;  // switch-primary: unlink + link
  // The strategy: empty means "not known", and both checks run.
  std::string strategy;
  Duration lease_ttl{};  // 0 = no lease (the lease check is skipped)
  // The pool and the load.
  int pool_size = 10;
  double rate_per_s = 0;
  Duration partner_mean{};  // one partner call
  Duration partner_p99{};
  Duration db_time{};  // connection time per request outside the partner calls
  // Where it runs: how many pods share the key space, and the scenario (does
  // the record exist before the first request?). Empty scenario = not known.
  int pods = 1;
  std::string scenario;
  int keys = 0;  // keys the requests spread over (locks that outlive requests: one per key)
  // held-tx's work before its first SQL (--pre-sql-work), and whether the
  // connection is taken only at that SQL (--delay-connection-acquisition; from a
  // Spring file: hibernate.connection.provider_disables_autocommit=true with
  // spring.datasource.hikari.auto-commit=false). Check 5.
  Duration pre_sql_work{};
  bool delay_connection_acquisition = false;
  // Kubernetes probes (--readiness, --liveness). Check 6: a liveness probe that
  // checks the database.
  ProbeSpec readiness;
  ProbeSpec liveness;
  // The server's settings (check 4): from --db (SHOW), or flags, or PostgreSQL's defaults.
  struct Server {
    int max_connections = 100;
    int reserved_connections = 3;  // superuser_reserved_connections
    int max_locks_per_transaction = 64;
    int max_prepared_transactions = 0;
    int in_use = 0;  // sessions already connected (known from the server only)
    std::string source = "PostgreSQL's defaults";  // where these came from
  };
  Server server;
};

struct LintFinding {
  enum class Level { ok, warn, flag };
  Level level = Level::ok;
  std::string check;    // "lease", "pool", "input"
  std::string message;  // one paragraph with the numbers
};

struct LintReport {
  std::vector<LintFinding> findings;
  // The numbers the findings are made of.
  Duration call_window{};         // worst case of one partner call
  Duration critical_window{};     // call_window x calls_in_critical_section
  Duration hold_mean{};           // connection hold per request (mean)
  double busy_connections = 0;    // rate x hold_mean (Little's law)
  double ceiling_per_s = 0;       // pool / hold_mean; 0 when nothing is held
  bool holds_connection = false;  // the strategy keeps a connection through the partner calls
  int connections_needed = 0;     // pods x pool + lockbench's own session
  int connections_available = 0;  // max_connections - reserved - in use
  std::int64_t locks_needed = 0;  // entries in the shared lock table at once (worst case)
  std::int64_t lock_table_size = 0;

  bool flagged() const;
  // 0 when nothing is flagged, 1 when something is (warnings alone pass).
  int exit_code() const { return flagged() ? 1 : 0; }
};

// True for held-tx, advisory-xact and advisory-session:pinned (and their
// variants); false for none, row-lease, optimistic and advisory-session:pooled.
// Throws SettingError for an unknown strategy.
bool strategy_holds_connection(const std::string& strategy);


// Throws SettingError for impossible input (negative durations, no attempts,
// pool size below 1).
LintReport lint(const LintInput& in);

// Check 5 alone (lint() calls it): appends one finding "acquisition" to `r`
// when the strategy is held-tx (or not known) and pre_sql_work > 0. Uses
// r.hold_mean (check 2's hold without the pre-SQL work).
void check_connection_acquisition(const LintInput& in, LintReport& r);

// Check 6 alone (lint() calls it): with --liveness on, one finding "probes":
// flag when it checks the database (a dry pool or a slow database gets pods
// killed, and restarted pods meet the same queue: the restart cascade), ok
// without; with --readiness db=on and a strategy that holds a connection
// through the partner call, a warning that readiness pulls pods whose pool a
// slow partner dries. Uses r.holds_connection.
void check_probes(const LintInput& in, LintReport& r);

// Human text: one line per finding, prefixed OK / WARN / FLAG, then the verdict.
std::string render(const LintReport& report);
// {"verdict": "pass"|"flagged", "findings": [{level, check, message}], "numbers": {...}}
nlohmann::json render_json(const LintReport& report);
// SARIF 2.1.0: one result per warning or flag (rule ids lockbench/lease, /pool,
// /exclusion, /postgres), for code-scanning interfaces that read static-analysis output.
nlohmann::json render_sarif(const LintReport& report);

}  // namespace lockbench::report

// `lockbench lint`: checks a configuration on paper before anyone runs it.
//  1. Can a lease be stolen from live work? The worst-case window of one
//     partner call is the sum of every attempt's connect and read timeouts plus
//     every backoff (docs/reference/partner-api.md G); the critical section makes
//     `calls_in_critical_section` of them; a lease TTL at or below that window
//     can expire while its owner is still working.
//  2. Will the pool be exhausted? Little's law: a strategy that holds a
//     connection through the partner calls keeps rate x hold connections busy
//     on average; at or above the pool size requests queue and time out.
//  3. Does the strategy exclude at all, across the pods it runs on, for a
//     record that may not exist yet? (its registry row says.)
//  4. PostgreSQL's own limits: pods x maximumPoolSize (+ lockbench's own
//     session) against max_connections - superuser_reserved_connections - the
//     sessions already there; the locks the strategy can hold at once
//     (StrategyProps::lock_table) against the shared lock table,
//     max_locks_per_transaction x (max_connections + max_prepared_transactions).
//  5. Connection acquisition (check_connection_acquisition): held-tx holds its
//     connection through the work before its first SQL unless the acquisition
//     is delayed; the finding says how much hold time and ceiling that costs.
//  6. Kubernetes probes (check_probes, lint_probes.cpp): a liveness probe that
//     checks the database (from --liveness, or a Deployment's httpGet path read
//     with Spring Boot's actuator settings), a probe path Spring does not
//     serve, a db probe whose timeout is shorter than the pool's
//     connectionTimeout.
//  7. Virtual threads (check_virtual_threads, lint_threads.cpp): a strategy
//     whose Java shape is `synchronized` around the partner call pins carrier
//     threads on a JDK below 24; no worker cap, so a dry pool's queue grows
//     with the load.
#pragma once

#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>
#include <vector>

#include "core/partner_client.hpp"
#include "core/settings.hpp"
#include "base/units.hpp"

namespace lockbench::report {

// Spring Boot's actuator as the service's file configures it (lint --from
// application.properties/.yml): what each health path checks.
struct SpringHealth {
  std::optional<bool> probes_enabled;  // management.endpoint.health.probes.enabled (absent: on in Kubernetes)
  std::optional<bool> db_enabled;      // management.health.db.enabled (absent: true with a DataSource)
  // management.endpoint.health.group.<name>.include / .exclude, each as given ("db", "*", "livenessState", ...)
  std::map<std::string, std::vector<std::string>> groups;
  std::map<std::string, std::vector<std::string>> groups_exclude;
  std::string base_path = "/actuator";  // management.endpoints.web.base-path
  std::string file;                     // the Spring file these came from; empty = none given
};

// Where a probe comes from: a Deployment's container, or the flags (empty).
struct ProbeSource {
  std::string where;  // "Deployment api, container app"
  std::string path;   // httpGet.path; empty for tcpSocket, exec and grpc probes
};

// What a probe's HTTP path checks, as Spring Boot's actuator answers it.
struct HealthPath {
  bool known = false;    // a Spring Boot health path lint knows
  bool served = true;    // false: Spring answers 404 (a probe group that is not enabled)
  bool db = false;       // the db indicator is part of the answer
  std::string why;       // the settings that decide it, for the finding's evidence
};
// <base>/health (every indicator), <base>/health/<group or indicator>, and
// /livez, /readyz (management.endpoint.health.probes.add-additional-paths).
HealthPath health_path(const std::string& path, const SpringHealth& h);

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
  // Kubernetes probes (--readiness, --liveness, or a Deployment's). Check 6: a
  // liveness probe that checks the database. A probe with a source path gets
  // its `db` from health_path(path, health), not from the spec.
  ProbeSpec readiness;
  ProbeSpec liveness;
  ProbeSource readiness_source;
  ProbeSource liveness_source;
  SpringHealth health;
  // HikariCP's connectionTimeout: how long a request, or a health check that
  // borrows a connection, waits for one (check 6 compares probe timeouts with it).
  Duration pool_connection_timeout = std::chrono::seconds(30);
  int max_threads = 200;  // Tomcat's threads.max: the cap virtual threads remove
  // Check 7: spring.threads.virtual.enabled (--virtual-threads) and the JDK
  // the service runs on (--jdk; 0 = not known).
  bool virtual_threads = false;
  int jdk = 0;
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

// Check 6 alone (lint() calls it): with a liveness probe, one finding "probes":
// flag when it checks the database (a dry pool or a slow database gets pods
// killed, and restarted pods meet the same queue: the restart cascade), or
// when Spring does not serve its path; ok otherwise. A readiness probe that
// checks the database warns when the strategy holds a connection through the
// partner call (a slow partner dries the pool and readiness pulls the pods)
// or when its timeout is shorter than the pool's connectionTimeout (a busy
// pod is pulled: PostHog #46457). Without a probe, a liveness group that
// includes db in the Spring file is flagged. Uses r.holds_connection.
void check_probes(const LintInput& in, LintReport& r);

// Check 7 alone (lint() calls it): with virtual threads on, one finding
// "threads" for a strategy whose registry row says its Java shape holds a
// monitor through the call (pinning below JDK 24), and one for the queue a
// dry pool grows without Tomcat's worker cap. Uses r.busy_connections.
void check_virtual_threads(const LintInput& in, LintReport& r);

// Human text: one line per finding, prefixed OK / WARN / FLAG, then the verdict.
std::string render(const LintReport& report);
// {"verdict": "pass"|"flagged", "findings": [{level, check, message}], "numbers": {...}}
nlohmann::json render_json(const LintReport& report);
// SARIF 2.1.0: one result per warning or flag (rule ids lockbench/lease, /pool,
// /exclusion, /postgres, /acquisition, /probes, /threads), for code-scanning interfaces that read static-analysis output.
nlohmann::json render_sarif(const LintReport& report);

}  // namespace lockbench::report

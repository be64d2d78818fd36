#include "report/lint.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "report/explain.hpp"
#include "report/lint_internal.hpp"
#include "strategies/family.hpp"

namespace lockbench::report {

using namespace lint_detail;

bool LintReport::flagged() const {
  return std::any_of(findings.begin(), findings.end(), [](const LintFinding& f) { return f.level == Level::flag; });
}

bool strategy_holds_connection(const std::string& strategy) {
  return strategy_info(strategy).props.holds_connection_during_call;  // the registry row says it
}

namespace {

// Impossible input: one line naming the setting, before any check runs.
void require_possible_input(const LintInput& in) {
  require(in.max_attempts >= 1 && in.max_attempts <= 1000, "--partner-max-attempts: must be between 1 and 1000");
  require(in.calls_in_critical_section >= 1, "--scenario: the critical section makes at least one partner call");
  require(in.pool_size >= 1, "--maximum-pool-size: must be at least 1");
  require(in.rate_per_s >= 0, "--rate: must not be negative");
  for (auto [v, name] : {std::pair{in.connect_timeout, "--partner-connect-timeout"},
                         {in.read_timeout, "--partner-read-timeout"}, {in.backoff_base, "--retry-backoff-base"},
                         {in.backoff_cap, "--retry-backoff-cap"}, {in.lease_ttl, "--lease-ttl"},
                         {in.partner_mean, "--partner-latency"}, {in.partner_p99, "--partner-latency"},
                         {in.db_time, "--db-latency"}, {in.pool_connection_timeout, "--connection-timeout"}})
    require(v.count() >= 0, fmt::format("{}: must not be negative", name));
  require(in.read_timeout.count() > 0,
          "--partner-read-timeout: must be set (a call without a read timeout has no worst case)");
  const LintInput::Server& pg = in.server;
  require(pg.max_connections >= 1 && pg.max_locks_per_transaction >= 1 && pg.reserved_connections >= 0 &&
              pg.max_prepared_transactions >= 0 && pg.in_use >= 0,
          "--max-connections, --max-locks-per-transaction: must be at least 1");
}

// 1. A renewed lease: kept while the calls run, lost by a holder that cannot renew.
LintFinding renewed_lease(const LintInput& in) {
  return {Level::ok, "lease",
          fmt::format("{} renews its lease every {} while the calls run: a slow call keeps it, a crash frees the key "
                      "about {} after the last renewal; a holder that cannot renew for {} (a pause, a renewal "
                      "waiting for the pool) still loses it while it works: send fencing tokens the partner enforces.",
                      in.strategy, d(in.lease_ttl / 3), d(in.lease_ttl), d(in.lease_ttl))};
}

// 1. A lease against the worst-case window of the critical section.
LintFinding lease_against_window(const LintInput& in, const LintReport& r) {
  const std::string numbers = fmt::format(
      "worst case of one partner call = {} attempts x ({} connect + {} read) + backoffs = {}; x {} calls in the "
      "critical section = {}",
      in.max_attempts, d(in.connect_timeout), d(in.read_timeout), d(r.call_window), in.calls_in_critical_section,
      d(r.critical_window));
  if (in.lease_ttl <= r.critical_window)
    return {Level::flag, "lease",
            fmt::format("lease TTL {} <= worst-case critical section {}: a lease can be stolen from live work ({}). "
                        "Raise the TTL above {} or cut retries/timeouts.",
                        d(in.lease_ttl), d(r.critical_window), numbers, d(r.critical_window))};
  if (in.partner_p99 * in.calls_in_critical_section >= in.lease_ttl)
    return {Level::flag, "lease",
            fmt::format("lease TTL {} <= the p99 critical section {} even without retries", d(in.lease_ttl),
                        d(in.partner_p99 * in.calls_in_critical_section))};
  return {Level::ok, "lease",
          fmt::format("lease TTL {} > worst-case critical section {} ({}); a crash keeps the key locked for up to {}.",
                      d(in.lease_ttl), d(r.critical_window), numbers, d(in.lease_ttl))};
}

// 1. Can a lease be stolen from live work? The registry row says whether the
// strategy's lock is a lease and whether it renews it.
void check_lease(const LintInput& in, const StrategyInfo* info, LintReport& r) {
  const bool known = info != nullptr;
  const bool leased = known && info->props.lease_ttl;
  const bool lease_applies = in.lease_ttl.count() > 0 && (!known || leased);
  if (lease_applies && known && info->props.renews_lease)
    r.findings.push_back(renewed_lease(in));
  else if (lease_applies)
    r.findings.push_back(lease_against_window(in, r));
  else if (leased)
    r.findings.push_back({Level::flag, "lease",
                          std::string(info->family) + " without a lease TTL: a crashed request locks its key forever. "
                                                      "Set --lease-ttl."});
}

// The strategies whose rows hold a connection through the call: each such
// family by its name, or, when only some variants hold, by the first that does.
std::string connection_holders() {
  std::string out;
  for (const StrategyFamily* f : strategy_families()) {
    const StrategyInfo* first = nullptr;
    bool all = true;
    for (const auto& row : f->variants) {
      if (row.props.holds_connection_during_call && first == nullptr) first = &row;
      all = all && row.props.holds_connection_during_call;
    }
    if (first != nullptr) out += (out.empty() ? "" : ", ") + std::string(all ? f->name : first->spec);
  }
  return out;
}

// 2. A strategy that holds a connection through the calls, against Little's law.
LintFinding pool_of_a_holder(const LintInput& in, const LintReport& r) {
  const std::string who = !in.strategy.empty() ? in.strategy
                                               : "a strategy that holds a connection (" + connection_holders() + ")";
  const std::string numbers = fmt::format(
      "{} requests/s x {} mean hold = {:.2f} busy connections for a pool of {}; ceiling {} / {} = {:.2f} requests/s",
      in.rate_per_s, d(r.hold_mean), r.busy_connections, in.pool_size, in.pool_size, d(r.hold_mean), r.ceiling_per_s);
  const double busy_p99 = in.rate_per_s * to_s(in.db_time + in.partner_p99 * in.calls_in_critical_section);
  if (r.busy_connections >= in.pool_size)
    return {Level::flag, "pool",
            fmt::format("{} will exhaust the pool: {}. Requests will queue for a connection and time out; health "
                        "probes will fail.",
                        who, numbers)};
  if (r.busy_connections >= 0.8 * in.pool_size || busy_p99 >= in.pool_size)
    return {Level::warn, "pool",
            fmt::format("{} runs the pool near its limit: {}; at p99 partner time {:.2f} connections would be busy. "
                        "Bursts will queue.",
                        who, numbers, busy_p99)};
  return {Level::ok, "pool", fmt::format("{} fits the pool: {}.", who, numbers)};
}

// 2. Will the pool be exhausted? Fills r's hold, busy connections and ceiling.
void check_pool(const LintInput& in, LintReport& r) {
  const Duration partner_total = in.partner_mean * in.calls_in_critical_section;
  r.hold_mean = in.db_time + (r.holds_connection ? partner_total : Duration{});
  const double hold_s = to_s(r.hold_mean);
  r.busy_connections = in.rate_per_s * hold_s;
  r.ceiling_per_s = hold_s > 0 ? in.pool_size / hold_s : 0;
  if (!r.holds_connection)
    r.findings.push_back({Level::ok, "pool",
                          fmt::format("{} returns the connection before the partner calls: hold {} per request, "
                                      "{:.2f} of {} connections busy at {} requests/s.",
                                      in.strategy, d(r.hold_mean), r.busy_connections, in.pool_size, in.rate_per_s)});
  else if (in.rate_per_s > 0 && hold_s > 0)
    r.findings.push_back(pool_of_a_holder(in, r));
  else
    r.findings.push_back({Level::warn, "pool", "no rate or partner time given: the pool check needs --rate and "
                                               "--partner-latency."});
}

// 3. Does the strategy exclude at all, across pods, for a record that may not
// exist yet? From the strategy's registry row (in its file, strategies/family.hpp).
void check_exclusion(const LintInput& in, const StrategyInfo& info, LintReport& r) {
  const StrategyProps& p = info.props;
  if (p.exclusion == Exclusion::none)
    r.findings.push_back({Level::flag, "exclusion",
                          fmt::format("{} does not exclude two requests for one key ({}): both reach the partner; "
                                      "lockbench measures it as overlap_person (run it with --burst 8 --key-dist hot).",
                                      info.spec, info.teaches)});
  else if (p.exclusion == Exclusion::one_pod && in.pods > 1)
    r.findings.push_back({Level::flag, "exclusion",
                          fmt::format("{} excludes within one pod only, and {} pods share the keys: requests for one "
                                      "key on two pods run at once.",
                                      info.spec, in.pods)});
  else if (p.exclusion == Exclusion::one_pod)
    r.findings.push_back({Level::warn, "exclusion",
                          fmt::format("{} excludes within one pod only: right while there is one instance; with two "
                                      "or more behind a load balancer, requests for one key on different pods race "
                                      "(lockbench run --pods 2 shows it).",
                                      info.spec)});
  else if (!in.scenario.empty() && p.needs_existing_row && !scenario_info(in.scenario).lock_row_exists)
    r.findings.push_back({Level::flag, "exclusion",
                          fmt::format("{} locks the record's row, and in {} the record does not exist before the "
                                      "first request: SELECT ... FOR UPDATE finds no row to lock, so only a unique "
                                      "constraint, if there is one, stops a second request (after its partner call, "
                                      "unless the insert comes first).",
                                      info.spec, in.scenario)});
  else
    r.findings.push_back({Level::ok, "exclusion",
                          fmt::format("{} excludes two requests for one key{}.", info.spec,
                                      p.exclusion == Exclusion::all_pods ? " across pods" : "")});
}

// 4. PostgreSQL's connections: pods x pool + lockbench's own session against
// max_connections - superuser_reserved_connections - the sessions already there.
void check_server_connections(const LintInput& in, LintReport& r) {
  const LintInput::Server& pg = in.server;
  r.connections_needed = in.pool_size + 1;  // every pod's pool (probe and pollers borrow from it) + lockbench's session
  r.connections_available = pg.max_connections - pg.reserved_connections - pg.in_use;
  const std::string numbers =
      fmt::format("{} pods x {} = {} pooled connections + 1 of lockbench's own, against max_connections {} - "
                  "superuser_reserved_connections {}{} = {} ({})",
                  in.pods, in.pool_size / std::max(1, in.pods), in.pool_size, pg.max_connections,
                  pg.reserved_connections, pg.in_use > 0 ? fmt::format(" - {} sessions already there", pg.in_use) : "",
                  r.connections_available, pg.source);
  if (r.connections_needed > r.connections_available)
    r.findings.push_back({Level::flag, "postgres",
                          fmt::format("the pools need more connections than the server accepts: {}. Pods will fail "
                                      "to open their pools (FATAL: sorry, too many clients already, SQLSTATE 53300); "
                                      "lower --pods or --maximum-pool-size, put PgBouncer in front, or raise "
                                      "max_connections.",
                                      numbers)});
  else if (r.connections_needed > 0.8 * r.connections_available)
    r.findings.push_back({Level::warn, "postgres",
                          fmt::format("the pools take most of the server's connections: {}; a deploy that starts new "
                                      "pods before stopping old ones doubles them.",
                                      numbers)});
  else
    r.findings.push_back({Level::ok, "postgres", fmt::format("the pools fit the server's connections: {}.", numbers)});
}

// 4. PostgreSQL's shared lock table against the locks the strategy can hold at
// once (StrategyProps::lock_table).
void check_lock_table(const LintInput& in, LintReport& r) {
  const LintInput::Server& pg = in.server;
  const bool known = !in.strategy.empty();
  const LockTableUse use = known ? strategy_info(in.strategy).props.lock_table : LockTableUse::per_connection;
  r.lock_table_size =
      static_cast<std::int64_t>(pg.max_locks_per_transaction) * (pg.max_connections + pg.max_prepared_transactions);
  r.locks_needed = use == LockTableUse::none             ? 0
                   : use == LockTableUse::per_connection ? in.pool_size
                                                         : in.pool_size + static_cast<std::int64_t>(std::max(0, in.keys));
  const std::string numbers = fmt::format(
      "{} can hold {} locks at once ({}), against a lock table of max_locks_per_transaction {} x (max_connections {} + "
      "max_prepared_transactions {}) = {} ({})",
      known ? in.strategy : "a strategy that locks per connection", r.locks_needed,
      use == LockTableUse::per_key          ? fmt::format("one per pooled connection + one leaked per key, {} keys", in.keys)
      : use == LockTableUse::per_connection ? "one per pooled connection"
                                            : "none in the lock table",
      pg.max_locks_per_transaction, pg.max_connections, pg.max_prepared_transactions, r.lock_table_size, pg.source);
  if (r.locks_needed > r.lock_table_size)
    r.findings.push_back({Level::flag, "postgres",
                          fmt::format("the locks can fill PostgreSQL's shared lock table: {}. Statements then fail "
                                      "with ERROR: out of shared memory (SQLSTATE 53200, HINT: You might need to "
                                      "increase max_locks_per_transaction), in every session of the server.",
                                      numbers)});
  else if (r.locks_needed > r.lock_table_size / 2)
    r.findings.push_back({Level::warn, "postgres",
                          fmt::format("the locks take more than half of PostgreSQL's shared lock table: {}.", numbers)});
  else
    r.findings.push_back({Level::ok, "postgres", fmt::format("the locks fit the shared lock table: {}.", numbers)});
}

}  // namespace

LintReport lint(const LintInput& in) {
  require_possible_input(in);
  LintReport r;
  const bool known = !in.strategy.empty();
  const StrategyInfo* info = known ? &strategy_info(in.strategy) : nullptr;
  r.holds_connection = known ? info->props.holds_connection_during_call : true;
  r.call_window = worst_case_call(in.retry());  // core/partner_client: the policy call_partner follows
  r.critical_window = r.call_window * in.calls_in_critical_section;
  check_lease(in, info, r);
  check_pool(in, r);
  if (known) check_exclusion(in, *info, r);
  check_server_connections(in, r);
  check_lock_table(in, r);
  check_connection_acquisition(in, r);
  check_probes(in, r);
  check_virtual_threads(in, r);
  return r;
}

void check_connection_acquisition(const LintInput& in, LintReport& r) {
  require(in.pre_sql_work.count() >= 0, "--pre-sql-work: must not be negative");
  if (in.pre_sql_work.count() == 0) return;
  const bool known = !in.strategy.empty();
  if (known && !strategy_family(strategy_info(in.strategy).family).lint.holds_pre_sql_work) return;  // the row's lint fact
  // Little's law on the two holds: from the transaction's start (the work
  // included) or from the first statement.
  const Duration from_start = r.hold_mean + in.pre_sql_work;
  const Duration from_sql = r.hold_mean;
  const auto ceiling = [&](Duration h) { return to_s(h) > 0 ? in.pool_size / to_s(h) : 0.0; };
  const std::string numbers = fmt::format(
      "pre-SQL work {}; hold {} from the transaction's start, {} from the first statement "
      "(saves {} = {:.0f} % per request); at {} requests/s {:.2f} vs {:.2f} busy connections of {}; ceiling "
      "{:.2f} vs {:.2f} requests/s",
      d(in.pre_sql_work), d(from_start), d(from_sql), d(in.pre_sql_work),
      100 * to_s(in.pre_sql_work) / to_s(from_start), in.rate_per_s, in.rate_per_s * to_s(from_start),
      in.rate_per_s * to_s(from_sql), in.pool_size, ceiling(from_start), ceiling(from_sql));
  if (in.delay_connection_acquisition)
    r.findings.push_back({Level::ok, "acquisition",
                          fmt::format("the connection is taken at the first SQL "
                                      "(provider_disables_autocommit=true, auto-commit=false): {}.",
                                      numbers)});
  else
    r.findings.push_back(
        {in.rate_per_s * to_s(from_start) >= in.pool_size && in.rate_per_s * to_s(from_sql) < in.pool_size
             ? Level::flag
             : Level::warn,
         "acquisition",
         fmt::format("the connection is held from the transaction's start through the work before its first SQL: "
                     "{}. Set spring.jpa.properties.hibernate.connection.provider_disables_autocommit=true and "
                     "spring.datasource.hikari.auto-commit=false (--delay-connection-acquisition on).",
                     numbers)});
}

std::string render(const LintReport& report) {
  std::string out;
  for (const auto& f : report.findings) {
    const char* tag = f.level == Level::flag ? "FLAG" : f.level == Level::warn ? "WARN" : "OK  ";
    out += fmt::format("{} {}: {}\n", tag, f.check, f.message);
  }
  out += report.flagged() ? "verdict: flagged (exit 1)\n" : "verdict: pass (exit 0)\n";
  return out;
}

namespace {
const char* level_name(Level l) { return l == Level::flag ? "flag" : l == Level::warn ? "warn" : "ok"; }
}  // namespace

nlohmann::json render_json(const LintReport& report) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : report.findings)
    findings.push_back({{"level", level_name(f.level)}, {"check", f.check}, {"message", f.message}});
  return {{"verdict", report.flagged() ? "flagged" : "pass"},
          {"findings", findings},
          {"numbers",
           {{"call_window_ms", to_ms(report.call_window)},
            {"critical_window_ms", to_ms(report.critical_window)},
            {"hold_mean_ms", to_ms(report.hold_mean)},
            {"busy_connections", report.busy_connections},
            {"ceiling_per_s", report.ceiling_per_s},
            {"holds_connection", report.holds_connection},
            {"connections_needed", report.connections_needed},
            {"connections_available", report.connections_available},
            {"locks_needed", report.locks_needed},
            {"lock_table_size", report.lock_table_size}}}};
}

nlohmann::json render_sarif(const LintReport& report) {
  nlohmann::json rules = nlohmann::json::array();
  nlohmann::json results = nlohmann::json::array();
  for (const char* check : {"lease", "pool", "exclusion", "postgres", "acquisition", "probes", "threads"})
    rules.push_back({{"id", std::string("lockbench/") + check},
                     {"shortDescription", {{"text", std::string("lockbench lint: ") + check}}}});
  for (const auto& f : report.findings) {
    if (f.level == Level::ok) continue;
    results.push_back({{"ruleId", "lockbench/" + f.check},
                       {"level", f.level == Level::flag ? "error" : "warning"},
                       {"message", {{"text", f.message}}}});
  }
  return {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs", nlohmann::json::array({{{"tool", {{"driver", {{"name", "lockbench lint"},
                                                                  {"rules", rules}}}}},
                                           {"results", results}}})}};
}

}  // namespace lockbench::report

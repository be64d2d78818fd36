// lint, validate and calibrate: the commands that combine runs or checks.
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "cli/output.hpp"
#include "cli/settings_io.hpp"
#include "core/redact.hpp"
#include "core/run.hpp"
#include "scenarios/registry.hpp"
#include "real/calibrate.hpp"
#include "real/pg_limits.hpp"
#include "report/lint.hpp"

using nlohmann::json;

namespace lockbench::cli {

namespace {

// The 99th percentile of a partner latency distribution.
double p99_ms(const Distribution& d) {
  switch (d.kind) {
    case Distribution::Kind::fixed: return d.a_ms;
    case Distribution::Kind::uniform: return d.a_ms + 0.99 * (d.b_ms - d.a_ms);
    case Distribution::Kind::exponential: return d.a_ms * std::log(100.0);
    case Distribution::Kind::lognormal: return d.cap_ms > 0 ? std::min(d.b_ms, d.cap_ms) : d.b_ms;
  }
  return d.a_ms;
}

// A measuring run stopped by SIGINT/SIGTERM: nothing to report.
struct Interrupted {};

double at(const json& j, std::initializer_list<const char*> path) {
  const json* p = &j;
  for (const char* k : path) {
    if (!p->is_object() || !p->contains(k)) return 0;
    p = &(*p)[k];
  }
  return p->is_number() ? p->get<double>() : 0;
}

}  // namespace

int cmd_lint(const Settings& s, bool strategy_known, const std::string& format) {
  if (format != "text" && format != "json" && format != "sarif")
    throw SettingError("--format: '" + format + "' is not accepted (accepted: text, json, sarif)");
  report::LintInput in;
  in.connect_timeout = s.partner_connect_timeout;
  in.read_timeout = s.partner_read_timeout;
  in.max_attempts = s.partner_max_attempts;
  in.backoff_base = s.retry_backoff_base;
  in.backoff_cap = s.retry_backoff_cap;
  in.calls_in_critical_section = make_scenario(s.scenario)->partner_calls();
  in.strategy = strategy_known ? s.strategy : "";
  in.lease_ttl = s.lease_ttl;
  in.pool_size = s.maximum_pool_size * s.pods;  // the rate below is the total over pods
  in.rate_per_s = s.offered_per_s();
  in.partner_mean = from_ms(s.partner_latency.mean_ms());
  in.partner_p99 = from_ms(p99_ms(s.partner_latency));
  in.db_time = from_ms(4 * s.db_latency.mean_ms());
  in.pods = s.pods;
  in.scenario = s.scenario;
  in.keys = s.keys;
  if (!s.db_url.empty()) {  // PostgreSQL's own limits, from the server
    const real::PgLimits l = real::read_pg_limits(s.db_url, "lockbench/lint");
    in.server = {l.max_connections, l.reserved_connections, l.max_locks_per_transaction, l.max_prepared_transactions,
                 l.in_use, "read from the server"};
  } else if (s.pg_max_connections > 0 || s.pg_max_locks_per_transaction > 0) {
    if (s.pg_max_connections > 0) in.server.max_connections = s.pg_max_connections;
    if (s.pg_max_locks_per_transaction > 0) in.server.max_locks_per_transaction = s.pg_max_locks_per_transaction;
    in.server.source = "from --max-connections / --max-locks-per-transaction";
  }
  const auto rep = report::lint(in);
  if (format == "json")
    std::cout << report::render_json(rep).dump(2) << "\n";
  else if (format == "sarif")
    std::cout << report::render_sarif(rep).dump(2) << "\n";
  else
    std::cout << report::render(rep);
  return rep.exit_code();
}

namespace {

// The simulator's settings for the machine `c` describes (what calibrate writes).
void apply_costs(Settings& s, const real::StackCosts& c) {
  s.db_latency = Distribution::lognormal(c.statement.p50_ms, std::max(c.statement.p99_ms, c.statement.p50_ms * 1.01));
  s.partner_overhead = from_ms(c.partner_call.p50_ms);
  s.pool_handoff = from_ms(c.pool_handoff.p50_ms);
  s.worker_handoff = from_ms(c.worker_handoff.p50_ms);
}

struct Ratio {
  const char* name;
  double real, sim;
  double target;  // allowed |sim/real - 1|; 0 = shown, not targeted
};

// Prints one case's table; true when every targeted ratio is within its target.
bool print_case(const std::string& title, const std::vector<Ratio>& rows) {
  std::cout << title << "\n"
            << std::left << std::setw(22) << "figure" << std::right << std::setw(12) << "real" << std::setw(12) << "sim"
            << std::setw(12) << "sim/real" << "  target\n";
  bool all_ok = true;
  for (const auto& r : rows) {
    const double ratio = r.real > 0 ? r.sim / r.real : 0;
    const bool ok = r.target <= 0 || std::abs(ratio - 1) <= r.target;
    all_ok = all_ok && ok;
    std::cout << std::left << std::setw(22) << r.name << std::right << std::fixed << std::setprecision(3)
              << std::setw(12) << r.real << std::setw(12) << r.sim << std::setw(12) << ratio << "  ";
    if (r.target > 0)
      std::cout << (ok ? "within ±" : "OUTSIDE ±") << std::setprecision(0) << r.target * 100 << " %";
    else
      std::cout << "-";
    std::cout << "\n";
  }
  std::cout << "\n";
  return all_ok;
}

}  // namespace

int cmd_validate(Settings s, const CLI::App& app, const std::string& out) {
  // A small scenario both worlds can run in seconds: held-tx on single-call, at
  // two loads: 70 % of the pool (a stable queue) and 90 % (near saturation,
  // where small costs decide the queue). Both worlds draw the same arrivals and
  // partner delays from the seed; the simulator is given the real stack's
  // measured costs (the same measurement as `lockbench calibrate`).
  const auto unset = [&](const char* flag) { return app.count(std::string("--") + flag) == 0; };
  if (unset("strategy")) s.strategy = "held-tx";
  if (s.strategy == "all" || s.strategy.find(',') != std::string::npos)
    throw SettingError("--strategy: validate compares one strategy in both worlds; give one name (e.g. held-tx)");
  if (unset("scenario")) s.scenario = "single-call";
  if (unset("maximum-pool-size")) s.maximum_pool_size = 4;
  if (unset("partner-latency")) s.partner_latency = Distribution::exponential(40);
  if (unset("duration")) s.duration = std::chrono::seconds(30);
  if (unset("keys")) s.keys = 1000;
  if (unset("probe-interval")) s.probe_interval = Duration::zero();
  if (s.time_scale != 1) std::cerr << "validate: --time-scale ignored: both worlds run at scale 1\n";
  s.time_scale = 1;
  if (s.db_url.empty() || s.partner_url.empty())
    throw SettingError("--db and --partner: validate runs the real world too; give both");
  s.validate();

  const bool calibrated = !unset("db-latency") || !unset("partner-overhead");
  if (!calibrated) {
    std::cerr << "validate: measuring the real stack's own costs (as lockbench calibrate)...\n";
    apply_costs(s, real::measure_stack(s));
  }
  // Mean connection hold of held-tx on single-call: the partner call and its
  // HTTP cost, five statements (begin, lock, read, update, commit).
  const double hold_ms = s.partner_latency.mean_ms() + to_ms(s.partner_overhead) + 5 * s.db_latency.mean_ms();
  std::cout << "validate: " << s.strategy << " on " << s.scenario << ", pool " << s.maximum_pool_size << ", partner "
            << s.partner_latency.to_string() << " for " << format_duration(s.duration) << "; simulator: db-latency "
            << s.db_latency.to_string() << ", partner-overhead " << format_duration(s.partner_overhead)
            << ", pool-handoff " << format_duration(s.pool_handoff) << ", worker-handoff "
            << format_duration(s.worker_handoff) << "\n\n";
  std::vector<json> results;
  bool all_ok = true;
  const std::vector<double> loads = unset("rate") ? std::vector<double>{0.7, 0.9} : std::vector<double>{0};
  for (const double u : loads) {
    Settings one = s;
    if (u > 0) one.rate_per_s = u * s.maximum_pool_size / (hold_ms / 1000);
    Settings real = one, sim = one;
    real.world = "real";
    sim.world = "sim";
    std::cerr << "validate: real run at " << std::setprecision(1) << std::fixed << one.rate_per_s << "/s...\n";
    const json rr = run_real(real);
    const json rs = run_sim(sim);
    results.push_back(rr);
    results.push_back(rs);
    const bool high = u == 0 || u >= 0.85;
    std::ostringstream title;
    title << std::fixed << std::setprecision(1) << one.rate_per_s << "/s offered, pool utilisation real "
          << std::setprecision(2) << at(rr, {"pool", "utilization"}) << ", sim " << at(rs, {"pool", "utilization"});
    all_ok = print_case(title.str(),
                        {{"ok-throughput /s", at(rr, {"throughput_ok_per_s"}), at(rs, {"throughput_ok_per_s"}),
                          high ? 0.15 : 0.10},
                         {"ok latency p50 ms", at(rr, {"latency_ok_ms", "p50"}), at(rs, {"latency_ok_ms", "p50"}),
                          high ? 0.15 : 0},
                         {"ok latency p99 ms", at(rr, {"latency_ok_ms", "p99"}), at(rs, {"latency_ok_ms", "p99"}),
                          high ? 0.15 : 0},
                         {"pool utilisation", at(rr, {"pool", "utilization"}), at(rs, {"pool", "utilization"}), 0},
                         {"pool wait p99 ms", at(rr, {"pool", "wait_ms", "p99"}), at(rs, {"pool", "wait_ms", "p99"}), 0},
                         {"pool timeouts", at(rr, {"requests", "pool_timeout"}), at(rs, {"requests", "pool_timeout"}),
                          0}}) &&
             all_ok;
  }
  if (!out.empty()) write_results(results, out);
  std::cout << (all_ok ? "sim matches real within the targets" : "sim does NOT match real within the targets") << "\n";
  return all_ok ? 0 : 1;
}

int cmd_calibrate(const Settings& s, const std::string& out) {
  if (s.db_url.empty() || s.partner_url.empty())
    throw SettingError("--db and --partner: calibrate measures a real database and partner; give both");
  const real::StackCosts costs = real::measure_stack(s);
  const std::string text =
      real::calibration_toml(costs, "against " + redact_secrets(s.db_url) + " and " + redact_secrets(s.partner_url));
  write_file_atomically(out, text, "--out");
  std::cout << text << "wrote " << out << " (use it with --world sim --config " << out << ")\n";
  return 0;
}

}  // namespace lockbench::cli

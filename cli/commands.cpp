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

// Mean latency of one SQL statement on the real database: `none` on
// single-call makes two statements per request (read, write) and holds
// nothing during the partner call, so DB time / 2 is one statement.
double measure_statement_ms(Settings s) {
  s.world = "real";
  s.scenario = "single-call";
  s.strategy = "none";
  s.arrival = Arrival::open;
  s.rate_per_s = 100;
  s.duration = std::chrono::seconds(3);
  s.time_scale = 1;
  s.partner_latency = Distribution::fixed(1);
  s.keys = 100;
  RunHooks hooks;
  hooks.should_stop = stop_requested;
  const json r = run_real(s, hooks);
  if (r.value("interrupted", false)) throw Interrupted();
  const double total = at(r, {"requests", "total"});
  if (at(r, {"requests", "ok"}) < total * 0.9 || total < 50)
    throw SettingError("calibrate: the measuring run did not complete (" + r["requests"].dump() + ")");
  return at(r, {"time_split_ms", "db"}) / 2;
}

}  // namespace

int cmd_lint(const Settings& s, const CLI::App& app) {
  report::LintInput in;
  in.connect_timeout = s.partner_connect_timeout;
  in.read_timeout = s.partner_read_timeout;
  in.max_attempts = s.partner_max_attempts;
  in.backoff_base = s.retry_backoff_base;
  in.backoff_cap = s.retry_backoff_cap;
  in.calls_in_critical_section = make_scenario(s.scenario)->partner_calls();
  in.strategy = app.count("--strategy") && s.strategy != "all" ? s.strategy : "";
  in.lease_ttl = s.lease_ttl;
  in.pool_size = s.maximum_pool_size * s.pods;  // the rate below is the total over pods
  in.rate_per_s = s.offered_per_s();
  in.partner_mean = from_ms(s.partner_latency.mean_ms());
  in.partner_p99 = from_ms(p99_ms(s.partner_latency));
  in.db_time = from_ms(4 * s.db_latency.mean_ms());
  const auto rep = report::lint(in);
  std::cout << report::render(rep);
  return rep.exit_code();
}

int cmd_validate(Settings s, const CLI::App& app, const std::string& out) {
  // A small scenario both worlds can run in seconds: held-tx on single-call
  // at 70 % of its ceiling, so pool waits are real but the queue is stable.
  const auto unset = [&](const char* flag) { return app.count(std::string("--") + flag) == 0; };
  if (unset("strategy")) s.strategy = "held-tx";
  if (s.strategy == "all" || s.strategy.find(',') != std::string::npos)
    throw SettingError("--strategy: validate compares one strategy in both worlds; give one name (e.g. held-tx)");
  if (unset("scenario")) s.scenario = "single-call";
  if (unset("maximum-pool-size")) s.maximum_pool_size = 4;
  if (unset("partner-latency")) s.partner_latency = Distribution::exponential(40);
  if (unset("rate")) s.rate_per_s = 0.7 * s.maximum_pool_size / (s.partner_latency.mean_ms() / 1000);
  if (unset("duration")) s.duration = std::chrono::seconds(20);
  if (unset("keys")) s.keys = 1000;
  if (unset("probe-interval")) s.probe_interval = Duration::zero();
  if (s.time_scale != 1) std::cerr << "validate: --time-scale ignored: both worlds run at scale 1\n";
  s.time_scale = 1;
  if (s.db_url.empty() || s.partner_url.empty())
    throw SettingError("--db and --partner: validate runs the real world too; give both");
  s.validate();

  install_stop_handlers();
  std::cerr << "validate: measuring SQL statement latency on the real database...\n";
  double stmt_ms = 0;
  try {
    stmt_ms = measure_statement_ms(s);
  } catch (const Interrupted&) {
    std::cerr << "validate: interrupted (" << stop_signal_name() << ")\n";
    return interrupted_exit_code();
  }
  if (unset("db-latency")) s.db_latency = Distribution::fixed(stmt_ms);

  Settings real = s, sim = s;
  real.world = "real";
  sim.world = "sim";
  std::cerr << "validate: real run (" << format_duration(s.duration) << ")...\n";
  RunHooks hooks;
  hooks.should_stop = stop_requested;
  const json rr = run_real(real, hooks);
  if (stop_requested()) {
    if (!out.empty()) write_results({rr}, out);
    std::cerr << "validate: interrupted (" << stop_signal_name() << ")" << (out.empty() ? "" : "; the real result is in " + out)
              << "\n";
    return interrupted_exit_code();
  }
  const json rs = run_sim(sim);
  if (!out.empty()) write_results({rr, rs}, out);

  struct Row {
    const char* name;
    double real, sim;
    bool targeted;
  };
  const std::vector<Row> rows = {
      {"ok-throughput /s", at(rr, {"throughput_ok_per_s"}), at(rs, {"throughput_ok_per_s"}), true},
      {"latency p50 ms", at(rr, {"latency_ms", "p50"}), at(rs, {"latency_ms", "p50"}), true},
      {"latency p99 ms", at(rr, {"latency_ms", "p99"}), at(rs, {"latency_ms", "p99"}), false},
      {"pool utilisation", at(rr, {"pool", "utilization"}), at(rs, {"pool", "utilization"}), false},
      {"pool wait p99 ms", at(rr, {"pool", "wait_ms", "p99"}), at(rs, {"pool", "wait_ms", "p99"}), false},
  };
  std::cout << "validate: " << s.strategy << " on " << s.scenario << ", pool " << s.maximum_pool_size << ", partner "
            << s.partner_latency.to_string() << ", " << std::fixed << std::setprecision(1) << s.rate_per_s
            << "/s for " << format_duration(s.duration) << ", sim db-latency " << s.db_latency.to_string() << "\n\n";
  std::cout << std::left << std::setw(20) << "figure" << std::right << std::setw(12) << "real" << std::setw(12) << "sim"
            << std::setw(12) << "sim/real" << "  target\n";
  bool all_ok = true;
  for (const auto& r : rows) {
    const double ratio = r.real > 0 ? r.sim / r.real : 0;
    const bool ok = !r.targeted || std::abs(ratio - 1) <= 0.15;
    all_ok = all_ok && ok;
    std::cout << std::left << std::setw(20) << r.name << std::right << std::setprecision(3) << std::setw(12) << r.real
              << std::setw(12) << r.sim << std::setw(12) << ratio << "  "
              << (r.targeted ? (ok ? "within ±15 %" : "OUTSIDE ±15 %") : "-") << "\n";
  }
  std::cout << "\n" << (all_ok ? "sim matches real within the targets" : "sim does NOT match real within the targets")
            << "\n";
  return all_ok ? 0 : 1;
}

int cmd_calibrate(const Settings& s, const std::string& out) {
  if (s.db_url.empty() || s.partner_url.empty())
    throw SettingError("--db and --partner: calibrate measures a real database; give both");
  install_stop_handlers();
  double ms = 0;
  try {
    ms = measure_statement_ms(s);
  } catch (const Interrupted&) {
    std::cerr << "calibrate: interrupted (" << stop_signal_name() << "); nothing written\n";
    return interrupted_exit_code();
  }
  std::ostringstream text;
  text << "# Measured by `lockbench calibrate` against " << redact_secrets(s.db_url) << "\n"
       << "# mean latency of one SQL statement through the pool (libpqxx, loopback)\n"
       << "db-latency = \"fixed:" << format_duration(from_ms(ms)) << "\"\n";
  write_file_atomically(out, text.str());
  std::cout << "one SQL statement: " << std::setprecision(3) << ms << " ms; wrote " << out
            << " (use it with --config " << out << ")\n";
  return 0;
}

}  // namespace lockbench::cli

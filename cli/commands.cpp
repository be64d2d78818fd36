// lint, validate and calibrate: the commands that combine runs or checks.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

#include "core/printable.hpp"
#include "cli/output.hpp"
#include "settings/table.hpp"
#include "base/redact.hpp"
#include "real/run_common.hpp"
#include "real/run_real.hpp"
#include "sim/run_sim.hpp"
#include "base/stats.hpp"
#include "scenarios/registry.hpp"
#include "real/calibrate.hpp"
#include "real/pg_limits.hpp"
#include "cli/parallel_runs.hpp"
#include "report/knee.hpp"
#include "cli/lint_sources.hpp"
#include "report/lint.hpp"
#include "report/repetitions.hpp"

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
    case Distribution::Kind::sequence: return d.sequence_quantile_ms(0.99);
  }
  return d.a_ms;
}

// A measuring run stopped by SIGINT/SIGTERM: nothing to report.
struct Interrupted {};

double number_at(const json& j, std::initializer_list<const char*> path) {
  const json* p = &j;
  for (const char* k : path) {
    if (!p->is_object() || !p->contains(k)) return 0;
    p = &(*p)[k];
  }
  return p->is_number() ? p->get<double>() : 0;
}

}  // namespace

int cmd_lint(const Settings& s, bool strategy_known, const std::string& format, const LintSources& sources) {
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
  in.pre_sql_work = s.pre_sql_work;
  in.delay_connection_acquisition = s.delay_connection_acquisition;
  in.readiness = s.readiness;
  in.liveness = s.liveness;
  in.readiness_source = sources.readiness;
  in.liveness_source = sources.liveness;
  in.health = sources.health;
  in.pool_connection_timeout = s.connection_timeout;
  in.max_threads = s.max_threads;
  in.virtual_threads = s.virtual_threads;
  in.jdk = s.jdk;
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
    std::cout << printable(report::render(rep), /*keep_newlines=*/true);  // names and paths from --from's files
  return rep.exit_code();
}

namespace {

// One figure in both worlds: repetition i of each world ran with the same seed (the same
// arrivals and partner delays), so the ratios pair up: sim_i / real_i.
struct Ratio {
  const char* name;
  std::vector<double> real, sim;
  double target;  // allowed |sim/real - 1|; 0 = shown, not targeted
};

// The t-interval of the paired ratios' mean (one repetition: a point).
stats::Summary ratio_summary(const Ratio& r) {
  std::vector<double> ratios;
  for (std::size_t i = 0; i < r.real.size() && i < r.sim.size(); ++i)
    ratios.push_back(r.real[i] > 0 ? r.sim[i] / r.real[i] : 0);
  return stats::summarize(ratios);
}

// "within ±15 %" only when the whole interval lies inside the band.
std::string verdict_of(const stats::Summary& q, double target, bool& ok) {
  const double lo = 1 - target, hi = 1 + target;
  ok = q.ci95_low >= lo && q.ci95_high <= hi;
  const std::string band = std::to_string(static_cast<int>(std::lround(target * 100))) + " %";
  if (ok) return (q.n > 1 ? "interval within ±" : "within ±") + band;
  if (q.ci95_high < lo || q.ci95_low > hi) return "OUTSIDE ±" + band;
  return "interval not inside ±" + band + " (not claimed)";
}

// Prints one case's table; true when every targeted ratio's interval is within its target.
bool print_case(const std::string& title, const std::vector<Ratio>& rows) {
  std::cout << title << "\n"
            << std::left << std::setw(22) << "figure" << std::right << std::setw(12) << "real" << std::setw(12) << "sim"
            << std::setw(12) << "sim/real" << std::setw(20) << "95 % interval" << "  target\n";
  bool all_ok = true;
  for (const auto& r : rows) {
    const stats::Summary q = ratio_summary(r);
    bool ok = true;
    const std::string verdict = r.target > 0 ? verdict_of(q, r.target, ok) : "-";
    all_ok = all_ok && ok;
    std::ostringstream interval;
    interval << std::fixed << std::setprecision(3) << "[" << q.ci95_low << ", " << q.ci95_high << "]";
    std::cout << std::left << std::setw(22) << r.name << std::right << std::fixed << std::setprecision(3)
              << std::setw(12) << stats::summarize(r.real).mean << std::setw(12) << stats::summarize(r.sim).mean
              << std::setw(12) << q.mean << std::setw(20) << (q.n > 1 ? interval.str() : "-") << "  " << verdict
              << "\n";
  }
  std::cout << "\n";
  return all_ok;
}

}  // namespace

namespace {

// validate --targets: one row per world, the figures a reader compares first.
struct SideBySide {
  const char* name;
  const char* path[3];
  double tolerance;  // allowed |real/sim - 1| (counts: 3 %, p99: 10 %); 0 = shown only
  bool count;        // a count: compared with one request of slack, so that 0 against 1 is no failure
};

double figure_at(const json& r, const SideBySide& f) {
  json cur = r;
  for (const char* k : f.path) {
    if (k == nullptr) break;
    if (!cur.is_object() || !cur.contains(k) || cur[k].is_null()) return 0;
    cur = cur[k];
  }
  return cur.is_number() ? cur.get<double>() : 0;
}

// The simulator's partner-overhead from a run's mean connection hold: what the
// hold adds to the partner calls and the statements (held-tx: begin, lock,
// read, update, commit). Unchanged when the hold is no longer than those.
void overhead_from_hold(Settings& s, double hold_ms) {
  const double statements_ms = 5 * s.db_latency.mean_ms();
  const int calls = std::max(1, make_scenario(s.scenario)->partner_calls());
  const double calls_ms = s.partner_latency.mean_ms() * calls;
  if (hold_ms > calls_ms + statements_ms) s.partner_overhead = from_ms((hold_ms - calls_ms - statements_ms) / calls);
}

// A non-empty list of the pool block of a service's /lockbench/stats
// (hold_ms_by_grant, handoff_ms: optional, additive), or null.
const json* pool_list(const std::optional<json>& stats, const char* key) {
  if (!stats || !stats->contains("pool") || !(*stats)["pool"].is_object()) return nullptr;
  const json& pool = (*stats)["pool"];
  return pool.contains(key) && pool[key].is_array() && !pool[key].empty() ? &pool[key] : nullptr;
}

// The simulator's partner calls from a run's connection holds, as the service
// measured them. A host that stalls a process now and then (a CPU hog beside
// it) stretches a few holds by hundreds of milliseconds, and those few are the
// ok p99's region; the simulator is given them, so that what is compared is
// the pool's part (the waits, the timeouts, the ok p99), not the host's.
//   - held-tx, when the service lists its request holds in the order it
//     granted them (`pool.hold_ms_by_grant` in /lockbench/stats): the
//     simulator's i-th partner call takes what the i-th hold added to the
//     statements (a sequence distribution, replayed in order), so a stall
//     lands on the same request in both worlds, at the same time;
//   - otherwise from pool.hold_ms (mean, p99, max): a lognormal with the
//     holds' mean and p99, cut at their max (a stall then lands on other
//     requests than the service's: about 1 % of holds at the p99 moves it
//     by 10 to 30 % from one run to the next);
//   - without a tail (p99 at the mean) the mean alone, as partner-overhead.
// Returns true when the holds were replayed.
bool holds_from_run(Settings& s, const json& r, const std::optional<json>& stats) {
  // The statements' own spread is in the holds already: the simulator takes
  // their median (a calibration's tail fitted through p50 and p99 of 40 us
  // and 16 ms on a loaded host draws whole seconds now and then).
  s.db_latency = Distribution::fixed(s.db_latency.kind == Distribution::Kind::lognormal ? s.db_latency.a_ms
                                                                                       : s.db_latency.mean_ms());
  const double statements_ms = 5 * s.db_latency.mean_ms();
  const int calls = std::max(1, make_scenario(s.scenario)->partner_calls());
  const json* by_grant = pool_list(stats, "hold_ms_by_grant");
  if (s.strategy == "held-tx" && by_grant != nullptr) {
    std::vector<double> per_call;
    for (const auto& h : *by_grant) {
      const double v = std::clamp(((h.is_number() ? h.get<double>() : 0) - statements_ms) / calls, 0.0, kLatencyMsMax);
      for (int c = 0; c < calls; ++c) per_call.push_back(v);
    }
    s.partner_latency = Distribution::sequence(std::move(per_call));
    s.partner_overhead = Duration{0};
    return true;
  }
  const double m = (number_at(r, {"pool", "hold_ms", "mean"}) - statements_ms) / calls;
  const double q = (number_at(r, {"pool", "hold_ms", "p99"}) - statements_ms) / calls;
  const double cap = (number_at(r, {"pool", "hold_ms", "max"}) - statements_ms) / calls;
  constexpr double z = 2.3263478740408408;  // the standard normal's 99th percentile
  const double d = z * z - 2 * std::log(q / std::max(m, 1e-9));
  if (m <= 0 || q <= m * 1.001 || d <= 0) {
    overhead_from_hold(s, number_at(r, {"prediction", "mean_hold_ms"}));
    return false;
  }
  const double sigma = z - std::sqrt(d);  // mean = p50 * exp(sigma^2 / 2), p99 = p50 * exp(z sigma)
  s.partner_latency = Distribution::lognormal(m * std::exp(-sigma * sigma / 2), q, std::max(cap, q));
  s.partner_overhead = Duration{0};
  return false;
}

// The real stack's own costs, measured (as lockbench calibrate), into the
// simulator's settings; a setting the user gave stays theirs (a hand-off
// measured in their own service, say: --pool-handoff with --pool-order hikari).
void measure_stack_costs(Settings& s, const CLI::App& app) {
  const Settings given = s;
  std::cerr << "validate: measuring the real stack's own costs (as lockbench calibrate)...\n";
  real::apply_stack_costs(s, real::measure_stack(s));
  for (const SettingDef& d : setting_defs())
    if (d.show && app.count("--" + d.name) != 0 && d.show(s) != d.show(given)) d.apply(s, d.show(given));
}

// --pool-order hikari without --pool-handoff: the hand-off the service itself
// measured in this run (`pool.handoff_ms` in /lockbench/stats: from a close()
// to a waiting thread's grant), its median; false when it lists none.
bool handoff_from_run(Settings& s, const std::optional<json>& stats) {
  const json* handoffs = pool_list(stats, "handoff_ms");
  if (handoffs == nullptr) return false;
  std::vector<double> v;
  for (const auto& h : *handoffs)
    if (h.is_number() && h.get<double>() >= 0 && h.get<double>() < 60000) v.push_back(h.get<double>());
  if (v.empty()) return false;
  std::sort(v.begin(), v.end());
  s.pool_handoff = from_ms(v[stats::nearest_rank(0.5, v.size()) - 1]);
  return true;
}

// The simulator and the service under --targets at the same settings, one
// table a load: ok, 503 (pool timeouts), ok/s, p50, p99, probes failed,
// pending (time average and peak). True when counts agree within 3 % and p99
// within 10 %.
bool compare_with_targets(const Settings& one, bool hold_from_run, bool handoff_given, std::vector<json>& results) {
  Settings real = one, sim = one;
  real.world = "real";
  real.pod_mode = "process";
  sim.world = "sim";
  sim.targets.clear();
  std::cerr << "validate: the service at " << redact_secrets(one.targets) << ", " << std::fixed << std::setprecision(1)
            << one.rate_per_s << "/s for " << format_duration(one.duration) << "...\n";
  const json r = run_real(real);
  // The service's cost per request as this run measured it (its holds), not
  // as a run seconds earlier did: a host whose load changes in between (other
  // work starting, a CPU hog) changes the holds, not the pool. Its own list of
  // holds is read from the service's stats (one target: the run's figures stay
  // until the next run reads /lockbench/info).
  bool replayed = false, handoff_measured = false;
  const bool handoff_wanted = sim.pool_order == "hikari" && !handoff_given;
  if (hold_from_run || handoff_wanted) {
    const std::optional<json> stats = one.targets.find(',') == std::string::npos
                                          ? real::get_json(one.targets, "/lockbench/stats", std::chrono::seconds(10))
                                          : std::nullopt;
    if (hold_from_run) replayed = holds_from_run(sim, r, stats);
    if (handoff_wanted) handoff_measured = handoff_from_run(sim, stats);
  }
  const json m = run_sim(sim);
  results.push_back(r);
  results.push_back(m);
  const std::vector<SideBySide> rows = {
      {"ok", {"requests", "ok", nullptr}, 0.03, true},
      {"503 (pool timeout)", {"requests", "pool_timeout", nullptr}, 0.03, true},
      {"409 (conflict)", {"requests", "conflict", nullptr}, 0.03, true},
      {"ok/s", {"throughput_ok_per_s", nullptr, nullptr}, 0, false},  // ok over each run's own span: shown
      {"ok p50 ms", {"latency_ok_ms", "p50", nullptr}, 0, false},
      {"ok p99 ms", {"latency_ok_ms", "p99", nullptr}, 0.10, false},
      {"probes failed", {"probe", "failed", nullptr}, 0, true},
      {"pending mean", {"pool", "pending_mean", nullptr}, 0, false},
      {"pending peak", {"pool", "pending_max", nullptr}, 0, true},
  };
  std::cout << std::fixed << std::setprecision(1) << one.rate_per_s << "/s offered, pool " << one.maximum_pool_size
            << ", connectionTimeout " << format_duration(one.connection_timeout) << "; simulator: partner "
            << sim.partner_latency.to_string() << ", partner-overhead " << format_duration(sim.partner_overhead)
            << ", pool-handoff " << format_duration(sim.pool_handoff)
            << (handoff_measured ? " (the service's own, this run's median)" : "")
            << (sim.pool_order != "fifo" ? ", pool-order " + sim.pool_order : std::string())
            << (replayed ? " (this run's holds, replayed in the order the service granted them)"
                : hold_from_run ? " (fitted to this run's holds)" : "")
            << "\n"
            << std::left << std::setw(20) << "figure" << std::right << std::setw(12) << "simulator" << std::setw(12)
            << "service" << std::setw(12) << "service/sim" << "  target\n";
  bool ok = true;
  for (const auto& f : rows) {
    const double a = figure_at(m, f), b = figure_at(r, f);
    const double ratio = a > 0 ? b / a : (b > 0 ? 0 : 1);
    std::string verdict = "-";
    if (f.tolerance > 0) {
      // A count is within 3 % of the run's requests (both worlds offer the same
      // schedule): 63 against 60 timeouts of 264 requests is 1.1 %, not 5 %.
      const double base = f.count ? std::max(figure_at(m, {"", {"requests", "total", nullptr}, 0, true}), 1.0) : std::max(a, b);
      const bool within = std::abs(b - a) <= f.tolerance * base;
      verdict = (within ? "within ±" : "OUTSIDE ±") + std::to_string(static_cast<int>(std::lround(f.tolerance * 100))) + " %";
      ok = ok && within;
    }
    std::cout << std::left << std::setw(20) << f.name << std::right << std::setprecision(f.count ? 0 : 2) << std::setw(12)
              << a << std::setw(12) << b << std::setprecision(3) << std::setw(12) << ratio << "  " << verdict << "\n";
  }
  std::cout << "\n";
  return ok;
}

}  // namespace

// validate --targets URL: the same settings in the simulator and against a
// service of your own (docs/reference/service-contract.md), side by side. The
// service's pool must be set as these flags set the simulator's
// (--maximum-pool-size, --connection-timeout, --max-threads, --accept-count).
int validate_targets(Settings s, const CLI::App& app, const std::string& out) {
  const auto unset = [&](const char* flag) { return app.count(std::string("--") + flag) == 0; };
  if (unset("strategy")) s.strategy = "held-tx";
  if (unset("scenario")) s.scenario = "single-call";
  if (unset("maximum-pool-size")) s.maximum_pool_size = 4;
  if (unset("partner-latency")) s.partner_latency = Distribution::fixed(200);
  if (unset("duration")) s.duration = std::chrono::seconds(20);
  if (unset("keys")) s.keys = 1000;
  if (s.time_scale != 1) std::cerr << "validate: --time-scale ignored: both worlds run at scale 1\n";
  s.time_scale = 1;
  if (s.db_url.empty() || s.partner_url.empty())
    throw SettingError("--db and --partner: validate --targets seeds the service's rows and resets the partner; give both");
  validate_settings(s);
  const bool calibrated = !unset("db-latency") || !unset("partner-overhead");
  if (!calibrated) {
    measure_stack_costs(s, app);
    // The service's own cost per request, from its mean connection hold in a
    // short run at half the load, after one that warms it up (a JVM's first
    // seconds run cold code): what its hold adds to the partner calls and the
    // statements is the simulator's partner-overhead (docs/explanation/hikaricp.md).
    Settings warm = s;
    warm.world = "real";
    warm.pod_mode = "process";
    warm.rate_per_s = 0.5 * s.maximum_pool_size / ((s.partner_latency.mean_ms() + to_ms(s.partner_overhead)) / 1000);
    warm.trace_requests = 0;
    warm.duration = std::chrono::seconds(2);  // the warm-up; the measured run below is 3 s
    validate_settings(warm);
    std::cerr << "validate: warming the service up, then measuring its hold (2 s and 3 s at " << std::fixed
              << std::setprecision(1) << warm.rate_per_s << "/s, not compared)...\n";
    run_real(warm);
    warm.duration = std::chrono::seconds(3);
    warm.seed = s.seed + 1;  // other arrivals than the compared runs'
    // Its hold sets the rates below; each compared point's simulator takes its own run's.
    overhead_from_hold(s, number_at(run_real(warm), {"prediction", "mean_hold_ms"}));
  }
  std::cout << "validate --targets: " << s.strategy << " on " << s.scenario << ", partner " << s.partner_latency.to_string()
            << "; simulator: db-latency " << s.db_latency.to_string() << ", partner-overhead "
            << format_duration(s.partner_overhead) << "\n\n";
  // Unless --rate is given: below saturation (70 % of pool / mean partner
  // time) and above it (130 %), where connectionTimeout decides the 503s.
  const double ceiling = s.maximum_pool_size / ((s.partner_latency.mean_ms() + to_ms(s.partner_overhead)) / 1000);
  const std::vector<double> rates = unset("rate") ? std::vector<double>{0.7 * ceiling, 1.3 * ceiling} : std::vector<double>{s.rate_per_s};
  std::vector<json> results;
  bool all_ok = true;
  for (const double rate : rates) {
    Settings one = s;
    one.rate_per_s = rate;
    validate_settings(one);
    all_ok = compare_with_targets(one, !calibrated, !unset("pool-handoff"), results) && all_ok;
  }
  if (!out.empty()) write_results(results, out);
  std::cout << (all_ok ? "the simulator matches the service: counts within 3 %, ok p99 within 10 %"
                       : "the simulator does NOT match the service within 3 % (counts) and 10 % (ok p99)")
            << "\n";
  return all_ok ? 0 : 1;
}

int cmd_validate(Settings s, const CLI::App& app, const std::string& out, int repetitions) {
  if (!s.targets.empty()) return validate_targets(std::move(s), app, out);
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
  validate_settings(s);

  const bool calibrated = !unset("db-latency") || !unset("partner-overhead");
  if (!calibrated) measure_stack_costs(s, app);
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
  expand_repetitions(s, repetitions);  // refuses a bad --repetitions before any run
  if (repetitions > 1)
    std::cout << "repetitions: " << repetitions << " per world and load, repetition i with the same seed in both "
              << "worlds; sim/real is the mean of the paired ratios, with its 95 % t-interval\n\n";
  else
    std::cout << "repetitions: 1 (no interval; --repetitions 3 or more gives each ratio its interval)\n\n";
  const auto figure = [](const std::vector<json>& runs, std::initializer_list<const char*> path) {
    std::vector<double> v;
    for (const auto& r : runs) v.push_back(number_at(r, path));
    return v;
  };
  for (const double u : loads) {
    Settings one = s;
    if (u > 0) one.rate_per_s = u * s.maximum_pool_size / (hold_ms / 1000);
    std::vector<json> rr, rs;
    for (Settings rep : expand_repetitions(one, repetitions)) {
      Settings real = rep, sim = rep;
      real.world = "real";
      sim.world = "sim";
      std::cerr << "validate: real run at " << std::setprecision(1) << std::fixed << one.rate_per_s << "/s"
                << (repetitions > 1 ? " (repetition " + std::to_string(rep.repetition + 1) + " of " +
                                          std::to_string(repetitions) + ", seed " + std::to_string(rep.seed) + ")"
                                    : std::string())
                << "...\n";
      rr.push_back(run_real(real));
      rs.push_back(run_sim(sim));
      results.push_back(rr.back());
      results.push_back(rs.back());
    }
    const bool high = u == 0 || u >= 0.85;
    std::ostringstream title;
    title << std::fixed << std::setprecision(1) << one.rate_per_s << "/s offered, pool utilisation real "
          << std::setprecision(2) << stats::summarize(figure(rr, {"pool", "utilization"})).mean << ", sim "
          << stats::summarize(figure(rs, {"pool", "utilization"})).mean;
    all_ok = print_case(title.str(),
                        {{"ok-throughput /s", figure(rr, {"throughput_ok_per_s"}), figure(rs, {"throughput_ok_per_s"}),
                          high ? 0.15 : 0.10},
                         {"ok latency p50 ms", figure(rr, {"latency_ok_ms", "p50"}), figure(rs, {"latency_ok_ms", "p50"}),
                          high ? 0.15 : 0},
                         {"ok latency p99 ms", figure(rr, {"latency_ok_ms", "p99"}), figure(rs, {"latency_ok_ms", "p99"}),
                          high ? 0.15 : 0},
                         {"pool utilisation", figure(rr, {"pool", "utilization"}), figure(rs, {"pool", "utilization"}), 0},
                         {"pool wait p99 ms", figure(rr, {"pool", "wait_ms", "p99"}), figure(rs, {"pool", "wait_ms", "p99"}),
                          0},
                         {"pool timeouts", figure(rr, {"requests", "pool_timeout"}),
                          figure(rs, {"requests", "pool_timeout"}), 0}}) &&
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

void check_knee_plan(const std::vector<Settings>& runs) {
  for (const auto& s : runs) {
    if (s.world != "sim") throw SettingError("--knee-p99: the knee is found in the simulator; give --world sim");
    if (s.arrival != Arrival::open)
      throw SettingError("--knee-p99: the knee is a rate; it needs the open arrival model (--rate)");
  }
}

json sweep_knees(const std::vector<Settings>& runs, Duration p99_target, int jobs) {
  check_knee_plan(runs);
  // One bisection per strategy, from the plan's highest rate of it; each rate it tries runs on every
  // repetition's seed (the plan's first point of each).
  std::vector<report::Knee> knees;
  std::vector<std::vector<Settings>> seeds_of;  // by knee
  std::vector<double> top;
  for (const auto& s : runs) {
    const auto it = std::find_if(knees.begin(), knees.end(), [&](const auto& k) { return k.strategy == s.strategy; });
    const auto i = static_cast<std::size_t>(it - knees.begin());
    if (it == knees.end()) knees.push_back({s.strategy, {}, {}}), seeds_of.emplace_back(), top.push_back(s.rate_per_s);
    top[i] = std::max(top[i], s.rate_per_s);
    if (std::find(knees[i].seeds.begin(), knees[i].seeds.end(), s.seed) == knees[i].seeds.end())
      knees[i].seeds.push_back(s.seed), seeds_of[i].push_back(s);
  }
  constexpr int kSteps = 7, kDoublings = 3;  // resolution: the starting rate / 128
  std::size_t most_seeds = 0;
  for (const auto& v : seeds_of) most_seeds = std::max(most_seeds, v.size());
  // The jobs go to the seeds of a rate, or to the strategies when there are fewer seeds than jobs.
  const int seed_jobs = most_seeds >= static_cast<std::size_t>(jobs) ? jobs : 1;
  run_indexed(
      knees.size(), seed_jobs == 1 ? jobs : 1,
      [&](std::size_t i) {
        knees[i].search = report::find_knee(
            [&](double r) {
              int passed = 0;
              run_indexed(
                  seeds_of[i].size(), seed_jobs,
                  [&](std::size_t j) {
                    Settings probe = seeds_of[i][j];
                    probe.rate_per_s = r;
                    validate_settings(probe);
                    return json(report::below_knee(run_sim(probe), p99_target));
                  },
                  [&](std::size_t, json&& ok) { passed += ok.get<bool>() ? 1 : 0; });
              return passed;
            },
            static_cast<int>(seeds_of[i].size()), top[i], kSteps, kDoublings);
        return json(nullptr);
      },
      [](std::size_t, json&&) {});
  return report::knees_json(knees, p99_target);
}

void print_knees(std::ostream& out, const json& knees) {
  out << "knee (ok/s >= 95 % of offered, the arrivals over the arrival window, and p99 <= "
      << format_duration(from_ms(knees["criteria"]["p99_max_ms"].get<double>()))
      << "; bisection over the rate in the simulator, each rate on every repetition's seed):\n";
  for (const auto& k : knees["knees"]) {
    out << "  " << std::left << std::setw(28) << k["strategy"].get<std::string>() << std::right
        << report::knee_summary(k) << "\n";
  }
}

}  // namespace lockbench::cli

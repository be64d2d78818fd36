#include "cli/lint_code_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <stdexcept>

#include "settings/table.hpp"
#include "lint_code/findings.hpp"
#include "lint_code/render.hpp"
#include "lint_code/scan.hpp"
#include "plan/prometheus_input.hpp"
#include "scenarios/registry.hpp"
#include "sim/run_sim.hpp"

namespace lockbench::cli {

namespace {

using lint_code::Finding;

double num(const nlohmann::json& j, std::initializer_list<const char*> path) {
  const nlohmann::json* p = &j;
  for (const char* k : path) {
    if (!p->is_object() || !p->contains(k)) return 0;
    p = &(*p)[k];
  }
  return p->is_number() ? p->get<double>() : 0;
}

// The simulated run of a finding's shape: its strategy, and the scenario whose
// critical section makes as many partner calls as the transaction does.
// The orm-lease finding's shape. The stale write needs the save path to land
// on a row while its lease changes hands; neither the code nor the config says
// how often that is, so what is not given is assumed and said:
//  - the path's rate: kOrmWriterRate saves a second (--orm-writer-rate);
//  - the rows: the requests spread over twice the rows leased at once (rate x
//    the lease's hold, the scenario's partner calls at the latency's mean,
//    Little's law), so a row the path saves is under a lease about half the
//    time (--keys);
//  - the time: kOrmDuration, long enough for a few hundred saves (--duration).
constexpr double kOrmWriterRate = 5;
constexpr auto kOrmDuration = std::chrono::seconds(60);

void orm_lease_shape(Settings& sim, const LintCodeOptions& o, std::string& note) {
  std::vector<std::string> assumed;
  if (sim.orm_writer_rate <= 0) {
    sim.orm_writer_rate = kOrmWriterRate;
    assumed.push_back(fmt::format("this load-and-save path at {:g}/s (--orm-writer-rate)", kOrmWriterRate));
  }
  if (!o.keys_given && sim.arrival == Arrival::open) {
    const double hold_s = make_scenario(sim.scenario)->partner_calls() * sim.partner_latency.mean_ms() / 1000;
    const double leased = sim.rate_per_s * hold_s;
    sim.keys = std::max(2, static_cast<int>(std::lround(2 * leased)));
    assumed.push_back(fmt::format("over {} rows, twice the {:.0f} leased at once ({:.4g}/s x {:.2f} s), so a saved row is "
                                  "under a lease half the time (--keys)",
                                  sim.keys, leased, sim.rate_per_s, hold_s));
  }
  if (!o.duration_given && sim.duration < kOrmDuration) {
    sim.duration = kOrmDuration;
    assumed.push_back("for 60 s (--duration)");
  }
  for (std::size_t i = 0; i < assumed.size(); ++i) note += (i == 0 ? " (assumed: " : "; ") + assumed[i];
  if (!assumed.empty()) note += ")";
}

Settings shape_of(const Settings& s, const Finding& f, const LintCodeOptions& o, std::string& note) {
  Settings sim = s;
  sim.world = "sim";
  sim.strategy = f.strategy;
  if (f.kind == "remote-in-tx") {
    sim.scenario = f.remote_calls >= 2 ? "switch-primary" : "single-call";
    if (f.remote_calls > 2) note = fmt::format(" (the code makes {} calls; the simulated scenario makes 2)", f.remote_calls);
  }
  if (f.kind == "orm-lease") orm_lease_shape(sim, o, note);
  if (f.kind == "synchronized" && sim.pods < 2) {
    sim.pods = 2;  // one pod: the monitor excludes; the finding is about the second pod
    note = " (on 2 pods: one pod alone is excluded by the monitor; --pods sets it)";
  }
  return sim;
}

std::string violations_text(const nlohmann::json& r) {
  std::string out;
  double total = 0;
  if (r.contains("partner") && r["partner"].contains("violations"))
    for (const auto& [k, v] : r["partner"]["violations"].items())
      if (v.is_number() && v.get<double>() > 0) {
        total += v.get<double>();
        out += fmt::format("{}{} {}", out.empty() ? "" : ", ", v.get<long long>(), k);
      }
  return total > 0 ? fmt::format("{:.0f} partner violations ({})", total, out) : "no partner violations";
}

std::string consequence_of(const Settings& sim, const Finding& f, const nlohmann::json& r, const std::string& note) {
  const double ok_per_s = num(r, {"throughput_ok_per_s"});
  const double total = num(r, {"requests", "total"});
  const std::string load = fmt::format("at {:.4g}/s with partner latency {}", sim.offered_per_s(), sim.partner_latency.to_string());
  const std::string pool = fmt::format("this pool of {}{}", sim.maximum_pool_size,
                                       sim.pods > 1 ? fmt::format(" (x {} pods)", sim.pods) : "");
  if (f.kind == "remote-in-tx")
    return fmt::format(
        "holds a connection through {} call{}{}; {} {} serves {:.1f}/s: {:.0f} of {:.0f} requests timed out waiting for a "
        "connection, {:.0f} rejected, the health probe failed {:.0f} of {:.0f} checks, ok p99 {:.0f} ms "
        "(simulated, {} for {:.0f} s)",
        f.remote_calls, f.remote_calls == 1 ? "" : "s", note, load, pool, ok_per_s, num(r, {"requests", "pool_timeout"}),
        total, num(r, {"requests", "rejected"}), num(r, {"probe", "failed"}), num(r, {"probe", "total"}),
        num(r, {"latency_ok_ms", "p99"}), sim.strategy, num(r, {"duration_s"}));
  std::string extra;
  if (f.kind == "advisory-lock")
    extra = fmt::format(", {:.0f} unlock failures, {:.0f} locks left on pooled connections", num(r, {"locks", "unlock_failures"}),
                        num(r, {"locks", "leaked"}));
  if (f.kind == "orm-lease")
    extra = fmt::format(", {:.0f} of {:.0f} entity saves wrote the lock columns back (lock stomps)",
                        num(r, {"side_traffic", "lock_stomps"}), num(r, {"side_traffic", "entity_saves"}));
  return fmt::format("{}{} {}, {}: {} of {:.0f} requests{}, {:.1f} ok/s (simulated for {:.0f} s)", sim.strategy, note, load,
                     pool, violations_text(r), total, extra, ok_per_s, num(r, {"duration_s"}));
}

std::string reproduce_line(const Settings& sim) {
  std::string line = "lockbench run --world sim";
  for (const auto& a : setting_args(sim, {"db", "redis", "etcd", "partner"})) {
    const bool plain = a.find_first_of(" \"'$;&|<>()*?") == std::string::npos;
    line += " " + (plain ? a : "'" + a + "'");
  }
  return line;
}

void simulate(const Settings& s, const LintCodeOptions& o, std::vector<Finding>& findings) {
  std::map<std::string, std::pair<nlohmann::json, std::string>> runs;  // reproduce line -> result, error
  auto run_of = [&runs](const Settings& sim) -> const std::pair<nlohmann::json, std::string>& {
    const std::string line = reproduce_line(sim);
    auto it = runs.find(line);
    if (it == runs.end()) {
      std::pair<nlohmann::json, std::string> run;
      try {
        validate_settings(sim);
        run.first = run_sim(sim);
      } catch (const SettingError& e) {
        run.second = e.what();
      }
      it = runs.emplace(line, std::move(run)).first;
    }
    return it->second;
  };
  for (auto& f : findings) {
    if (f.strategy.empty()) continue;
    std::string note;
    const Settings sim = shape_of(s, f, o, note);
    const auto& [result, error] = run_of(sim);
    if (!error.empty()) {
      f.consequence = "not simulated: " + error;
      continue;
    }
    f.consequence = consequence_of(sim, f, result, note);
    f.reproduce = reproduce_line(sim);
    if (f.kind == "orm-lease") {
      // The fix, the same shape: the lease columns out of the entity, so the
      // same save writes its own columns only.
      Settings fixed = sim;
      fixed.strategy = "row-lease";
      const auto& [unmapped, unmapped_error] = run_of(fixed);
      if (unmapped_error.empty())
        f.consequence += fmt::format("; with the lease columns kept out of the entity (row-lease, the same saves): {:.0f} of "
                                     "{:.0f} saves wrote the lock columns back, {}",
                                     num(unmapped, {"side_traffic", "lock_stomps"}),
                                     num(unmapped, {"side_traffic", "entity_saves"}), violations_text(unmapped));
    }
  }
}

}  // namespace

void apply_prometheus_scrape(Settings& s, const std::string& path, const std::function<bool(const std::string&)>& flag_given,
                             std::ostream* note) {
  const plan::PrometheusInput m = plan::read_prometheus_file(path);
  if (!flag_given("partner-latency")) s.partner_latency = m.partner;
  if (!flag_given("maximum-pool-size")) s.maximum_pool_size = m.pool_size;
  const bool arrival_given = flag_given("rate") || flag_given("users") || flag_given("burst");
  if (!arrival_given) {
    s.arrival = Arrival::open;
    s.rate_per_s = m.rate_per_s * s.pods;
  }
  if (note)
    *note << fmt::format("lint: {}: partner p50 {:.0f} ms, p99 {:.0f} ms over {:.0f} calls (--partner-latency {}){}; pool {}{}; "
                         "rate {:.3f}/s = requests served / {:.0f} s uptime, x {} pod(s){}\n",
                         path, m.partner_p50_ms, m.partner_p99_ms, m.partner_calls, m.partner.to_string(),
                         flag_given("partner-latency") ? " (the flag's kept)" : "", m.pool_size,
                         flag_given("maximum-pool-size") ? " (the flag's kept)" : "", m.rate_per_s, m.uptime_s, s.pods,
                         arrival_given ? " (the flag's load kept)" : "");
}

int cmd_lint_code(const Settings& s, const LintCodeOptions& o) {
  if (o.format != "text" && o.format != "json" && o.format != "sarif")
    throw SettingError("--format: '" + o.format + "' is not accepted (accepted: text, json, sarif)");
  if (o.fail_on != "flag" && o.fail_on != "warn" && o.fail_on != "never")
    throw SettingError("--fail-on: '" + o.fail_on +
                       "' is not accepted with --code (accepted: flag, the default: exit 1 when a finding is flagged; warn: "
                       "also on warnings; never)");
  if (o.depth < 0 || o.depth > 32) throw SettingError("--code-depth: " + std::to_string(o.depth) + " is not accepted (0 to 32)");
  if (!lint_code::java_grammar_available())
    throw SettingError("--code: this lockbench was built without the Java grammar (Debian's libtree-sitter-dev, which "
                       "scripts/setup installs, and npm's tree-sitter-java, which the build fetches); rebuild with both, and "
                       "LOCKBENCH_JAVA_GRAMMAR on");
  lint_code::Scan scan;
  try {
    scan = lint_code::scan_tree(o.dir);
  } catch (const std::invalid_argument& e) {
    throw SettingError(e.what());
  }
  auto findings = lint_code::analyze(scan.files, {.depth = o.depth, .virtual_threads = s.virtual_threads, .jdk = s.jdk});
  if (o.simulate) {
    simulate(s, o, findings);
  } else {
    for (auto& f : findings)
      if (!f.strategy.empty())
        f.consequence = "give --from application.yml (and --rate) for the simulator's figure at the service's settings";
  }
  if (o.format == "json")
    std::cout << lint_code::render_json(scan, findings).dump(2) << "\n";
  else if (o.format == "sarif")
    std::cout << lint_code::render_sarif(scan, findings).dump(2) << "\n";
  else
    std::cout << lint_code::render_text(scan, findings);
  if (o.fail_on == "never") return 0;
  for (const auto& f : findings)
    if (f.level == Finding::Level::flag || (o.fail_on == "warn" && f.level == Finding::Level::warn)) return 1;
  return 0;
}

}  // namespace lockbench::cli

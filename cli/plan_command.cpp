// `lockbench plan` (cli/plan_command.hpp): inputs to settings, the paper plan
// per candidate, the simulator's confirmation on every core, the output.
#include "cli/plan_command.hpp"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "report/fail_on.hpp"
#include "cli/output.hpp"
#include "cli/parallel_runs.hpp"
#include "settings/table.hpp"
#include "cli/spring_config.hpp"
#include "real/run_real.hpp"
#include "sim/run_sim.hpp"
#include "plan/confirm.hpp"
#include "plan/envelope.hpp"
#include "plan/paper.hpp"
#include "plan/prometheus_input.hpp"
#include "plan/render.hpp"
#include "real/calibrate.hpp"
#include "report/fields.hpp"
#include "real/pg_limits.hpp"
#include "scenarios/registry.hpp"
#include "strategies/registry.hpp"

namespace lockbench::cli {

namespace {

constexpr auto kPlanDuration = std::chrono::minutes(2);

// The candidates: a --strategy flag's list, else every strategy of `all` that applies.
std::vector<std::string> candidates(const std::string& spec, const std::string& scenario) {
  std::vector<std::string> out;
  std::vector<std::string> names;
  if (spec == "all") {
    names = all_strategies();
  } else {
    std::stringstream in(spec);
    std::string one;
    while (std::getline(in, one, ',')) names.push_back(one);
  }
  for (const auto& n : names) {
    const StrategyInfo& info = strategy_info(n);
    if (spec == "all") {
      try {
        check_applies(info, scenario);
      } catch (const SettingError&) {
        continue;
      }
    } else {
      check_applies(info, scenario);
    }
    out.emplace_back(info.spec);
  }
  if (out.empty()) throw SettingError("--strategy: no candidate strategy applies to scenario " + scenario);
  return out;
}

plan::Load load_of(const Settings& s) {
  plan::Load l;
  l.rate_per_s = s.rate_per_s;
  l.pods = s.pods;
  l.partner = s.partner_latency;
  l.calls = make_scenario(s.scenario)->partner_calls();
  l.db_ms = 4 * s.db_latency.mean_ms();  // the statements a request runs, as lint counts them
  l.connect_timeout = s.partner_connect_timeout;
  l.read_timeout = s.partner_read_timeout;
  l.attempts = s.partner_max_attempts;
  l.backoff_base = s.retry_backoff_base;
  l.backoff_cap = s.retry_backoff_cap;
  return l;
}

// What the paper reads from the thresholds: the p99 bound and whether violations count.
// Exclusion is a target whatever --fail-on says (issue 42: a plan that leaves it out recommended `none`).
plan::PaperTargets paper_targets(const std::vector<report::Threshold>& thresholds, double recovery_ms) {
  plan::PaperTargets t;
  t.no_violations = true;
  for (const auto& th : thresholds) {
    const bool none_allowed = (th.op == ">" && th.value < 1) || (th.op == ">=" && th.value <= 1);
    if (th.metric == "p99" && (th.op == ">" || th.op == ">=")) t.p99_ms_max = th.value;
    if (th.metric == "pool_timeouts" && none_allowed) t.no_pool_timeouts = true;
    if (th.metric == "probe_failures" && none_allowed) t.no_probe_failures = true;
    if (th.metric == "rejected" && none_allowed) t.no_rejected = true;
  }
  t.recovery_ms_max = recovery_ms;
  return t;
}

// "10", "10/day", "10/d", "0.5/h": ambiguous outcomes allowed per day (-1 when not given).
double ambiguous_max_of(const std::string& text) {
  if (text.empty()) return -1;
  std::string number = text, unit = "day";
  if (const auto slash = text.find('/'); slash != std::string::npos) number = text.substr(0, slash), unit = text.substr(slash + 1);
  const double per = unit == "day" || unit == "d" ? 1 : unit == "h" || unit == "hour" ? 24 : 0;
  try {
    std::size_t used = 0;
    const double v = std::stod(number, &used);
    if (per > 0 && used == number.size() && !number.empty() && std::isdigit(static_cast<unsigned char>(number[0])) &&
        v >= 0 && v <= 1e12)
      return v * per;
  } catch (const std::exception&) {
  }
  throw SettingError("--ambiguous-max: '" + text + "' is not a count per day (accepted: N, N/day or N/h, N >= 0; "
                     "e.g. 0 or 10/day)");
}

// The judge of one run: --fail-on with "violations" meaning lock failures (the
// exclusion kinds) only; exclusion always; the ambiguous outcomes against
// --ambiguous-max (per day, scaled to the run; a short run may exceed its
// share by chance: 2 sigma and one event of slack, none when 0 is allowed).
plan::Judge plan_judge(const std::vector<report::Threshold>& thresholds, double ambiguous_per_day_max) {
  return [thresholds, ambiguous_per_day_max](const nlohmann::json& r) {
    const report::detail::Violations v = report::detail::violations_of(r);
    double ambiguous = v.orphan;
    for (const auto& [kind, n] : v.note_kinds)
      if (kind == "ambiguous_commit") ambiguous += n;
    nlohmann::json locks_only = r;
    if (locks_only.contains("partner") && locks_only["partner"].contains("violations"))
      for (auto& [kind, n] : locks_only["partner"]["violations"].items())
        if (n.is_number() && report::detail::classify_kind(kind) == report::detail::KindClass::orphan) n = 0;
    std::vector<std::string> broken = report::broken_thresholds(thresholds, {locks_only});
    const std::string who = r.value("strategy", std::string("?"));
    if (v.exclusion > 0 && std::none_of(thresholds.begin(), thresholds.end(),
                                        [](const report::Threshold& t) { return t.metric == "violations"; }))
      broken.push_back(fmt::format("{}: violations = {:.0f} (lock failures; exclusion is always a target)", who,
                                   v.exclusion));
    if (ambiguous_per_day_max >= 0 && ambiguous > 0) {
      const double days = r.value("duration_s", 0.0) / 86400;
      const double allowed = ambiguous_per_day_max * days;
      if (ambiguous_per_day_max == 0 || ambiguous > allowed + 2 * std::sqrt(allowed) + 1)
        broken.push_back(fmt::format("{}: ambiguous outcomes = {:.0f} in {}, above --ambiguous-max {:g}/day", who,
                                     ambiguous, format_duration(from_s(days * 86400)), ambiguous_per_day_max));
    }
    return broken;
  };
}

// A file plan will write, checked before any run: a regular file (or none yet) in a directory where a
// probe can be written and removed. A device, FIFO, socket or directory is refused.
void check_writable(const std::string& path, const char* flag) {
  if (path.empty()) return;
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::exists(st) && !fs::is_regular_file(st))
    throw SettingError(std::string(flag) + ": '" + path + "' exists and is not a regular file (a device, FIFO, "
                       "socket or directory); give a file name");
  const fs::path dir = fs::absolute(path).parent_path();
  fs::create_directories(dir, ec);
  const fs::path probe = dir / (".lockbench-plan-probe-" + std::to_string(::getpid()));
  std::ofstream f(probe);
  const bool ok = static_cast<bool>(f);
  f.close();
  fs::remove(probe, ec);
  if (!ok) throw SettingError(std::string(flag) + ": cannot write '" + path + "' (give a file in a writable directory)");
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream t;
  t << f.rdbuf();
  return t.str();
}

// "25%" or "25": a share from 0 to 400 %.
double margin_of(const std::string& text) {
  if (text.empty()) return 0;
  std::string digits = text;
  if (digits.back() == '%') digits.pop_back();
  try {
    std::size_t used = 0;
    const double v = std::stod(digits, &used);
    if (used == digits.size() && !digits.empty() && v >= 0 && v <= 400) return v / 100;
  } catch (const std::exception&) {
  }
  throw SettingError("--margin: '" + text + "' is not a share from 0% to 400% (e.g. 25%)");
}

// plan --world real: the real stack's own costs, measured (as calibrate) unless
// --db-latency or --partner-overhead was given, in the plan's time: a run at
// time scale F compresses every configured duration by F but not the
// database's statements, so a 0.5 ms statement is a 5 ms one at F = 0.1.
void plan_for_the_real_stack(Settings& s, const std::function<bool(const std::string&)>& flag_given,
                             std::vector<std::string>& inputs) {
  if (s.db_url.empty() || s.partner_url.empty())
    throw SettingError("--db and --partner: plan --world real confirms in a real database and partner; give both");
  if (flag_given("db-latency") || flag_given("partner-overhead")) {
    inputs.push_back("the real stack's costs as given: --db-latency " + s.db_latency.to_string());
    return;
  }
  std::cerr << "lockbench: plan: measuring the real stack's own costs (as lockbench calibrate)...\n";
  const real::StackCosts c = real::measure_stack(s);
  const double f = 1 / s.time_scale;
  real::apply_stack_costs(s, c, f);
  inputs.push_back(fmt::format(
      "the real stack, measured: a statement p50 {:.2f} ms, p99 {:.2f} ms; at time scale {:g} the plan sizes for "
      "--db-latency {} (x {:g})",
      c.statement.p50_ms, c.statement.p99_ms, s.time_scale, s.db_latency.to_string(), f));
}

// Each strategy the simulator confirmed, run once in the real world at the given rate and time scale.
void confirm_in_real_world(plan::PlanResult& p, const Settings& real_base, double given_rate, const plan::Judge& judge,
                           const std::string& fail_on) {
  for (auto& c : p.confirmed) {
    if (!c.feasible) continue;
    Settings r = c.chosen.settings;
    r.world = "real";
    r.db_url = real_base.db_url;
    r.partner_url = real_base.partner_url;
    r.redis_url = real_base.redis_url;
    r.time_scale = real_base.time_scale;
    r.duration = real_base.duration;  // the plan's run length, not the simulator's horizon
    r.rate_per_s = given_rate;
    r.seed = real_base.seed;
    validate_settings(r);
    std::cerr << fmt::format("lockbench: plan: {} in the real world, time scale {:g}, {}...\n", c.strategy,
                             r.time_scale, format_duration(std::chrono::duration_cast<Duration>(r.duration * r.time_scale)));
    const nlohmann::json res = run_real(r);
    plan::Evidence e;
    e.settings = r;
    e.broken = judge(res);
    e.met = e.broken.empty();
    const auto num = [&res](std::initializer_list<const char*> path) {
      const nlohmann::json* j = &res;
      for (const char* k : path) {
        if (!j->is_object() || !j->contains(k)) return 0.0;
        j = &(*j)[k];
      }
      return j->is_number() ? j->get<double>() : 0.0;
    };
    // In the plan's time, as the targets are: a time-scaled run's latencies divided by its scale.
    const double p99 = res.contains("unscaled") ? num({"unscaled", "latency_ok_ms", "p99"}) : num({"latency_ok_ms", "p99"});
    e.p99_ms.push_back(p99 > 0 ? p99 : std::numeric_limits<double>::quiet_NaN());
    e.lease_steals = num({"locks", "lease_steals"});
    e.run_lines.push_back(plan::run_line(r, fail_on));
    c.real_counts = {{"ok", num({"requests", "ok"})},
                     {"pool_timeouts", num({"requests", "pool_timeout"})},
                     {"violations", num({"partner", "violations", "total"})},
                     {"probe_failures", num({"probes", "failed"})},
                     {"lease_steals", e.lease_steals}};
    c.real = std::move(e);
    c.real_time_scale = r.time_scale;
  }
}

// A chosen pool that the database cannot give every pod breaks a target of its own.
void apply_connection_budget(plan::PlanResult& p, int pods, int budget) {
  if (budget <= 0) return;
  for (auto& c : p.confirmed) {
    if (c.chosen.run_lines.empty()) continue;
    const int needed = pods * c.chosen.settings.maximum_pool_size;
    if (needed <= budget) continue;
    c.feasible = false;
    c.chosen.met = false;
    c.chosen.broken.push_back(fmt::format("connections: {} pod(s) x {} = {}, above the database's {} (--max-connections)",
                                          pods, c.chosen.settings.maximum_pool_size, needed, budget));
  }
}

// The horizon runs go `jobs` at a time: one per seed and strategy at the planned rate (and its headroom).
std::vector<Settings> horizon_runs(const Settings& s, Duration horizon, int seeds) {
  if (horizon.count() == 0) return {};
  Settings h = s;
  h.duration = horizon;
  return std::vector<Settings>(static_cast<std::size_t>(seeds), h);
}

int positive(const std::string& text, const char* flag, int hi) {
  try {
    std::size_t used = 0;
    const int v = std::stoi(text, &used);
    if (used == text.size() && v >= 1 && v <= hi) return v;
  } catch (const std::exception&) {
  }
  throw SettingError(fmt::format("{}: '{}' is not a whole number from 1 to {}", flag, text, hi));
}

// The database's connection budget (0 = none): --max-connections, or with
// --world real what the server has left (max_connections less the reserved and
// the sessions already there, less lockbench's own).
int connection_budget(const Settings& s, const Settings& real_base, bool real, std::vector<std::string>& inputs) {
  if (s.pg_max_connections > 0) {
    inputs.push_back(fmt::format("the database's connections: {} (--max-connections), for every pod's pool together",
                                 s.pg_max_connections));
    return s.pg_max_connections;
  }
  if (!real) return 0;
  constexpr int kOwn = 4;  // lockbench's own sessions beside the pools (run record, heartbeat, setup)
  const real::PgLimits l = real::read_pg_limits(real_base.db_url, "lockbench-plan");
  const int n = std::max(1, l.max_connections - l.reserved_connections - l.in_use - kOwn);
  inputs.push_back(fmt::format("the database's connections: {}, read from the server (max_connections {} - "
                               "superuser_reserved_connections {} - {} sessions there - {} of lockbench's own)",
                               n, l.max_connections, l.reserved_connections, l.in_use, kOwn));
  return n;
}

// The strategies the envelope draws: those that meet the targets, with the pool the runs confirmed.
std::vector<plan::PaperVerdict> envelope_verdicts(const plan::PlanResult& p) {
  std::vector<plan::PaperVerdict> drawn;
  for (std::size_t i = 0; i < p.paper.size(); ++i) {
    if (!plan::meets(p.confirmed[i])) continue;
    drawn.push_back(p.paper[i]);
    drawn.back().feasible = true;
    drawn.back().settings.pool_size = p.confirmed[i].chosen.settings.maximum_pool_size;
  }
  return drawn;
}

// The safe envelope for --html alone: drawn in a directory of its own, read, and removed (nothing is left
// beside the page). "" and `missing` set when it could not be drawn.
std::string envelope_for_html(const std::vector<plan::EnvelopeCurve>& curves, double p99_ms, double rate,
                              std::string& missing) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir = fs::temp_directory_path(ec) / ("lockbench-plan-" + std::to_string(::getpid()));
  fs::create_directories(dir, ec);
  missing = plan::write_envelope_svg(curves, p99_ms, rate, (dir / "envelope.svg").string());
  const std::string svg = missing.empty() ? slurp((dir / "envelope.svg").string()) : "";
  fs::remove_all(dir, ec);
  return svg;
}

// The plan's output: text or JSON on stdout, and the --svg and --html files.
// Returns false when a file could not be written (the line says which).
bool write_plan(const plan::PlanResult& p, const SpringConfig& spring, const PlanOptions& o,
                const std::vector<plan::EnvelopeCurve>& curves) {
  const Settings& s = p.base;
  const int rec = plan::recommended(p);
  const int shown = rec >= 0 ? rec : plan::closest(p);
  const std::string diff = o.from.empty() ? "" : plan::config_diff(p, shown, spring.key_of, o.from, slurp(o.from));
  const double planned_p99_ms = plan::quantile_ms(s.partner_latency, 0.99);
  bool written = true;
  std::string svg_missing, svg;
  if (!o.svg.empty()) {
    svg_missing = plan::write_envelope_svg(curves, planned_p99_ms, s.rate_per_s, o.svg);
    if (svg_missing.empty()) {
      std::cerr << "lockbench: safe envelope written to " << o.svg << "\n";
      svg = slurp(o.svg);
    } else {
      std::cerr << "lockbench: plan: --svg: " << svg_missing << "\n";
      written = false;
    }
  } else if (!o.html.empty()) {
    svg = envelope_for_html(curves, planned_p99_ms, s.rate_per_s, svg_missing);
  }
  if (!o.html.empty()) {
    try {
      write_file_atomically(o.html, plan::render_html(p, diff, svg, svg_missing), "--html");
      std::cerr << "lockbench: plan written to " << o.html << "\n";
    } catch (const SettingError& e) {
      std::cerr << "lockbench: plan: " << e.what() << "\n";
      written = false;
    }
  }
  if (o.format == "json") {
    nlohmann::json j = plan::render_json(p);
    j["properties_diff"] = diff.empty() ? nlohmann::json(nullptr) : nlohmann::json(diff);
    j["envelope"] = plan::envelope_json(curves, planned_p99_ms, s.rate_per_s);  // report.html draws it (DIR/plan.json)
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << plan::render_text(p);
    if (!diff.empty())
      std::cout << "\n" << (rec >= 0 ? "the changes" : "the closest point's changes") << ", as a diff of " << o.from
                << " (patch -p0 applies it):\n" << diff;
  }
  return written;
}

// The flags that are not settings, read and checked before anything runs.
struct PlanArgs {
  std::vector<report::Threshold> thresholds;
  double recovery_ms = 0;
  int seeds = 3;
  int jobs = 1;
  Duration horizon{};
  double ambiguous_max = -1;
};

PlanArgs plan_args(const PlanOptions& o) {
  if (o.format != "text" && o.format != "json")
    throw SettingError("--format: '" + o.format + "' is not accepted (accepted: text, json)");
  PlanArgs a;
  a.thresholds = report::parse_fail_on(o.fail_on);
  a.recovery_ms = o.recovery_max.empty() ? 0 : to_ms(parse_duration(iso8601_duration(o.recovery_max), "--recovery-max"));
  a.seeds = positive(o.seeds, "--seeds", 20);
  a.jobs = o.jobs.empty() ? default_jobs() : parse_jobs(o.jobs);
  a.horizon = o.horizon == "0" ? Duration{} : parse_duration(iso8601_duration(o.horizon), "--horizon");
  if (a.horizon.count() > 0 && a.horizon < std::chrono::minutes(1))
    throw SettingError("--horizon: '" + o.horizon + "' is shorter than a minute (accepted: 0, or a duration of 1m or more, e.g. 24h)");
  a.ambiguous_max = ambiguous_max_of(o.ambiguous_max);
  check_writable(o.svg, "--svg");
  check_writable(o.html, "--html");
  return a;
}

// The service as it is: --from's Spring settings, then --prometheus's measured load and pool.
SpringConfig read_service(Settings& s, const PlanOptions& o, plan::PlanResult& p) {
  SpringConfig spring;
  if (!o.from.empty()) {
    spring = apply_spring_config(s, o.from);
    p.inputs.push_back(fmt::format("{}: {} settings read", o.from, spring.applied.size()));
  }
  if (!o.prometheus.empty()) {
    const plan::PrometheusInput m = plan::read_prometheus_file(o.prometheus);
    s.partner_latency = m.partner;
    s.maximum_pool_size = m.pool_size;
    s.arrival = Arrival::open;
    s.rate_per_s = m.rate_per_s * s.pods;
    p.inputs.push_back(fmt::format(
        "{}: partner p50 {:.0f} ms, p99 {:.0f} ms over {:.0f} calls (--partner-latency {}); pool {}; rate {:.3f}/s "
        "= requests served / {:.0f} s uptime, x {} pod(s){}{}",
        o.prometheus, m.partner_p50_ms, m.partner_p99_ms, m.partner_calls, m.partner.to_string(), m.pool_size,
        m.rate_per_s, m.uptime_s, s.pods,
        m.hold_mean_ms >= 0 ? fmt::format("; measured mean connection hold {:.0f} ms", m.hold_mean_ms) : "",
        m.pool_timeouts > 0 ? fmt::format("; {:.0f} pool timeouts so far", m.pool_timeouts) : ""));
  }
  p.current = s.strategy;
  return spring;
}

// Fewest changes: the current settings are floors, the pool's lowered only by the connection budget
// (none with --minimize).
plan::Recommendation floors_of(const Settings& s, int budget, bool minimize, plan::PlanResult& p) {
  plan::Recommendation floor;
  if (minimize) return floor;
  floor.pool_size = s.maximum_pool_size;
  floor.connection_timeout = s.connection_timeout;
  floor.read_timeout = s.partner_read_timeout;
  floor.lease_ttl = s.lease_ttl;
  floor.max_threads = s.max_threads;
  if (budget > 0 && s.pods * floor.pool_size > budget) {
    floor.pool_size = std::max(1, budget / s.pods);
    p.inputs.push_back(fmt::format("the current pool {} x {} pod(s) is above the database's {} connections: the plan "
                                   "may lower it to {} (--max-connections)",
                                   s.maximum_pool_size, s.pods, budget, floor.pool_size));
  }
  p.inputs.push_back(fmt::format("fewest changes: never below the current pool {}, Tomcat threads {}, "
                                 "connectionTimeout {}, read timeout {}, lease TTL {} (--minimize for the smallest)",
                                 floor.pool_size, floor.max_threads, format_duration(floor.connection_timeout),
                                 format_duration(floor.read_timeout), format_duration(floor.lease_ttl)));
  return floor;
}

// A run's verdict is settled once a count that only grows is past its threshold (> or >=): it has failed.
SettledFn settled_by(const std::vector<report::Threshold>& thresholds) {
  struct Limit {
    std::int64_t SimCounts::*count;
    bool or_equal;
    double value;
  };
  std::vector<Limit> limits;
  for (const auto& t : thresholds) {
    if (t.op != ">" && t.op != ">=") continue;
    std::int64_t SimCounts::*count = t.metric == "pool_timeouts"    ? &SimCounts::pool_timeouts
                                     : t.metric == "rejected"       ? &SimCounts::rejected
                                     : t.metric == "conflicts"      ? &SimCounts::conflicts
                                     : t.metric == "errors"         ? &SimCounts::errors
                                     : t.metric == "probe_failures" ? &SimCounts::probe_failures
                                     : t.metric == "lease_steals"   ? &SimCounts::lease_steals
                                                                    : nullptr;
    if (count) limits.push_back({count, t.op == ">=", t.value});
  }
  if (limits.empty()) return {};
  return [limits](const SimCounts& c) {
    return std::any_of(limits.begin(), limits.end(), [&c](const Limit& l) {
      const auto v = static_cast<double>(c.*l.count);
      return l.or_equal ? v >= l.value : v > l.value;
    });
  };
}

// The simulator's runs of a batch, `jobs` at a time, each result cut to what the verdict reads;
// with `settled`, a run stops once its verdict is (sim/run_sim.hpp's run_sim_until).
plan::Runner sim_runner(int jobs, const SettledFn& settled = {}) {
  return [jobs, settled](const std::vector<Settings>& batch) {
    std::vector<nlohmann::json> out(batch.size());
    run_indexed(batch.size(), jobs, [&](std::size_t i) {
      nlohmann::json r = settled ? run_sim_until(batch[i], settled) : run_sim(batch[i]);
      // Only what the verdict reads (a run's timeline and trace are large).
      for (const char* bulky : {"timeline", "trace", "latency_histogram_ms"}) r.erase(bulky);
      return r;
    }, [&](std::size_t i, nlohmann::json&& r) { out[i] = std::move(r); });
    return out;
  };
}

// The why lines describe the settings recommended: the pool the runs confirmed, the rest as planned.
void describe_confirmed(plan::PlanResult& p, const plan::Load& load, const plan::PaperTargets& targets) {
  p.paper_pool.assign(p.paper.size(), 0);
  for (std::size_t i = 0; i < p.paper.size(); ++i) {
    const auto& c = p.confirmed[i];
    p.paper_pool[i] = p.paper[i].settings.pool_size;
    if (c.chosen.run_lines.empty()) continue;
    p.paper[i].settings.pool_size = c.chosen.settings.maximum_pool_size;
    p.paper[i].settings.max_threads = std::max(p.paper[i].settings.max_threads, c.chosen.settings.max_threads);
    plan::describe(p.paper[i], load, targets);
  }
}

}  // namespace

void add_plan_flags(CLI::App& plan, PlanOptions& o) {
  plan.add_option("--from", o.from,
                  "the service's Spring Boot application.properties or application.yml, as lint reads it; the "
                  "recommendation is printed as a diff of it")
      ->type_name("FILE");
  plan.add_option("--prometheus", o.prometheus,
                  "one scrape of the service's /actuator/prometheus: the partner latency from "
                  "http_client_requests_seconds_bucket, the pool from hikaricp_connections_max, the rate from "
                  "http_server_requests_seconds_count / process_uptime_seconds (one pod's; x --pods)")
      ->type_name("FILE");
  plan.add_option("--fail-on", o.fail_on,
                  "the targets: a point fails when one of these holds, as run --fail-on reads them (default " +
                      o.fail_on + ")")
      ->type_name("THRESHOLDS");
  plan.add_option("--recovery-max", o.recovery_max,
                  "target: after a crash every key it held is free again within this (simulator: --crash-at at "
                  "half time)")
      ->type_name("DURATION");
  plan.add_option("--seeds", o.seeds, "simulator: each confirmed point runs over this many seeds (default 3)")
      ->type_name("N");
  plan.add_option("--format", o.format, "text (default) | json")->type_name("FORMAT");
  plan.add_option("--svg", o.svg, "write the safe envelope (rate against partner p99, per strategy) as SVG")
      ->type_name("FILE");
  plan.add_option("--html", o.html,
                  "write the plan as one HTML page (the table, the diff, the safe envelope inline, the arithmetic and "
                  "run lines per strategy); the envelope's SVG is written beside it unless --svg names one")
      ->type_name("FILE");
  plan.add_option("--margin", o.margin,
                  "plan for the rate plus this share (e.g. 25%): the settings keep that headroom; a real-world "
                  "confirmation still runs at the given rate")
      ->type_name("PERCENT");
  plan.add_option("--horizon", o.horizon,
                  "every recommended point, and its headroom, runs this long in the simulator over every seed (seeds "
                  "the search did not use), and the plan states the 95 % Poisson bound on each event's rate (default "
                  "24h; 0 = the short runs decide)")
      ->type_name("DURATION");
  plan.add_option("--ambiguous-max", o.ambiguous_max,
                  "target: calls given up on at the read timeout while the partner may still apply them (ambiguous "
                  "commits, effects on one side), per day (N, N/day, N/h); the read timeout is sized for it. Default: "
                  "counted and reported apart from lock failures, not a target")
      ->type_name("RATE");
  plan.add_flag("--minimize", o.minimize,
                "the smallest settings that meet the targets, instead of the fewest changes from the current ones "
                "(which never lower the pool, threads, timeouts or lease TTL)");
  plan.add_option("--jobs", o.jobs,
                  "simulator runs in parallel (default: the core count, here " + std::to_string(default_jobs()) + ")")
      ->type_name("N");
}

int cmd_plan(Settings s, const std::function<void(Settings&)>& apply_flags,
             const std::function<bool(const std::string&)>& flag_given, const PlanOptions& o) {
  const auto started = std::chrono::steady_clock::now();
  const PlanArgs a = plan_args(o);
  plan::PlanResult p;
  const Duration default_duration = Settings{}.duration;
  const SpringConfig spring = read_service(s, o, p);
  apply_flags(s);
  if (!flag_given("strategy")) s.strategy = "all";
  if (s.duration == default_duration && !flag_given("duration")) s.duration = kPlanDuration;
  if (s.arrival != Arrival::open)
    throw SettingError("--rate: plan sizes for an open-loop rate (requests per second), not --users or --burst");
  const std::vector<std::string> names = candidates(s.strategy, s.scenario);
  s.strategy = names.front();  // validate() checks one strategy; each candidate runs as itself
  const double margin = margin_of(o.margin);
  const bool real = s.world == "real";
  const Settings real_base = s;
  if (real && (s.db_url.empty() || s.partner_url.empty()))
    throw SettingError("--db and --partner: plan --world real confirms in a real database and partner; give both");
  const int budget = connection_budget(s, real_base, real, p.inputs);
  if (real) {
    plan_for_the_real_stack(s, flag_given, p.inputs);
    s.world = "sim";
    s.db_url.clear(), s.partner_url.clear(), s.redis_url.clear();
    s.time_scale = 1;  // the simulator plans in the service's own time
  }
  p.given_rate_per_s = s.rate_per_s;
  p.margin = margin;
  if (margin > 0) {
    s.rate_per_s *= 1 + margin;
    p.inputs.push_back(fmt::format("--margin {:g} %: planned for {:.2f}/s, the given {:.2f}/s + {:g} %{}", margin * 100,
                                   s.rate_per_s, p.given_rate_per_s, margin * 100,
                                   real ? "; the real-world runs offer the given rate" : ""));
  }
  validate_settings(s);

  p.base = s;
  p.fail_on = o.fail_on;
  p.recovery_ms_max = a.recovery_ms;
  p.seeds = a.seeds;
  const plan::Load load = load_of(s);
  plan::PaperTargets targets = paper_targets(a.thresholds, a.recovery_ms);
  targets.horizon_s = a.horizon.count() > 0 ? to_s(a.horizon) : to_s(s.duration);
  targets.ambiguous_per_day_max = a.ambiguous_max;
  p.horizon = a.horizon;
  p.ambiguous_per_day_max = a.ambiguous_max;
  p.minimize = o.minimize;
  const plan::Recommendation floor = floors_of(s, budget, o.minimize, p);
  for (const auto& n : names) p.paper.push_back(plan::paper_plan(strategy_info(n), load, targets, floor));

  const plan::Judge judge = plan_judge(a.thresholds, a.ambiguous_max);
  plan::ConfirmOptions co;
  co.seeds = a.seeds;
  co.no_violations = targets.no_violations;
  co.recovery_ms_max = a.recovery_ms;
  co.fail_on = o.fail_on;
  co.horizon = a.horizon;
  co.pool_floor = floor.pool_size;
  co.horizon_run = sim_runner(a.jobs, settled_by(a.thresholds));
  check_memory_side_by_side(horizon_runs(s, a.horizon, a.seeds), a.jobs);
  p.confirmed = plan::confirm(s, p.paper, co, sim_runner(a.jobs), judge);
  apply_connection_budget(p, s.pods, budget);
  if (real) confirm_in_real_world(p, real_base, p.given_rate_per_s, judge, o.fail_on);
  describe_confirmed(p, load, targets);
  p.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  const bool written = write_plan(p, spring, o, plan::envelope(envelope_verdicts(p), load, targets));
  return written ? plan::exit_code(p) : 2;
}

}  // namespace lockbench::cli

// lockbench: run, sweep, report, explain, lint, validate, calibrate.
//
// run and sweep check --out before the first run and write each result as
// soon as its run ends. SIGINT/SIGTERM during them: the current run stops
// (core/run.hpp's should_stop), its result is written marked interrupted, no
// further run starts, and the exit status is 130 / 143. A second signal kills.
// Nothing lockbench prints carries a password (base/redact.hpp).
#include <csignal>
#include <cstdlib>
#include <functional>
#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/output.hpp"
#include "report/fail_on.hpp"
#include "cli/parallel_runs.hpp"
#include "cli/plan_command.hpp"
#include "cli/shards.hpp"
#include "cli/playground.hpp"
#include "cli/lint_sources.hpp"
#include "cli/lint_code_command.hpp"
#include "cli/spring_config.hpp"
#include "settings/table.hpp"
#include "base/allocator.hpp"
#include "base/redact.hpp"
#include "core/printable.hpp"
#include "real/run_real.hpp"
#include "sim/run_sim.hpp"
#include "core/result.hpp"
#include "real/serve.hpp"
#include "report/compact.hpp"
#include "report/compare.hpp"
#include "scenarios/registry.hpp"
#include "strategies/registry.hpp"
#include "report/explain.hpp"
#include "report/lint.hpp"
#include "report/progress.hpp"
#include "report/report.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace lockbench::cli {
namespace {

// Flag values as given, by setting name; applied after parsing in table order.
using FlagValues = std::map<std::string, std::string>;

// Where a command's settings come from, applied in this order: the preset,
// the --config file, then the flags (the last one wins).
struct SettingSources {
  FlagValues values;
  std::string config;
  std::string preset;
};

// Every setting of the settings table (settings/table.hpp) as a flag, grouped as the table says,
// with its type and its default (Settings{}'s value, shown by the table).
void add_setting_flags(CLI::App* app, SettingSources& src) {
  std::string names;
  for (const Preset& p : presets()) names += (names.empty() ? "" : "; ") + std::string(p.name) + ": " + std::string(p.summary);
  app->add_option("--preset", src.preset, "a named set of settings compiled in (" + names + "); --config and flags win")
      ->type_name("NAME");
  app->add_option("--config", src.config, "scenario file (TOML; keys are the flag names without --); flags win")
      ->type_name("FILE");
  const Settings defaults;
  const auto add = [&](const SettingDef& d, std::string_view group) {
    auto* o = app->add_option("--" + d.name, src.values[d.name], d.help)->group(std::string(group));
    o->type_name(d.type.empty() ? "VALUE" : std::string(d.type));
    if (d.show) {
      const std::string def = d.show(defaults);
      if (!def.empty()) o->default_str(def);
    }
  };
  for (const auto group : setting_groups())
    for (const auto& d : setting_defs())
      if (d.group == group) add(d, group);
  for (const auto& d : setting_defs())  // a row without a group still gets its flag
    if (std::find(setting_groups().begin(), setting_groups().end(), d.group) == setting_groups().end())
      add(d, "Other settings");
  app->footer(std::string(setting_types_help()));
}

Settings settings_from(const SettingSources& src, const CLI::App& app) {
  const FlagValues& values = src.values;
  Settings s;
  if (!src.preset.empty()) apply_preset(s, src.preset);
  if (!src.config.empty()) apply_toml_file(s, src.config);
  FlagValues given;
  for (const auto& d : setting_defs())
    if (app.count("--" + d.name)) given[d.name] = values.at(d.name);
  apply_given(s, given);
  validate_settings(s);
  return s;
}

void require_servers(const Settings& s) {
  if (s.world != "real") return;
  if (s.db_url.empty())
    throw SettingError("--db: required with --world real (e.g. postgresql://postgres@127.0.0.1:5432/postgres)");
  if (s.partner_url.empty()) throw SettingError("--partner: required with --world real (e.g. http://127.0.0.1:8080)");
}

std::string fmt_number(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

// The strategy as the result table names it: the spec with its variant ("held-tx:wait").
std::string table_name(const std::string& spec) {
  try {
    return std::string(strategy_info(spec).spec);
  } catch (const SettingError&) {
    return spec;
  }
}

// How the progress line of one run of a plan reads: its place, what varies,
// the strategy, and the run's own clock against its planned duration.
report::Progress::Plan progress_plan(const Settings& s, std::size_t index, std::size_t count, const std::string& varied) {
  report::Progress::Plan plan;
  if (count > 1) plan.position = "[" + std::to_string(index + 1) + "/" + std::to_string(count) + "]";
  plan.label = (varied.empty() ? "" : varied + " ") + table_name(s.strategy);
  plan.planned = s.duration;  // configured: a real run's clock is divided by its time scale
  if (s.world == "real") {
    plan.time_scale = s.time_scale;
    plan.clock = s.time_scale != 1 ? "configured (x" + fmt_number(s.time_scale) + ")" : "wall";
  }
  return plan;
}

// Draw the progress line: on a terminal, or always with --progress; never with --quiet.
enum class ProgressMode { off, tty, forced };

json run_one(const Settings& s, const report::Progress::Plan& plan, ProgressMode mode) {
  report::Progress progress(plan, std::cerr,
                            mode == ProgressMode::forced || (mode == ProgressMode::tty && isatty_stderr()));
  RunHooks hooks;
  hooks.progress = [&](std::int64_t done, std::int64_t ok, Duration at) {
    progress.update(static_cast<std::uint64_t>(done), static_cast<std::uint64_t>(ok), at);
  };
  hooks.should_stop = stop_requested;
  json r = s.world == "real" ? run_real(s, hooks) : run_sim(s, hooks);
  progress.finish();
  return r;
}

// Before anything starts: a run too large for this machine was refused by
// validate(); a large one is announced.
void announce_memory(const std::vector<Settings>& runs) {
  for (const auto& s : runs) {
    const std::string note = s.memory_note();
    if (!note.empty()) {
      std::cerr << "lockbench: " << note << "\n";
      return;
    }
  }
}

// Runs `runs` in order, writing each result as soon as it exists; stops at a
// signal. Returns the results (resumed ones included) and the exit status.
struct Outcomes {
  std::vector<json> results;
  int status = 0;
};
// `varied`: per run, what a sweep varies ("rate=8"), for the progress line.
// `whole`: keep each result whole for the caller; otherwise, once written,
// only what the table and --fail-on read is kept (a sweep of 2,000 runs would
// otherwise hold every run's timeline and trace, about 1 MB each, to its end).
// `claim.shard`: only that slice of `runs` (the whole plan) runs.
Outcomes run_all(const std::vector<Settings>& runs, const std::vector<std::string>& varied, const std::string& out,
                 bool resume, ProgressMode progress, bool show_steps, int jobs = 1, bool whole = true,
                 const SinkOptions& claim = {}) {
  const auto keep = [whole](json&& r) {
    if (!whole && r.is_object())
      for (const char* bulky : {"timeline", "trace", "latency_histogram_ms"}) r.erase(bulky);
    return std::move(r);
  };
  for (const auto& s : runs) require_servers(s);
  check_memory_side_by_side(runs, jobs);
  announce_memory(runs);
  std::optional<ResultSink> sink;
  if (!out.empty()) sink.emplace(out, runs, claim);  // a bad --out fails here, before the first run
  if (resume && (!sink || !sink->to_directory()))
    throw SettingError("--resume: needs --out DIRECTORY (one file per run) to find the runs already done");
  install_stop_handlers();
  Outcomes o;
  int incomplete = 0;
  // Runs already done (--resume) are taken from --out; the rest run, up to
  // `jobs` at a time, their results written in run order as they finish.
  std::vector<json> done(runs.size());
  std::vector<std::size_t> todo;
  const std::vector<std::size_t> mine = shard_slice(runs, claim.shard);  // plan positions, ascending
  for (const std::size_t i : mine) {
    if (resume) done[i] = sink->existing(i);
    if (done[i].is_null()) todo.push_back(i);
  }
  const bool parallel = jobs > 1 && todo.size() > 1;
  const auto label_of = [&](std::size_t i) {
    return (varied[i].empty() ? "" : varied[i] + " ") + table_name(runs[i].strategy);
  };
  // A drawn progress line names the run itself; otherwise one line per run says which.
  const bool line_drawn = progress == ProgressMode::forced || (progress == ProgressMode::tty && isatty_stderr());
  std::size_t next = 0;  // results handed on so far, in run order (a position in `mine`)
  const auto hand_on_done = [&](std::size_t upto) {
    for (; next < mine.size() && mine[next] < upto; ++next) {
      const std::size_t i = mine[next];
      if (done[i].is_null()) return;
      if (show_steps) std::cerr << "[" << i + 1 << "/" << runs.size() << "] " << label_of(i) << ": already done\n";
      o.results.push_back(keep(std::move(done[i])));
    }
  };
  run_indexed(
      todo.size(), parallel ? jobs : 1,
      [&](std::size_t k) {
        const std::size_t i = todo[k];
        if (stop_requested()) return json(nullptr);
        if (show_steps && !parallel && !line_drawn)
          std::cerr << "[" << i + 1 << "/" << runs.size() << "] " << label_of(i) << "\n";
        // One progress line cannot show parallel runs.
        Settings one = runs[i];
        one.force_partner_reset = claim.force;  // --force: also a partner another live run is using
        return run_one(one, progress_plan(runs[i], i, runs.size(), varied[i]),
                       parallel ? ProgressMode::off : progress);
      },
      [&](std::size_t k, json&& r) {
        const std::size_t i = todo[k];
        hand_on_done(i);
        if (r.is_null()) return;  // not started: stopped before it
        if (show_steps && parallel) std::cerr << "[" << i + 1 << "/" << runs.size() << "] " << label_of(i) << " done\n";
        if (sink) sink->write(i, r);
        // A runner's slice (run --shard I/N, I > 0) leaves the partner's checks to shard 0: not a failure.
        const bool slice_only = r.contains("shard") && !r["shard"].value("partner_read", true);
        if (!r.value("complete", true) && !r.value("interrupted", false) && !slice_only) ++incomplete;
        o.results.push_back(keep(std::move(r)));
        next = static_cast<std::size_t>(std::lower_bound(mine.begin(), mine.end(), i) - mine.begin()) + 1;
      });
  if (!stop_requested()) hand_on_done(runs.size());
  if (stop_requested()) {
    std::cerr << "lockbench: interrupted (" << stop_signal_name() << "): "
              << o.results.size() << " of " << mine.size() << " results"
              << (sink ? " written to " + out : std::string()) << "; the last one is marked interrupted\n";
    o.status = interrupted_exit_code();
  } else if (incomplete > 0) {
    std::cerr << "lockbench: " << incomplete << " result(s) incomplete: the partner's checks were unavailable "
              << "(partner.unavailable_reason)\n";
    o.status = 1;
  }
  return o;
}

using Judge = std::function<int(int status, const std::vector<json>& results)>;

int cmd_run(const Settings& base, const std::string& out, const std::string& metrics_out, bool json_out,
            ProgressMode progress, int jobs, int repetitions, const Judge& judge, const SinkOptions& claim) {
  require_servers(base);
  if (!metrics_out.empty()) check_metrics_out(metrics_out);  // before the first run
  std::vector<Settings> runs;
  for (const auto& spec : strategies_of(base)) {
    Settings s = base;
    s.strategy = spec;
    for (auto& one : expand_repetitions(s, repetitions)) runs.push_back(std::move(one));
  }
  print_repetition_seeds(std::cerr, base, repetitions);
  // Several strategies in the simulator run side by side, as a sweep's runs do
  // (each result the same as alone); one line per finished run stands in for
  // the progress line, which cannot show parallel runs.
  // By default (jobs 0) the core count, but one at a time while a progress line is drawn.
  const bool line_drawn = progress == ProgressMode::forced || (progress == ProgressMode::tty && isatty_stderr());
  if (jobs == 0) jobs = line_drawn ? 1 : default_jobs();
  if (base.world == "real" || runs.size() < 2) jobs = 1;
  const Outcomes o = run_all(runs, std::vector<std::string>(runs.size()), out, false, progress,
                             jobs > 1 && progress != ProgressMode::off, jobs, true, claim);
  const auto& results = o.results;
  if (!metrics_out.empty()) write_metrics(results, metrics_out);
  write_aggregates(results, out);
  if (json_out) {
    std::cout << json(results).dump(2) << "\n";  // always an array, one result or many
    print_table(std::cerr, results);
    print_aggregate_table(std::cerr, results);
  } else {
    print_table(std::cout, results);
    print_aggregate_table(std::cout, results);
    if (!out.empty()) std::cout << "results written to " << out << "\n";
  }
  return judge(o.status, results);
}

// --vary NAME=v1,v2,...: one or two of them; the run is repeated for every combination.
// `claim.shard`: this process runs one slice of the plan (cli/shards.hpp).
int cmd_sweep(const Settings& base, const std::vector<std::string>& vary, const std::string& out, bool json_out,
              ProgressMode progress, bool resume, int jobs, int repetitions, std::optional<Duration> knee_p99,
              const Judge& judge, SinkOptions claim) {
  if (vary.empty() || vary.size() > 2) throw SettingError("--vary: give one or two, as NAME=v1,v2,... (e.g. --vary rate=2,4,8)");
  struct Axis {
    std::string name;
    std::vector<std::string> values;
  };
  std::vector<Axis> axes;
  for (const auto& v : vary) {
    const auto eq = v.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 >= v.size())
      throw SettingError("--vary: '" + v + "' is not NAME=v1,v2,... (e.g. rate=2,4,8)");
    Axis a{v.substr(0, eq), {}};
    if (a.name != "strategy" && !find_setting(a.name))
      throw SettingError("--vary: '" + a.name + "' is not a setting (use a flag name without --)");
    std::stringstream in(v.substr(eq + 1));
    std::string one;
    while (std::getline(in, one, ',')) a.values.push_back(one);
    axes.push_back(a);
  }
  if (axes.size() == 2 && axes[0].name == axes[1].name) throw SettingError("--vary: the two axes must differ");
  // Build every combination and check them all before running any.
  std::vector<Settings> runs;
  std::vector<std::string> varied;  // per run, the varied values the progress line shows ("rate=8")
  const auto second = axes.size() > 1 ? axes[1].values : std::vector<std::string>{""};
  for (const auto& v0 : axes[0].values) {
    for (const auto& v1 : second) {
      Settings s = base;
      apply_setting_or_strategy(s, axes[0].name, v0);
      if (axes.size() > 1) apply_setting_or_strategy(s, axes[1].name, v1);
      validate_settings(s);
      std::string shown;
      for (std::size_t a = 0; a < axes.size(); ++a)
        if (axes[a].name != "strategy") shown += (shown.empty() ? "" : " ") + axes[a].name + "=" + (a == 0 ? v0 : v1);
      for (const auto& spec : strategies_of(s)) {
        Settings one = s;
        one.strategy = spec;
        // Repetitions are points of the plan of their own (index and derived seed), so any slice of it has them.
        for (auto& rep : expand_repetitions(one, repetitions)) {
          varied.push_back(repetitions > 1 ? shown + (shown.empty() ? "" : " ") + "rep=" +
                                                 std::to_string(rep.repetition + 1)
                                           : shown);
          runs.push_back(std::move(rep));
        }
      }
    }
  }
  for (const auto& s : runs) require_servers(s);  // before any run: --vary world=sim,real needs them too
  if (runs.size() > 2000)
    throw SettingError("--vary: " + std::to_string(runs.size()) + " runs" +
                       (repetitions > 1 ? " (with --repetitions " + std::to_string(repetitions) + ")" : "") +
                       "; at most 2000 per sweep");
  if (knee_p99) check_knee_plan(runs);  // refused before any run
  print_repetition_seeds(std::cerr, base, repetitions);
  // Simulator runs in parallel (each keeps its seed and its result); any real run makes the sweep sequential.
  const bool any_real = std::any_of(runs.begin(), runs.end(), [](const Settings& s) { return s.world == "real"; });
  if (claim.shard.sharded() && out.empty())
    throw SettingError("--shard: needs --out DIRECTORY (each shard writes its results and manifest there)");
  claim.command = "sweep";
  claim.grid = {{"vary", vary}, {"runs", runs.size()}};
  const Outcomes o = run_all(runs, varied, out, resume, progress, progress != ProgressMode::off, any_real ? 1 : jobs,
                             json_out, claim);
  if (json_out) std::cout << json(o.results).dump(2) << "\n";
  print_table(json_out ? std::cerr : std::cout, o.results);
  print_aggregate_table(json_out ? std::cerr : std::cout, o.results);
  write_aggregates(o.results, out);
  if (knee_p99 && o.status == 0) {
    const json knees = sweep_knees(runs, *knee_p99, any_real ? 1 : jobs);
    print_knees(json_out ? std::cerr : std::cout, knees);
    if (!out.empty()) write_beside_results(knees, out, "knees.json");
  }
  return judge(o.status, o.results);
}

// One subcommand: its flags, added to the app when it is made, and what it
// does once the command line is parsed. lockbench_main makes one of each,
// parses, and runs the one given.
class Subcommand {
 public:
  virtual ~Subcommand() = default;
  bool given() const { return app_ != nullptr && app_->parsed(); }
  virtual int run() = 0;

 protected:
  CLI::App* app_ = nullptr;
};


std::string output_group() { return std::string(kGroupOutput); }

// The one rule for a number on the command line, as the settings table's parsers
// read the settings: decimal only. CLI11 alone would take 0x10 as 16 and 0b11
// as 3 (`--repetitions 0x10`, serve's --port, --run-id, --pod). Up to 20 digits
// (a run id is a 64-bit number); the option's own type then refuses what it cannot hold.
CLI::Validator decimal_whole() {
  return CLI::Validator(
      [](std::string& v) {
        const std::size_t digits = v.size() - (!v.empty() && v[0] == '-' ? 1 : 0);
        return digits > 0 && digits <= 20 && v.find_first_not_of("0123456789", v.size() - digits) == std::string::npos
                   ? std::string()
                   : "'" + v.substr(0, 40) + "' is not a decimal whole number";
      },
      "", "decimal");
}
CLI::Validator decimal_number() {
  return CLI::Validator(
      [](std::string& v) {
        return !v.empty() && v.size() <= 40 && v.find_first_not_of("0123456789.eE+-") == std::string::npos &&
                       v.find_first_of("0123456789") != std::string::npos
                   ? std::string()
                   : "'" + v.substr(0, 40) + "' is not a decimal number";
      },
      "", "decimal");
}

std::string repetitions_help() {
  return "run each point N times (simulator: seeds derived from --seed and printed; real world: N repeats, each "
         "with fresh rows); every result is kept, and the table and DIR/aggregates.json give mean, median, stddev, "
         "cv and a 95 % interval (at most " +
         std::to_string(kRepetitionsMax) + ")";
}

ProgressMode progress_mode(bool quiet, bool json, bool forced) {
  return quiet || (json && !forced) ? ProgressMode::off : forced ? ProgressMode::forced : ProgressMode::tty;
}

// --fail-on, parsed before any run (a bad threshold is a usage error, exit 2):
// exit 1 when a run breaks one and nothing else failed.
Judge judge_by(const std::string& thresholds_text) {
  std::vector<report::Threshold> thresholds =
      thresholds_text.empty() ? std::vector<report::Threshold>{} : report::parse_fail_on(thresholds_text);
  return [thresholds = std::move(thresholds)](int status, const std::vector<json>& results) {
    if (thresholds.empty()) return status;
    const auto broken = report::broken_thresholds(thresholds, results);
    for (const auto& line : broken) std::cerr << "lockbench: --fail-on: " << line << "\n";
    return broken.empty() || status != 0 ? status : 1;
  };
}

// --shard I/N or --shards N (I from JOB_COMPLETION_INDEX), one of them.
std::optional<Shard> shard_given(const CLI::App& app, const std::string& shard_text, const std::string& shards_text) {
  if (app.count("--shard") && app.count("--shards"))
    throw SettingError("--shard, --shards: give one (--shards N takes I from JOB_COMPLETION_INDEX)");
  if (app.count("--shard")) return parse_shard(shard_text);
  if (app.count("--shards")) return shard_from_index(shards_text, std::getenv("JOB_COMPLETION_INDEX"));
  return std::nullopt;
}

class RunCommand final : public Subcommand {
 public:
  explicit RunCommand(CLI::App& root) {
    app_ = root.add_subcommand("run", "run strategies once and print the comparison table");
    add_setting_flags(app_, src_);
    app_->add_option("--out", out_, "write results: a directory (one JSON file per run) or a .json file")
        ->type_name("PATH")->group(output_group());
    app_->add_option("--metrics-out", metrics_out_,
                     "write each run's pool at its end as Prometheus text with Micrometer's HikariCP names "
                     "(hikaricp_connections_active, _timeout_total, _acquire_seconds, ...; label pool=\"pod1\")")
        ->type_name("FILE")->group(output_group());
    app_->add_flag("--json", json_, "print the results as a JSON array on stdout, one result or many (the table goes to stderr)")
        ->group(output_group());
    app_->add_flag("--quiet", quiet_, "no progress line")->group(output_group());
    app_->add_flag("--progress", force_progress_, "draw the progress line even when stderr is not a terminal")
        ->group(output_group());
    app_->add_option("--jobs", jobs_,
                     "simulator: strategies run in parallel (default: the core count, here " +
                         std::to_string(default_jobs()) +
                         ", or 1 while the progress line is drawn); each result is the same as alone. "
                         "Real runs are sequential")
        ->type_name("N");
    app_->add_option("--repetitions", repetitions_, repetitions_help())->type_name("N")->check(decimal_whole());
    app_->add_flag("--force", claim_.force, "replace a result of other settings that --out holds, and reset a partner "
                                            "another live run is using (both refused otherwise)")
        ->group(output_group());
    app_->add_option("--fail-on", fail_on_,
                     "CI thresholds: exit 1 when a run breaks one, e.g. 'violations>0,pool_timeouts>0,p99>2s' "
                     "(metrics: violations, pool_timeouts, errors, conflicts, rejected, leaked, lease_steals, "
                     "probe_failures, ok_per_s, p50, p99, p999, max, ok_p50, ok_p99)")
        ->type_name("THRESHOLDS")->group(output_group());
    app_->add_option("--shard", shard_text_,
                     "real run with --targets: drive slice I of N of the one arrival schedule (requests p with p % N == I; "
                     "closed loop: those users); N runners share the run, shard 0 prepares it and reads the partner's "
                     "checks after the others end; lockbench merge puts their results together")
        ->type_name("I/N");
    app_->add_option("--shards", shards_text_, "as --shard, I taken from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job)")
        ->type_name("N");
    app_->add_option("--shard-wait", shard_wait_,
                     "how long a shard waits for the others to join, for shard 0's start, or (shard 0) for the others "
                     "to end (default 60s)")
        ->type_name("DURATION");
  }

  // A real run's database URL may come from the environment (a Kubernetes
  // secretKeyRef): argv is shown to every user of the node (ps), the env is not.
  static Settings db_from_env(Settings s) {
    if (s.world == "real" && s.db_url.empty())
      if (const char* v = std::getenv(kRunDbEnv); v != nullptr && *v != '\0') s.db_url = v;
    return s;
  }
  static constexpr const char* kRunDbEnv = "LOCKBENCH_RUN_DB";

  int run() override {
    const Judge judged = judge_by(fail_on_);
    const ProgressMode progress = progress_mode(quiet_, json_, force_progress_);
    const std::optional<Shard> shard = shard_given(*app_, shard_text_, shards_text_);
    if (shard || app_->count("--shard-wait")) {
      Settings sharded = db_from_env(settings_from(src_, *app_));
      apply_runner_shard(sharded, shard.value_or(Shard{}), shard_wait_);
      if (repetitions_ != 1)
        throw SettingError("--repetitions, --shard: the runners of a shard drive one real run together; repeat it by "
                           "starting the runners again");
      return cmd_run(sharded, out_, metrics_out_, json_, progress, 0, 1, judged, claim_);
    }
    return cmd_run(db_from_env(settings_from(src_, *app_)), out_, metrics_out_, json_, progress,
                   app_->count("--jobs") ? parse_jobs(jobs_) : 0, repetitions_, judged, claim_);
  }

 private:
  SettingSources src_;
  std::string out_, metrics_out_, jobs_, fail_on_, shard_text_, shards_text_, shard_wait_;
  bool json_ = false, quiet_ = false, force_progress_ = false;
  int repetitions_ = 1;
  SinkOptions claim_;
};

class SweepCommand final : public Subcommand {
 public:
  explicit SweepCommand(CLI::App& root) {
    app_ = root.add_subcommand("sweep", "repeat a run over one or two settings (e.g. rate x strategy)");
    add_setting_flags(app_, src_);
    app_->add_option("--vary", vary_, "NAME=v1,v2,... (one or two; NAME is a flag name without --, or strategy)")
        ->required()->type_name("NAME=V1,V2,...");
    app_->add_option("--out", out_, "directory for the result files")->type_name("DIR")->group(output_group());
    app_->add_option("--fail-on", fail_on_, "CI thresholds, as for run (exit 1 when a run breaks one)")
        ->type_name("THRESHOLDS")->group(output_group());
    app_->add_flag("--json", json_, "print the results as a JSON array")->group(output_group());
    app_->add_flag("--quiet", quiet_, "no progress lines")->group(output_group());
    app_->add_flag("--progress", force_progress_, "draw the progress line even when stderr is not a terminal")
        ->group(output_group());
    app_->add_option("--jobs", jobs_,
                     "simulator runs in parallel (default: the core count, here " + std::to_string(default_jobs()) +
                         "); each result is the same as alone. A sweep with any real-world run is sequential")
        ->type_name("N");
    app_->add_option("--repetitions", repetitions_, repetitions_help())->type_name("N")->check(decimal_whole());
    app_->add_option("--knee-p99", knee_p99_,
                     "after the sweep, find each strategy's knee in the simulator: the highest rate with ok/s >= 95 % "
                     "of the requests offered (arrivals, over the arrival window) and p99 <= DURATION, by bisection "
                     "from the plan's highest rate, each rate on every repetition's seed (or \"seeds disagree\" with "
                     "their range); printed, written to DIR/knees.json and shown by report")
        ->type_name("DURATION");
    app_->add_flag("--resume", resume_,
                   "skip runs whose complete result is already in --out (a directory), e.g. after Ctrl-C");
    app_->add_flag("--force", claim_.force,
                   "--out holds results of other settings: remove them first; reset a partner another live run is "
                   "using (both refused otherwise)")
        ->group(output_group());
    app_->add_option("--shard", shard_text_,
                     "run only slice I of N of the sweep's plan (I from 0 to N-1; slices of about equal estimated "
                     "cost, the same in every process); each shard its own --out; lockbench merge puts them together")
        ->type_name("I/N");
    app_->add_option("--shards", shards_text_,
                     "as --shard, I taken from JOB_COMPLETION_INDEX (set by a Kubernetes Indexed Job)")
        ->type_name("N");
  }

  int run() override {
    const Judge judged = judge_by(fail_on_);
    if (auto shard = shard_given(*app_, shard_text_, shards_text_)) claim_.shard = *shard;
    const std::optional<Duration> knee =
        knee_p99_.empty() ? std::nullopt : std::optional<Duration>(parse_duration(knee_p99_, "--knee-p99"));
    return cmd_sweep(settings_from(src_, *app_), vary_, out_, json_, progress_mode(quiet_, json_, force_progress_),
                     resume_, app_->count("--jobs") ? parse_jobs(jobs_) : default_jobs(), repetitions_, knee, judged,
                     claim_);
  }

 private:
  SettingSources src_;
  std::vector<std::string> vary_;
  std::string out_, fail_on_, jobs_, knee_p99_, shard_text_, shards_text_;
  bool json_ = false, quiet_ = false, resume_ = false, force_progress_ = false;
  int repetitions_ = 1;
  SinkOptions claim_;
};

class MergeCommand final : public Subcommand {
 public:
  explicit MergeCommand(CLI::App& root) {
    app_ = root.add_subcommand("merge", "put the shards of one sweep (sweep --shard I/N) together: their results, "
                                        "the manifest, report.md, report.html and summary.csv; or the results of "
                                        "one real run's runners (run --shard I/N) into one result");
    app_->add_option("dirs", dirs_, "the shards' --out directories (a real run's runners: their result files), every shard once")->required();
    app_->add_option("--out", out_, "output directory")->required();
    app_->add_option("--title", opt_.title, "report title");
    app_->add_flag("--no-charts", no_charts_, "skip gnuplot charts");
    app_->add_flag("--force", opt_.force, "--out holds another sweep's results: replace them");
  }

  int run() override {
    opt_.charts = !no_charts_;
    if (are_runner_results(dirs_)) return cmd_merge_runners(dirs_, out_, opt_, std::cout);
    return cmd_merge(dirs_, out_, opt_, std::cout);
  }

 private:
  std::vector<std::string> dirs_;
  std::string out_;
  MergeOptions opt_;
  bool no_charts_ = false;
};

class ReportCommand final : public Subcommand {
 public:
  explicit ReportCommand(CLI::App& root) {
    app_ = root.add_subcommand("report", "write report.md, report.html and summary.csv from result files");
    app_->add_option("results", inputs_, "result JSON files (or directories of them)")->required();
    app_->add_option("--out", out_, "output directory")->required();
    app_->add_option("--title", title_, "report title");
    app_->add_flag("--no-charts", no_charts_, "skip gnuplot charts");
    app_->add_flag("--linked-charts", linked_charts_,
                   "report.html shows charts/*.svg as images instead of inlining them (smaller; needs its charts/ folder)");
    app_->add_flag("--no-commit", no_commit_,
                   "the runs table names each run's version without its git commit (a committed report: unchanged "
                   "figures, unchanged file)");
    app_->add_option("--plan", plan_,
                     "a `lockbench plan --format json` document whose safe envelope the report draws (default: "
                     "plan.json in a results directory)")
        ->type_name("FILE");
  }

  int run() override {
    report::ReportOptions opt;
    opt.title = title_;
    opt.charts = !no_charts_;
    warn_mixed_sweeps(inputs_, std::cerr);
    opt.inline_charts = !linked_charts_;
    auto results = report::load_results(expand_result_paths(inputs_));
    opt.knees = document_beside_results(inputs_, "knees.json");  // sweep --knee-p99's, beside its results
    opt.plan = document_beside_results(inputs_, "plan.json", plan_);  // its safe envelope
    if (!opt.plan.is_null() && (!opt.plan.is_object() || opt.plan.value("schema", "") != "lockbench.plan/1"))
      throw SettingError("--plan: " + (plan_.empty() ? std::string("plan.json") : plan_) +
                         " is not a lockbench plan --format json document (schema lockbench.plan/1)");
    // Results written before lockbench redacted its settings may still carry
    // a password: the report never does.
    for (auto& r : results)
      if (r.contains("settings") && r["settings"].is_object())
        for (const char* key : {"db", "partner"})
          if (r["settings"].contains(key) && r["settings"][key].is_string())
            r["settings"][key] = redact_secrets(r["settings"][key].get<std::string>());
    if (no_commit_)
      for (auto& r : results)
        if (r.contains("provenance") && r["provenance"].is_object()) r["provenance"].erase("git_commit");
    write_report_atomically(results, out_, opt);
    std::cout << "wrote " << (fs::path(out_) / "report.md").string() << ", report.html, summary.csv ("
              << results.size() << " results)\n";
    return 0;
  }

 private:
  std::vector<std::string> inputs_;
  std::string out_, title_ = "lockbench report", plan_;
  bool no_charts_ = false, linked_charts_ = false, no_commit_ = false;
};

class CompactCommand final : public Subcommand {
 public:
  explicit CompactCommand(CLI::App& root) {
    app_ = root.add_subcommand("compact", "copy results without their trace and timeline (the committed form of results/)");
    app_->add_option("input", in_, "a result file, or a directory walked recursively")->required();
    app_->add_option("--out", out_, "output directory: the same relative paths; other files copied as they are")
        ->required();
    app_->add_flag("--force", force_, "allow --out to be the input's own directory (compacts in place, for good)");
  }

  int run() override {
    try {
      const auto plan = report::plan_compaction(in_, out_, force_);
      const std::size_t n = report::compact_files(plan);
      std::cout << "compacted " << n << " results into " << out_ << " (" << plan.size() << " files)\n";
    } catch (const std::invalid_argument& e) {
      throw SettingError(std::string("compact: ") + e.what());
    }
    return 0;
  }

 private:
  std::string in_, out_;
  bool force_ = false;
};

class CompareCommand final : public Subcommand {
 public:
  explicit CompareCommand(CLI::App& root) {
    app_ = root.add_subcommand("compare", "two result sets side by side with deltas; exit 1 when a regression is flagged");
    app_->add_option("baseline", a_, "A: a result file or a directory of them")->required();
    app_->add_option("candidate", b_, "B: a result file or a directory of them")->required();
    app_->add_option("--format", format_, "md (default) or json");
    app_->add_option("--max-ok-drop", opt_.max_ok_drop_pct, "flag ok/s down by more than this percentage (default 10)")
        ->check(decimal_number());
    app_->add_option("--max-p99-rise", opt_.max_p99_rise_pct, "flag ok p99 up by more than this percentage (default 20)")
        ->check(decimal_number());
  }

  int run() override { return report::run_compare(a_, b_, opt_, format_, std::cout); }

 private:
  std::string a_, b_, format_ = "md";
  report::CompareOptions opt_;
};

class ExplainCommand final : public Subcommand {
 public:
  explicit ExplainCommand(CLI::App& root) {
    app_ = root.add_subcommand("explain", "how a strategy works, how it fails, when to choose it");
    app_->add_option("strategy", name_, "strategy name (none for the list)");
  }

  int run() override {
    std::cout << (name_.empty() ? report::explain_list() : report::explain(name_));
    return 0;
  }

 private:
  std::string name_;
};

class LintCommand final : public Subcommand {
 public:
  explicit LintCommand(CLI::App& root) {
    app_ = root.add_subcommand("lint", "check client timeouts, lease TTL, pool size, probes and threads on paper");
    add_setting_flags(app_, src_);
    app_->add_option("--from", from_,
                     "the service's Spring Boot application.properties or application.yml (HikariCP, Tomcat, "
                     "Feign, resilience4j and actuator keys, and lockbench.* for the rest), or its Kubernetes "
                     "Deployment YAML (probes, replicas); repeat for both; flags win")
        ->type_name("FILE");
    app_->add_option("--deployment", deployment_,
                     "with a manifest of several containers with probes: the one to check, DEPLOYMENT[/CONTAINER]")
        ->type_name("NAME");
    app_->add_option("--format", format_, "text | json | sarif (SARIF 2.1.0, for code-scanning UIs)")
        ->type_name("FORMAT");
    app_->add_option("--code", code_,
                     "the service's Java source: remote calls inside transactions, synchronized as a lock, advisory "
                     "locks on pooled connections, ORM-mapped leases, no @Version; with --from, each with the "
                     "simulator's consequence (docs/how-to/lint.md)")
        ->type_name("DIR");
    app_->add_option("--code-depth", code_depth_, "with --code: calls followed from a transaction or a lock (default 4)")
        ->type_name("N");
    app_->add_option("--fail-on", fail_on_, "with --code: flag (default; exit 1 when a finding is flagged) | warn | never")
        ->type_name("LEVEL");
    app_->add_option("--prometheus", prometheus_,
                     "one scrape of the service's /actuator/prometheus, as plan reads it: the partner latency, the "
                     "pool and the rate (one pod's; x --pods) that the checks and --code's consequences use; flags win")
        ->type_name("FILE");
  }

  // The strategy is known when a flag, the --config file or a --from file names it.
  int run() override {
    Settings s;
    s.strategy.clear();
    if (!src_.preset.empty()) apply_preset(s, src_.preset);
    if (!src_.config.empty()) apply_toml_file(s, src_.config);
    LintSources sources = read_lint_sources(s, from_, deployment_, std::cerr, format_ == "text");
    for (const auto& d : setting_defs())
      if (app_->count("--" + d.name)) d.apply(s, src_.values.at(d.name));
    if (!prometheus_.empty())
      apply_prometheus_scrape(s, prometheus_, [&](const std::string& flag) { return app_->count("--" + flag) > 0; },
                              format_ == "text" ? &std::cerr : nullptr);
    if (app_->count("--readiness")) sources.readiness = {};  // the flag's probe, not the Deployment's
    if (app_->count("--liveness")) sources.liveness = {};
    const bool strategy_known = !s.strategy.empty() && s.strategy != "all";
    if (s.strategy.empty()) s.strategy = "row-lease";  // validate() wants one; lint treats it as unknown
    validate_settings(s);
    if (!code_.empty()) {
      bool load_given = !from_.empty();
      for (const auto a : arrival_settings()) load_given = load_given || app_->count("--" + std::string(a));
      for (const char* f : {"--config", "--preset", "--prometheus"}) load_given = load_given || app_->count(f);
      const bool keys_given = app_->count("--keys") > 0 || s.keys != Settings{}.keys;
      const bool duration_given = app_->count("--duration") > 0 || s.duration != Settings{}.duration;
      return cmd_lint_code(s, {code_, code_depth_, format_, fail_on_, load_given, keys_given, duration_given});
    }
    if (app_->count("--fail-on") || app_->count("--code-depth"))
      throw SettingError("--fail-on, --code-depth: only with --code DIR");
    return cmd_lint(s, strategy_known, format_, sources);
  }

 private:
  SettingSources src_;
  std::vector<std::string> from_;
  std::string deployment_, format_ = "text";
  std::string code_, fail_on_ = "flag", prometheus_;
  int code_depth_ = 4;
};

class PlanCommand final : public Subcommand {
 public:
  explicit PlanCommand(CLI::App& root) {
    app_ = root.add_subcommand(
        "plan", "the smallest settings that meet the targets, per strategy: on paper, then confirmed in the simulator");
    add_setting_flags(app_, src_);
    add_plan_flags(*app_, opt_);
  }

  int run() override {
    Settings s;
    s.strategy.clear();  // known only when a file names it: the service's current strategy
    if (!src_.preset.empty()) apply_preset(s, src_.preset);
    if (!src_.config.empty()) apply_toml_file(s, src_.config);
    const auto given = [&](const std::string& name) { return app_->count("--" + name) > 0; };
    const auto apply_flags = [&](Settings& t) {
      for (const auto& d : setting_defs())
        if (given(d.name)) d.apply(t, src_.values.at(d.name));
    };
    return cmd_plan(s, apply_flags, given, opt_);
  }

 private:
  SettingSources src_;
  PlanOptions opt_;
};

class ValidateCommand final : public Subcommand {
 public:
  explicit ValidateCommand(CLI::App& root) {
    app_ = root.add_subcommand("validate",
        "run one small scenario in both worlds at 70 % and 90 % of the pool (with --targets URL: the simulator beside "
        "your service, side by side, counts within 3 % and ok p99 within 10 %), the simulator calibrated to the real "
        "stack, and print sim/real ratios (unless given as flags: held-tx, single-call, pool 4, partner "
        "exponential:mean=40ms, 30s; these replace a --config file's values)");
    add_setting_flags(app_, src_);
    app_->add_option("--out", out_, "directory for the results (both worlds, every repetition)");
    app_->add_option("--repetitions", repetitions_,
                     "runs per world and load, repetition i with the same seed in both worlds; each sim/real ratio "
                     "gets its 95 % interval, and a target is met only when the whole interval is inside it")
        ->type_name("N")->default_str("3")->check(decimal_whole());
  }

  int run() override { return cmd_validate(settings_from(src_, *app_), *app_, out_, repetitions_); }

 private:
  SettingSources src_;
  std::string out_;
  int repetitions_ = 3;
};

class CalibrateCommand final : public Subcommand {
 public:
  explicit CalibrateCommand(CLI::App& root) {
    app_ = root.add_subcommand(
        "calibrate", "measure the real stack's own costs (statements, partner call, hand-offs) as simulator settings");
    add_setting_flags(app_, src_);
    app_->add_option("--out", out_, "TOML settings file to write (db-latency, partner-overhead, pool-handoff, worker-handoff)");
  }

  int run() override { return cmd_calibrate(settings_from(src_, *app_), out_); }

 private:
  SettingSources src_;
  std::string out_ = "calibration.toml";
};

// serve: one pod as an HTTP service (real/serve.hpp has the endpoint contract).
class ServeCommand final : public Subcommand {
 public:
  explicit ServeCommand(CLI::App& root) {
    app_ = root.add_subcommand("serve", "run ONE pod of the service as an HTTP server (see docs/how-to/real-world.md: pods as processes over HTTP)");
    add_setting_flags(app_, src_);
    app_->add_option("--port", opt_.port, "TCP port (0 = a free one; the first line printed names it)")
        ->check(decimal_whole());
    app_->add_option("--host", opt_.host, "address to listen on (default 127.0.0.1)");
    app_->add_option("--run-id", run_, "the run's rows in lockbench.rows (the runner seeds them); pods of one run share it")
        ->check(decimal_whole());
    app_->add_option("--pod", opt_.pod, "this pod's number, 1-based (pool name podN)")->check(decimal_whole());
    app_->add_option("--management-port", opt_.management_port,
                     "serve /health/* and /metrics also on this port, on threads of their own, so probes answer under "
                     "load (0 = a free one, printed as 'management on HOST:PORT'; default: none)")
        ->check(decimal_whole());
    app_->add_option("--control-token", opt_.control_token,
                     "POST /lockbench/requests-over then needs 'Authorization: Bearer TOKEN' (without one: loopback "
                     "peers only); give it in the environment, not on the command line")
        ->envname("LOCKBENCH_CONTROL_TOKEN")->type_name("TOKEN");
  }

  int run() override {
    if (run_ >= 0) opt_.run = run_;
    Settings ss = settings_from(src_, *app_);
    ss.world = "real";
    // Process pods get their secrets in the environment, never in argv (ps shows argv to every user).
    for (const auto& [var, url] : {std::pair{real::kServeDbEnv, &ss.db_url}, std::pair{real::kServeRedisEnv, &ss.redis_url},
                                   std::pair{real::kServeEtcdEnv, &ss.etcd_url}})
      if (url->empty())
        if (const char* v = std::getenv(var)) *url = v;
    return real::serve_pod(ss, opt_);
  }

 private:
  SettingSources src_;
  real::ServeOptions opt_;
  std::int64_t run_ = -1;
};

class PlaygroundCommand final : public Subcommand {
 public:
  explicit PlaygroundCommand(CLI::App& root) {
    app_ = root.add_subcommand("playground", "serve the playground (the simulator in the browser) on 127.0.0.1");
    app_->add_option("--port", port_, "TCP port (0 = a free one; the first line printed names it)")
        ->check(decimal_whole());
  }

  int run() override { return cmd_playground(port_); }

 private:
  int port_ = 8000;
};

// Every subcommand, in --help's order.
std::vector<std::unique_ptr<Subcommand>> subcommands(CLI::App& app) {
  std::vector<std::unique_ptr<Subcommand>> all;
  all.push_back(std::make_unique<RunCommand>(app));
  all.push_back(std::make_unique<SweepCommand>(app));
  all.push_back(std::make_unique<MergeCommand>(app));
  all.push_back(std::make_unique<ReportCommand>(app));
  all.push_back(std::make_unique<CompactCommand>(app));
  all.push_back(std::make_unique<CompareCommand>(app));
  all.push_back(std::make_unique<ExplainCommand>(app));
  all.push_back(std::make_unique<LintCommand>(app));
  all.push_back(std::make_unique<PlanCommand>(app));
  all.push_back(std::make_unique<ValidateCommand>(app));
  all.push_back(std::make_unique<CalibrateCommand>(app));
  all.push_back(std::make_unique<ServeCommand>(app));
  all.push_back(std::make_unique<PlaygroundCommand>(app));
  return all;
}

void describe_app(CLI::App& app) {
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "all subcommands' help");
  app.set_version_flag("--version", "lockbench " + lockbench_version());
  // One line per refusal, like every other bad input.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return "lockbench: " + printable(redact_secrets(e.what())) + " (see lockbench --help)\n";
  });
  app.get_formatter()->column_width(36);
}

}  // namespace
}  // namespace lockbench::cli

namespace {
// Standard output that could not be written (`run --json > /dev/full`) loses
// the results: one line and EX_IOERR, never exit 0.
constexpr int kExitIoError = 74;

int lockbench_main(int argc, char** argv);
}  // namespace

int main(int argc, char** argv) {
  const int status = lockbench_main(argc, argv);
  errno = 0;
  std::cout.flush();
  const bool failed = !std::cout.good() || std::fflush(stdout) != 0 || std::ferror(stdout);
  if (!failed) return status;
  // The write that failed set errno long ago; the output is lost anyway, so one
  // more byte asks the system for the reason (ENOSPC for a full disk, /dev/full).
  if (errno == 0 && ::write(STDOUT_FILENO, "\n", 1) >= 0) errno = 0;
  const int err = errno;
  std::cerr << "lockbench: cannot write to standard output" << (err != 0 ? std::string(": ") + std::strerror(err) : "")
            << "; the output is lost\n";
  return kExitIoError;
}

namespace {
int lockbench_main(int argc, char** argv) {
  using namespace lockbench;
  using namespace lockbench::cli;
  keep_freed_memory();  // runs and sweep points reuse what the run before them freed
  CLI::App app{"lockbench: mutual exclusion around a slow partner call on a bounded connection pool"};
  describe_app(app);
  const auto commands = subcommands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are successes; every usage error exits 2, like
    // every other bad input (CLI11's own codes are 100 and up).
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    for (const auto& command : commands)
      if (command->given()) return command->run();
  } catch (const SettingError& e) {
    std::cerr << "lockbench: " << printable(redact_secrets(e.what())) << "\n";  // one line, no control byte
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "lockbench: " << printable(redact_secrets(e.what())) << "\n";
    return 1;
  }
  return 0;
}
}  // namespace

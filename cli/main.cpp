// lockbench: run, sweep, report, explain, lint, validate, calibrate.
//
// run and sweep check --out before the first run and write each result as
// soon as its run ends. SIGINT/SIGTERM during them: the current run stops
// (core/run.hpp's should_stop), its result is written marked interrupted, no
// further run starts, and the exit status is 130 / 143. A second signal kills.
// Nothing lockbench prints carries a password (core/redact.hpp).
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
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/output.hpp"
#include "cli/fail_on.hpp"
#include "cli/parallel_runs.hpp"
#include "cli/plan_command.hpp"
#include "cli/shards.hpp"
#include "cli/playground.hpp"
#include "cli/spring_config.hpp"
#include "cli/settings_io.hpp"
#include "core/allocator.hpp"
#include "core/redact.hpp"
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

const char* const kTypesFooter =
    "Types: DURATION = a number and a unit (250us, 200ms, 1.5s, 30s, 2m, 1h) or ISO-8601 as Spring writes it "
    "(PT30S); RATE = requests per second (2.5); SHARE = 0..1; DIST = fixed:200ms | uniform:100ms..300ms | "
    "exponential:mean=1.5s | lognormal:p50=1.5s,p99=4s[,cap=10s]; FAULTS = commit_fail:p=P,conn_lost:p=P | none. "
    "The value after = is the default.";

// Every setting of settings_io's table as a flag, grouped as the table says,
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
  app->footer(kTypesFooter);
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
  s.validate();
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
        return run_one(runs[i], progress_plan(runs[i], i, runs.size(), varied[i]),
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
      s.validate();
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
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "all subcommands' help");
  app.set_version_flag("--version", "lockbench " + lockbench_version());
  // One line per refusal, like every other bad input.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return "lockbench: " + redact_secrets(e.what()) + " (see lockbench --help)\n";
  });

  app.get_formatter()->column_width(36);
  const std::string output_group(kGroupOutput);
  SettingSources run_src;
  std::string out, metrics_out;
  bool json_out = false, quiet = false, force_progress = false;

  auto* run = app.add_subcommand("run", "run strategies once and print the comparison table");
  add_setting_flags(run, run_src);
  run->add_option("--out", out, "write results: a directory (one JSON file per run) or a .json file")
      ->type_name("PATH")->group(output_group);
  run->add_option("--metrics-out", metrics_out,
                  "write each run's pool at its end as Prometheus text with Micrometer's HikariCP names "
                  "(hikaricp_connections_active, _timeout_total, _acquire_seconds, ...; label pool=\"pod1\")")
      ->type_name("FILE")->group(output_group);
  run->add_flag("--json", json_out, "print the results as a JSON array on stdout, one result or many (the table goes to stderr)")
      ->group(output_group);
  run->add_flag("--quiet", quiet, "no progress line")->group(output_group);
  run->add_flag("--progress", force_progress, "draw the progress line even when stderr is not a terminal")
      ->group(output_group);
  std::string run_jobs;
  run->add_option("--jobs", run_jobs,
                  "simulator: strategies run in parallel (default: the core count, here " +
                      std::to_string(default_jobs()) +
                      ", or 1 while the progress line is drawn); each result is the same as alone. "
                      "Real runs are sequential")
      ->type_name("N");
  int run_repetitions = 1, sweep_repetitions = 1;
  const std::string repetitions_help =
      "run each point N times (simulator: seeds derived from --seed and printed; real world: N repeats, each with "
      "fresh rows); every result is kept, and the table and DIR/aggregates.json give mean, median, stddev, cv and "
      "a 95 % interval (at most " + std::to_string(kRepetitionsMax) + ")";
  run->add_option("--repetitions", run_repetitions, repetitions_help)->type_name("N");
  std::string fail_on, sweep_fail_on;
  SinkOptions run_claim, sweep_claim;
  run->add_flag("--force", run_claim.force, "replace a result of other settings that --out holds (refused otherwise)")
      ->group(output_group);
  run->add_option("--fail-on", fail_on,
                  "CI thresholds: exit 1 when a run breaks one, e.g. 'violations>0,pool_timeouts>0,p99>2s' "
                  "(metrics: violations, pool_timeouts, errors, conflicts, rejected, leaked, lease_steals, "
                  "probe_failures, ok_per_s, p50, p99, p999, max, ok_p50, ok_p99)")
      ->type_name("THRESHOLDS")->group(output_group);

  std::string run_shard_text, run_shards_text, run_shard_wait;
  run->add_option("--shard", run_shard_text,
                  "real run with --targets: drive slice I of N of the one arrival schedule (requests p with p % N == I; "
                  "closed loop: those users); N runners share the run, shard 0 prepares it and reads the partner's "
                  "checks after the others end; lockbench merge puts their results together")
      ->type_name("I/N");
  run->add_option("--shards", run_shards_text, "as --shard, I taken from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job)")
      ->type_name("N");
  run->add_option("--shard-wait", run_shard_wait,
                  "how long a shard waits for the others to join, for shard 0's start, or (shard 0) for the others "
                  "to end (default 60s)")
      ->type_name("DURATION");

  std::vector<std::string> vary;
  SettingSources sweep_src;
  std::string sweep_out;
  bool sweep_json = false, sweep_quiet = false, sweep_resume = false, sweep_progress = false;
  std::string sweep_jobs;
  auto* sweep = app.add_subcommand("sweep", "repeat a run over one or two settings (e.g. rate x strategy)");
  add_setting_flags(sweep, sweep_src);
  sweep->add_option("--vary", vary, "NAME=v1,v2,... (one or two; NAME is a flag name without --, or strategy)")
      ->required()->type_name("NAME=V1,V2,...");
  sweep->add_option("--out", sweep_out, "directory for the result files")->type_name("DIR")->group(output_group);
  sweep->add_option("--fail-on", sweep_fail_on, "CI thresholds, as for run (exit 1 when a run breaks one)")
      ->type_name("THRESHOLDS")->group(output_group);
  sweep->add_flag("--json", sweep_json, "print the results as a JSON array")->group(output_group);
  sweep->add_flag("--quiet", sweep_quiet, "no progress lines")->group(output_group);
  sweep->add_flag("--progress", sweep_progress, "draw the progress line even when stderr is not a terminal")
      ->group(output_group);
  sweep->add_option("--jobs", sweep_jobs,
                    "simulator runs in parallel (default: the core count, here " + std::to_string(default_jobs()) +
                        "); each result is the same as alone. A sweep with any real-world run is sequential")
      ->type_name("N");
  sweep->add_option("--repetitions", sweep_repetitions, repetitions_help)->type_name("N");
  std::string knee_p99;
  sweep->add_option("--knee-p99", knee_p99,
                    "after the sweep, find each strategy's knee in the simulator: the highest rate with ok/s >= 95 % "
                    "of offered and p99 <= DURATION, by bisection from the plan's highest rate, once per repetition "
                    "(so with its interval); printed, written to DIR/knees.json and shown by report")
      ->type_name("DURATION");
  sweep->add_flag("--resume", sweep_resume,
                  "skip runs whose complete result is already in --out (a directory), e.g. after Ctrl-C");
  sweep->add_flag("--force", sweep_claim.force,
                  "--out holds results of other settings: remove them first (refused otherwise)")
      ->group(output_group);
  std::string shard_text, shards_text;
  sweep->add_option("--shard", shard_text,
                    "run only slice I of N of the sweep's plan (I from 0 to N-1; slices of about equal estimated "
                    "cost, the same in every process); each shard its own --out; lockbench merge puts them together")
      ->type_name("I/N");
  sweep->add_option("--shards", shards_text,
                    "as --shard, I taken from JOB_COMPLETION_INDEX (set by a Kubernetes Indexed Job)")
      ->type_name("N");

  std::vector<std::string> merge_dirs;
  std::string merge_out;
  MergeOptions merge_opt;
  bool merge_no_charts = false;
  auto* mrg = app.add_subcommand("merge", "put the shards of one sweep (sweep --shard I/N) together: their results, "
                                          "the manifest, report.md, report.html and summary.csv; or the results of "
                                          "one real run's runners (run --shard I/N) into one result");
  mrg->add_option("dirs", merge_dirs, "the shards' --out directories (a real run's runners: their result files), every shard once")->required();
  mrg->add_option("--out", merge_out, "output directory")->required();
  mrg->add_option("--title", merge_opt.title, "report title");
  mrg->add_flag("--no-charts", merge_no_charts, "skip gnuplot charts");
  mrg->add_flag("--force", merge_opt.force, "--out holds another sweep's results: replace them");

  std::vector<std::string> report_inputs;
  std::string report_out, report_title = "lockbench report";
  bool no_charts = false;
  auto* rep = app.add_subcommand("report", "write report.md, report.html and summary.csv from result files");
  rep->add_option("results", report_inputs, "result JSON files (or directories of them)")->required();
  rep->add_option("--out", report_out, "output directory")->required();
  rep->add_option("--title", report_title, "report title");
  rep->add_flag("--no-charts", no_charts, "skip gnuplot charts");
  bool linked_charts = false;
  rep->add_flag("--linked-charts", linked_charts,
                "report.html shows charts/*.svg as images instead of inlining them (smaller; needs its charts/ folder)");

  std::string compact_in, compact_out;
  auto* cpt = app.add_subcommand("compact", "copy results without their trace and timeline (the committed form of results/)");
  cpt->add_option("input", compact_in, "a result file, or a directory walked recursively")->required();
  cpt->add_option("--out", compact_out, "output directory: the same relative paths; other files copied as they are")
      ->required();

  std::string cmp_a, cmp_b, cmp_format = "md";
  report::CompareOptions cmp_opt;
  auto* cmp = app.add_subcommand("compare", "two result sets side by side with deltas; exit 1 when a regression is flagged");
  cmp->add_option("baseline", cmp_a, "A: a result file or a directory of them")->required();
  cmp->add_option("candidate", cmp_b, "B: a result file or a directory of them")->required();
  cmp->add_option("--format", cmp_format, "md (default) or json");
  cmp->add_option("--max-ok-drop", cmp_opt.max_ok_drop_pct, "flag ok/s down by more than this percentage (default 10)");
  cmp->add_option("--max-p99-rise", cmp_opt.max_p99_rise_pct, "flag ok p99 up by more than this percentage (default 20)");

  std::string explain_name;
  auto* exp = app.add_subcommand("explain", "how a strategy works, how it fails, when to choose it");
  exp->add_option("strategy", explain_name, "strategy name (none for the list)");

  SettingSources lint_src;
  auto* lint = app.add_subcommand("lint", "check client timeouts, lease TTL and pool size on paper");
  add_setting_flags(lint, lint_src);
  std::string lint_from, lint_format = "text";
  lint->add_option("--from", lint_from,
                   "the service's Spring Boot application.properties or application.yml (HikariCP, Tomcat, "
                   "Feign and resilience4j keys, and lockbench.* for the rest); flags win")
      ->type_name("FILE");
  lint->add_option("--format", lint_format, "text | json | sarif (SARIF 2.1.0, for code-scanning UIs)")
      ->type_name("FORMAT");

  SettingSources plan_src;
  PlanOptions plan_opt;
  auto* pln = app.add_subcommand(
      "plan", "the smallest settings that meet the targets, per strategy: on paper, then confirmed in the simulator");
  add_setting_flags(pln, plan_src);
  add_plan_flags(*pln, plan_opt);

  SettingSources val_src;
  std::string val_out;
  auto* val = app.add_subcommand("validate",
      "run one small scenario in both worlds at 70 % and 90 % of the pool, the simulator calibrated to the real "
      "stack, and print sim/real ratios (unless given as flags: held-tx, single-call, pool 4, partner "
      "exponential:mean=40ms, 30s; these replace a --config file's values)");
  add_setting_flags(val, val_src);
  val->add_option("--out", val_out, "directory for the results (both worlds, every repetition)");
  int val_repetitions = 3;
  val->add_option("--repetitions", val_repetitions,
                  "runs per world and load, repetition i with the same seed in both worlds; each sim/real ratio "
                  "gets its 95 % interval, and a target is met only when the whole interval is inside it")
      ->type_name("N")->default_str("3");

  SettingSources cal_src;
  std::string cal_out = "calibration.toml";
  auto* cal = app.add_subcommand(
      "calibrate", "measure the real stack's own costs (statements, partner call, hand-offs) as simulator settings");
  add_setting_flags(cal, cal_src);
  cal->add_option("--out", cal_out, "TOML settings file to write (db-latency, partner-overhead, pool-handoff, worker-handoff)");

  // serve: one pod as an HTTP service (real/serve.hpp has the endpoint contract).
  SettingSources serve_src;
  real::ServeOptions serve_opt;
  std::int64_t serve_run = -1;
  auto* srv = app.add_subcommand("serve", "run ONE pod of the service as an HTTP server (see docs/how-to/real-world.md: pods as processes over HTTP)");
  add_setting_flags(srv, serve_src);
  srv->add_option("--port", serve_opt.port, "TCP port (0 = a free one; the first line printed names it)");
  srv->add_option("--host", serve_opt.host, "address to listen on (default 127.0.0.1)");
  srv->add_option("--run-id", serve_run, "the run's rows in lockbench.rows (the runner seeds them); pods of one run share it");
  srv->add_option("--pod", serve_opt.pod, "this pod's number, 1-based (pool name podN)");
  srv->add_option("--management-port", serve_opt.management_port,
                  "serve /health/* and /metrics also on this port, on threads of their own, so probes answer under "
                  "load (0 = a free one, printed as 'management on HOST:PORT'; default: none)");
  srv->add_option("--control-token", serve_opt.control_token,
                  "POST /lockbench/requests-over then needs 'Authorization: Bearer TOKEN' (without one: loopback "
                  "peers only); give it in the environment, not on the command line")
      ->envname("LOCKBENCH_CONTROL_TOKEN")->type_name("TOKEN");

  int playground_port = 8000;
  auto* pgr = app.add_subcommand("playground", "serve the playground (the simulator in the browser) on 127.0.0.1");
  pgr->add_option("--port", playground_port, "TCP port (0 = a free one; the first line printed names it)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are successes; every usage error exits 2, like
    // every other bad input (CLI11's own codes are 100 and up).
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  try {
    // Thresholds are checked before any run: a bad one is a usage error (exit 2).
    const std::string& thresholds_text = *sweep ? sweep_fail_on : fail_on;
    const std::vector<Threshold> thresholds =
        thresholds_text.empty() ? std::vector<Threshold>{} : parse_fail_on(thresholds_text);
    const auto judged = [&](int status, const std::vector<json>& results) {
      if (thresholds.empty()) return status;
      const auto broken = broken_thresholds(thresholds, results);
      for (const auto& line : broken) std::cerr << "lockbench: --fail-on: " << line << "\n";
      return broken.empty() || status != 0 ? status : 1;
    };
    const auto progress_mode = [](bool q, bool json, bool forced) {
      return q || (json && !forced) ? ProgressMode::off : forced ? ProgressMode::forced : ProgressMode::tty;
    };
    if (*run && run->count("--shard") && run->count("--shards"))
      throw SettingError("--shard, --shards: give one (--shards N takes I from JOB_COMPLETION_INDEX)");
    if (*run && (run->count("--shard") || run->count("--shards") || run->count("--shard-wait"))) {
      const Shard shard = run->count("--shard")    ? parse_shard(run_shard_text)
                          : run->count("--shards") ? shard_from_index(run_shards_text, std::getenv("JOB_COMPLETION_INDEX"))
                                                   : Shard{};
      Settings sharded = settings_from(run_src, *run);
      apply_runner_shard(sharded, shard, run_shard_wait);
      if (run_repetitions != 1)
        throw SettingError("--repetitions, --shard: the runners of a shard drive one real run together; repeat it by "
                           "starting the runners again");
      return cmd_run(sharded, out, metrics_out, json_out, progress_mode(quiet, json_out, force_progress), 0, 1, judged,
                     run_claim);
    }
    if (*run)
      return cmd_run(settings_from(run_src, *run), out, metrics_out, json_out,
                     progress_mode(quiet, json_out, force_progress),
                     run->count("--jobs") ? parse_jobs(run_jobs) : 0, run_repetitions, judged, run_claim);
    if (*sweep && sweep->count("--shard") && sweep->count("--shards"))
      throw SettingError("--shard, --shards: give one (--shards N takes I from JOB_COMPLETION_INDEX)");
    if (*sweep && sweep->count("--shard")) sweep_claim.shard = parse_shard(shard_text);
    if (*sweep && sweep->count("--shards")) sweep_claim.shard = shard_from_index(shards_text, std::getenv("JOB_COMPLETION_INDEX"));
    if (*sweep)
      return cmd_sweep(settings_from(sweep_src, *sweep), vary, sweep_out, sweep_json,
                       progress_mode(sweep_quiet, sweep_json, sweep_progress), sweep_resume,
                       sweep->count("--jobs") ? parse_jobs(sweep_jobs) : default_jobs(), sweep_repetitions,
                       knee_p99.empty() ? std::nullopt
                                        : std::optional<Duration>(parse_duration(knee_p99, "--knee-p99")),
                       judged, sweep_claim);
    if (*mrg) {
      merge_opt.charts = !merge_no_charts;
      if (are_runner_results(merge_dirs)) return cmd_merge_runners(merge_dirs, merge_out, merge_opt, std::cout);
      return cmd_merge(merge_dirs, merge_out, merge_opt, std::cout);
    }
    if (*rep) {
      report::ReportOptions opt;
      opt.title = report_title;
      opt.charts = !no_charts;
      warn_mixed_sweeps(report_inputs, std::cerr);
      opt.inline_charts = !linked_charts;
      auto results = report::load_results(expand_result_paths(report_inputs));
      for (const auto& in : report_inputs)  // a sweep's knees (sweep --knee-p99) beside its results
        if (const fs::path k = fs::path(in) / "knees.json"; opt.knees.is_null() && fs::is_directory(in) && fs::exists(k)) {
          std::ifstream f(k);
          opt.knees = json::parse(f, nullptr, false);
          if (opt.knees.is_discarded()) throw SettingError(k.string() + ": not valid JSON");
        }
      // Results written before lockbench redacted its settings may still carry
      // a password: the report never does.
      for (auto& r : results)
        if (r.contains("settings") && r["settings"].is_object())
          for (const char* key : {"db", "partner"})
            if (r["settings"].contains(key) && r["settings"][key].is_string())
              r["settings"][key] = redact_secrets(r["settings"][key].get<std::string>());
      write_report_atomically(results, report_out, opt);
      std::cout << "wrote " << (fs::path(report_out) / "report.md").string() << ", report.html, summary.csv ("
                << results.size() << " results)\n";
      return 0;
    }
    if (*cpt) {
      try {
        const auto plan = report::plan_compaction(compact_in, compact_out);
        const std::size_t n = report::compact_files(plan);
        std::cout << "compacted " << n << " results into " << compact_out << " (" << plan.size() << " files)\n";
      } catch (const std::invalid_argument& e) {
        throw SettingError(std::string("compact: ") + e.what());
      }
      return 0;
    }
    if (*cmp) return report::run_compare(cmp_a, cmp_b, cmp_opt, cmp_format, std::cout);
    if (*exp) {
      std::cout << (explain_name.empty() ? report::explain_list() : report::explain(explain_name));
      return 0;
    }
    if (*lint) {
      // The strategy is known when a flag, the --config file or the --from file names it.
      Settings s;
      s.strategy.clear();
      if (!lint_src.preset.empty()) apply_preset(s, lint_src.preset);
      if (!lint_src.config.empty()) apply_toml_file(s, lint_src.config);
      if (!lint_from.empty()) {
        const SpringConfig spring = apply_spring_config(s, lint_from);
        if (!spring.ignored.empty() && lint_format == "text") {
          std::cerr << "lint: from " << lint_from << ": " << spring.applied.size() << " settings read; not read: ";
          for (std::size_t i = 0; i < spring.ignored.size(); ++i) std::cerr << (i ? ", " : "") << spring.ignored[i];
          std::cerr << "\n";
        }
      }
      for (const auto& d : setting_defs())
        if (lint->count("--" + d.name)) d.apply(s, lint_src.values.at(d.name));
      const bool strategy_known = !s.strategy.empty() && s.strategy != "all";
      if (s.strategy.empty()) s.strategy = "row-lease";  // validate() wants one; lint treats it as unknown
      s.validate();
      return cmd_lint(s, strategy_known, lint_format);
    }
    if (*pln) {
      Settings s;
      s.strategy.clear();  // known only when a file names it: the service's current strategy
      if (!plan_src.preset.empty()) apply_preset(s, plan_src.preset);
      if (!plan_src.config.empty()) apply_toml_file(s, plan_src.config);
      const auto given = [&](const std::string& name) { return pln->count("--" + name) > 0; };
      const auto apply_flags = [&](Settings& t) {
        for (const auto& d : setting_defs())
          if (given(d.name)) d.apply(t, plan_src.values.at(d.name));
      };
      return cmd_plan(s, apply_flags, given, plan_opt);
    }
    if (*val) return cmd_validate(settings_from(val_src, *val), *val, val_out, val_repetitions);
    if (*srv) {
      if (serve_run >= 0) serve_opt.run = serve_run;
      Settings ss = settings_from(serve_src, *srv);
      ss.world = "real";
      // Process pods get their secrets in the environment, never in argv (ps shows argv to every user).
      for (const auto& [var, url] : {std::pair{real::kServeDbEnv, &ss.db_url}, std::pair{real::kServeRedisEnv, &ss.redis_url}})
        if (url->empty())
          if (const char* v = std::getenv(var)) *url = v;
      return real::serve_pod(ss, serve_opt);
    }
    if (*cal) return cmd_calibrate(settings_from(cal_src, *cal), cal_out);
    if (*pgr) return cmd_playground(playground_port);
  } catch (const SettingError& e) {
    std::cerr << "lockbench: " << redact_secrets(e.what()) << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "lockbench: " << redact_secrets(e.what()) << "\n";
    return 1;
  }
  return 0;
}
}  // namespace

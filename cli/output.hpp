// What the CLI prints and writes: the comparison table, result files (written
// whole or not at all) and the commands that are more than a call.
#pragma once

#include <filesystem>
#include <optional>
#include <utility>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/shards.hpp"
#include "cli/table.hpp"
#include "core/settings.hpp"
#include "report/report.hpp"

namespace lockbench::cli {

bool isatty_stderr();

// SIGINT/SIGTERM during a command that runs: the first sets a flag the worlds
// poll (RunHooks::should_stop); SA_RESETHAND makes a second one kill at once.
void install_stop_handlers();
bool stop_requested();
int interrupted_exit_code();  // 130 (SIGINT) or 143 (SIGTERM)
const char* stop_signal_name();


// Results with repetitions (report/repetitions.hpp): one row per set of
// repetitions, each figure as "mean ± half-width of its 95 % interval", with
// n and the cv of ok/s. Prints nothing when no result has a repetition.
void print_aggregate_table(std::ostream& out, const std::vector<nlohmann::json>& results);
// The aggregates of `results` (report::aggregates_json) beside the results:
// DIR/aggregates.json, or NAME.aggregates.json beside NAME.json; nothing
// without --out or without repetitions. Result directories skip this file.
void write_aggregates(const std::vector<nlohmann::json>& results, const std::string& out);
// `doc` as DIR/NAME or OUT.NAME beside OUT.json (aggregates.json, knees.json).
void write_beside_results(const nlohmann::json& doc, const std::string& out, const std::string& name);
// "lockbench: 10 repetitions per run, seeds 1, 40265..., ..." (stderr), when repetitions > 1.
void print_repetition_seeds(std::ostream& out, const Settings& base, int repetitions);

// `out` ending in .json: one file (an object for one result, else an array).
// Otherwise a directory with one file per result. Each file is written to a
// temporary name and renamed, so a failure leaves no half-written file.
void write_results(const std::vector<nlohmann::json>& results, const std::string& out);

// `run --metrics-out FILE`: each result's pool at the end of its run as
// Prometheus text with Micrometer's HikariCP names (core/prometheus.hpp),
// labelled pool="pod1" (pool="all" when several pods: the result keeps their
// figures together), world and strategy. Timers in measured seconds.
// check_metrics_out refuses a FILE that cannot be written, before any run.
void check_metrics_out(const std::string& path);
void write_metrics(const std::vector<nlohmann::json>& results, const std::string& path);

// How a command claims its --out (cli/shards.hpp has the manifest).
struct SinkOptions {
  std::string command = "run";  // run | sweep, for the manifest
  nlohmann::json grid;          // what the command varies, for the manifest
  Shard shard;                  // the slice of the plan this process runs
  bool force = false;           // --force: another sweep's results in --out are removed first
};

// Results written as each run ends, into a destination checked before the
// first run. `out` ending in .json: one file, rewritten whole after each run
// (an object when one run is planned, else the array of results so far).
// Otherwise a directory, one file per run, named by its position in the
// plan: [NNN-]world-scenario-strategy.json, and the manifest.
class ResultSink {
 public:
  // Checks that `out` can be written (creating the directory or the file's
  // parent, then a probe file removed at once); throws SettingError naming
  // --out. `planned` = the runs of the command, in order (the whole plan,
  // when this process runs one shard of it). An --out holding results of
  // other settings (or another shard) is refused in one line naming --resume
  // and --force, unless options.force; a directory then gets its manifest.
  ResultSink(std::string out, const std::vector<Settings>& planned, const SinkOptions& options = {});
  // Writes the result of planned run `index` (atomically).
  void write(std::size_t index, const nlohmann::json& result);
  // `sweep --resume`: the result already written for run `index` when it is
  // complete and was made with the same settings; null otherwise. A file with
  // other settings is refused (SettingError): it belongs to another sweep.
  nlohmann::json existing(std::size_t index) const;
  bool to_directory() const { return !single_file_; }

 private:
  std::filesystem::path path_of(std::size_t index) const;
  std::filesystem::path respelled(std::size_t index) const;
  void claim_directory(const SinkOptions& options) const;
  void claim_file(bool force) const;
  std::string out_;
  bool single_file_ = false;
  std::vector<Settings> planned_;
  std::vector<nlohmann::json> written_;  // single-file mode: results so far, by index (null = not yet)
  // --resume: the results in --out by their canonical settings (dumped), read once.
  mutable std::optional<std::vector<std::pair<std::string, std::filesystem::path>>> by_settings_;
};
// Writes through a temporary file and a rename; a failure names `flag` (the
// option that chose the file) and the system's reason (disk full, ...).
void write_file_atomically(const std::filesystem::path& path, const std::string& text,
                           std::string_view flag = "--out");

// Writes the whole report into a temporary directory first (a failure there
// leaves `out` untouched), then renames each finished file into `out`: no file
// is ever half-written.
void write_report_atomically(const std::vector<nlohmann::json>& results, const std::string& out,
                             const report::ReportOptions& options);

// Files as given; a directory stands for the *.json files in it (sorted).
std::vector<std::string> expand_result_paths(const std::vector<std::string>& paths);

// A document that sits beside results and is not one (knees.json, plan.json):
// `given` when named (a file), else NAME in the first input directory that has
// it; null when there is none. Throws SettingError for a file that is not JSON.
nlohmann::json document_beside_results(const std::vector<std::string>& inputs, const std::string& name,
                                       const std::string& given = "");

void apply_setting_or_strategy(Settings& s, const std::string& name, const std::string& value);

// lint: one report of findings; exit 1 when something is flagged. `strategy_known`:
// the strategy came from a flag, --config or --from. format: text | json | sarif.
struct LintSources;
// `lockbench lint`: the settings, and what --from's files say about the probes (cli/lint_sources).
int cmd_lint(const Settings& s, bool strategy_known, const std::string& format, const LintSources& sources);
// validate: `repetitions` runs per world and load (repetition i with the same seed in both worlds);
// each sim/real ratio with its 95 % interval, "within" only when the whole interval is.
int cmd_validate(Settings s, const CLI::App& app, const std::string& out, int repetitions);
int cmd_calibrate(const Settings& s, const std::string& out);

// sweep --knee-p99 D: for each strategy of the plan, the highest rate at which
// ok/s >= 95 % of the requests offered and p99 <= D, by bisection in the
// simulator (report/knee.hpp) from the plan's highest rate, each rate run on
// every repetition's seed; knees_json. Throws SettingError for a real-world or
// closed-loop plan.
nlohmann::json sweep_knees(const std::vector<Settings>& runs, Duration p99_target, int jobs);
// The same refusals, before the sweep's first run.
void check_knee_plan(const std::vector<Settings>& runs);
void print_knees(std::ostream& out, const nlohmann::json& knees);

}  // namespace lockbench::cli

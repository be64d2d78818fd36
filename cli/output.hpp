// What the CLI prints and writes: the comparison table, result files (written
// whole or not at all) and the commands that are more than a call.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

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

// One row per result: outcomes, ok/s beside the Little's-law ceiling,
// latency, pool, and what the partner saw.
void print_table(std::ostream& out, const std::vector<nlohmann::json>& results);

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

// Results written as each run ends, into a destination checked before the
// first run. `out` ending in .json: one file, rewritten whole after each run
// (an object when one run is planned, else the array of results so far).
// Otherwise a directory, one file per run, named by its position in the
// plan: [NNN-]world-scenario-strategy.json.
class ResultSink {
 public:
  // Checks that `out` can be written (creating the directory or the file's
  // parent, then a probe file removed at once); throws SettingError naming
  // --out. `planned` = the runs of the command, in order.
  ResultSink(std::string out, const std::vector<Settings>& planned);
  // Writes the result of planned run `index` (atomically).
  void write(std::size_t index, const nlohmann::json& result);
  // `sweep --resume`: the result already written for run `index` when it is
  // complete and was made with the same settings; null otherwise. A file with
  // other settings is refused (SettingError): it belongs to another sweep.
  nlohmann::json existing(std::size_t index) const;
  bool to_directory() const { return !single_file_; }

 private:
  std::filesystem::path path_of(std::size_t index) const;
  std::string out_;
  bool single_file_ = false;
  std::vector<Settings> planned_;
  std::vector<nlohmann::json> written_;  // single-file mode: results so far, by index (null = not yet)
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

void apply_setting_or_strategy(Settings& s, const std::string& name, const std::string& value);

// lint: one report of findings; exit 1 when something is flagged. `strategy_known`:
// the strategy came from a flag, --config or --from. format: text | json | sarif.
int cmd_lint(const Settings& s, bool strategy_known, const std::string& format);
int cmd_validate(Settings s, const CLI::App& app, const std::string& out);
int cmd_calibrate(const Settings& s, const std::string& out);

}  // namespace lockbench::cli

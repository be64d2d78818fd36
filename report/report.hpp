// Comparison reports from result files: report.md (GitHub-renderable, with
// Mermaid sequence diagrams of captured traces), report.html (one
// self-contained page, SVG charts drawn by gnuplot) and summary.csv.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace lockbench::report {

struct ReportOptions {
  std::string title = "lockbench report";
  // Draw charts with gnuplot. When false, or when gnuplot fails, each chart's
  // place in the page says why it is missing; the report is still written.
  bool charts = true;
  std::string gnuplot = "gnuplot";  // executable, looked up on PATH
  // `sweep --knee-p99`'s knees.json (report/knee.hpp), shown after the verdict; null = none.
  nlohmann::json knees;
  // A `lockbench plan --format json` document (DIR/plan.json or report --plan): its
  // safe envelope becomes one more chart; null = none.
  nlohmann::json plan;
  // report.html inlines every chart (one self-contained page). When false
  // (`report --linked-charts`) it shows charts/NAME.svg as images instead: a
  // page a third the size that needs its charts/ folder beside it.
  bool inline_charts = true;
};

// Reads result JSON files (each file: one result object or an array of them)
// and checks every contract field of docs/reference/result.md. Throws lockbench::SettingError
// with one line such as
//   "results/a.json: missing field 'pool.hold_ms.p99'"
// for an unreadable file, bad JSON, a wrong schema or a missing field.
std::vector<nlohmann::json> load_results(const std::vector<std::string>& paths);

// The same check for one result already in memory; `source` names it in the error.
void validate_result(const nlohmann::json& result, const std::string& source);

// Writes report.md, report.html, summary.csv and charts/*.svg into out_dir
// (created when absent). Throws SettingError when results is empty.
void write_report(const std::vector<nlohmann::json>& results, const std::filesystem::path& out_dir,
                  const ReportOptions& options = {});

// The three documents as strings (write_report uses these). `charts_dir`
// receives the SVG files; render_html inlines them.
std::string render_markdown(const std::vector<nlohmann::json>& results, const ReportOptions& options = {});
std::string render_csv(const std::vector<nlohmann::json>& results);
std::string render_html(const std::vector<nlohmann::json>& results, const std::filesystem::path& charts_dir,
                        const ReportOptions& options = {});

// A run's violations as every section of the report and `compare` count them:
// every key under partner.violations is a violation except the informational
// ones (ambiguous_commit, retry_overlap, stale_token_rejected), including
// kinds this code has never heard of. For the CLI's table and CI gates.
double violations_total(const nlohmann::json& result);
bool is_informational_kind(std::string_view kind);

}  // namespace lockbench::report

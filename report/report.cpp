#include "report/report.hpp"

#include <fstream>

#include <fmt/format.h>

#include "base/units.hpp"
#include "report/documents.hpp"
#include "report/fields.hpp"

namespace lockbench::report {

namespace {

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw SettingError(fmt::format("--out: cannot write '{}'", path.string()));
}

}  // namespace

// Every document is drawn from configured views (fields.hpp): a time-scaled
// run is compared in the units it was configured in. summary.csv keeps the
// measured values.
std::string render_markdown(const std::vector<nlohmann::json>& results, const ReportOptions& options) {
  return detail::markdown(detail::configured_views(results), options, {});
}

std::string render_html(const std::vector<nlohmann::json>& results, const std::filesystem::path& charts_dir,
                        const ReportOptions& options) {
  const auto views = detail::configured_views(results);
  return detail::html(views, options, detail::make_charts(views, charts_dir, options));
}

double violations_total(const nlohmann::json& result) { return detail::violations_total(result); }

bool is_informational_kind(std::string_view kind) { return detail::is_count_not_violation(kind); }

void write_report(const std::vector<nlohmann::json>& results, const std::filesystem::path& out_dir,
                  const ReportOptions& options) {
  if (results.empty()) throw SettingError("RESULTS: no result to report on (give one or more result files)");
  std::error_code ec;
  std::filesystem::create_directories(out_dir / "charts", ec);
  if (ec) throw SettingError(fmt::format("--out: cannot create '{}': {}", out_dir.string(), ec.message()));
  const auto views = detail::configured_views(results);
  const auto charts = detail::make_charts(views, out_dir / "charts", options);
  write_text(out_dir / "report.md", detail::markdown(views, options, charts));
  write_text(out_dir / "report.html", detail::html(views, options, charts));
  write_text(out_dir / "summary.csv", render_csv(results));
}

}  // namespace lockbench::report

#include "report/report.hpp"

#include <fstream>

#include <fmt/format.h>

#include "core/units.hpp"
#include "report/documents.hpp"

namespace lockbench::report {

namespace {

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw SettingError(fmt::format("--out: cannot write '{}'", path.string()));
}

}  // namespace

std::string render_markdown(const std::vector<nlohmann::json>& results, const ReportOptions& options) {
  return detail::markdown(results, options, {});
}

std::string render_html(const std::vector<nlohmann::json>& results, const std::filesystem::path& charts_dir,
                        const ReportOptions& options) {
  return detail::html(results, options, detail::make_charts(results, charts_dir, options));
}

void write_report(const std::vector<nlohmann::json>& results, const std::filesystem::path& out_dir,
                  const ReportOptions& options) {
  if (results.empty()) throw SettingError("RESULTS: no result to report on (give one or more result files)");
  std::error_code ec;
  std::filesystem::create_directories(out_dir / "charts", ec);
  if (ec) throw SettingError(fmt::format("--out: cannot create '{}': {}", out_dir.string(), ec.message()));
  const auto charts = detail::make_charts(results, out_dir / "charts", options);
  write_text(out_dir / "report.md", detail::markdown(results, options, charts));
  write_text(out_dir / "report.html", detail::html(results, options, charts));
  write_text(out_dir / "summary.csv", render_csv(results));
}

}  // namespace lockbench::report

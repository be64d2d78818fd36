// Golden-structure tests of report.md, summary.csv and report.html, and the
// refusal of incomplete result files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/units.hpp"
#include "report/report.hpp"
#include "report/test_fixtures.hpp"

namespace lockbench::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A fresh directory, removed again when the test ends.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(fs::temp_directory_path() / ("lockbench_report_test_" + name + "_" + std::to_string(getpid()))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  operator const fs::path&() const { return path_; }
  fs::path operator/(const std::string& child) const { return path_ / child; }
  std::string string() const { return path_.string(); }

 private:
  fs::path path_;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_json(const fs::path& p, const json& j) { std::ofstream(p) << j.dump(2); }

// Fields of one CSV line, honouring quotes.
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') out.back() += '"', ++i;
    else if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) out.emplace_back();
    else out.back() += c;
  }
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

TEST(ReportMarkdown, has_every_section_heading_in_order) {
  const std::string md = render_markdown(fixtures::sweep());
  ASSERT_EQ(md.rfind("# lockbench report\n", 0), 0u);
  const std::vector<std::string> headings = {"## Summary per strategy",
                                             "## Prediction against measurement",
                                             "## Comparison table, measured",
                                             "## The double-link race, as it happened",
                                             "## Pool exhaustion under `held-tx`",
                                             "## Charts",
                                             "## Violations the partner listed",
                                             "## Runs"};
  std::size_t previous = 0;
  for (const auto& h : headings) {
    const auto at = md.find("\n" + h + "\n");
    ASSERT_NE(at, std::string::npos) << "missing heading " << h;
    EXPECT_GT(at, previous) << h << " out of order";
    previous = at;
  }
}

TEST(ReportMarkdown, summary_table_has_a_column_for_every_violation_kind_and_lock_failure) {
  const std::string md = render_markdown(fixtures::sweep());
  const auto lines = lines_of(md);
  const auto header = std::find_if(lines.begin(), lines.end(),
                                   [](const std::string& l) { return l.rfind("| strategy | offered /s |", 0) == 0; });
  ASSERT_NE(header, lines.end());
  for (const char* col : {"ok /s", "ok p50 ms", "ok p99 ms", "all p99 ms", "pool timeouts", "probe failures", "overlap_person",
                          "flow_interleaving", "person_split", "lost_promotion", "identity_lost",
                          "identity_duplicated", "double_charge", "lease steals",
                          "unlock failures", "recovery after crash ms"})
    EXPECT_NE(header->find(std::string("| ") + col + " |"), std::string::npos) << col;
  // Separator row, then one row per result, all with the header's column count.
  const auto columns = std::count(header->begin(), header->end(), '|');
  ASSERT_TRUE((header + 1)->rfind("|---", 0) == 0);
  int rows = 0;
  for (auto it = header + 2; it != lines.end() && it->rfind("|", 0) == 0; ++it, ++rows)
    EXPECT_EQ(std::count(it->begin(), it->end(), '|') - std::count(it->begin(), it->end(), '\\'), columns) << *it;
  EXPECT_EQ(rows, static_cast<int>(fixtures::sweep().size()));
  // An extra kind that no run counted is named below the table, not given a column.
  EXPECT_EQ(header->find("stale_fencing_token"), std::string::npos);
  EXPECT_NE(md.find("counted 0 in every run: stale_fencing_token."), std::string::npos);
}

TEST(ReportMarkdown, an_extra_violation_kind_that_was_counted_gets_its_own_column) {
  auto results = fixtures::sweep();
  results[0]["partner"]["violations"]["stale_fencing_token"] = 4;
  const std::string md = render_markdown(results);
  EXPECT_NE(md.find("| double_charge | stale_fencing_token |"), std::string::npos);
  EXPECT_EQ(md.find("counted 0 in every run"), std::string::npos);
}

TEST(ReportMarkdown, comparison_table_puts_measured_values_in_the_seed_rows) {
  const std::string md = render_markdown(fixtures::sweep());
  EXPECT_NE(md.find("| Requirement | held-tx:wait | advisory-xact:try | row-lease | none |"), std::string::npos);
  for (const char* row : {"| Exclusion across workers", "| Protects non-existent records", "| External infrastructure",
                          "| Auto clean-up on crash", "| Safe with slow HTTP I/O"})
    EXPECT_NE(md.find(row), std::string::npos) << row;
  EXPECT_NE(md.find("❌ 66 violations"), std::string::npos);           // none: 37 + 21 + 3 + 5
  EXPECT_NE(md.find("key free again 5000 ms after the crash"), std::string::npos);  // row-lease crash run
  EXPECT_NE(md.find("✅ 0 violations"), std::string::npos);            // held-tx excluded
}

TEST(ReportMarkdown, has_mermaid_blocks_for_the_race_and_the_pool_exhaustion) {
  const std::string md = render_markdown(fixtures::sweep());
  std::size_t blocks = 0;
  for (std::size_t at = 0; (at = md.find("```mermaid\nsequenceDiagram\n", at)) != std::string::npos; ++at) ++blocks;
  EXPECT_EQ(blocks, 2u);
  EXPECT_EQ(md.find("<br"), std::string::npos) << "GitHub Markdown must not need HTML";
}

TEST(ReportMarkdown, says_so_when_no_race_or_exhaustion_was_captured) {
  const std::string md = render_markdown({fixtures::base_result("optimistic", 5, 3)});
  EXPECT_NE(md.find("No race was captured"), std::string::npos);
  EXPECT_NE(md.find("No pool timeout was captured"), std::string::npos);
  EXPECT_EQ(md.find("```mermaid"), std::string::npos);
}

TEST(ReportMarkdown, time_scaled_runs_get_unscaled_columns_and_a_note) {
  auto r = fixtures::held_tx(20);
  r["world"] = "real";
  r["time_scale"] = 0.01;
  r["unscaled"] = {{"throughput_ok_per_s", 0.063}, {"latency_ms", {{"p50", 1.2e6}, {"p99", 3.01e6}}}};
  const std::string md = render_markdown({r, fixtures::held_tx(5)});
  EXPECT_NE(md.find("| ok /s unscaled | ok p99 ms unscaled |"), std::string::npos);
  EXPECT_NE(md.find("| 0.1 | 3010000 |"), std::string::npos);
  EXPECT_NE(md.find("Some runs were time-scaled"), std::string::npos);
  EXPECT_EQ(render_markdown({fixtures::held_tx(5)}).find("unscaled"), std::string::npos);
}

TEST(SummaryCsv, has_a_header_and_one_row_per_result_with_equal_field_counts) {
  const auto results = fixtures::sweep();
  const auto lines = lines_of(render_csv(results));
  ASSERT_EQ(lines.size(), results.size() + 1);
  const auto header = csv_fields(lines[0]);
  for (const char* col : {"strategy", "requests.ok", "latency_ms.p99", "pool.hold_ms.p99",
                          "partner.violations.overlap_person", "partner.violations.stale_fencing_token",
                          "locks.lease_steals", "settings.partner-latency", "faults.recovery_ms"})
    EXPECT_NE(std::find(header.begin(), header.end(), col), header.end()) << col;
  const auto strategy_col = std::find(header.begin(), header.end(), "strategy") - header.begin();
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto row = csv_fields(lines[i]);
    ASSERT_EQ(row.size(), header.size()) << lines[i];
    EXPECT_EQ(row[strategy_col], results[i - 1]["strategy"].get<std::string>());
  }
}

TEST(LoadResults, refuses_a_result_missing_a_contract_field_naming_file_and_field) {
  const TempDir dir("missing");
  json r = fixtures::held_tx(20);
  r["pool"]["hold_ms"].erase("p99");
  write_json(dir / "a.json", r);
  try {
    load_results({(dir / "a.json").string()});
    FAIL() << "a result without pool.hold_ms.p99 was accepted";
  } catch (const SettingError& e) {
    EXPECT_EQ(std::string(e.what()), (dir / "a.json").string() + ": missing field 'pool.hold_ms.p99'");
  }
}

TEST(LoadResults, reads_an_object_file_and_an_array_file_in_order) {
  const TempDir dir("load");
  write_json(dir / "one.json", fixtures::none_hot_with_race());
  write_json(dir / "many.json", json(fixtures::sweep()));
  const auto results = load_results({(dir / "one.json").string(), (dir / "many.json").string()});
  ASSERT_EQ(results.size(), 1 + fixtures::sweep().size());
  EXPECT_EQ(results[0]["strategy"], "none");
  EXPECT_EQ(results[1]["strategy"], "held-tx:wait");
}

TEST(LoadResults, refuses_bad_json_a_wrong_schema_and_an_element_of_an_array_by_index) {
  const TempDir dir("bad");
  std::ofstream(dir / "bad.json") << "{ not json";
  EXPECT_THROW(load_results({(dir / "bad.json").string()}), SettingError);
  json wrong = fixtures::held_tx(2);
  wrong["schema"] = "lockbench.result/0";
  write_json(dir / "schema.json", wrong);
  EXPECT_THROW(load_results({(dir / "schema.json").string()}), SettingError);
  json arr = json::array({fixtures::held_tx(2), fixtures::held_tx(5)});
  arr[1].erase("probe");
  write_json(dir / "arr.json", arr);
  try {
    load_results({(dir / "arr.json").string()});
    FAIL();
  } catch (const SettingError& e) {
    EXPECT_EQ(std::string(e.what()), (dir / "arr.json").string() + "[1]: missing field 'probe.total'");
  }
  EXPECT_THROW(load_results({(dir / "absent.json").string()}), SettingError);
}

TEST(WriteReport, writes_the_three_documents_and_refuses_no_results) {
  const TempDir dir("write");
  ReportOptions options;
  options.charts = false;
  write_report(fixtures::sweep(), dir, options);
  for (const char* f : {"report.md", "report.html", "summary.csv"}) EXPECT_TRUE(fs::exists(dir / f)) << f;
  EXPECT_NE(slurp(dir / "report.html").find("Charts were turned off"), std::string::npos);
  EXPECT_THROW(write_report({}, dir, options), SettingError);
}

TEST(WriteReport, a_chart_whose_data_is_absent_says_so_in_the_page) {
  if (std::system("gnuplot --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot is not installed";
  const TempDir dir("absent");
  json r = fixtures::base_result("optimistic", 5, 3);  // no timeline
  r.erase("time_split_ms");
  write_report({r}, dir);
  const std::string page = slurp(dir / "report.html");
  EXPECT_NE(page.find("No result holds a timeline"), std::string::npos);
  EXPECT_NE(page.find("No result holds time_split_ms"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir / "charts" / "throughput.svg"));
  EXPECT_FALSE(fs::exists(dir / "charts" / "pool_timeline.svg"));
}

TEST(WriteReport, a_missing_gnuplot_leaves_a_sentence_not_a_failure) {
  const TempDir dir("nognuplot");
  ReportOptions options;
  options.gnuplot = "/nonexistent/gnuplot";
  write_report(fixtures::sweep(), dir, options);
  EXPECT_NE(slurp(dir / "report.html").find("could not start"), std::string::npos);
}

TEST(WriteReport, html_is_self_contained_with_every_chart_inlined) {
  if (std::system("gnuplot --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot is not installed";
  const TempDir dir("html");
  write_report(fixtures::sweep(), dir);
  const std::string page = slurp(dir / "report.html");
  for (const char* chart : {"throughput", "p99", "pool_timeline", "time_split", "violations", "race"}) {
    EXPECT_NE(page.find(std::string("<figure id=\"chart-") + chart + "\">\n<h3>"), std::string::npos) << chart;
    EXPECT_TRUE(fs::exists(dir / "charts" / (std::string(chart) + ".svg"))) << chart;
  }
  std::size_t svgs = 0;
  for (std::size_t at = 0; (at = page.find("<svg", at)) != std::string::npos; ++at) ++svgs;
  EXPECT_EQ(svgs, 6u);
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("src="), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);
  EXPECT_EQ(page.find("<?xml"), std::string::npos);
  EXPECT_EQ(page.find("id='gpPt0'"), std::string::npos) << "chart ids must be prefixed per chart";
}

}  // namespace
}  // namespace lockbench::report

// Golden output tests (as Google Benchmark's test/output_test.h): the four
// outputs a user reads, generated from the fixed results in input/ and
// compared byte for byte with expected/:
//   expected/table.txt     the console table `run` and `sweep` print (cli/table.cpp)
//   expected/report.md     report.md, without charts (report/report.hpp render_markdown)
//   expected/summary.csv   summary.csv (render_csv)
//   expected/compact-*.json the compact form of each input (report/compact.hpp)
// After an intended change of a format, regenerate and review:
//   LOCKBENCH_UPDATE_GOLDEN=1 build/tests/golden/golden_test && git diff tests/golden
// Beside them, the table and the report are checked to agree on every total
// and ceiling (they once printed 5847 + 2598 = 8445 against 8419 + 26, and a
// ceiling of 2.98 over a footer's 3.05).
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/table.hpp"
#include "report/compact.hpp"
#include "report/fields.hpp"
#include "report/report.hpp"

namespace golden_test {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kDir = LOCKBENCH_GOLDEN_DIR;

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream o;
  o << f.rdbuf();
  return o.str();
}

bool updating() {
  const char* v = std::getenv("LOCKBENCH_UPDATE_GOLDEN");
  return v != nullptr && std::string(v) == "1";
}

// The inputs, in file-name order (fixed: the table's rows follow it).
std::vector<fs::path> input_paths() {
  std::vector<fs::path> paths;
  for (const auto& e : fs::directory_iterator(kDir / "input"))
    if (e.path().extension() == ".json") paths.push_back(e.path());
  std::sort(paths.begin(), paths.end());
  return paths;
}

std::vector<json> inputs() {
  std::vector<json> results;
  for (const auto& p : input_paths()) results.push_back(json::parse(slurp(p)));
  return results;
}

// Byte for byte against expected/NAME, or (LOCKBENCH_UPDATE_GOLDEN=1) written there.
void expect_golden(const std::string& name, const std::string& actual) {
  const fs::path golden = kDir / "expected" / name;
  if (updating()) {
    fs::create_directories(golden.parent_path());
    std::ofstream(golden, std::ios::binary) << actual;
    std::cout << "updated " << golden.string() << "\n";
    return;
  }
  ASSERT_TRUE(fs::exists(golden)) << golden << " is missing: LOCKBENCH_UPDATE_GOLDEN=1 " << "build/tests/golden/golden_test";
  const std::string expected = slurp(golden);
  if (expected == actual) return;
  // The first line that differs, then the whole output, for the log.
  std::istringstream e(expected), a(actual);
  std::string le, la;
  int line = 1;
  while (std::getline(e, le) && std::getline(a, la) && le == la) ++line;
  ADD_FAILURE() << name << " differs from " << golden.string() << " at line " << line << ":\n  expected: " << le
                << "\n  actual:   " << la << "\n(regenerate after an intended change: LOCKBENCH_UPDATE_GOLDEN=1 "
                << "build/tests/golden/golden_test)\n--- actual ---\n"
                << actual;
}

TEST(GoldenOutput, TheConsoleTableIsByteForByteTheGoldenOne) {
  std::ostringstream out;
  lockbench::cli::print_table(out, inputs());
  expect_golden("table.txt", out.str());
}

TEST(GoldenOutput, ReportMdIsByteForByteTheGoldenOne) {
  lockbench::report::ReportOptions o;
  o.charts = false;
  o.title = "golden report";
  expect_golden("report.md", lockbench::report::render_markdown(inputs(), o));
}

TEST(GoldenOutput, SummaryCsvIsByteForByteTheGoldenOne) {
  expect_golden("summary.csv", lockbench::report::render_csv(inputs()));
}

TEST(GoldenOutput, EachCompactResultIsByteForByteTheGoldenOne) {
  for (const auto& p : input_paths())
    expect_golden("compact-" + p.filename().string(), lockbench::report::compact_result_text(slurp(p)));
}

TEST(GoldenOutput, OneChangedByteFailsTheComparisonAtItsLine) {
  if (updating()) GTEST_SKIP() << "LOCKBENCH_UPDATE_GOLDEN=1 writes the goldens";
  std::ostringstream out;
  lockbench::cli::print_table(out, inputs());
  std::string changed = out.str();
  changed[changed.find("2.98")] = '3';  // one figure of the ceiling column
  EXPECT_NONFATAL_FAILURE(expect_golden("table.txt", changed), "table.txt differs from");
  EXPECT_NONFATAL_FAILURE(expect_golden("table.txt", changed), "at line 2:");
}

// ---- the table and the report agree

// The table's rows as column name -> cell (cells hold no two spaces in a row).
std::vector<std::map<std::string, std::string>> table_rows(const std::string& table) {
  const auto split = [](const std::string& line) {
    std::vector<std::string> cells;
    std::size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && line[i] == ' ') ++i;
      if (i >= line.size()) break;
      std::size_t j = line.find("  ", i);
      if (j == std::string::npos) j = line.size();
      cells.push_back(line.substr(i, j - i));
      i = j;
    }
    return cells;
  };
  std::istringstream in(table);
  std::string line;
  std::getline(in, line);
  const auto heads = split(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line) && !line.empty()) {
    const auto cells = split(line);
    std::map<std::string, std::string> row;
    for (std::size_t c = 0; c < heads.size() && c < cells.size(); ++c) row[heads[c]] = cells[c];
    rows.push_back(row);
  }
  return rows;
}

TEST(GoldenOutput, TheConsoleTableAndTheReportAgreeOnEveryTotalAndCeiling) {
  const std::vector<json> results = inputs();
  std::ostringstream out;
  lockbench::cli::print_table(out, results);
  const std::string table = out.str();
  const auto rows = table_rows(table);
  ASSERT_EQ(rows.size(), results.size()) << table;
  const std::string md = lockbench::report::render_markdown(results, {});
  int ceilings = 0, orphans = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const json& r = results[i];
    const auto v = lockbench::report::detail::violations_of(r);
    const auto& row = rows[i];
    EXPECT_EQ(row.at("strategy"), r["strategy"].get<std::string>());
    // overlaps + violations = the report's "exclusion held?" count; orphans = its "orphan effects".
    EXPECT_EQ(std::stoll(row.at("overlaps")) + std::stoll(row.at("violations")), static_cast<long long>(v.exclusion))
        << row.at("strategy");
    EXPECT_EQ(std::stoll(row.at("orphans")), static_cast<long long>(v.orphan)) << row.at("strategy");
    if (v.exclusion > 0) {
      EXPECT_NE(md.find("❌ " + lockbench::report::detail::fmt(v.exclusion, 0) + " ("), std::string::npos)
          << "the report's exclusion count for " << row.at("strategy");
    }
    if (v.orphan > 0) {
      ++orphans;
      EXPECT_NE(md.find("❌ " + lockbench::report::detail::fmt(v.orphan, 0) + " ("), std::string::npos)
          << "the report's orphan count for " << row.at("strategy");
    }
    // The ceiling: the column, the footer and the report's "of CEILING" show one figure.
    const auto ceiling = lockbench::report::detail::ceiling_per_s(r);
    if (!ceiling) {
      EXPECT_EQ(row.at("ceiling/s"), "-") << row.at("strategy");
      continue;
    }
    ++ceilings;
    const std::string c = lockbench::report::detail::fmt(*ceiling, 2);
    EXPECT_EQ(row.at("ceiling/s"), c) << row.at("strategy");
    EXPECT_NE(md.find(" of " + c + " ("), std::string::npos) << "the report's ceiling for " << row.at("strategy");
    const std::string footer = "  " + r["strategy"].get<std::string>() + ": holds a connection";
    const auto at = table.find(footer);
    ASSERT_NE(at, std::string::npos) << table;
    const std::string footer_line = table.substr(at, table.find('\n', at) - at);
    EXPECT_NE(footer_line.find("= " + c + " req/s ceiling"), std::string::npos) << footer_line;
  }
  // The inputs hold both cases: a ceiling (held-tx:wait) and orphan effects (none).
  EXPECT_GE(ceilings, 1);
  EXPECT_GE(orphans, 1);
}

}  // namespace golden_test

// Golden-structure tests of report.md, summary.csv and report.html, and the
// refusal of incomplete result files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <fstream>
#include <sstream>

#include "base/units.hpp"
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

// The Markdown table whose header line starts with `header_start`: header
// cells, then each row's cells.
struct MdTable {
  std::vector<std::string> headers;
  std::vector<std::vector<std::string>> rows;
  std::size_t at = std::string::npos;  // offset of the header line
  std::size_t column(const std::string& name) const {
    const auto it = std::find(headers.begin(), headers.end(), name);
    EXPECT_NE(it, headers.end()) << "no column " << name;
    return static_cast<std::size_t>(it - headers.begin());
  }
};

std::vector<std::string> md_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  for (std::size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') cell += '|', ++i;
    else if (line[i] == '|') cells.push_back(cell), cell.clear();
    else cell += line[i];
  }
  for (auto& c : cells) {
    while (!c.empty() && c.front() == ' ') c.erase(c.begin());
    while (!c.empty() && c.back() == ' ') c.pop_back();
  }
  return cells;
}

MdTable md_table(const std::string& md, const std::string& header_start) {
  MdTable t;
  t.at = md.find("\n" + header_start);
  if (t.at == std::string::npos) return t;
  ++t.at;
  std::istringstream in(md.substr(t.at));
  std::string line;
  std::getline(in, line);
  t.headers = md_cells(line);
  std::getline(in, line);  // |---|
  while (std::getline(in, line) && line.rfind("|", 0) == 0) t.rows.push_back(md_cells(line));
  return t;
}

const std::vector<std::string>* row_of(const MdTable& t, const std::string& strategy, const std::string& world = "") {
  for (const auto& r : t.rows)
    if (r[0] == strategy && (world.empty() || r[1] == world)) return &r;
  ADD_FAILURE() << "no row for " << strategy << " " << world;
  return nullptr;
}

TEST(ReportMarkdown, HasEverySectionHeadingInOrder) {
  const std::string md = render_markdown(fixtures::sweep());
  ASSERT_EQ(md.rfind("# lockbench report\n", 0), 0u);
  const std::vector<std::string> headings = {"## Verdict",
                                             "### What the runs show",
                                             "## Charts",
                                             "## The double-link race, as it happened",
                                             "## Pool exhaustion under `held-tx`",
                                             "## Per-run detail",
                                             "## Prediction against measurement",
                                             "## Comparison table, measured",
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

TEST(ReportFirstScreen, TheVerdictTableComesFirstWithEveryColumnAndOneRowPerStrategy) {
  const std::string md = render_markdown(fixtures::sweep());
  const MdTable v = md_table(md, "| strategy | world | offered /s | exclusion held? |");
  ASSERT_NE(v.at, std::string::npos) << md.substr(0, 2000);
  EXPECT_LT(v.at, md.find("## Charts"));
  EXPECT_LT(v.at, md.find("| run | strategy |"));  // before the per-run detail
  for (const char* col : {"exclusion held?", "pool-safe?", "ok /s of offered", "ok /s of Little's-law ceiling",
                          "ok p99", "lease steals", "leaked locks", "orphan effects"})
    v.column(col);
  // held-tx, advisory-xact, row-lease, none: one world, so one row each.
  ASSERT_EQ(v.rows.size(), 4u);
  for (const auto& r : v.rows) EXPECT_EQ(r.size(), v.headers.size());
}

TEST(ReportFirstScreen, TicksAndCrossesFollowTheNumbers) {
  auto results = fixtures::sweep();
  const std::string md = render_markdown(results);
  const MdTable v = md_table(md, "| strategy | world | offered /s | exclusion held? |");
  const auto excl = v.column("exclusion held?"), pool = v.column("pool-safe?"), ceiling = v.column("ok /s of Little's-law ceiling");
  const auto* held = row_of(v, "held-tx:wait");
  const auto* none = row_of(v, "none");
  const auto* lease = row_of(v, "row-lease");
  ASSERT_TRUE(held && none && lease);
  // held-tx at 20/s (the headline): excludes, exhausts its pool near the ceiling.
  EXPECT_EQ((*held)[excl].rfind("✅ 0 in", 0), 0u) << (*held)[excl];
  EXPECT_EQ((*held)[pool].rfind("❌ ", 0), 0u) << (*held)[pool];
  EXPECT_NE((*held)[pool].find(" pool timeouts, 22/30 probes failed"), std::string::npos) << (*held)[pool];
  EXPECT_NE((*held)[ceiling].find("of 6.67 ("), std::string::npos) << (*held)[ceiling];
  // none: 37 + 21 + 3 + 5 = 66 violations; its pool was fine.
  EXPECT_EQ((*none)[excl].rfind("❌ 66 (overlap_person 37", 0), 0u) << (*none)[excl];
  EXPECT_EQ((*none)[pool].rfind("✅ 0 pool timeouts", 0), 0u) << (*none)[pool];
  EXPECT_EQ((*none)[ceiling].rfind("– (no connection held", 0), 0u);
  // row-lease: stolen leases and their overlaps show.
  EXPECT_EQ((*lease)[excl].rfind("❌ 2 (overlap_person 2)", 0), 0u) << (*lease)[excl];
  EXPECT_EQ((*lease)[v.column("lease steals")], "2");

  // The same held-tx run with a healthy pool gets a tick.
  for (auto& r : results)
    if (r["strategy"] == "held-tx:wait") r["requests"]["pool_timeout"] = 0, r["pool"]["timeouts"] = 0, r["probe"]["failed"] = 0;
  const MdTable healthy = md_table(render_markdown(results), "| strategy | world | offered /s | exclusion held? |");
  EXPECT_EQ((*row_of(healthy, "held-tx:wait"))[pool].rfind("✅ 0 pool timeouts, 0/30", 0), 0u);
}

TEST(ReportFirstScreen, RunsWithProbesAndAFaultWindowGetTheirPodsAndRecoveryColumns) {
  auto results = fixtures::sweep();
  const MdTable plain = md_table(render_markdown(results), "| strategy | world | offered /s | exclusion held? |");
  for (const auto& h : plain.headers) EXPECT_TRUE(h != "pods (probes acting)" && h != "recovery") << h;
  for (auto& r : results) {
    if (r["strategy"] == "held-tx:wait") {
      r["pods"] = {{"restarts", 9}, {"requests_lost", 796}, {"unavailable_s", 12.5}};
      r["recovery"] = {{"recovered", true}, {"recovery_s", 32.0}, {"reason", nullptr}};
    } else if (r["strategy"] == "row-lease") {
      r["pods"] = {{"restarts", 0}, {"requests_lost", 0}, {"unavailable_s", 0}};
      r["recovery"] = {{"recovered", false}, {"recovery_s", nullptr}, {"reason", "not recovered before the arrivals ended"}};
    }
  }
  const MdTable v = md_table(render_markdown(results), "| strategy | world | offered /s | exclusion held? |");
  const auto pods = v.column("pods (probes acting)"), recovery = v.column("recovery");
  const auto* held = row_of(v, "held-tx:wait");
  const auto* lease = row_of(v, "row-lease");
  const auto* none = row_of(v, "none");
  ASSERT_TRUE(held && lease && none);
  EXPECT_EQ((*held)[pods], "❌ 9 restarts, 796 lost, no pod ready 12.5 s");
  EXPECT_EQ((*held)[recovery], "32.0 s after the window");
  EXPECT_EQ((*lease)[pods], "✅ 0 restarts, 0 lost");
  EXPECT_EQ((*lease)[recovery], "❌ not recovered before the arrivals ended");
  EXPECT_EQ((*none)[pods], "–");  // a run without probes
  for (const auto& r : v.rows) EXPECT_EQ(r.size(), v.headers.size());
}

TEST(ReportFirstScreen, TheParagraphIsComputedFromTheNumbers) {
  auto results = fixtures::sweep();
  const std::string md = render_markdown(results);
  const auto text = md.substr(md.find("### What the runs show"), md.find("## Charts") - md.find("### What the runs show"));
  EXPECT_NE(text.find("`held-tx:wait` and `advisory-xact:try` held exclusion but ran the pool dry"), std::string::npos)
      << text;
  EXPECT_NE(text.find("did not exclude"), std::string::npos) << text;
  EXPECT_NE(text.find("`row-lease` had 2 leases stolen"), std::string::npos) << text;
  // Heal advisory-xact's pool: the sentence moves it to the clean strategies.
  for (auto& r : results)
    if (r["strategy"] == "advisory-xact:try") r["requests"]["pool_timeout"] = 0, r["probe"]["failed"] = 0;
  const std::string healed = render_markdown(results);
  EXPECT_NE(healed.find("`advisory-xact:try` held exclusion and kept the pool healthy"), std::string::npos);
  EXPECT_NE(healed.find("`held-tx:wait` held exclusion but ran the pool dry"), std::string::npos);
}

TEST(ReportFirstScreen, PerRunRowsAreNeverIndistinguishable) {
  auto results = fixtures::sweep();
  // Two runs equal in everything but their duration, and one exact duplicate.
  json longer = fixtures::held_tx(20);
  longer["settings"]["duration"] = "10m";
  longer["duration_s"] = 600.0;
  results.push_back(longer);
  results.push_back(fixtures::held_tx(20));
  const MdTable d = md_table(render_markdown(results), "| run | strategy | world |");
  ASSERT_EQ(d.rows.size(), results.size());
  for (const char* col : {"pods", "duration s", "faults", "seed", "violations", "notes (not violations)"}) d.column(col);
  std::set<std::vector<std::string>> distinct(d.rows.begin(), d.rows.end());
  EXPECT_EQ(distinct.size(), d.rows.size());
  // The crash runs say so.
  bool crash_named = false;
  for (const auto& r : d.rows) crash_named = crash_named || r[d.column("faults")].find("crash at") != std::string::npos;
  EXPECT_TRUE(crash_named);
}

TEST(ReportFirstScreen, ATimeScaledRunIsComparedInConfiguredUnitsNotPickedAsTheHeaviestLoad) {
  // A real run at time scale 0.1 of 20/s configured: it ran at 200/s, with
  // latencies and waits ten times shorter than configured.
  json real = fixtures::held_tx(20);
  real["world"] = "real";
  real["time_scale"] = 0.1;
  real["offered_per_s"] = 200.0;
  real["throughput_ok_per_s"] = 28.5;
  real["prediction"]["littles_law_ceiling_per_s"] = 66.7;
  real["latency_ok_ms"] = {{"p50", 1200.0}, {"p90", 2800.0}, {"p99", 5980.0}, {"p999", 6000.0}, {"max", 6100.0}};
  real["time_split_ms"]["pool_wait"] = 4500.0;
  real["unscaled"] = {{"throughput_ok_per_s", 2.85}};
  const std::vector<json> results = {fixtures::held_tx(20), fixtures::held_tx(5), real};
  const std::string md = render_markdown(results);
  const MdTable v = md_table(md, "| strategy | world | offered /s | exclusion held? |");
  const auto* row = row_of(v, "held-tx:wait", "real x0.1");
  ASSERT_TRUE(row);
  EXPECT_EQ((*row)[v.column("offered /s")], "20");
  EXPECT_EQ((*row)[v.column("ok /s of offered")], "2.85 of 20 (14 %)");
  EXPECT_EQ((*row)[v.column("ok /s of Little's-law ceiling")], "2.85 of 6.67 (43 %)");
  EXPECT_EQ((*row)[v.column("ok p99")], "59.8 s");
  // The comparison table speaks of the headline of each world, never of 200/s.
  EXPECT_NE(md.find("real x0.1: 2.85 of 20 (ceiling 6.67)"), std::string::npos);
  EXPECT_EQ(md.find("of 200"), std::string::npos);
  EXPECT_NE(md.find("Some runs were time-scaled"), std::string::npos);
  // The time-split chart's pool wait for the real run is the configured 45 s.
  const TempDir dir("scaled");
  ReportOptions options;
  options.charts = false;
  write_report(results, dir, options);
  // Bar 1 (the real run): worker queue 0.5 ms -> 5, then pool wait 4500 ms -> 45000 on top.
  EXPECT_NE(slurp(dir / "charts" / "gnuplot" / "split_1.dat").find("1 5 45005"), std::string::npos)
      << slurp(dir / "charts" / "gnuplot" / "split_1.dat");
  EXPECT_EQ(render_markdown({fixtures::held_tx(5)}).find("time-scaled"), std::string::npos);
}

TEST(ReportCounts, InformationalKindsAreNotesAndEverySectionAgrees) {
  json quiet = fixtures::base_result("row-lease", 10, 4);
  quiet["partner"]["violations"]["ambiguous_commit"] = 48;
  quiet["partner"]["violations"]["retry_overlap"] = 7;
  const std::string md = render_markdown({quiet});
  const MdTable v = md_table(md, "| strategy | world | offered /s | exclusion held? |");
  const auto& cell = v.rows.at(0)[v.column("exclusion held?")];
  EXPECT_EQ(cell.rfind("✅", 0), 0u) << cell;
  EXPECT_NE(cell.find("notes, not violations: ambiguous_commit 48, retry_overlap 7"), std::string::npos) << cell;
  const MdTable d = md_table(md, "| run | strategy | world |");
  EXPECT_EQ(d.rows.at(0)[d.column("violations")], "0");
  EXPECT_EQ(d.rows.at(0)[d.column("notes (not violations)")], "ambiguous_commit 48, retry_overlap 7");
  const MdTable c = md_table(md, "| Requirement |");
  EXPECT_NE(c.rows.at(0)[1].find("notes, not violations: ambiguous_commit 48, retry_overlap 7"), std::string::npos)
      << c.rows.at(0)[1];
  EXPECT_EQ(md.find("| ambiguous_commit |"), std::string::npos) << "an informational kind got a violation column";
}

TEST(ReportCounts, AKindTheReportDoesNotKnowIsAViolationAndOrphanEffectsGetTheirColumn) {
  json r = fixtures::base_result("row-lease", 10, 4);
  r["partner"]["violations"]["duplicate_reward"] = 3;      // new from the partner: a violation
  r["partner"]["violations"]["db_partner_divergence"] = 2;  // an orphan effect
  const std::string md = render_markdown({r});
  const MdTable v = md_table(md, "| strategy | world | offered /s | exclusion held? |");
  EXPECT_EQ(v.rows.at(0)[v.column("exclusion held?")].rfind("❌ 3 (duplicate_reward 3)", 0), 0u);
  EXPECT_EQ(v.rows.at(0)[v.column("orphan effects")], "❌ 2 (db_partner_divergence 2)");
  const MdTable d = md_table(md, "| run | strategy | world |");
  EXPECT_EQ(d.rows.at(0)[d.column("violations")], "5");
  const MdTable c = md_table(md, "| Requirement |");
  EXPECT_EQ(c.rows.at(0)[1].rfind("❌ 5 violations", 0), 0u) << c.rows.at(0)[1];
}

TEST(ReportCounts, StrategyInfoFromTheRegistryWinsOverTheFallback) {
  json r = fixtures::base_result("split-tx", 10, 4);  // a strategy the report has no facts for
  r["strategy_info"] = {{"holds_connection_during_call", true}, {"excludes_across_pods", true},
                        {"crash_safe", false}, {"needs_existing_row", true}};
  const std::string md = render_markdown({r});
  EXPECT_NE(md.find("holds a connection during the call"), std::string::npos);
  EXPECT_NE(md.find("❌ No: needs an existing row"), std::string::npos);
  EXPECT_NE(md.find("⚠️ not crash-safe by design"), std::string::npos);
  r.erase("strategy_info");
  EXPECT_EQ(render_markdown({r}).find("holds a connection during the call"), std::string::npos);
}

TEST(ReportMarkdown, HasMermaidBlocksForTheRaceAndThePoolExhaustion) {
  const std::string md = render_markdown(fixtures::sweep());
  std::size_t blocks = 0;
  for (std::size_t at = 0; (at = md.find("```mermaid\nsequenceDiagram\n", at)) != std::string::npos; ++at) ++blocks;
  EXPECT_EQ(blocks, 2u);
  EXPECT_EQ(md.find("<br"), std::string::npos) << "GitHub Markdown must not need HTML";
}

TEST(ReportMarkdown, SaysSoWhenNoRaceOrExhaustionWasCaptured) {
  const std::string md = render_markdown({fixtures::base_result("optimistic", 5, 3)});
  EXPECT_NE(md.find("No race was captured"), std::string::npos);
  EXPECT_NE(md.find("No pool timeout was captured"), std::string::npos);
  EXPECT_EQ(md.find("```mermaid"), std::string::npos);
}

TEST(ReportCharts, RunsAtOneOfferedLoadGetBarChartsAndASweepGetsOnePanelPerStrategy) {
  ReportOptions options;
  options.charts = false;  // the scripts are written all the same
  const TempDir single("single");
  auto same = std::vector<json>{fixtures::held_tx(20), fixtures::base_result("none", 20, 4),
                                fixtures::base_result("row-lease", 20, 4)};
  write_report(same, single, options);
  for (const char* chart : {"throughput", "p99"}) {
    const std::string gp = slurp(single / "charts" / "gnuplot" / (std::string(chart) + ".gp"));
    EXPECT_NE(gp.find("with boxes"), std::string::npos) << chart << ":\n" << gp;
    EXPECT_EQ(gp.find("linespoints"), std::string::npos) << chart;
  }
  const TempDir sweep("sweep");
  write_report(fixtures::sweep(), sweep, options);
  const std::string gp = slurp(sweep / "charts" / "gnuplot" / "throughput.gp");
  EXPECT_NE(gp.find("set multiplot layout"), std::string::npos);
  // One panel per strategy that has load points (the crash-only row-lease has none).
  std::size_t panels = 0;
  for (std::size_t at = 0; (at = gp.find("\nplot ", at)) != std::string::npos; ++at) ++panels;
  EXPECT_EQ(panels, 3u);
  // Pool timelines: one panel per headline row, active against the pool size.
  const std::string tl = slurp(sweep / "charts" / "gnuplot" / "pool_timeline.gp");
  EXPECT_NE(tl.find("set multiplot layout"), std::string::npos);
  EXPECT_NE(tl.find("title 'pool size 10'"), std::string::npos);
  EXPECT_NE(tl.find("title 'active'"), std::string::npos);
}

TEST(ReportHtmlPage, DrawsTheRaceAndThePoolExhaustionAsSvgSequenceDiagrams) {
  const TempDir dir("sequence");
  ReportOptions options;
  options.charts = false;
  write_report(fixtures::sweep(), dir, options);
  const std::string page = slurp(dir / "report.html");
  for (const char* id : {"sequence-race", "sequence-pool"}) {
    const auto fig = page.find(std::string("<figure id=\"") + id + "\"");
    ASSERT_NE(fig, std::string::npos) << id;
    const auto svg = page.find("<svg", fig), end = page.find("</figure>", fig);
    ASSERT_LT(svg, end) << id << " has no SVG";
    const std::string drawing = page.substr(svg, end - svg);
    EXPECT_NE(drawing.find("<line"), std::string::npos) << id << ": no arrows";
    EXPECT_NE(drawing.find("marker-end"), std::string::npos);
  }
  const auto race = page.substr(page.find("id=\"sequence-race\""));
  EXPECT_NE(race.find(">request r-17</text>"), std::string::npos);
  EXPECT_NE(race.find("both requests were calling the partner"), std::string::npos);
  const auto pool = page.substr(page.find("id=\"sequence-pool\""));
  EXPECT_NE(pool.find(">request r-40</text>"), std::string::npos);
  EXPECT_EQ(page.find("sequenceDiagram"), std::string::npos) << "raw Mermaid text in the page";
  // The verdict table comes before the charts in the page too.
  EXPECT_LT(page.find("<h2 id=\"verdict\">"), page.find("<h2>Charts</h2>"));
}

TEST(SummaryCsv, HasAHeaderAndOneRowPerResultWithEqualFieldCounts) {
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

// The real world's process pods write the simulator's faults block (plus their
// measurements in crash{} and pause{}): the CSV reads the same columns from both.
TEST(SummaryCsv, ReadsTheFaultColumnsOfARealRunAsOfASimulatedOne) {
  json sim = fixtures::held_tx(20);
  sim["faults"] = {{"crash_at_s", 10.0}, {"pause_at_s", nullptr}, {"pause_for_s", 0.0}, {"clock_skew_ms", 0.0},
                   {"recovery_ms", 5000.0}, {"crashed_requests", 3}, {"keys_held_at_crash", 3}};
  json real = sim;
  real["world"] = "real";
  real["faults"]["recovery_ms"] = 2950.5;
  real["faults"]["skew_pod"] = 0;
  real["faults"]["crash"] = {{"pod", 1}, {"at_s", 10.02}, {"key_blocked_ms", 2950.5}};
  real["faults"]["pause"] = nullptr;
  const auto lines = lines_of(render_csv({sim, real}));
  ASSERT_EQ(lines.size(), 3u);
  const auto header = csv_fields(lines[0]);
  const auto col = [&](const char* name) {
    const auto it = std::find(header.begin(), header.end(), name);
    EXPECT_NE(it, header.end()) << name;
    return static_cast<std::size_t>(it - header.begin());
  };
  EXPECT_EQ(csv_fields(lines[1])[col("faults.crash_at_s")], csv_fields(lines[2])[col("faults.crash_at_s")]);
  EXPECT_NE(csv_fields(lines[2])[col("faults.crash_at_s")], "");
  EXPECT_NE(csv_fields(lines[2])[col("faults.recovery_ms")].find("2950.5"), std::string::npos) << lines[2];
}

TEST(LoadResults, RefusesAResultMissingAContractFieldNamingFileAndField) {
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

TEST(LoadResults, ReadsAnObjectFileAndAnArrayFileInOrder) {
  const TempDir dir("load");
  write_json(dir / "one.json", fixtures::none_hot_with_race());
  write_json(dir / "many.json", json(fixtures::sweep()));
  const auto results = load_results({(dir / "one.json").string(), (dir / "many.json").string()});
  ASSERT_EQ(results.size(), 1 + fixtures::sweep().size());
  EXPECT_EQ(results[0]["strategy"], "none");
  EXPECT_EQ(results[1]["strategy"], "held-tx:wait");
}

TEST(LoadResults, RefusesBadJsonAWrongSchemaAndAnElementOfAnArrayByIndex) {
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

TEST(WriteReport, WritesTheThreeDocumentsAndRefusesNoResults) {
  const TempDir dir("write");
  ReportOptions options;
  options.charts = false;
  write_report(fixtures::sweep(), dir, options);
  for (const char* f : {"report.md", "report.html", "summary.csv"}) EXPECT_TRUE(fs::exists(dir / f)) << f;
  EXPECT_NE(slurp(dir / "report.html").find("Charts were turned off"), std::string::npos);
  EXPECT_THROW(write_report({}, dir, options), SettingError);
}

TEST(WriteReport, AChartWhoseDataIsAbsentSaysSoInThePage) {
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

TEST(WriteReport, AMissingGnuplotLeavesASentenceNotAFailure) {
  const TempDir dir("nognuplot");
  ReportOptions options;
  options.gnuplot = "/nonexistent/gnuplot";
  write_report(fixtures::sweep(), dir, options);
  EXPECT_NE(slurp(dir / "report.html").find("could not start"), std::string::npos);
}

TEST(WriteReport, HtmlIsSelfContainedWithEveryChartInlined) {
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
  EXPECT_EQ(svgs, 8u);  // six charts and two sequence diagrams
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("src="), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);
  EXPECT_EQ(page.find("<?xml"), std::string::npos);
  EXPECT_EQ(page.find("id='gpPt0'"), std::string::npos) << "chart ids must be prefixed per chart";
}

TEST(ReportComparison, ClusteredAndMissingRecordRowsComeFromTwoPodAndRewardClaimRuns) {
  // synchronized: clean on one pod, overdrawn on two; advisory-xact: a reward-claim run with no duplicate.
  json one_pod = fixtures::base_result("synchronized:wait", 2, 1);
  one_pod["scenario"] = "payout";
  json two_pods = one_pod;
  two_pods["settings"]["pods"] = 2;
  two_pods["partner"]["violations"]["overdrawn"] = 7;
  json claims = fixtures::base_result("advisory-xact:try", 2, 300);
  claims["scenario"] = "reward-claim";
  json unique = fixtures::base_result("none", 2, 1);
  unique["scenario"] = "reward-claim:unique";
  unique["partner"]["violations"]["duplicate_reward"] = 4;
  unique["partner"]["violations"]["claim_divergence"] = 4;
  const std::string md = render_markdown({one_pod, two_pods, claims, unique});
  const MdTable c = md_table(md, "| Requirement |");
  const auto col = [&](const std::string& s) { return c.column(s); };
  const auto row = [&](const std::string& label) -> const std::vector<std::string>& {
    for (const auto& r : c.rows)
      if (r[0].rfind(label, 0) == 0) return r;
    ADD_FAILURE() << "no row " << label;
    return c.rows.at(0);
  };
  const auto& cluster = row("Clustered / multi-node");
  EXPECT_EQ(cluster[col("synchronized:wait")].rfind("❌ 7 violations", 0), 0u) << cluster[col("synchronized:wait")];
  EXPECT_EQ(cluster[col("advisory-xact:try")], "not measured (no run with 2+ pods)");
  const auto& missing = row("Protects non-existent records");
  EXPECT_EQ(missing[col("advisory-xact:try")].rfind("✅ 0 duplicate rewards", 0), 0u) << missing[col("advisory-xact:try")];
  EXPECT_NE(missing[col("none")].find("a unique key kept one claim row"), std::string::npos) << missing[col("none")];
  EXPECT_EQ(missing[col("synchronized:wait")].rfind("not measured", 0), 0u);
}

TEST(ReportComparison, TheInfrastructureRowNamesEachLeaseStore) {
  // The store comes from the registry row: redis-lease's Redis, etcd-lease's etcd.
  const std::string md = render_markdown({fixtures::base_result("redis-lease", 8, 1), fixtures::base_result("etcd-lease", 8, 1),
                                          fixtures::base_result("row-lease", 8, 1)});
  const MdTable c = md_table(md, "| Requirement |");
  const auto it = std::find_if(c.rows.begin(), c.rows.end(),
                               [](const std::vector<std::string>& r) { return r[0] == "External infrastructure"; });
  ASSERT_NE(it, c.rows.end());
  EXPECT_EQ((*it)[c.column("redis-lease")], "Redis (a lease store beside PostgreSQL)");
  EXPECT_EQ((*it)[c.column("etcd-lease")], "etcd (a lease store beside PostgreSQL)");
  EXPECT_EQ((*it)[c.column("row-lease")], "None (uses the existing PostgreSQL)");
}

TEST(ReportComparison, TheCrashRowGivesEachWorldsRecoveryInConfiguredUnits) {
  json sim = fixtures::base_result("row-lease", 20, 1500);
  sim["settings"]["crash-at"] = "5m";
  sim["faults"] = {{"recovery_ms", 29984.6}, {"crash_at_s", 300}};
  json real = sim;
  real["world"] = "real";
  real["time_scale"] = 0.1;
  real["faults"] = {{"recovery_ms", 2950.2}};  // measured at time scale 0.1: 29,502 ms configured
  json xact = fixtures::base_result("advisory-xact:try", 20, 1500);
  xact["settings"]["crash-at"] = "5m";
  xact["faults"] = {{"recovery_ms", 0.0}};
  const std::string md = render_markdown({sim, real, xact});
  const MdTable c = md_table(md, "| Requirement |");
  const std::vector<std::string>* crash = nullptr;
  for (const auto& r : c.rows)
    if (r[0].rfind("Auto clean-up on crash", 0) == 0) crash = &r;
  ASSERT_NE(crash, nullptr);
  const std::string lease = (*crash)[c.column("row-lease")];
  EXPECT_NE(lease.find("sim 29984.6 ms"), std::string::npos) << lease;
  EXPECT_NE(lease.find("real x0.1 29502"), std::string::npos) << lease;
  EXPECT_EQ(lease.rfind("⚠️", 0), 0u) << lease;
  EXPECT_EQ((*crash)[c.column("advisory-xact:try")].rfind("✅", 0), 0u);
}

}  // namespace
}  // namespace lockbench::report

namespace lockbench::report {
namespace {

// Runs of one strategy that differ in their seed only: repetitions.
std::vector<json> repetitions_of(const std::string& strategy, const std::vector<double>& ok_per_s) {
  std::vector<json> out;
  for (std::size_t i = 0; i < ok_per_s.size(); ++i) {
    json r = fixtures::base_result(strategy, 20, 4);
    r["seed"] = 100 + static_cast<int>(i);
    r["repetition"] = {{"index", i}, {"of", ok_per_s.size()}, {"base_seed", 100}};
    r["throughput_ok_per_s"] = ok_per_s[i];
    r["latency_ok_ms"] = {{"p50", 100.0}, {"p99", 400.0 + 10 * static_cast<double>(i)}};
    out.push_back(r);
  }
  return out;
}

TEST(ReportUncertainty, AnAbandonedOverlapIsANoteWithItsFixAndExclusionStillHolds) {
  json r = fixtures::base_result("held-tx:wait", 2, 400);
  r["partner"]["violations"]["overlap_abandoned"] = 3;
  const std::string md = render_markdown({r});
  const MdTable v = md_table(md, "| strategy | world | offered /s | exclusion held? |");
  const auto& cell = v.rows.at(0)[v.column("exclusion held?")];
  EXPECT_EQ(cell.rfind("✅", 0), 0u) << cell;
  EXPECT_NE(cell.find("overlap_abandoned 3"), std::string::npos) << cell;
  EXPECT_NE(cell.find("idempotency key or a fencing token"), std::string::npos) << cell;
  r["partner"]["violations"]["overlap_person"] = 1;  // a live overlap still fails exclusion
  const MdTable w = md_table(render_markdown({r}), "| strategy | world | offered /s | exclusion held? |");
  EXPECT_EQ(w.rows.at(0)[w.column("exclusion held?")].rfind("❌ 1 (overlap_person 1)", 0), 0u);
}

TEST(ReportUncertainty, RepetitionsReadAsMeanAndIntervalAndAFastestInsideTheNoiseIsSaidSo) {
  auto results = repetitions_of("row-lease", {18.6, 18.8, 18.7});
  for (auto& r : repetitions_of("advisory-xact:try", {18.5, 18.7, 18.9})) results.push_back(r);
  const std::string md = render_markdown(results);
  const MdTable v = md_table(md, "| strategy | world | offered /s | exclusion held? |");
  ASSERT_EQ(v.rows.size(), 2u);
  const auto& ok = v.rows.at(0)[v.column("ok /s of offered")];
  EXPECT_EQ(ok.rfind("18.70 ± 0.25 of 20", 0), 0u) << ok;  // t(0.975, 2) * 0.1 / sqrt(3) = 0.248
  EXPECT_NE(ok.find("n=3"), std::string::npos) << ok;
  EXPECT_NE(v.rows.at(0)[v.column("ok p99")].find(" ± "), std::string::npos);
  EXPECT_NE(md.find("within noise of `advisory-xact:try`"), std::string::npos) << md;

  // Far apart: the lead is outside the noise.
  auto apart = repetitions_of("row-lease", {18.6, 18.8, 18.7});
  for (auto& r : repetitions_of("advisory-xact:try", {12.0, 12.1, 12.2})) apart.push_back(r);
  const std::string md2 = render_markdown(apart);
  EXPECT_EQ(md2.find("within noise"), std::string::npos);
  EXPECT_NE(md2.find("was `row-lease` (outside the others' 95 % intervals of ok/s)"), std::string::npos) << md2;

  const std::string csv = render_csv(results);
  EXPECT_NE(csv.find("repetition.index,repetition.of,repetitions.ok_per_s.mean"), std::string::npos);
  EXPECT_EQ(render_csv({fixtures::held_tx(5)}).find("repetition"), std::string::npos);
}

}  // namespace
}  // namespace lockbench::report

// Compact results: what is dropped, what is kept, idempotence, and the files.
#include "report/compact.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace lockbench::report {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

json full_result() {
  json r = {{"schema", "lockbench.result/1"},
            {"strategy", "held-tx:wait"},
            {"requests", {{"ok", 12}, {"conflict", 1}}},
            {"trace", json::array({{{"request", 1}, {"steps", json::array()}}})},
            {"timeline", json::array({{{"t_s", 0}, {"active", 3}, {"pending", 0}}})},
            {"latency_histogram_ms", {{"bounds", {1, 2}}, {"counts", {3, 4}}}}};
  json details = json::array();
  for (int i = 0; i < 25; ++i) details.push_back({{"kind", "overlap_person"}, {"request_ids", {i, i + 1}}});
  r["partner"] = {{"details", details}, {"details_total", 40}, {"violations", {{"overlap_person", 40}}}};
  return r;
}

std::string read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

TEST(CompactResult, DropsTraceTimelineHistogramAndTheDetailsButNotTheirCount) {
  const json c = compact_result(full_result());
  EXPECT_FALSE(c.contains("trace"));
  EXPECT_FALSE(c.contains("timeline"));
  EXPECT_FALSE(c.contains("latency_histogram_ms"));
  EXPECT_EQ(c["partner"]["details"].size(), kCompactDetailsMax);
  EXPECT_EQ(compact_result(full_result(), 2)["partner"]["details"][1]["request_ids"][0], 1);  // the first ones kept
  EXPECT_EQ(c["partner"]["details_total"], 40);
  EXPECT_EQ(c["detail"], "compact");
}

TEST(CompactResult, DropsTheTimestampCommitAndHostButKeepsTheVersionAndTheServers) {
  json full = full_result();
  full["provenance"] = {{"lockbench_version", "0.1.0"}, {"git_commit", "abc1234"}, {"created_at", "2026-12-03T06:00:00Z"},
                        {"host", "vm"}, {"cores", 2}, {"postgresql_version", "15.4"}, {"partner_version", nullptr}};
  const json p = compact_result(full)["provenance"];
  EXPECT_EQ(p, (json{{"lockbench_version", "0.1.0"}, {"cores", 2}, {"postgresql_version", "15.4"},
                     {"partner_version", nullptr}}));
}

TEST(CompactFiles, ASweepsManifestKeepsTheVersionWithoutTheCommit) {
  const fs::path root = fs::temp_directory_path() / "compact-test-manifest";
  fs::remove_all(root);
  const json manifest = {{"schema", "lockbench.manifest/1"}, {"lockbench_version", "0.1.0 (abc1234)"},
                         {"plan", {"001-sim.json"}}, {"shard", {{"index", 0}, {"count", 1}}}};
  write(root / "in" / "lockbench.manifest", manifest.dump(2) + "\n");
  write(root / "in" / "other" / "lockbench.manifest", "not a manifest\n");
  compact_files(plan_compaction(root / "in", root / "out"));
  json expected = manifest;
  expected["lockbench_version"] = "0.1.0";
  EXPECT_EQ(read(root / "out" / "lockbench.manifest"), expected.dump(2) + "\n");
  EXPECT_EQ(read(root / "out" / "other" / "lockbench.manifest"), "not a manifest\n");  // copied as it is
  // Twice compacted, the same bytes.
  compact_files(plan_compaction(root / "out", root / "again"));
  EXPECT_EQ(read(root / "again" / "lockbench.manifest"), expected.dump(2) + "\n");
  fs::remove_all(root);
}

TEST(CompactResult, KeepsEverythingTheTablesRead) {
  json full = full_result();
  const json c = compact_result(full);
  for (const char* key : {"schema", "strategy", "requests"}) EXPECT_EQ(c[key], full[key]) << key;
  EXPECT_EQ(c["partner"]["violations"], full["partner"]["violations"]);
}

TEST(CompactResult, ASecondCompactionChangesNothing) {
  const json once = compact_result(full_result());
  EXPECT_EQ(compact_result(once), once);
  const std::string text = compact_dump(once);
  EXPECT_EQ(compact_result_text(text), text);
  EXPECT_EQ(json::parse(text), once);
}

TEST(CompactResult, WritesOneLinePerTopLevelField) {
  const json once = compact_result(full_result());
  const std::string text = compact_dump(once);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), static_cast<long>(once.size()) + 2);
  EXPECT_NE(text.find("\n\"requests\":{\"conflict\":1,\"ok\":12},\n"), std::string::npos) << text;
}

TEST(CompactResult, LeavesJsonThatIsNotAResultAsItIs) {
  const std::string manifest = "{\"grid\": [1, 2],   \"trace\": 1}\n";
  EXPECT_EQ(compact_result_text(manifest), manifest);
  EXPECT_EQ(compact_result(json{{"trace", 1}}), (json{{"trace", 1}}));
  EXPECT_THROW(compact_result_text("{half"), std::runtime_error);
}

TEST(CompactResult, CompactsEveryResultOfAnArrayFile) {
  const json arr = json::array({full_result(), full_result()});
  const json c = json::parse(compact_result_text(arr.dump()));
  ASSERT_EQ(c.size(), 2u);
  for (const auto& r : c) EXPECT_FALSE(r.contains("trace"));
}

TEST(CompactFiles, MirrorsADirectoryTreeCompactingResultsAndCopyingTheRest) {
  const fs::path root = fs::temp_directory_path() / ("compact-test-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  fs::remove_all(root);
  write(root / "in" / "a" / "001-sim.json", full_result().dump(2));
  write(root / "in" / "report" / "report.md", "# report\n");
  const auto plan = plan_compaction(root / "in", root / "out");
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(compact_files(plan), 1u);
  const json c = json::parse(read(root / "out" / "a" / "001-sim.json"));
  EXPECT_FALSE(c.contains("timeline"));
  EXPECT_EQ(read(root / "out" / "report" / "report.md"), "# report\n");
  EXPECT_TRUE(json::parse(read(root / "in" / "a" / "001-sim.json")).contains("timeline"));  // the input is untouched
  fs::remove_all(root);
}

TEST(CompactFiles, WritesIntoTheParentOfItsInputAndSkipsItsOwnOutputInsideIt) {
  const fs::path root = fs::temp_directory_path() / "compact-test-nested";
  fs::remove_all(root);
  write(root / "results" / "full" / "sim" / "001.json", full_result().dump(2));
  write(root / "results" / "report" / "report.md", "# old\n");
  const auto up = plan_compaction(root / "results" / "full", root / "results");  // as scripts/demo does
  ASSERT_EQ(up.size(), 1u);
  EXPECT_EQ(up[0].to, root / "results" / "sim" / "001.json");
  write(root / "in" / "a.json", full_result().dump(2));
  write(root / "in" / "out" / "b.json", full_result().dump(2));
  const auto down = plan_compaction(root / "in", root / "in" / "out");
  ASSERT_EQ(down.size(), 1u);
  EXPECT_EQ(down[0].to, root / "in" / "out" / "a.json");
  fs::remove_all(root);
}

TEST(CompactFiles, RefusesAJsonFileThatIsNotJsonBeforeWritingAnything) {
  const fs::path root = fs::temp_directory_path() / "compact-test-bad";
  fs::remove_all(root);
  write(root / "in" / "001.json", full_result().dump());
  write(root / "in" / "002.json", "{half");
  EXPECT_THROW(compact_files(plan_compaction(root / "in", root / "out")), std::invalid_argument);
  EXPECT_FALSE(fs::exists(root / "out"));
  EXPECT_THROW(plan_compaction(root / "missing", root / "out"), std::invalid_argument);
  fs::remove_all(root);
}

}  // namespace
}  // namespace lockbench::report

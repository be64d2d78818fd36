// `lockbench compare`: matching by setting, deltas, the regressions it flags
// and its exit status.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/units.hpp"
#include "report/compare.hpp"
#include "report/test_fixtures.hpp"

namespace lockbench::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class Sets {
 public:
  explicit Sets(const std::string& name)
      : dir_(fs::temp_directory_path() / ("lockbench_compare_test_" + name + "_" + std::to_string(getpid()))) {
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "a");
    fs::create_directories(dir_ / "b");
  }
  ~Sets() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void write(const std::string& set, const std::vector<json>& results) {
    for (std::size_t i = 0; i < results.size(); ++i)
      std::ofstream(dir_ / set / (std::to_string(100 + i) + ".json")) << results[i].dump();
  }
  std::string a() const { return (dir_ / "a").string(); }
  std::string b() const { return (dir_ / "b").string(); }

 private:
  fs::path dir_;
};

int compare_sets(const std::vector<json>& a, const std::vector<json>& b, std::string& out,
                 const std::string& format = "md") {
  Sets s(format);
  s.write("a", a);
  s.write("b", b);
  std::ostringstream text;
  const int status = run_compare(s.a(), s.b(), {}, format, text);
  out = text.str();
  return status;
}

TEST(Compare, IdenticalSetsFlagNothingAndExit0) {
  std::string out;
  EXPECT_EQ(compare_sets(fixtures::sweep(), fixtures::sweep(), out), 0);
  EXPECT_NE(out.find("**No regression.**"), std::string::npos) << out;
  EXPECT_EQ(out.find("❌"), std::string::npos) << out;
  EXPECT_NE(out.find("| sim · switch-primary · held-tx:wait · 20/s · pool 10 | 6.33 | 6.33 | +0.0 %"), std::string::npos)
      << out;
}

TEST(Compare, LowerThroughputIsFlaggedAsARegressionAndExits1) {
  auto b = fixtures::sweep();
  b[3]["throughput_ok_per_s"] = b[3]["throughput_ok_per_s"].get<double>() * 0.7;  // held-tx at 20/s
  std::string out;
  EXPECT_EQ(compare_sets(fixtures::sweep(), b, out), 1);
  EXPECT_NE(out.find("**❌ 1 regression flagged.**"), std::string::npos) << out;
  EXPECT_NE(out.find("ok/s down 30.0 %"), std::string::npos) << out;
  // A drop within the threshold is a delta, not a regression.
  b = fixtures::sweep();
  b[3]["throughput_ok_per_s"] = b[3]["throughput_ok_per_s"].get<double>() * 0.95;
  EXPECT_EQ(compare_sets(fixtures::sweep(), b, out), 0) << out;
  EXPECT_NE(out.find("-5.0 %"), std::string::npos) << out;
}

TEST(Compare, ASlowerP99AndANewViolationKindAreFlaggedButANoteIsNot) {
  auto b = fixtures::sweep();
  b[0]["latency_ms"]["p99"] = 10000.0;  // held-tx at 2/s: 2400 ms before (no latency_ok_ms: every request's)
  b[4]["partner"]["violations"]["overlap_person"] = 3;       // advisory-xact at 2/s starts to race
  b[5]["partner"]["violations"]["ambiguous_commit"] = 9;     // informational: never a regression
  std::string out;
  EXPECT_EQ(compare_sets(fixtures::sweep(), b, out, "json"), 1);
  const json j = json::parse(out);
  EXPECT_TRUE(j["regressed"].get<bool>());
  std::size_t flagged = 0;
  for (const auto& r : j["runs"]) {
    if (r["regressions"].empty()) continue;
    ++flagged;
    const std::string why = r["regressions"][0];
    if (r["key"].get<std::string>().find("held-tx:wait · 2/s") != std::string::npos)
      EXPECT_EQ(why.rfind("ok p99 up 316.7 %", 0), 0u) << why;
    else
      EXPECT_EQ(why, "new violations: overlap_person 3") << r["key"];
  }
  EXPECT_EQ(flagged, 2u) << j.dump(2);
}

TEST(Compare, RunsWithoutAMatchAreListedNotCompared) {
  auto b = fixtures::sweep();
  b.pop_back();                                   // none is gone
  b.push_back(fixtures::base_result("optimistic", 7, 3));  // a new one
  std::string out;
  EXPECT_EQ(compare_sets(fixtures::sweep(), b, out), 0);
  EXPECT_NE(out.find("Only in A (not compared):\n\n- sim · switch-primary · none · 4/s · pool 10"), std::string::npos)
      << out;
  EXPECT_NE(out.find("Only in B (not compared):\n\n- sim · switch-primary · optimistic · 7/s · pool 10"),
            std::string::npos);
}

TEST(Compare, RefusesAnUnknownFormatAndAMissingSet) {
  Sets s("bad");
  s.write("a", fixtures::sweep());
  s.write("b", fixtures::sweep());
  std::ostringstream out;
  EXPECT_THROW(run_compare(s.a(), s.b(), {}, "yaml", out), SettingError);
  EXPECT_THROW(run_compare(s.a(), s.b() + "/absent.json", {}, "md", out), SettingError);
}

TEST(Compare, ZeroMatchedRunsAreRefusedSayingNothingWasCompared) {
  Sets s("none_matched");
  s.write("a", {fixtures::base_result("none", 4, 3)});
  s.write("b", {fixtures::base_result("optimistic", 7, 3)});
  std::ostringstream out;
  try {
    run_compare(s.a(), s.b(), {}, "md", out);
    ADD_FAILURE() << "0 matched runs compared as if all were fine: " << out.str();
  } catch (const SettingError& e) {
    EXPECT_NE(std::string(e.what()).find("nothing was compared"), std::string::npos) << e.what();
  }
  EXPECT_EQ(out.str(), "");  // no "No regression" half-written
}

}  // namespace
}  // namespace lockbench::report

namespace lockbench::report {
namespace {

std::vector<json> repeated(const std::vector<double>& ok_per_s, int seed0) {
  std::vector<json> out;
  for (std::size_t i = 0; i < ok_per_s.size(); ++i) {
    json r = fixtures::held_tx(20);
    r["seed"] = seed0 + static_cast<int>(i);
    r["throughput_ok_per_s"] = ok_per_s[i];
    out.push_back(r);
  }
  return out;
}

TEST(CompareSignificance, WithRepetitionsADropPastTheThresholdIsFlaggedOnlyWhenTheUTestAgrees) {
  CompareOptions opt;
  opt.max_ok_drop_pct = 5;
  const auto a = repeated({20.1, 19.8, 20.3, 20.0, 19.9, 20.2, 20.05, 19.95, 20.15, 19.85}, 1);
  // 8 % lower, every run below every baseline run: p = 0.00018 (scipy, base/stats_test.cpp).
  const auto lower = repeated({18.5, 18.4, 18.6, 18.3, 18.55, 18.45, 18.65, 18.35, 18.5, 18.42}, 11);
  const Comparison c = compare(a, lower, opt);
  ASSERT_EQ(c.runs.size(), 1u);
  ASSERT_TRUE(c.runs[0].ok_p.has_value());
  EXPECT_NEAR(*c.runs[0].ok_p, 0.00018165114609146497, 1e-12);
  EXPECT_TRUE(c.regressed());
  EXPECT_NE(c.runs[0].regressions.at(0).find(", p = 0.000182"), std::string::npos) << c.runs[0].regressions.at(0);

  // Noisy sets whose means differ by 13 %: past the threshold, inside the noise.
  const auto wide_a = repeated({20, 30, 10, 25, 15}, 1), wide_b = repeated({17, 27, 9, 22, 12}, 11);
  const Comparison n = compare(wide_a, wide_b, opt);
  EXPECT_FALSE(n.regressed());
  ASSERT_TRUE(n.runs[0].ok_p.has_value());
  EXPECT_GE(*n.runs[0].ok_p, 0.05);
  bool said = false;
  for (const auto& note : n.runs[0].notes) said = said || note.find("within noise") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(CompareSignificance, OneRunASideSaysSoAndHowManyRepetitionsWouldTell) {
  const auto a = repeated({20.0}, 1), b = repeated({17.0, 17.5, 18.0, 16.5}, 11);
  const Comparison c = compare(a, b);
  ASSERT_EQ(c.runs.size(), 1u);
  EXPECT_FALSE(c.runs[0].ok_p.has_value());
  EXPECT_TRUE(c.regressed());  // the threshold alone decides, as before
  bool said = false;
  for (const auto& note : c.runs[0].notes)
    said = said || (note.find("no significance test") != std::string::npos && note.find("--repetitions ") != std::string::npos);
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace lockbench::report

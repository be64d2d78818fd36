// Sharded sweeps in the simulator (no servers): `sweep --shard I/N` runs a
// deterministic slice of the plan and writes a manifest, `merge` puts the
// shards of one sweep together into what the unsharded sweep and `report`
// would write, and refuses shards that are missing, repeated, foreign or
// unfinished; a sweep's --out is never shared with another sweep's results
// (issue 27: --resume with a family name, a reused --out, run --out x.json).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "run_command.hpp"

namespace fs = std::filesystem;
using namespace lockbench::testing;
using nlohmann::json;

namespace cli_shards_test {

const std::string kBin = LOCKBENCH_BIN;

// 12 short runs (4 rates x 3 strategies): enough for 7 shards of one or two runs.
const std::string kGrid = kBin +
                          " sweep --world sim --quiet --jobs 1 --vary rate=2,4,6,8 "
                          "--vary strategy=held-tx,row-lease,optimistic --duration 20s --keys 5 "
                          "--partner-latency fixed:300ms --maximum-pool-size 2";
const std::string kSweep = kGrid + " --seed 3";

class Shards : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lockbench-shards-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string at(const std::string& name) const { return (dir_ / name).string(); }
  // Runs every shard of kSweep (plus `extra` flags) into shard-I directories; their paths.
  std::string shards(std::size_t n, const std::string& extra = "", const std::string& prefix = "shard-") {
    std::string dirs;
    for (std::size_t i = 0; i < n; ++i) {
      const std::string d = at(prefix + std::to_string(i));
      const auto r = run_command(kSweep + extra + " --shard " + std::to_string(i) + "/" + std::to_string(n) +
                                 " --out " + d);
      EXPECT_EQ(r.status, 0) << r.err;
      dirs += " " + d;
    }
    return dirs;
  }
  fs::path dir_;
};

std::map<std::string, std::string> files_in(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) out[e.path().filename().string()] = slurp(e.path().string());
  return out;
}

json without_provenance(const std::string& text) {
  json j = json::parse(text);
  j.erase("provenance");
  return j;
}

void expect_one_line_exit_2(const CommandResult& r, const std::string& names) {
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find(names), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST_F(Shards, TheUnionOfNShardsEqualsTheUnshardedSweepByteForByteApartFromProvenance) {
  ASSERT_EQ(run_command(kSweep + " --out " + at("whole")).status, 0);
  const auto rep = run_command(kBin + " report " + at("whole") + " --no-charts --out " + at("whole-report"));
  ASSERT_EQ(rep.status, 0) << rep.err;
  const auto whole = files_in(dir_ / "whole");
  const auto whole_report = files_in(dir_ / "whole-report");
  ASSERT_EQ(whole.size(), 13u);  // 12 results and the manifest
  for (const std::size_t n : {1u, 3u, 7u}) {
    const std::string prefix = "n" + std::to_string(n) + "-";
    const std::string dirs = shards(n, "", prefix);
    const std::string merged = at(prefix + "merged");
    const auto m = run_command(kBin + " merge" + dirs + " --no-charts --out " + merged);
    ASSERT_EQ(m.status, 0) << m.err;
    const auto got = files_in(merged);
    std::size_t results = 0;
    for (const auto& [name, text] : whole) {
      ASSERT_TRUE(got.count(name)) << n << " shards: " << name;
      if (name.size() > 5 && name.substr(name.size() - 5) == ".json") {
        EXPECT_EQ(without_provenance(got.at(name)).dump(2), without_provenance(text).dump(2)) << n << ": " << name;
        ++results;
      } else {
        EXPECT_EQ(got.at(name), text) << n << ": " << name;  // the manifest, byte for byte
      }
    }
    EXPECT_EQ(results, 12u);
    for (const char* doc : {"report.md", "summary.csv", "report.html"})
      EXPECT_EQ(got.at(doc), whole_report.at(doc)) << n << " shards: " << doc;
  }
}

// kSweep's plan: position p runs rate 2 * (p / 3 + 1) for 20 s, strategy p % 3.
TEST_F(Shards, SlicesCoverThePlanOnceBalancedByCostWithTheStrategiesMixed) {
  for (const std::size_t n : {3u, 7u}) {
    const std::string prefix = "n" + std::to_string(n) + "-";
    shards(n, "", prefix);
    std::map<std::size_t, int> seen;
    std::vector<double> loads;
    double dearest = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const fs::path d = dir_ / (prefix + std::to_string(i));
      const json m = json::parse(slurp((d / "lockbench.manifest").string()));
      EXPECT_EQ(m["shard"]["slice"], std::to_string(i) + "/" + std::to_string(n));
      ASSERT_EQ(m["plan"].size(), 12u);
      double load = 0;
      std::set<std::string> strategies;
      for (const std::size_t p : m["shard"]["positions"].get<std::vector<std::size_t>>()) {
        ++seen[p];
        const std::string name = m["plan"][p];
        EXPECT_TRUE(fs::exists(d / name)) << name;  // each position's result, in its shard
        const double cost = 2.0 * static_cast<double>(p / 3 + 1) * 20;  // expected requests
        load += cost;
        dearest = std::max(dearest, cost);
        strategies.insert(name.substr(name.rfind("primary-") + 8));
      }
      std::size_t files = 0;
      for (const auto& e : fs::directory_iterator(d)) files += e.path().extension() == ".json";
      EXPECT_EQ(files, m["shard"]["positions"].size());
      if (n == 3) {
        EXPECT_GT(strategies.size(), 1u) << "shard " << i << " runs one strategy only";
      }
      loads.push_back(load);
    }
    EXPECT_EQ(seen.size(), 12u);
    for (const auto& [p, times] : seen) EXPECT_EQ(times, 1) << p;
    // Dealt dearest first to the least loaded: no two shards differ by more than one run's cost.
    EXPECT_LE(*std::max_element(loads.begin(), loads.end()) - *std::min_element(loads.begin(), loads.end()), dearest);
    if (n == 3) {
      EXPECT_EQ(loads, (std::vector<double>{400, 400, 400}));
    }
  }
}

TEST_F(Shards, ShardsTakesTheIndexFromJobCompletionIndexAsAnIndexedJobSetsIt) {
  const auto r = run_command("JOB_COMPLETION_INDEX=2 " + kSweep + " --shards 3 --out " + at("k8s"));
  ASSERT_EQ(r.status, 0) << r.err;
  const json m = json::parse(slurp(at("k8s/lockbench.manifest")));
  EXPECT_EQ(m["shard"]["slice"], "2/3");
  EXPECT_EQ(m["shard"]["positions"].size(), 4u);
  expect_one_line_exit_2(run_command("env -u JOB_COMPLETION_INDEX " + kSweep + " --shards 3 --out " + at("a")),
                         "JOB_COMPLETION_INDEX");
  expect_one_line_exit_2(run_command("JOB_COMPLETION_INDEX=3 " + kSweep + " --shards 3 --out " + at("b")),
                         "JOB_COMPLETION_INDEX: index 3 is out of range");
  expect_one_line_exit_2(run_command("JOB_COMPLETION_INDEX=x " + kSweep + " --shards 3 --out " + at("c")),
                         "JOB_COMPLETION_INDEX");
}

TEST_F(Shards, BadShardsAreRefusedWithOneLineAndExit2AndNothingWritten) {
  expect_one_line_exit_2(run_command(kSweep + " --shard 3/3 --out " + at("x")), "--shard: index 3 is out of range");
  expect_one_line_exit_2(run_command(kSweep + " --shard 0/0 --out " + at("x")), "--shard: '0'");
  expect_one_line_exit_2(run_command(kSweep + " --shard 1 --out " + at("x")), "--shard");
  expect_one_line_exit_2(run_command(kSweep + " --shard -1/3 --out " + at("x")), "--shard");
  expect_one_line_exit_2(run_command(kSweep + " --shard 0/3"), "--out");
  expect_one_line_exit_2(run_command(kSweep + " --shard 0/3 --shards 3 --out " + at("x")), "--shard, --shards");
  EXPECT_FALSE(fs::exists(dir_ / "x"));
}

TEST_F(Shards, MergeRefusesMissingRepeatedForeignAndUnfinishedShardsNamingThem) {
  shards(3);
  const std::string s0 = at("shard-0"), s1 = at("shard-1"), s2 = at("shard-2");
  const std::string merged = " --no-charts --out " + at("merged");
  expect_one_line_exit_2(run_command(kBin + " merge " + s0 + " " + s1 + merged), "shard 2/3 is missing");
  expect_one_line_exit_2(run_command(kBin + " merge " + s0 + " " + s1 + " " + s1 + merged),
                         "shard 1/3 is given twice");
  // Shard 2 of the same grid with another seed: another sweep.
  ASSERT_EQ(run_command(kGrid + " --seed 4 --shard 2/3 --out " + at("other")).status, 0);
  expect_one_line_exit_2(run_command(kBin + " merge " + s0 + " " + s1 + " " + at("other") + merged),
                         "is a shard of another sweep");
  expect_one_line_exit_2(run_command(kBin + " merge " + s0 + " " + s1 + " " + at("nothing") + merged),
                         "nothing is not a directory");
  // An unfinished shard: one result lost, one interrupted, as a killed pod leaves it.
  const json m1 = json::parse(slurp(s1 + "/lockbench.manifest"));
  const auto mine = m1["shard"]["positions"].get<std::vector<std::size_t>>();
  ASSERT_EQ(mine.size(), 4u);
  const std::string lost = m1["plan"][mine[0]], cut = m1["plan"][mine[1]], kept = m1["plan"][mine[2]];
  json half = json::parse(slurp(s1 + "/" + cut));
  half["interrupted"] = true;
  half["complete"] = false;
  std::ofstream(s1 + "/" + cut) << half.dump(2);
  expect_one_line_exit_2(run_command(kBin + " merge " + s0 + " " + s1 + " " + s2 + merged),
                         cut + " is missing or interrupted");
  fs::remove(fs::path(s1) / lost);
  expect_one_line_exit_2(run_command(kBin + " merge " + s0 + " " + s1 + " " + s2 + merged),
                         lost + " is missing or interrupted");
  EXPECT_FALSE(fs::exists(dir_ / "merged"));
  // --resume finishes that shard alone: the runs already done are kept.
  const auto kept_time = fs::last_write_time(fs::path(s1) / kept);
  const auto resumed = run_command(kSweep + " --shard 1/3 --resume --out " + s1);
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_EQ(fs::last_write_time(fs::path(s1) / kept), kept_time);
  EXPECT_EQ(json::parse(slurp(s1 + "/" + cut))["complete"], true);
  const auto m = run_command(kBin + " merge " + s0 + " " + s1 + " " + s2 + merged);
  ASSERT_EQ(m.status, 0) << m.err;
  EXPECT_TRUE(fs::exists(dir_ / "merged" / "summary.csv"));
}

TEST_F(Shards, AShardsOutHoldingAnotherShardIsRefused) {
  shards(3);
  expect_one_line_exit_2(run_command(kSweep + " --shard 1/3 --out " + at("shard-0")), "shard 0/3 of this sweep");
}

// Issue 27, 2: the plan says held-tx, the result says held-tx:wait.
TEST_F(Shards, ResumeAcceptsItsOwnResultsWhenTheStrategyIsGivenByFamilyName) {
  const std::string sweep = kBin + " sweep --world sim --vary rate=1,2 --strategy held-tx --duration 10s --out " + at("d");
  ASSERT_EQ(run_command(sweep + " --quiet").status, 0);
  fs::remove(dir_ / "d" / "002-sim-switch-primary-held-tx.json");
  const auto r = run_command(sweep + " --resume");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("[1/2] rate=1 held-tx:wait: already done"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "d" / "002-sim-switch-primary-held-tx.json"));
}

// Issue 27, 3: a 12-run sweep's directory reused by a sweep of other settings.
TEST_F(Shards, ASweepRefusesAnOutHoldingAnotherSweepsResultsUnlessForced) {
  ASSERT_EQ(run_command(kSweep + " --out " + at("d")).status, 0);
  const auto before = files_in(dir_ / "d");
  const std::string other = kBin + " sweep --world sim --quiet --vary rate=3,5 --duration 10s --out " + at("d");
  const auto refused = run_command(other);
  expect_one_line_exit_2(refused, "--out: " + at("d") + " holds results of other settings");
  EXPECT_NE(refused.err.find("--resume"), std::string::npos);
  EXPECT_NE(refused.err.find("--force"), std::string::npos);
  EXPECT_EQ(files_in(dir_ / "d"), before);  // untouched
  expect_one_line_exit_2(run_command(other + " --resume"), "--force");
  // The same sweep again is no stranger: it rewrites its own results.
  EXPECT_EQ(run_command(kSweep + " --out " + at("d")).status, 0);
  const auto forced = run_command(other + " --force");
  ASSERT_EQ(forced.status, 0) << forced.err;
  std::size_t results = 0;
  for (const auto& [name, text] : files_in(dir_ / "d")) results += name.find(".json") != std::string::npos;
  EXPECT_EQ(results, 2u);  // the old sweep's 12 are gone, none kept stale
  EXPECT_EQ(json::parse(slurp(at("d/lockbench.manifest")))["plan"].size(), 2u);
}

TEST_F(Shards, ASweepRefusesResultsOfOtherSettingsWrittenWithoutAManifest) {
  ASSERT_EQ(run_command(kBin + " run --world sim --quiet --strategy none --duration 5s --out " + at("d")).status, 0);
  expect_one_line_exit_2(run_command(kSweep + " --out " + at("d")), "1 result file(s) of other settings");
}

TEST_F(Shards, ReportWarnsWhenItsResultsComeFromSeveralSweeps) {
  ASSERT_EQ(run_command(kSweep + " --out " + at("a")).status, 0);
  ASSERT_EQ(run_command(kBin + " sweep --world sim --quiet --vary rate=3 --duration 5s --out " + at("b")).status, 0);
  const auto one = run_command(kBin + " report " + at("a") + " --no-charts --out " + at("ra"));
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_EQ(one.err.find("warning"), std::string::npos) << one.err;
  const auto two = run_command(kBin + " report " + at("a") + " " + at("b") + " --no-charts --out " + at("rb"));
  ASSERT_EQ(two.status, 0) << two.err;
  EXPECT_NE(two.err.find("2 different sweeps"), std::string::npos) << two.err;
  // A stranger copied into a sweep's directory.
  fs::copy_file(at("b/sim-switch-primary-row-lease.json"), at("a/999-stranger.json"));
  const auto mixed = run_command(kBin + " report " + at("a") + " --no-charts --out " + at("rc"));
  EXPECT_NE(mixed.err.find("1 result file(s) its sweep's lockbench.manifest does not list"), std::string::npos)
      << mixed.err;
}

// Issue 27, 3: run --out x.json overwrote without a word.
TEST_F(Shards, RunOutFileHoldingOtherResultsIsRefusedUnlessForced) {
  const std::string run = kBin + " run --world sim --quiet --strategy row-lease --duration 5s --out " + at("x.json");
  ASSERT_EQ(run_command(run).status, 0);
  const std::string before = slurp(at("x.json"));
  EXPECT_EQ(run_command(run).status, 0);  // the same run again: its own result
  const auto refused = run_command(run + " --seed 9");
  expect_one_line_exit_2(refused, "--out: " + at("x.json") + " holds results of other settings");
  EXPECT_NE(refused.err.find("--force"), std::string::npos);
  EXPECT_EQ(without_provenance(slurp(at("x.json"))), without_provenance(before));
  ASSERT_EQ(run_command(run + " --seed 9 --force").status, 0);
  EXPECT_EQ(json::parse(slurp(at("x.json")))["seed"], 9);
  std::ofstream(at("notes.json")) << "{\"mine\": true}\n";
  expect_one_line_exit_2(run_command(kBin + " run --world sim --quiet --duration 5s --out " + at("notes.json")),
                         "is not a lockbench result file");
}

// A shard stopped half-way (SIGINT, as a node drain sends SIGTERM) keeps its
// finished results and marks the cut one interrupted; merge refuses it by
// name, and the same command with --resume finishes only what is missing.
TEST_F(Shards, AnInterruptedShardIsRefusedByMergeUntilResumeFinishesIt) {
  // Costs 2,000, 1,000,000 and 4,000 requests: shard 0/2 gets the long run (a few seconds) alone.
  const std::vector<std::string> argv = {kBin, "sweep", "--world", "sim", "--quiet", "--jobs", "1",
                                         "--strategy", "row-lease", "--rate", "1000", "--keys", "1000",
                                         "--partner-latency", "fixed:5ms", "--vary", "duration=2s,1000s,4s"};
  const auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> all = argv;
    all.insert(all.end(), more.begin(), more.end());
    std::string line;
    for (const auto& a : all) line += (line.empty() ? "" : " ") + a;
    return std::make_pair(all, line);
  };
  const auto [short_argv, short_line] = with({"--shard", "1/2", "--out", at("s1")});
  ASSERT_EQ(run_command(short_line).status, 0);
  const auto [long_argv, long_line] = with({"--shard", "0/2", "--out", at("s0")});
  const auto p = spawn(long_argv, at("out.txt"), at("err.txt"));
  ASSERT_GT(p.pid, 0);
  ASSERT_TRUE(wait_for([&] { return fs::exists(dir_ / "s0" / "lockbench.manifest"); }, std::chrono::seconds(20)));
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  kill(p.pid, SIGINT);
  ASSERT_EQ(wait_exit(p.pid, std::chrono::seconds(30)), 130) << slurp(at("err.txt"));
  const json cut = json::parse(slurp(at("s0/002-sim-switch-primary-row-lease.json")));
  EXPECT_EQ(cut["interrupted"], true);
  expect_one_line_exit_2(run_command(kBin + " merge " + at("s0") + " " + at("s1") + " --no-charts --out " + at("m")),
                         "002-sim-switch-primary-row-lease.json is missing or interrupted");
  const auto resumed = run_command(long_line + " --resume");
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  const auto merged = run_command(kBin + " merge " + at("s0") + " " + at("s1") + " --no-charts --out " + at("m"));
  ASSERT_EQ(merged.status, 0) << merged.err;
  EXPECT_EQ(json::parse(slurp(at("m/002-sim-switch-primary-row-lease.json")))["complete"], true);
}

TEST_F(Shards, MergeRefusesAnOutHoldingAnotherSweepsResultsUnlessForced) {
  const std::string dirs = shards(2);
  ASSERT_EQ(run_command(kBin + " sweep --world sim --quiet --vary rate=3,5 --duration 5s --out " + at("m")).status, 0);
  std::ofstream(at("m/notes.json")) << "{\"mine\": true}\n";
  expect_one_line_exit_2(run_command(kBin + " merge" + dirs + " --no-charts --out " + at("m")),
                         "holds results of another sweep");
  const auto forced = run_command(kBin + " merge" + dirs + " --no-charts --force --out " + at("m"));
  ASSERT_EQ(forced.status, 0) << forced.err;
  std::size_t results = 0;
  for (const auto& [name, text] : files_in(dir_ / "m")) results += name.find(".json") != std::string::npos;
  EXPECT_EQ(results, 13u);  // the sweep's 12 and the user's own notes.json, untouched
  EXPECT_TRUE(fs::exists(dir_ / "m" / "notes.json"));
}

// run --shard (real load from several runners): bad input is one line and exit
// 2, before any server is touched (issue 34's bad input).
TEST_F(Shards, ARunnersShardOutOfRangeOfZeroOrWithoutTargetsIsOneLineAndExit2) {
  const std::string real = kBin + " run --world real --db postgresql://nobody@127.0.0.1:1/none --partner http://127.0.0.1:1";
  expect_one_line_exit_2(run_command(real + " --targets http://127.0.0.1:1 --shard 3/3"), "index 3 is out of range");
  expect_one_line_exit_2(run_command(real + " --targets http://127.0.0.1:1 --shard 0/0"), "--shard");
  expect_one_line_exit_2(run_command(real + " --shard 0/2"), "need --world real and --targets");
  expect_one_line_exit_2(run_command(kBin + " run --world sim --shard 0/2"), "need --world real and --targets");
  expect_one_line_exit_2(run_command(real + " --targets http://127.0.0.1:1 --shard 0/2 --shards 2"), "give one");
  expect_one_line_exit_2(run_command(real + " --targets http://127.0.0.1:1 --shard 0/2 --shard-wait 0s"), "--shard-wait");
  expect_one_line_exit_2(run_command("env -u JOB_COMPLETION_INDEX " + real + " --targets http://127.0.0.1:1 --shards 2"),
                         "JOB_COMPLETION_INDEX is not set");
}

// merge given result files that are no runner's shards: one line, exit 2.
TEST_F(Shards, MergeOfResultFilesThatAreNoRunnersShardsIsOneLineAndExit2) {
  ASSERT_EQ(run_command(kBin + " run --world sim --quiet --duration 5s --out " + at("plain.json")).status, 0);
  expect_one_line_exit_2(run_command(kBin + " merge " + at("plain.json") + " --out " + at("m")),
                         "not the shards of a real run");
}

}  // namespace cli_shards_test

// Every figure with its uncertainty, end to end in the simulator (no servers):
// repetitions on run and sweep, their aggregate, compare's significance test,
// the knee, the report's intervals, and the oracle's two kinds of overlap.
// No timing figure is asserted: counts, orderings and which side of a
// threshold a result falls.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "run_command.hpp"

namespace fs = std::filesystem;
using lockbench::testing::run_command;
using lockbench::testing::slurp;
using nlohmann::json;

namespace cli_uncertainty_test {
const std::string kBin = LOCKBENCH_BIN;

struct TempDir {
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() / ("lockbench-uncertainty-" + name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string operator/(const std::string& f) const { return (path / f).string(); }
  fs::path path;
};

json run_json(const std::string& args) {
  const auto r = run_command(kBin + " run --world sim --quiet --json " + args);
  EXPECT_EQ(r.status, 0) << r.err;
  return json::parse(r.out);
}

std::int64_t violation(const json& r, const char* kind) { return r["partner"]["violations"].value(kind, -1); }

// A held-tx partner call longer than the client's read timeout: each request gives up, releases the row,
// and the next holder's call meets the abandoned one still running at the partner.
const std::string kAbandoning =
    "--scenario switch-primary --partner-latency fixed:4s --partner-read-timeout 1s --partner-max-attempts 3 "
    "--rate 2 --duration 20s --keys 1 --key-dist hot --lock-timeout 30s --connection-timeout 60s";

TEST(Uncertainty, HeldTxWhoseReadTimeoutIsShorterThanTheCallCountsAbandonedOverlapsNotOverlapPerson) {
  const auto results = run_json("--strategy held-tx:wait,none " + kAbandoning);
  ASSERT_EQ(results.size(), 2u);
  const json& held = results[0];
  EXPECT_EQ(violation(held, "overlap_person"), 0) << held["partner"].dump();
  EXPECT_GT(violation(held, "overlap_abandoned"), 0) << held["partner"].dump();
  EXPECT_GT(held["requests"]["error"].get<int>(), 0);  // every attempt timed out: the request failed
  // Without a lock the calls overlap while both clients still wait: the lock failure stays overlap_person.
  EXPECT_GT(violation(results[1], "overlap_person"), 0);
}

TEST(Uncertainty, TheReportNamesAbandonedOverlapsWithTheirFixAndDoesNotFailExclusionForThem) {
  TempDir dir("abandoned");
  ASSERT_EQ(run_command(kBin + " run --world sim --quiet --strategy held-tx:wait " + kAbandoning + " --out " +
                        dir / "r.json").status, 0);
  const auto rep = run_command(kBin + " report " + dir / "r.json" + " --no-charts --out " + dir / "report");
  ASSERT_EQ(rep.status, 0) << rep.err;
  const std::string md = slurp(dir / "report/report.md");
  const auto row = md.find("| held-tx:wait | sim |");
  ASSERT_NE(row, std::string::npos) << md;
  const std::string line = md.substr(row, md.find('\n', row) - row);
  EXPECT_NE(line.find("✅ 0 in"), std::string::npos) << line;  // exclusion held
  EXPECT_NE(line.find("overlap_abandoned"), std::string::npos) << line;
  EXPECT_NE(line.find("idempotency key"), std::string::npos) << line;
  const auto explain = run_command(kBin + " explain held-tx");
  EXPECT_NE(explain.out.find("overlap_abandoned"), std::string::npos) << explain.out;
}

TEST(Uncertainty, RunWithRepetitionsKeepsEveryRepetitionAndPrintsEachStrategysInterval) {
  TempDir dir("run");
  const auto r = run_command(kBin +
                             " run --world sim --quiet --strategy none,held-tx:wait --rate 10 --duration 20s "
                             "--keys 50 --key-dist uniform --partner-latency exponential:mean=400ms --seed 5 "
                             "--repetitions 4 --out " + dir / "out");
  ASSERT_EQ(r.status, 0) << r.err;
  // The seeds are printed: the first is --seed itself.
  EXPECT_NE(r.err.find("4 repetitions per run, seeds 5, "), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("mean ± half-width of the 95 % t-interval"), std::string::npos) << r.out;
  for (const char* s : {"none (sim)", "held-tx:wait (sim)"}) {
    const auto at = r.out.find(s);
    ASSERT_NE(at, std::string::npos) << r.out;
    const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
    EXPECT_GE(std::count(line.begin(), line.end(), '\xb1'), 2) << line;  // "±" (its last byte) for ok/s and p99
  }
  std::set<std::uint64_t> seeds;
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir.path / "out")) {
    if (e.path().filename() == "aggregates.json") continue;
    const json one = json::parse(slurp(e.path().string()));
    ++files;
    ASSERT_TRUE(one.contains("repetition"));
    EXPECT_EQ(one["repetition"]["of"], 4);
    EXPECT_EQ(one["repetition"]["base_seed"], 5);
    if (one["repetition"]["index"] == 0) {
      EXPECT_EQ(one["seed"], 5);
    }
    if (one["strategy"] == "none") seeds.insert(one["seed"].get<std::uint64_t>());
  }
  EXPECT_EQ(files, 8);
  EXPECT_EQ(seeds.size(), 4u);  // four distinct derived seeds
  const json agg = json::parse(slurp(dir / "out/aggregates.json"));
  ASSERT_EQ(agg.size(), 2u);
  for (const auto& a : agg) {
    EXPECT_EQ(a["repetitions"], 4);
    for (const char* m : {"ok_per_s", "p50_ms", "p99_ms", "pool_timeouts", "violations", "violations.overlap_person"}) {
      ASSERT_TRUE(a["metrics"].contains(m)) << m;
      const json& s = a["metrics"][m];
      EXPECT_EQ(s["n"], 4);
      EXPECT_LE(s["ci95"][0].get<double>(), s["mean"].get<double>());
      EXPECT_GE(s["ci95"][1].get<double>(), s["mean"].get<double>());
      for (const char* f : {"median", "stddev", "cv"}) EXPECT_TRUE(s.contains(f)) << f;
    }
  }
}

TEST(Uncertainty, OneRepetitionIsTheRunWithoutRepetitionsAndABadCountIsRefused) {
  const auto plain = run_json("--strategy row-lease --rate 10 --duration 10s --seed 9");
  const auto once = run_json("--strategy row-lease --rate 10 --duration 10s --seed 9 --repetitions 1");
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_FALSE(plain[0].contains("repetition"));
  json a = plain[0], b = once[0];
  a.erase("provenance"), b.erase("provenance");
  EXPECT_EQ(a, b);
  for (const char* bad : {"0", "1001", "x"}) {
    const auto r = run_command(kBin + " run --world sim --quiet --strategy row-lease --repetitions " + bad);
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_NE(r.err.find("--repetitions"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(Uncertainty, SweepExpandsRepetitionsIntoPointsOfThePlanEachWithItsIndexAndSeed) {
  const auto r = run_command(kBin + " sweep --world sim --quiet --json --strategy row-lease --vary rate=5,10 "
                                    "--duration 10s --repetitions 3 --seed 2");
  ASSERT_EQ(r.status, 0) << r.err;
  const json results = json::parse(r.out);
  ASSERT_EQ(results.size(), 6u);
  for (std::size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(results[i]["repetition"]["index"], static_cast<int>(i % 3)) << i;
    EXPECT_EQ(results[i]["settings"]["rate"], i < 3 ? 5.0 : 10.0) << i;
  }
  EXPECT_EQ(results[0]["seed"], results[3]["seed"]);  // repetition i has one seed at every point
  EXPECT_NE(results[0]["seed"], results[1]["seed"]);
}

TEST(Uncertainty, CompareFlagsARealEightPercentDropAndNotTheSameCodeRunAgain) {
  // 20 users without think time: ok/s = 20 / call time, so a partner 9 % slower takes about 8 % off it.
  TempDir dir("compare");
  const std::string common =
      " run --world sim --quiet --scenario single-call --strategy held-tx:wait --maximum-pool-size 50 --users 20 "
      "--think-time 0s --duration 60s --keys 1000 --key-dist uniform --repetitions 8 ";
  ASSERT_EQ(run_command(kBin + common + "--partner-latency exponential:mean=1s --seed 1 --out " + dir / "a").status, 0);
  ASSERT_EQ(run_command(kBin + common + "--partner-latency exponential:mean=1s --seed 100 --out " + dir / "same").status, 0);
  ASSERT_EQ(run_command(kBin + common + "--partner-latency exponential:mean=1090ms --seed 1 --out " + dir / "slower").status,
            0);
  // Same code, other seeds: whatever the drop, no significant regression.
  const auto same = run_command(kBin + " compare " + dir / "a" + " " + dir / "same" + " --max-ok-drop 5 --format json");
  EXPECT_EQ(same.status, 0) << same.out;
  const json s = json::parse(same.out);
  ASSERT_EQ(s["runs"].size(), 1u);
  EXPECT_TRUE(s["runs"][0]["p_value"]["ok_per_s"].is_number());
  EXPECT_GE(s["runs"][0]["p_value"]["ok_per_s"].get<double>(), 0.05);
  EXPECT_EQ(s["runs"][0]["a"]["n"], 8);
  // The slower partner: past the 5 % threshold and significant.
  const auto slow = run_command(kBin + " compare " + dir / "a" + " " + dir / "slower" + " --max-ok-drop 5");
  EXPECT_EQ(slow.status, 1) << slow.out;
  EXPECT_NE(slow.out.find("ok/s down"), std::string::npos) << slow.out;
  EXPECT_NE(slow.out.find(", p = "), std::string::npos) << slow.out;
  // One run a side: said, with the repetitions that would tell.
  const auto single = run_command(kBin + " compare " + dir / "a/001-sim-single-call-held-tx_wait.json " +
                                  dir / "slower/001-sim-single-call-held-tx_wait.json --max-ok-drop 5");
  EXPECT_NE(single.out.find("no significance test"), std::string::npos) << single.out;
  EXPECT_NE(single.out.find("--repetitions "), std::string::npos) << single.out;
}

TEST(Uncertainty, ASweepFindsEachStrategysKneeWithItsIntervalAndTheReportShowsIt) {
  TempDir dir("knee");
  const auto r = run_command(kBin + " sweep --world sim --quiet --scenario single-call --strategy held-tx:wait,row-lease "
                                    "--vary rate=4,8 --duration 30s --keys 10000 --key-dist uniform --maximum-pool-size 5 "
                                    "--partner-latency exponential:mean=500ms --repetitions 3 --knee-p99 3s --out " +
                             dir / "sweep");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("knee (ok/s >= 95 % of offered"), std::string::npos) << r.out;
  const json k = json::parse(slurp(dir / "sweep/knees.json"));
  ASSERT_EQ(k["knees"].size(), 2u);
  EXPECT_EQ(k["schema"], "lockbench.knees/2");
  double held = 0, held_upper = 0, lease = 0;
  for (const auto& one : k["knees"]) {
    EXPECT_EQ(one["n"], 3);
    EXPECT_EQ(one["seeds"].size(), 3u);
    EXPECT_LE(one["knee_per_s"].get<double>(), one["upper_per_s"].get<double>());
    EXPECT_EQ(one["seeds_agree"].get<bool>(), one["knee_per_s"] == one["upper_per_s"]);
    for (const auto& p : one["probes"]) EXPECT_LE(p["passed"].get<int>(), 3);
    if (one["strategy"] == "held-tx:wait") {
      held = one["knee_per_s"].get<double>();
      held_upper = one["upper_per_s"].get<double>();
    } else {
      lease = one["knee_per_s"].get<double>();
    }
  }
  // held-tx is capped near pool / hold = 10/s; row-lease holds no connection during the call.
  EXPECT_GT(held, 0);
  EXPECT_LT(held_upper, 12);
  EXPECT_GT(lease, held_upper);
  const auto rep = run_command(kBin + " report " + dir / "sweep" + " --no-charts --out " + dir / "report");
  ASSERT_EQ(rep.status, 0) << rep.err;
  const std::string md = slurp(dir / "report/report.md");
  EXPECT_NE(md.find("## The knee"), std::string::npos);
  EXPECT_NE(md.find("| held-tx:wait | "), std::string::npos);
  EXPECT_NE(md.find(" ± "), std::string::npos);  // the verdict table's intervals
  const std::string csv = slurp(dir / "report/summary.csv");
  EXPECT_NE(csv.find("repetitions.ok_per_s.ci95_low"), std::string::npos);
}

TEST(Uncertainty, AKneeThatCannotBeFoundIsRefusedBeforeAnyRunWithOneLine) {
  TempDir dir("knee-refused");
  for (const std::string& args : {std::string(" --users 5 --vary duration=10s --knee-p99 1s"),
                                  std::string(" --vary rate=5 --knee-p99 banana")}) {
    const auto r = run_command(kBin + " sweep --world sim --quiet --strategy row-lease" + args + " --out " +
                               dir / "out");
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(r.err.rfind("lockbench: --knee-p99: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(dir.path / "out" / "knees.json"));
    EXPECT_TRUE(!fs::exists(dir.path / "out") || fs::is_empty(dir.path / "out")) << args;
  }
}

}  // namespace cli_uncertainty_test

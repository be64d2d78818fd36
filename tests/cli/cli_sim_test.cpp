// lockbench's commands end to end in the simulated world (no servers).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "run_command.hpp"

namespace fs = std::filesystem;
using lockbench::testing::run_command;
using nlohmann::json;

namespace {
const std::string kBin = LOCKBENCH_BIN;

json run_json(const std::string& args) {
  const auto r = run_command(kBin + " run --world sim --quiet --json " + args);
  EXPECT_EQ(r.status, 0) << r.err;
  return json::parse(r.out);
}
}  // namespace

TEST(CliSim, EightAtOnceOnOneKeyGiveOneOkAndSevenConflictsForEveryTryLock) {
  const auto results = run_json(
      "--scenario switch-primary --strategy advisory-xact:try,row-lease,advisory-session --burst 8 --key-dist hot "
      "--partner-latency fixed:200ms");
  ASSERT_EQ(results.size(), 3u);
  for (const auto& r : results) {
    EXPECT_EQ(r["requests"]["ok"], 1) << r["strategy"];
    EXPECT_EQ(r["requests"]["conflict"], 7) << r["strategy"];
    EXPECT_EQ(r["partner"]["violations"]["overlap_person"], 0) << r["strategy"];
  }
}

TEST(CliSim, AllRunsTheSixStrategiesAndNoneRacesAtThePartner) {
  const auto results = run_json("--strategy all --rate 20 --duration 20s --keys 3 --key-dist hot");
  ASSERT_EQ(results.size(), 6u);
  EXPECT_EQ(results[0]["strategy"], "none");
  EXPECT_GT(results[0]["partner"]["violations"]["overlap_person"].get<int>(), 0);
  EXPECT_FALSE(results[0]["trace"]["race"].is_null());
}

TEST(CliSim, TheSameSeedGivesTheSameResultFile) {
  const auto dir = fs::temp_directory_path() / ("lockbench-seed-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  for (const char* name : {"a.json", "b.json"}) {
    const auto r = run_command(kBin + " run --world sim --quiet --strategy row-lease --rate 30 --duration 30s --seed 7 --out " +
                               (dir / name).string());
    ASSERT_EQ(r.status, 0) << r.err;
  }
  EXPECT_EQ(lockbench::testing::slurp(dir / "a.json"), lockbench::testing::slurp(dir / "b.json"));
  fs::remove_all(dir);
}

TEST(CliSim, SweepThenReportWritesTheThreeDocuments) {
  const auto dir = fs::temp_directory_path() / ("lockbench-sweep-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const auto sweep = run_command(kBin + " sweep --world sim --quiet --vary rate=2,8 --vary strategy=held-tx,row-lease "
                                        "--duration 20s --maximum-pool-size 4 --partner-latency fixed:1s --out " +
                                 (dir / "results").string());
  ASSERT_EQ(sweep.status, 0) << sweep.err;
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir / "results")) files += e.path().extension() == ".json";
  EXPECT_EQ(files, 4u);
  const auto rep = run_command(kBin + " report " + (dir / "results").string() + " --out " + (dir / "report").string());
  ASSERT_EQ(rep.status, 0) << rep.err;
  for (const char* f : {"report.md", "report.html", "summary.csv"}) EXPECT_TRUE(fs::exists(dir / "report" / f)) << f;
  fs::remove_all(dir);
}

TEST(CliSim, ExplainListsEveryStrategyAndExplainsOne) {
  const auto list = run_command(kBin + " explain");
  ASSERT_EQ(list.status, 0);
  for (const char* s : {"none", "held-tx", "advisory-xact", "advisory-session", "row-lease", "optimistic"})
    EXPECT_NE(list.out.find(s), std::string::npos) << s;
  const auto one = run_command(kBin + " explain row-lease");
  ASSERT_EQ(one.status, 0);
  EXPECT_NE(one.out.find("TTL"), std::string::npos);
  EXPECT_NE(run_command(kBin + " explain row-leese").status, 0);
}

TEST(CliSim, LintFlagsATtlBelowTheRetryWindowAndPassesOneAbove) {
  const std::string client =
      " --strategy row-lease --partner-connect-timeout 1s --partner-read-timeout 5s --partner-max-attempts 3"
      " --retry-backoff-base 200ms --retry-backoff-cap 2s --rate 1 --partner-latency fixed:300ms";
  const auto short_ttl = run_command(kBin + " lint" + client + " --lease-ttl 10s");
  EXPECT_NE(short_ttl.status, 0) << short_ttl.out;
  const auto long_ttl = run_command(kBin + " lint" + client + " --lease-ttl 60s");
  EXPECT_EQ(long_ttl.status, 0) << long_ttl.out;
}

TEST(CliSim, FencingTokensLetAnEnforcingPartnerRefuseTheStaleLeaseHolder) {
  // TTL below the partner time: leases are taken over from live work. With
  // row-lease:fenced and --fencing enforce the partner refuses the calls of the
  // holder whose lease was taken over (stale token), so fewer flows interleave.
  const std::string common =
      " --key-dist hot --keys 1 --rate 5 --duration 60s --partner-latency fixed:400ms --lease-ttl 300ms --fencing enforce";
  const auto plain = run_json("--strategy row-lease" + common);
  const auto fenced = run_json("--strategy row-lease:fenced" + common);
  EXPECT_GT(plain["locks"]["lease_steals"].get<int>(), 0);
  EXPECT_EQ(plain["partner"]["violations"]["stale_token_rejected"], 0);  // no token sent, nothing refused
  EXPECT_GT(fenced["partner"]["violations"]["stale_token_rejected"].get<int>(), 0);
  EXPECT_LT(fenced["partner"]["violations"]["flow_interleaving"].get<int>(),
            plain["partner"]["violations"]["flow_interleaving"].get<int>());
}

TEST(CliSim, AReportShowsUnavailableNotZeroForARunWhosePartnerWasLost) {
  // A result as a run with a killed partner writes it (real/run_real.cpp): the
  // checks could not be read, every count is null.
  json r = run_json("--strategy none --key-dist hot --keys 1 --rate 5 --duration 10s");
  ASSERT_GT(r["partner"]["violations"]["overlap_person"].get<int>(), 0);
  r["partner"]["available"] = false;
  r["partner"]["verdict"] = "unavailable";
  r["partner"]["unavailable_reason"] = "cannot read the checks from http://127.0.0.1:1: Connection";
  for (auto& [kind, n] : r["partner"]["violations"].items()) n = nullptr;
  r["partner"]["details"] = json::array();
  r["complete"] = false;
  const auto dir = fs::temp_directory_path() / ("lockbench-unavailable-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "in");
  std::ofstream(dir / "in" / "r.json") << r.dump();
  const auto rep = run_command(kBin + " report " + (dir / "in").string() + " --no-charts --out " + (dir / "out").string());
  ASSERT_EQ(rep.status, 0) << rep.err;
  const std::string md = lockbench::testing::slurp((dir / "out" / "report.md").string());
  EXPECT_NE(md.find("unavailable"), std::string::npos);
  EXPECT_EQ(md.find("✅ 0 violations"), std::string::npos) << "a lost partner passed for a clean run";
  fs::remove_all(dir);
}

TEST(CliSim, AReportOfAnOldResultCarryingAPasswordShowsItRedacted) {
  json r = run_json("--strategy none --rate 5 --duration 5s");
  r["settings"]["db"] = "postgresql://bench:old-secret-9@127.0.0.1:5432/db";  // as results were written before
  const auto dir = fs::temp_directory_path() / ("lockbench-oldpw-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "in");
  std::ofstream(dir / "in" / "r.json") << r.dump();
  const auto rep = run_command(kBin + " report " + (dir / "in").string() + " --no-charts --out " + (dir / "out").string());
  ASSERT_EQ(rep.status, 0) << rep.err;
  for (const auto& e : fs::directory_iterator(dir / "out"))
    EXPECT_EQ(lockbench::testing::slurp(e.path().string()).find("old-secret-9"), std::string::npos) << e.path();
  // The report does show the URL (settings table), redacted.
  EXPECT_NE(lockbench::testing::slurp((dir / "out" / "report.md").string()).find("bench:***@127.0.0.1"), std::string::npos);
  fs::remove_all(dir);
}

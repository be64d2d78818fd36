// lockbench's commands end to end in the simulated world (no servers).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "run_command.hpp"

namespace fs = std::filesystem;
using lockbench::testing::run_command;
using nlohmann::json;

namespace cli_sim_test {
const std::string kBin = LOCKBENCH_BIN;

json run_json(const std::string& args) {
  const auto r = run_command(kBin + " run --world sim --quiet --json " + args);
  EXPECT_EQ(r.status, 0) << r.err;
  return json::parse(r.out);
}

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

// The build's allocator is part of where a figure came from: lockbench links
// jemalloc unless configured with LOCKBENCH_JEMALLOC=OFF.
TEST(CliSim, ProvenanceNamesTheAllocatorTheBuildLinked) {
  const auto results = run_json("--strategy none --duration 5s");
  ASSERT_EQ(results.size(), 1u);
  const std::string allocator = results[0]["provenance"]["allocator"];
  EXPECT_EQ(allocator.rfind(LOCKBENCH_JEMALLOC ? "jemalloc 5." : "glibc ", 0), 0u) << allocator;
}

TEST(CliSim, TheSameSeedGivesTheSameResultFile) {
  const auto dir = fs::temp_directory_path() / ("lockbench-seed-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  for (const char* name : {"a.json", "b.json"}) {
    const auto r = run_command(kBin + " run --world sim --quiet --strategy row-lease --rate 30 --duration 30s --seed 7 --out " +
                               (dir / name).string());
    ASSERT_EQ(r.status, 0) << r.err;
  }
  // Identical apart from when the result was written (provenance.created_at).
  auto a = json::parse(lockbench::testing::slurp(dir / "a.json")), b = json::parse(lockbench::testing::slurp(dir / "b.json"));
  a["provenance"].erase("created_at");
  b["provenance"].erase("created_at");
  EXPECT_EQ(a.dump(), b.dump());
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

TEST(CliSim, ASweepOnTwoJobsWritesTheSameFilesByteForByteAsOnOne) {
  const auto dir = fs::temp_directory_path() / ("lockbench-jobs-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string sweep = kBin + " sweep --world sim --quiet --vary rate=5,15 --vary strategy=all --duration 60s "
                                   "--keys 20 --partner-latency lognormal:p50=1.5s,p99=4s --seed 11";
  for (const char* jobs : {"1", "2"}) {
    const auto r = run_command(sweep + " --jobs " + jobs + " --out " + (dir / jobs).string());
    ASSERT_EQ(r.status, 0) << r.err;
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir / "1"))
    if (e.path().extension() == ".json") files.push_back(e.path().filename());
  ASSERT_EQ(files.size(), 12u);
  EXPECT_EQ(lockbench::testing::slurp(dir / "1" / "lockbench.manifest"),
            lockbench::testing::slurp(dir / "2" / "lockbench.manifest"));  // one plan, whatever --jobs
  std::size_t compared = 0;
  for (const auto& f : files) {
    ASSERT_TRUE(fs::exists(dir / "2" / f)) << f;
    const auto one = lockbench::testing::slurp(dir / "1" / f), two = lockbench::testing::slurp(dir / "2" / f);
    auto a = json::parse(one), b = json::parse(two);
    if (!a.contains("provenance") && !b.contains("provenance")) {
      EXPECT_EQ(one, two) << f;  // nothing of the machine or the wall clock in it: byte for byte
    } else {
      a.erase("provenance");  // when, where and by which build: the only part that may differ
      b.erase("provenance");
      EXPECT_EQ(a.dump(2), b.dump(2)) << f;
    }
    ++compared;
  }
  EXPECT_EQ(compared, 12u);
  fs::remove_all(dir);
}

TEST(CliSim, RunOfAllStrategiesOnTwoJobsGivesTheSameResultsAsOnOne) {
  const std::string run = kBin + " run --world sim --quiet --json --strategy all --duration 60s --rate 10 --keys 20 "
                                 "--partner-latency lognormal:p50=1.5s,p99=4s --seed 5";
  std::vector<json> results;
  for (const char* jobs : {"1", "2"}) {
    const auto r = run_command(run + " --jobs " + jobs);
    ASSERT_EQ(r.status, 0) << r.err;
    json all = json::parse(r.out);
    for (auto& one : all) one.erase("provenance");  // when and where: the only part that may differ
    results.push_back(all);
  }
  ASSERT_EQ(results[0].size(), 6u);
  for (std::size_t i = 0; i < results[0].size(); ++i) {
    EXPECT_EQ(results[0][i]["strategy"], results[1][i]["strategy"]) << i;  // in run order, whichever ends first
    EXPECT_EQ(results[0][i].dump(), results[1][i].dump()) << results[0][i]["strategy"];
  }
  const auto bad = run_command(kBin + " run --world sim --quiet --duration 10s --jobs 0");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--jobs"), std::string::npos) << bad.err;
}

TEST(CliSim, ASweepRefusesABadJobsCountWithOneLineAndExit2) {
  const auto r = run_command(kBin + " sweep --world sim --quiet --vary rate=5 --duration 10s --jobs 0");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--jobs"), std::string::npos) << r.err;
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
  const auto plain = run_json("--strategy row-lease" + common).at(0);  // --json prints an array, always
  const auto fenced = run_json("--strategy row-lease:fenced" + common).at(0);
  EXPECT_GT(plain["locks"]["lease_steals"].get<int>(), 0);
  // The stale holder's store is conditional on still owning the lease: refused, nothing stored.
  EXPECT_GT(plain["locks"]["lease_lost"].get<int>(), 0);
  EXPECT_EQ(plain["partner"]["violations"]["stale_token_rejected"], 0);  // no token sent, nothing refused
  EXPECT_GT(fenced["partner"]["violations"]["stale_token_rejected"].get<int>(), 0);
}

TEST(CliSim, TheArticlesLeaseReleasesTheThiefsLeaseAndLetsAThirdRequestIn) {
  // TTL below the call time. The careful lease refuses the stale holder's store
  // and its release; the article's SQL stores anyway and frees the lease of the
  // request that stole it, so more requests get in and more calls overlap.
  const std::string common = " --keys 20 --rate 10 --duration 60s --partner-latency fixed:400ms --lease-ttl 300ms";
  const auto owned = run_json("--strategy row-lease" + common).at(0);
  const auto article = run_json("--strategy row-lease:article" + common).at(0);
  EXPECT_GT(owned["locks"]["lease_lost"].get<int>(), 0);
  EXPECT_EQ(article["locks"]["lease_lost"], 0);        // it never checks
  EXPECT_EQ(article["locks"]["unlock_failures"], 0);   // its release always "succeeds"
  EXPECT_GT(article["locks"]["lease_steals"].get<int>(), owned["locks"]["lease_steals"].get<int>());
  EXPECT_GT(article["partner"]["violations"]["overlap_person"].get<int>(),
            owned["partner"]["violations"]["overlap_person"].get<int>());
}

TEST(CliSim, CheckoutUnderHeldTxStopsAtLittlesLawAndSplitTxReachesTheOfferedLoad) {
  // The @Transactional article: 10 connections, a 1.8 s charge: 5.6 checkouts/s at most.
  const std::string common =
      " --scenario checkout --rate 8 --duration 120s --partner-latency fixed:1.8s --duplicate-share 0.2";
  const auto held = run_json("--strategy held-tx" + common).at(0);
  const auto split = run_json("--strategy split-tx" + common).at(0);
  const double ceiling = 10 / 1.8;
  EXPECT_LT(held["throughput_ok_per_s"].get<double>(), ceiling * 1.1);
  EXPECT_GT(held["pool"]["timeouts"].get<int>() + held["requests"]["rejected"].get<int>(), 0);
  EXPECT_GT(split["throughput_ok_per_s"].get<double>(), 8 * 0.85);
  for (const char* kind : {"double_charge", "orphan_charge"}) EXPECT_EQ(split["partner"]["violations"][kind], 0) << kind;
  EXPECT_EQ(split["pool"]["timeouts"], 0);
}

TEST(CliSim, DuplicateCheckoutsChargeTwiceWithoutExclusionAndOnceWithAnIdempotencyKey) {
  const std::string common = " --scenario checkout --rate 5 --duration 60s --partner-latency fixed:1.8s --duplicate-share 0.5";
  const auto none = run_json("--strategy none" + common).at(0);
  const auto split = run_json("--strategy split-tx" + common).at(0);
  EXPECT_GT(none["partner"]["violations"]["double_charge"].get<int>(), 0);
  EXPECT_EQ(split["partner"]["violations"]["double_charge"], 0);
}

TEST(CliSim, RefusesALeaseOnARecordThatDoesNotExistYetWithOneLine) {
  const auto r = run_command(kBin + " run --world sim --scenario checkout --strategy row-lease --duration 1s");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.err.find("row-lease does not apply to scenario checkout"), std::string::npos) << r.err;
  const auto s = run_command(kBin + " run --world sim --scenario switch-primary --strategy split-tx --duration 1s");
  EXPECT_EQ(s.status, 2) << s.out;
  EXPECT_NE(s.err.find("split-tx does not apply to scenario switch-primary"), std::string::npos) << s.err;
}

TEST(CliSim, AReportShowsUnavailableNotZeroForARunWhosePartnerWasLost) {
  // A result as a run with a killed partner writes it (real/run_real.cpp): the
  // checks could not be read, every count is null.
  json r = run_json("--strategy none --key-dist hot --keys 1 --rate 5 --duration 10s").at(0);
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
  json r = run_json("--strategy none --rate 5 --duration 5s").at(0);
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

TEST(CliSim, AReportWithNoCommitNamesTheVersionAloneAndOtherwiseTheCommitToo) {
  json r = run_json("--strategy none --rate 5 --duration 5s").at(0);
  r["provenance"]["git_commit"] = "c0ffee1";  // as a full result names its build's
  const auto dir = fs::temp_directory_path() / ("lockbench-nocommit-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "in");
  std::ofstream(dir / "in" / "r.json") << r.dump();
  const std::string version = r["provenance"]["lockbench_version"];
  for (const bool no_commit : {false, true}) {
    const fs::path out = dir / (no_commit ? "without" : "with");
    const auto rep = run_command(kBin + " report " + (dir / "in").string() + " --no-charts" +
                                 (no_commit ? " --no-commit" : "") + " --out " + out.string());
    ASSERT_EQ(rep.status, 0) << rep.err;
    for (const char* page : {"report.md", "report.html"}) {
      const std::string text = lockbench::testing::slurp((out / page).string());
      EXPECT_NE(text.find(version + (no_commit ? "" : " (c0ffee1)")), std::string::npos) << page;
      EXPECT_EQ(text.find("c0ffee1") == std::string::npos, no_commit) << page;
    }
  }
  fs::remove_all(dir);
}

TEST(CliSim, FailOnExitsOneNamingEachBrokenThresholdAndZeroWhenNoneIsBroken) {
  const std::string run = kBin + " run --world sim --quiet --rate 20 --duration 60s"
                                 " --partner-latency lognormal:p50=1.5s,p99=4s --strategy held-tx,row-lease";
  const auto broken = run_command(run + " --fail-on 'violations>0,pool_timeouts>0,p99>10s'");
  EXPECT_EQ(broken.status, 1) << broken.err;
  EXPECT_NE(broken.err.find("held-tx:wait (sim, switch-primary): pool_timeouts = "), std::string::npos) << broken.err;
  EXPECT_NE(broken.err.find("fails p99>10s"), std::string::npos) << broken.err;
  EXPECT_EQ(broken.err.find("row-lease (sim"), std::string::npos) << broken.err;  // row-lease breaks none
  const auto clean = run_command(kBin + " run --world sim --quiet --duration 20s --strategy row-lease"
                                        " --fail-on 'violations>0,pool_timeouts>0,ok_per_s<1'");
  EXPECT_EQ(clean.status, 0) << clean.err;
  const auto race = run_command(kBin + " run --world sim --quiet --burst 8 --key-dist hot --strategy none"
                                       " --fail-on 'violations>0'");
  EXPECT_EQ(race.status, 1) << race.err;
}

TEST(CliSim, ABadFailOnIsAUsageErrorBeforeAnyRun) {
  for (const char* spec : {"bogus>1", "p99>soon", "violations=0", "violations>", ">3"}) {
    const auto r = run_command(kBin + " run --world sim --quiet --duration 1s --fail-on '" + spec + "'");
    EXPECT_EQ(r.status, 2) << spec << ": " << r.err;
    EXPECT_EQ(r.err.rfind("lockbench: --fail-on:", 0), 0u) << r.err;
    EXPECT_TRUE(r.out.empty()) << spec;  // no table: nothing ran
  }
}

}  // namespace cli_sim_test

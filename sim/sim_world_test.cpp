// Whole simulated runs: the strategies, unchanged, on the simulated world.
#include "sim/sim_world.hpp"
#include "sim/test_support.hpp"

#include <gtest/gtest.h>

#include "sim/run_sim.hpp"

namespace lockbench {
namespace {

using namespace std::chrono_literals;

// A small, fast configuration; each test states what it changes.
Settings base() {
  Settings s;
  s.scenario = "switch-primary";
  s.partner_latency = Distribution::fixed(200);
  s.db_latency = Distribution::fixed(0.5);
  s.duration = 10s;
  s.rate_per_s = 5;
  s.trace_requests = 5;
  return s;
}

Settings burst_on_one_key(const std::string& strategy, int n) {
  Settings s = base();
  s.strategy = strategy;
  s.arrival = Arrival::burst;
  s.burst = n;
  s.key_dist = KeyDist::hot;
  return s;
}

// ---- Little's law: the seeds' table

double ok_throughput_held_tx(double hold_ms, double offered_factor, Duration duration) {
  Settings s = base();
  s.scenario = "single-call";
  s.strategy = "held-tx";
  s.partner_latency = Distribution::fixed(hold_ms);
  s.db_latency = Distribution::fixed(0.001);
  s.maximum_pool_size = 10;
  s.keys = 20000;  // rows rarely collide: the pool is what limits
  s.rate_per_s = offered_factor * 10 / (hold_ms / 1000);
  s.duration = duration;
  s.connection_timeout = 1h;
  const auto r = run_sim(s);
  EXPECT_GT(r["pool"]["pending_max"].get<int>(), 0);
  return r["throughput_ok_per_s"].get<double>();
}

TEST(SimLittlesLaw, CapsHeldTxAtPoolOverHoldForA5MsHold) {
  // pool 10, hold 5 ms (+ 5 statements of 1 us) -> 2,000/s; offered twice that.
  const double ceiling = 10 / ((5 + 5 * 0.001) / 1000);
  const double measured = ok_throughput_held_tx(5, 2, 10s);
  EXPECT_NEAR(measured, ceiling, 0.05 * ceiling);
  EXPECT_NEAR(ceiling, 2000, 5);
}

TEST(SimLittlesLaw, CapsHeldTxAt66PerSecondForA15SHold) {
  const double ceiling = 10 / ((1500 + 5 * 0.001) / 1000);
  const double measured = ok_throughput_held_tx(1500, 2, 2000s);
  EXPECT_NEAR(measured, ceiling, 0.05 * ceiling);
  EXPECT_NEAR(ceiling, 6.67, 0.01);
}

TEST(SimLittlesLaw, DoesNotCapRowLeaseByThePartnerTime) {
  Settings s = base();
  s.scenario = "single-call";
  s.strategy = "row-lease";
  s.partner_latency = Distribution::fixed(1500);
  s.keys = 20000;
  s.rate_per_s = 50;  // 7.5 times the held-tx ceiling
  s.duration = 100s;
  const auto r = run_sim(s);
  const double ceiling = 10 / 1.5;
  EXPECT_GT(r["throughput_ok_per_s"].get<double>(), 5 * ceiling);
  EXPECT_EQ(r["requests"]["pool_timeout"], 0);
  EXPECT_LT(r["pool"]["utilization"].get<double>(), 0.1);
}

// ---- mutual exclusion

TEST(SimExclusion, LetsExactlyOneOfEightSimultaneousRequestsThroughWithATryLock) {
  for (const char* spec : {"advisory-xact:try", "row-lease", "advisory-session", "held-tx:nowait"}) {
    const auto r = run_sim(burst_on_one_key(spec, 8));
    EXPECT_EQ(r["requests"]["ok"], 1) << spec;
    EXPECT_EQ(r["requests"]["conflict"], 7) << spec;
    EXPECT_EQ(r["locks"]["acquired"], 1) << spec;
    EXPECT_EQ(r["locks"]["denied"], 7) << spec;
    EXPECT_EQ(violation_count(r, "overlap_person"), 0) << spec;
  }
}

TEST(SimExclusion, SerialisesWaitingStrategiesWithoutOverlap) {
  for (const char* spec : {"held-tx", "advisory-xact:wait"}) {
    Settings s = burst_on_one_key(spec, 8);
    s.lock_timeout = 1h;
    const auto r = run_sim(s);
    EXPECT_EQ(r["requests"]["ok"], 8) << spec;
    EXPECT_EQ(r["partner"]["max_inflight_per_person"], 1) << spec;
    EXPECT_EQ(violation_count(r, "overlap_person"), 0) << spec;
  }
}

TEST(SimExclusion, LetsNoneOverlapAtThePartner) {
  const auto r = run_sim(burst_on_one_key("none", 8));
  EXPECT_GT(violation_count(r, "overlap_person"), 0);
  EXPECT_GT(r["partner"]["max_inflight_per_person"].get<int>(), 1);
  ASSERT_TRUE(r["trace"]["race"].is_object());
  EXPECT_GE(r["trace"]["race"]["request_ids"].size(), 2u);
}

TEST(SimExclusion, StealsARowLeaseWhoseTtlIsBelowThePartnerTime) {
  Settings s = base();
  s.strategy = "row-lease";
  s.key_dist = KeyDist::hot;
  s.partner_latency = Distribution::fixed(1000);  // two calls: 2 s inside the lease
  s.lease_ttl = 500ms;
  s.rate_per_s = 5;
  s.duration = 20s;
  const auto r = run_sim(s);
  EXPECT_GT(r["locks"]["lease_steals"].get<int>(), 0);
  EXPECT_GT(r["sim"]["lease_steals_from_live"].get<int>(), 0);
  EXPECT_GT(violation_count(r, "overlap_person"), 0);

  s.lease_ttl = 10s;  // above the worst case: no steal, no overlap
  const auto safe = run_sim(s);
  EXPECT_EQ(safe["locks"]["lease_steals"], 0);
  EXPECT_EQ(violation_count(safe, "overlap_person"), 0);
}

TEST(SimFaults, APauseLongerThanTheTtlLetsAnotherPodStealALiveLease) {
  Settings s = base();
  s.strategy = "row-lease";
  s.pods = 2;  // requests alternate: odd ids on pod 1, even ids on pod 0
  s.key_dist = KeyDist::hot;
  s.partner_latency = Distribution::fixed(500);
  s.lease_ttl = 3s;  // above the 1 s of partner calls
  s.rate_per_s = 1;
  s.duration = 20s;
  const auto calm = run_sim(s);
  EXPECT_EQ(calm["locks"]["lease_steals"], 0);

  // Request 1 runs on pod 1 and takes the lease; pod 1 then freezes for 8 s.
  const Duration first_arrival = Workload(s).schedule().front().intended;
  s.pause_at = first_arrival + 100ms;
  s.pause_for = 8s;
  const auto r = run_sim(s);
  EXPECT_GT(r["locks"]["lease_steals"].get<int>(), 0);
  EXPECT_GT(r["sim"]["lease_steals_from_live"].get<int>(), 0);
  EXPECT_DOUBLE_EQ(r["faults"]["pause_for_s"].get<double>(), 8.0);
  EXPECT_EQ(r["probe"]["failed"], 8);  // the frozen pod missed eight readiness checks
}

TEST(SimFaults, AnAppClockAheadOfTheDatabaseStealsLeasesOnlyForRowLeaseAppClock) {
  Settings s = base();
  s.pods = 2;
  s.key_dist = KeyDist::hot;
  s.partner_latency = Distribution::fixed(500);
  s.lease_ttl = 3s;
  s.clock_skew = 5s;  // pod 1's clock runs 5 s ahead: every lease of pod 0 looks expired to it
  s.rate_per_s = 4;
  s.duration = 30s;
  s.strategy = "row-lease";
  EXPECT_EQ(run_sim(s)["locks"]["lease_steals"], 0);
  s.strategy = "row-lease:app-clock";
  EXPECT_GT(run_sim(s)["locks"]["lease_steals"].get<int>(), 0);
}

// ---- crash

nlohmann::json crash_during_the_call(const std::string& spec) {
  Settings s = burst_on_one_key(spec, 1);
  s.partner_latency = Distribution::fixed(10000);
  s.lease_ttl = 5s;
  s.crash_at = 20ms;
  return run_sim(s);
}

// The faults block, exactly: the one both worlds write (core/result.hpp
// faults_block, docs/result.schema.json "faults"); the real world's golden
// test is RealPods.TheFaultBlockHasTheSimulatorsFieldsAndWhatTheRunnerMeasured.
TEST(SimFaults, TheFaultBlockIsTheOneBothWorldsWrite) {
  Settings s = burst_on_one_key("row-lease", 1);
  s.partner_latency = Distribution::fixed(10000);
  s.lease_ttl = 5s;
  s.crash_at = 20ms;
  s.pause_at = 5s;
  s.pause_for = 1s;
  s.clock_skew = 250ms;
  const auto r = run_sim(s);
  EXPECT_EQ(r["faults"], nlohmann::json::parse(R"({"clock_skew_ms": 250.0, "crash_at_s": 0.02, "crashed_requests": 1,
      "keys_held_at_crash": 1, "pause_at_s": 5.0, "pause_for_s": 1.0, "recovery_ms": 4980.5})"))
      << r["faults"].dump();
  s.crash_at.reset();
  s.pause_at.reset();
  s.pause_for = 0s;
  const auto skew_only = run_sim(s);
  EXPECT_EQ(skew_only["faults"], nlohmann::json::parse(R"({"clock_skew_ms": 250.0, "crash_at_s": null,
      "crashed_requests": 0, "keys_held_at_crash": 0, "pause_at_s": null, "pause_for_s": 0.0, "recovery_ms": null})"))
      << skew_only["faults"].dump();
  s.clock_skew = 0s;
  EXPECT_FALSE(run_sim(s).contains("faults"));
}

TEST(SimFaults, AdvisoryXactIsUsableAgainAtOnceAfterACrash) {
  const auto r = crash_during_the_call("advisory-xact");
  EXPECT_EQ(r["faults"]["crashed_requests"], 1);
  EXPECT_GE(r["faults"]["keys_held_at_crash"].get<int>(), 1);
  EXPECT_DOUBLE_EQ(r["faults"]["recovery_ms"].get<double>(), 0.0);
  EXPECT_EQ(r["requests"]["error"], 1);
}

TEST(SimFaults, RowLeaseIsUsableAgainOnlyAfterItsTtlAfterACrash) {
  const auto r = crash_during_the_call("row-lease");
  EXPECT_EQ(r["faults"]["crashed_requests"], 1);
  EXPECT_EQ(r["faults"]["keys_held_at_crash"], 1);
  // The lease was taken a statement after t = 0 and the crash came 20 ms later.
  EXPECT_NEAR(r["faults"]["recovery_ms"].get<double>(), 5000, 0.01 * 5000);
  EXPECT_EQ(r["locks"]["leaked"], 1);  // nobody released it
}

TEST(SimFaults, ACrashedPodsRequestsVanishAndAReplacementServesTheRest) {
  Settings s = base();
  s.strategy = "held-tx";
  s.rate_per_s = 10;
  s.duration = 20s;
  s.crash_at = 10s;
  const auto r = run_sim(s);
  const auto crashed = r["faults"]["crashed_requests"].get<std::int64_t>();
  EXPECT_GT(crashed, 0);
  EXPECT_EQ(r["requests"]["error"], crashed);
  EXPECT_EQ(r["requests"]["ok"].get<std::int64_t>() + crashed, r["requests"]["total"].get<std::int64_t>());
  EXPECT_GT(r["timeline"].back()["ok"].get<int>() + r["timeline"][15]["ok"].get<int>(), 0);
}

// ---- the partner's faults, the client's timeouts and retries

TEST(SimPartner, EndsAHangingAttemptAtTheClientsTimeoutAndRetriesIt) {
  Settings s = base();
  s.scenario = "single-call";
  s.strategy = "none";
  s.partner_faults = {{"*", {{{"kind", "hang"}, {"p", 1.0}, {"ms", "forever"}}}}};
  s.partner_connect_timeout = 1s;
  s.partner_read_timeout = 2s;
  s.partner_max_attempts = 2;
  s.retry_backoff_base = 100ms;
  s.retry_backoff_cap = 100ms;
  const auto r = run_sim(s);
  const auto total = r["requests"]["total"].get<std::int64_t>();
  ASSERT_GT(total, 10);
  EXPECT_EQ(r["requests"]["error"], total);
  EXPECT_EQ(r["partner"]["calls"], 2 * total);
  // Two attempts of 2 s (the read timeout, on a connection already open) and a backoff of at most 100 ms.
  EXPECT_GE(r["latency_ms"]["p50"].get<double>(), 4000);
  EXPECT_LE(r["latency_ms"]["max"].get<double>(), 4200);
}

TEST(SimPartner, ReportsAResetAfterTheEffectAsAnErrorWithTheEffectApplied) {
  Settings s = burst_on_one_key("advisory-xact", 1);
  s.partner_faults = {{"auth0.unlink", {{{"kind", "reset"}, {"p", 1.0}, {"phase", "after"}}}}};
  const auto r = run_sim(s);
  EXPECT_EQ(r["requests"]["error"], 1);
  EXPECT_EQ(r["partner"]["calls"], 1);  // no link after a failed unlink
  EXPECT_EQ(r["partner"]["violations"]["ambiguous_commit"], 1);
}

// ---- the other workloads and the pooled-connection trap

TEST(SimWorkload, RunsAClosedLoopOfUsersUntilTheDurationAndDrains) {
  Settings s = base();
  s.strategy = "row-lease";
  s.arrival = Arrival::closed;
  s.users = 5;
  s.think_time = 100ms;
  const auto r = run_sim(s);
  const auto total = r["requests"]["total"].get<std::int64_t>();
  // Each user: about 10 s / (0.4 s of calls + 0.1 s of thinking).
  EXPECT_GT(total, 5 * 10);
  EXPECT_LT(total, 5 * 30);
  EXPECT_EQ(r["requests"]["ok"].get<std::int64_t>() + r["requests"]["conflict"].get<std::int64_t>(), total);
}

TEST(SimExclusion, FailsTheUnlocksOfPooledSessionLocksAndLeaksThemIntoThePool) {
  Settings s = base();
  s.strategy = "advisory-session:pooled";
  s.keys = 5;
  s.rate_per_s = 20;
  const auto r = run_sim(s);
  EXPECT_GT(r["locks"]["unlock_failures"].get<int>(), 0);
  EXPECT_GT(r["locks"]["leaked"].get<int>(), 0);
  EXPECT_GT(r["requests"]["conflict"].get<int>(), 0);

  s.strategy = "advisory-session:pinned";  // the same lock kept on one connection
  const auto pinned = run_sim(s);
  EXPECT_EQ(pinned["locks"]["unlock_failures"], 0);
  EXPECT_EQ(pinned["locks"]["leaked"], 0);
}

// ---- determinism and the result

TEST(SimDeterminism, GivesAByteIdenticalResultForASeedAndAnotherForAnotherSeed) {
  Settings s = base();
  s.strategy = "advisory-session:pooled";
  s.keys = 5;
  s.rate_per_s = 20;
  s.partner_latency = Distribution::lognormal(150, 600);
  s.db_latency = Distribution::exponential(0.5);
  s.partner_faults = {{"*", {{{"kind", "error"}, {"p", 0.05}, {"status", 503}}}}};
  s.partner_max_attempts = 3;
  const std::string a = run_sim(s).dump();
  const std::string b = run_sim(s).dump();
  EXPECT_EQ(a, b);
  s.seed = 2;
  EXPECT_NE(a, run_sim(s).dump());
}

TEST(SimResult, FillsTheContractAndTheTraceSteps) {
  Settings s = base();
  s.strategy = "held-tx";
  s.leak_detection_threshold = 100ms;  // every borrow outlives 2 x 200 ms of partner calls
  const auto r = run_sim(s);
  EXPECT_EQ(r["schema"], "lockbench.result/1");
  EXPECT_EQ(r["world"], "sim");
  EXPECT_EQ(r["strategy"], "held-tx:wait");
  EXPECT_GT(r["sim"]["events"].get<int>(), 0);
  EXPECT_EQ(r["requests"]["total"], r["requests"]["ok"]);
  EXPECT_GT(r["pool"]["leaks"].get<int>(), 0);
  EXPECT_GT(r["probe"]["total"].get<int>(), 5);
  EXPECT_EQ(r["probe"]["failed"], 0);
  EXPECT_GT(r["time_split_ms"]["held_idle"].get<double>(), 350);
  std::set<std::string> steps;
  for (const auto& e : r["trace"]["events"]) steps.insert(e["step"].get<std::string>());
  for (const char* step : {"pool.acquire", "db.begin", "lock.acquire", "db.read", "partner.unlink", "partner.link",
                           "db.write", "db.commit", "pool.release", "outcome"})
    EXPECT_TRUE(steps.count(step)) << step;
}

}  // namespace
}  // namespace lockbench

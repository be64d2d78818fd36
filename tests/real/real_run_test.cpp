// run_real end to end against PostgreSQL and the fake partner: the outcomes each
// strategy must produce, checked as counts and partner verdicts (no timing
// assertions beyond the Little's-law band the issue asks for).
#include <string>

#include "real/run_real.hpp"
#include "test_env.hpp"

namespace lockbench {
namespace real_run_test {

using namespace std::chrono_literals;
using nlohmann::json;

Settings base(const std::string& strategy) {
  Settings s;
  s.world = "real";
  s.db_url = test::test_db();
  s.partner_url = test::test_partner();
  s.strategy = strategy;
  s.scenario = "switch-primary";
  s.seed = 7;
  s.max_threads = 32;
  s.probe_interval = 100ms;
  s.probe_timeout = 100ms;
  s.connection_timeout = 5s;
  s.lock_timeout = 5s;
  s.lease_ttl = 30s;
  return s;
}

// K requests for one user at the same instant.
Settings burst_on_one_key(const std::string& strategy, int k = 8) {
  Settings s = base(strategy);
  s.arrival = Arrival::burst;
  s.burst = k;
  s.keys = 1;
  s.key_dist = KeyDist::hot;
  s.duration = 1s;
  s.partner_latency = Distribution::fixed(200);  // every request overlaps every other
  return s;
}

std::int64_t violations_total(const json& r) {
  std::int64_t n = 0;
  for (const auto& [kind, count] : r["partner"]["violations"].items()) n += count.get<std::int64_t>();
  return n;
}
std::int64_t overlap(const json& r) { return r["partner"]["violations"]["overlap_person"].get<std::int64_t>(); }
std::int64_t req(const json& r, const char* what) { return r["requests"][what].get<std::int64_t>(); }
std::int64_t locks(const json& r, const char* what) { return r["locks"][what].get<std::int64_t>(); }

class RealRun : public ::testing::TestWithParam<std::string> {};

TEST_P(RealRun, EightSimultaneousRequestsOnOneKeyGiveOneOkAndSevenConflicts) {
  LOCKBENCH_NEED_PARTNER();
  const json r = run_real(burst_on_one_key(GetParam()));
  EXPECT_EQ(r["world"], "real");
  EXPECT_EQ(req(r, "total"), 8);
  EXPECT_EQ(req(r, "ok"), 1) << r["requests"].dump();
  EXPECT_EQ(req(r, "conflict"), 7) << r["requests"].dump();
  EXPECT_EQ(locks(r, "acquired"), 1);
  EXPECT_EQ(locks(r, "denied"), 7);
  EXPECT_EQ(overlap(r), 0);
  EXPECT_EQ(violations_total(r), 0) << r["partner"].dump();
  EXPECT_EQ(r["partner"]["calls"], 2);  // the winner's unlink + link
  EXPECT_EQ(locks(r, "leaked"), 0);
}

INSTANTIATE_TEST_SUITE_P(FailFastStrategies, RealRun,
                         ::testing::Values("advisory-xact:try", "row-lease", "row-lease:app-clock",
                                           "advisory-session:pinned", "held-tx:nowait"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (c == '-' || c == ':') c = '_';
                           return n;
                         });

// Bounded waits: the winner holds the lock ~400 ms, the others give up after
// lock_timeout (SQLSTATE 55P03 under SET LOCAL lock_timeout) and conflict.
class RealRunBoundedWait : public ::testing::TestWithParam<std::string> {};

TEST_P(RealRunBoundedWait, WaitersGiveUpAfterLockTimeoutWhileTheWinnerHoldsTheLock) {
  LOCKBENCH_NEED_PARTNER();
  Settings s = burst_on_one_key(GetParam(), 4);
  s.lock_timeout = 100ms;
  const json r = run_real(s);
  EXPECT_EQ(req(r, "ok"), 1) << r["requests"].dump();
  EXPECT_EQ(req(r, "conflict"), 3) << r["requests"].dump();
  EXPECT_EQ(overlap(r), 0);
  EXPECT_GT(r["time_split_ms"]["lock_wait"].get<double>(), 0.0);
}

INSTANTIATE_TEST_SUITE_P(WaitingStrategies, RealRunBoundedWait,
                         ::testing::Values("advisory-xact:wait", "advisory-session:pinned-wait", "held-tx:wait"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (c == '-' || c == ':') c = '_';
                           return n;
                         });

TEST(RealRunPods, TwoPodsShareOneDatabaseSoTheLeaseStillExcludes) {
  LOCKBENCH_NEED_PARTNER();
  Settings s = burst_on_one_key("row-lease");
  s.pods = 2;
  const json r = run_real(s);
  EXPECT_EQ(r["pool"]["size"], 2 * s.maximum_pool_size);
  EXPECT_EQ(req(r, "ok"), 1) << r["requests"].dump();
  EXPECT_EQ(req(r, "conflict"), 7);
  EXPECT_EQ(overlap(r), 0);
}

TEST(RealRunRace, NoneLetsPromotionsOfOneUserOverlapAtThePartner) {
  LOCKBENCH_NEED_PARTNER();
  const json r = run_real(burst_on_one_key("none"));
  EXPECT_EQ(req(r, "total"), 8);
  EXPECT_GT(overlap(r), 0) << r["partner"].dump();
  EXPECT_GE(r["partner"]["max_inflight_per_person"].get<int>(), 2);
  EXPECT_TRUE(r["trace"]["race"].is_object());
}

TEST(RealRunRace, HeldTxSerialisesPromotionsOfOneUserWithoutAnyViolation) {
  LOCKBENCH_NEED_PARTNER();
  Settings s = burst_on_one_key("held-tx", 4);
  s.partner_latency = Distribution::fixed(60);
  const json r = run_real(s);
  EXPECT_EQ(req(r, "ok"), 4) << r["requests"].dump();  // they wait for the row lock in turn
  EXPECT_EQ(overlap(r), 0);
  EXPECT_EQ(violations_total(r), 0) << r["partner"].dump();
  EXPECT_EQ(r["partner"]["max_inflight_per_person"], 1);
}

TEST(RealRunRace, OptimisticOnAHotKeyOverlapsAtThePartnerAndDetectsTheConflictAfterwards) {
  LOCKBENCH_NEED_PARTNER();
  // Two identities per user: every request promotes the same one. All eight
  // read version 0 and called the partner (the overlap happened before anything
  // could be detected); the first link wins, the others get 409 "already
  // exists" (done, for an idempotent client) and then lose the version check.
  Settings s = burst_on_one_key("optimistic");
  s.identities_per_person = 2;
  const json r = run_real(s);
  EXPECT_EQ(req(r, "ok"), 1) << r["requests"].dump();
  EXPECT_GT(locks(r, "version_conflicts"), 0) << r["locks"].dump();
  EXPECT_EQ(req(r, "conflict"), locks(r, "version_conflicts"));
  EXPECT_GT(overlap(r), 0) << r["partner"].dump();
}

TEST(RealRunRace, OptimisticDetectsTheConflictOnlyAfterThePartnerCall) {
  LOCKBENCH_NEED_PARTNER();
  // single-call: every partner call succeeds, so all eight reach the
  // compare-and-set write, and all but one find the version changed.
  Settings s = burst_on_one_key("optimistic");
  s.scenario = "single-call";
  const json r = run_real(s);
  EXPECT_EQ(req(r, "ok"), 1) << r["requests"].dump();
  EXPECT_EQ(req(r, "conflict"), 7) << r["requests"].dump();
  EXPECT_EQ(locks(r, "version_conflicts"), 7);
  EXPECT_EQ(r["partner"]["calls"], 8);  // the side effect happened eight times
}

TEST(RealRunRace, RowLeaseWithTtlBelowThePartnerTimeIsStolenFromLiveWork) {
  LOCKBENCH_NEED_PARTNER();
  Settings s = base("row-lease");
  s.arrival = Arrival::open;
  s.rate_per_s = 20;  // one every ~50 ms on average, while each holds the lease ~400 ms
  s.duration = 1500ms;
  s.keys = 1;
  s.key_dist = KeyDist::hot;
  s.partner_latency = Distribution::fixed(200);
  s.lease_ttl = 50ms;
  const json r = run_real(s);
  EXPECT_GT(locks(r, "lease_steals"), 0) << r["locks"].dump();
  EXPECT_GT(overlap(r), 0) << r["partner"].dump();
}

TEST(RealRunRace, FencedLeaseTokensLetAnEnforcingPartnerRefuseTheStaleHolder) {
  LOCKBENCH_NEED_PARTNER();
  Settings s = base("row-lease:fenced");
  s.arrival = Arrival::open;
  s.rate_per_s = 20;
  s.duration = 1500ms;
  s.keys = 1;
  s.key_dist = KeyDist::hot;
  s.partner_latency = Distribution::fixed(200);
  s.lease_ttl = 50ms;  // taken over from live work, as above
  s.fencing = "enforce";
  const json r = run_real(s);
  EXPECT_GT(locks(r, "lease_steals"), 0) << r["locks"].dump();
  // The X-Fencing-Token header reached the partner, which refused the holders
  // whose lease had been taken over.
  EXPECT_GT(r["partner"]["violations"]["stale_token_rejected"].get<std::int64_t>(), 0) << r["partner"].dump();
}

TEST(RealRunPool, AdvisorySessionPooledLosesItsUnlockWhenThePartnerFails) {
  LOCKBENCH_NEED_PARTNER();
  Settings s = base("advisory-session:pooled");
  s.arrival = Arrival::burst;
  s.burst = 6;
  s.keys = 100;
  s.key_dist = KeyDist::uniform;
  s.maximum_pool_size = 4;
  s.partner_latency = Distribution::fixed(20);
  s.partner_faults = json::parse(R"({"auth0.unlink": [{"kind": "error", "p": 1, "status": 503, "phase": "before"}]})");
  const json r = run_real(s);
  EXPECT_EQ(req(r, "error"), 6) << r["requests"].dump();
  EXPECT_GT(locks(r, "unlock_failures") + locks(r, "leaked"), 0) << r["locks"].dump();
}

// held-tx pins a connection for the whole partner call: the pool caps
// throughput at pool / hold. Offered twice that, it times out; row-lease on the
// same settings is not capped.
Settings twice_the_ceiling(const std::string& strategy) {
  Settings s = base(strategy);
  s.scenario = "single-call";
  s.arrival = Arrival::open;
  s.maximum_pool_size = 4;
  s.time_scale = 0.1;                             // configured units below, run 10x faster
  s.partner_latency = Distribution::fixed(1000);  // 100 ms per call: ceiling 4 / 0.1 s = 40/s
  s.rate_per_s = 8;                               // 80/s: twice the ceiling
  s.duration = 30s;                               // 3 s
  s.connection_timeout = 2500ms;                  // 250 ms
  s.probe_interval = 1s;
  s.probe_timeout = 1s;
  s.keys = 1000;
  s.key_dist = KeyDist::uniform;
  s.max_threads = 64;
  return s;
}

TEST(RealRunPool, HeldTxOfferedTwiceItsCeilingRunsAtLittlesLawAndTimesOut) {
  LOCKBENCH_NEED_PARTNER();
  const json held = run_real(twice_the_ceiling("held-tx"));
  const double ceiling = held["prediction"]["littles_law_ceiling_per_s"].get<double>();
  const double ok_per_s = held["throughput_ok_per_s"].get<double>();
  EXPECT_NEAR(ok_per_s, ceiling, 0.25 * ceiling) << held["prediction"].dump();
  EXPECT_GT(req(held, "pool_timeout"), 0) << held["requests"].dump();
  EXPECT_EQ(held["time_scale"], 0.1);
  // The readiness probe waits behind the queue: the "pods marked unready".
  EXPECT_GT(held["probe"]["total"].get<int>(), 0);
  EXPECT_GT(held["probe"]["failed"].get<int>(), 0) << held["probe"].dump();

  const json lease = run_real(twice_the_ceiling("row-lease"));
  EXPECT_GE(lease["throughput_ok_per_s"].get<double>(), 1.5 * ok_per_s)
      << "row-lease " << lease["throughput_ok_per_s"] << " vs held-tx " << ok_per_s;
  EXPECT_EQ(req(lease, "pool_timeout"), 0);
  EXPECT_EQ(lease["probe"]["failed"], 0);
}

TEST(RealRunWorkers, RejectsWhatFindsEveryWorkerBusyAndTheAcceptQueueFull) {
  LOCKBENCH_NEED_PARTNER();
  Settings s = base("none");
  s.arrival = Arrival::burst;
  s.burst = 8;
  s.keys = 100;
  s.key_dist = KeyDist::uniform;
  s.max_threads = 2;
  s.accept_count = 1;
  s.partner_latency = Distribution::fixed(100);
  const json r = run_real(s);
  EXPECT_EQ(req(r, "rejected"), 5) << r["requests"].dump();
  EXPECT_EQ(req(r, "ok"), 3);
}

TEST(RealRunWorkers, ClosedLoopUsersEachHaveOneRequestAtATime) {
  LOCKBENCH_NEED_PARTNER();
  Settings s = base("row-lease");
  s.arrival = Arrival::closed;
  s.users = 3;
  s.think_time = 20ms;
  s.duration = 600ms;
  s.keys = 3;
  s.key_dist = KeyDist::uniform;
  s.partner_latency = Distribution::fixed(20);
  const json r = run_real(s);
  EXPECT_GE(req(r, "total"), 3);
  EXPECT_EQ(req(r, "rejected"), 0);
  EXPECT_EQ(req(r, "error"), 0) << r["requests"].dump();
  EXPECT_LE(r["partner"]["max_inflight_per_person"].get<int>(), 1);  // row-lease excludes
}

// The client's read timeout is shorter than the partner's work: each holder gives up, rolls back
// and frees the row while its call still runs at the partner. The next holder's call meets an
// abandoned call: overlap_abandoned, not overlap_person (the real client sends X-Client-Timeout-Ms).
TEST(RealRunAbandoned, HeldTxWhoseReadTimeoutIsShorterThanTheCallCountsAbandonedOverlapsNotOverlapPerson) {
  LOCKBENCH_NEED_PARTNER();
  Settings s = burst_on_one_key("held-tx:wait", 3);
  s.partner_latency = Distribution::fixed(1500);
  s.partner_read_timeout = 200ms;
  s.partner_max_attempts = 2;
  const json r = run_real(s);
  const auto& v = r["partner"]["violations"];
  EXPECT_EQ(v["overlap_person"], 0) << r["partner"].dump();
  EXPECT_GE(v["overlap_abandoned"].get<int>(), 1) << r["partner"].dump();
  EXPECT_EQ(req(r, "error"), 3) << r["requests"].dump();  // every attempt timed out
}

TEST(RealRunSettings, AnUnreachableDatabaseIsASettingErrorNamingDb) {
  Settings s = base("row-lease");
  s.db_url = "postgresql://postgres@127.0.0.1:1/postgres?connect_timeout=2";
  s.partner_url = "http://127.0.0.1:1";
  try {
    run_real(s);
    FAIL() << "expected a SettingError";
  } catch (const SettingError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--db: cannot connect to postgresql://", 0), 0u) << e.what();
  }
}

TEST(RealRunSettings, AnUnreachablePartnerIsASettingErrorNamingPartner) {
  LOCKBENCH_NEED_DB();
  Settings s = base("row-lease");
  s.partner_url = "http://127.0.0.1:1";
  try {
    run_real(s);
    FAIL() << "expected a SettingError";
  } catch (const SettingError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--partner: ", 0), 0u) << e.what();
  }
}

}  // namespace real_run_test
}  // namespace lockbench

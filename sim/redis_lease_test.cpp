// redis-lease and lease renewal in the simulator: the lease store's model
// (sim/lease_store.hpp), its failover, and World::keep_renewing as a pod's
// coroutine (stops with a crash, freezes with a pause).
#include <gtest/gtest.h>

#include "sim/run_sim.hpp"
#include "sim/test_support.hpp"
#include "core/workload.hpp"
#include "sim/lease_store.hpp"

namespace lockbench {
namespace {

using namespace std::chrono_literals;

Settings base(const std::string& strategy) {
  Settings s;
  s.scenario = "switch-primary";
  s.strategy = strategy;
  s.partner_latency = Distribution::fixed(200);
  s.db_latency = Distribution::fixed(0.5);
  s.key_dist = KeyDist::hot;
  s.duration = 20s;
  s.rate_per_s = 5;
  s.trace_requests = 5;
  return s;
}

// ---- the store itself

TEST(SimLeaseStore, GrantsOneHolderUntilTheTtlPassesThenNamesTheHolderItTookOverFrom) {
  sim::LeaseStore st(0s);
  const auto a = st.acquire(0s, 7, "req-1", 1s);
  EXPECT_TRUE(a.acquired);
  EXPECT_EQ(a.token, 1u);
  EXPECT_FALSE(st.acquire(500ms, 7, "req-2", 1s).acquired);  // SET NX: held
  const auto b = st.acquire(1001ms, 7, "req-2", 1s);         // PX passed
  EXPECT_TRUE(b.acquired);
  EXPECT_TRUE(b.took_over_expired);
  EXPECT_EQ(b.previous_owner, "req-1");
  EXPECT_EQ(b.token, 2u);
  EXPECT_FALSE(st.release(1100ms, 7, "req-1"));  // owner-checked: not req-1's any more
  EXPECT_FALSE(st.extend(1100ms, 7, "req-1", 1s));
  EXPECT_TRUE(st.extend(1900ms, 7, "req-2", 1s));  // renewed: held until 2.9 s
  EXPECT_FALSE(st.acquire(2500ms, 7, "req-3", 1s).acquired);
  EXPECT_TRUE(st.release(2500ms, 7, "req-2"));
  const auto c = st.acquire(2600ms, 7, "req-3", 1s);
  EXPECT_TRUE(c.acquired);
  EXPECT_FALSE(c.took_over_expired);  // released, not expired: no steal
}

TEST(SimLeaseStore, AFailoverThatLosesAReleaseResurrectsTheLeaseUntilItsTtl) {
  sim::LeaseStore st(1s);
  st.acquire(0s, 1, "req-1", 30s);
  EXPECT_TRUE(st.release(5s, 1, "req-1"));  // not replicated before the failover at 5.5 s
  const auto f = st.failover(5500ms);
  EXPECT_EQ(f.lost, 0);
  EXPECT_EQ(f.resurrected, 1);
  EXPECT_EQ(st.owner_of(6s, 1), "req-1");  // released, yet held again: blocked until 30 s
  EXPECT_FALSE(st.acquire(6s, 1, "req-2", 30s).acquired);
  EXPECT_TRUE(st.acquire(30001ms, 1, "req-2", 30s).acquired);
}

TEST(SimLeaseStore, AFailoverLosesTheLastWritesAndHandsAFencingTokenOutTwice) {
  sim::LeaseStore st(1s);
  EXPECT_EQ(st.acquire(0s, 1, "req-1", 30s).token, 1u);  // replicated by 1 s
  EXPECT_TRUE(st.release(2s, 1, "req-1"));
  EXPECT_EQ(st.acquire(5s, 1, "req-2", 30s).token, 2u);  // not replicated before the failover at 5.5 s
  EXPECT_EQ(st.failover(5500ms).lost, 1);
  EXPECT_EQ(st.owner_of(5500ms, 1), "");  // req-2's lease vanished ...
  const auto again = st.acquire(6s, 1, "req-3", 30s);
  EXPECT_TRUE(again.acquired);  // ... so a second holder gets in
  EXPECT_EQ(again.token, 2u);   // the counter went back with it: req-2's token again

  sim::LeaseStore synced(0s);  // no replication lag: nothing is lost
  synced.acquire(5s, 1, "req-2", 30s);
  EXPECT_EQ(synced.failover(5500ms).lost, 0);
  EXPECT_EQ(synced.owner_of(5500ms, 1), "req-2");
}

// ---- redis-lease on whole runs

TEST(SimRedisLease, IsStolenWhenTheTtlIsBelowThePartnerTime) {
  Settings s = base("redis-lease");
  s.partner_latency = Distribution::fixed(1000);  // three calls: 3 s inside the lease
  s.lease_ttl = 500ms;
  const auto r = run_sim(s);
  EXPECT_GT(lock_count(r, "lease_steals"), 0);
  EXPECT_GT(r["sim"]["lease_steals_from_live"].get<int>(), 0);
  EXPECT_GT(violation_count(r, "overlap_person"), 0);
  EXPECT_GT(lock_count(r, "unlock_failures"), 0);  // the victims' owner-checked releases found another owner

  s.lease_ttl = 20s;  // above the worst case: no steal, no overlap
  const auto safe = run_sim(s);
  EXPECT_GT(lock_count(safe, "acquired"), 0);
  EXPECT_EQ(lock_count(safe, "lease_steals"), 0);
  EXPECT_EQ(violation_count(safe, "overlap_person"), 0);
  EXPECT_EQ(lock_count(safe, "unlock_failures"), 0);
}

TEST(SimRedisLease, FencedWithAnEnforcingPartnerRefusesTheStaleHoldersCalls) {
  Settings s = base("redis-lease:fenced");
  s.partner_latency = Distribution::fixed(1000);
  s.lease_ttl = 500ms;
  s.fencing = "enforce";
  const auto r = run_sim(s);
  EXPECT_GT(lock_count(r, "lease_steals"), 0);
  EXPECT_GT(violation_count(r, "stale_token_rejected"), 0);

  s.strategy = "redis-lease";  // no token sent: nothing to refuse
  EXPECT_EQ(violation_count(run_sim(s), "stale_token_rejected"), 0);
}

TEST(SimRedisLease, AFailoverWithReplicationLagLetsASecondHolderInEvenWhenFenced) {
  Settings s = base("redis-lease:fenced");
  s.partner_latency = Distribution::fixed(2000);
  s.lease_ttl = 30s;  // no steal from the TTL
  s.fencing = "enforce";
  s.duration = 10s;
  s.redis_failover_at = 3s;
  s.redis_replication_lag = 3s;  // the first holder's lease never reached the replica
  const auto r = run_sim(s);
  EXPECT_GE(r["sim"]["lease_store"]["leases_lost_on_failover"].get<int>(), 1);
  EXPECT_EQ(lock_count(r, "lease_steals"), 0);
  // The counter went back too: the second holder's token equals the first's, so
  // the partner lets both through.
  EXPECT_GT(violation_count(r, "overlap_person"), 0);

  s.redis_replication_lag = 0s;  // a replica in step: the failover loses nothing
  const auto synced = run_sim(s);
  EXPECT_EQ(synced["sim"]["lease_store"]["leases_lost_on_failover"], 0);
  EXPECT_EQ(violation_count(synced, "overlap_person"), 0);
}

// ---- renewal

TEST(SimRenewal, KeepsAShortTtlLeaseThroughSlowCallsWithoutSteals) {
  for (const char* spec : {"row-lease:renew", "redis-lease:renew"}) {
    Settings s = base(spec);
    s.partner_latency = Distribution::fixed(1000);  // 3 s of calls against a 500 ms TTL
    s.lease_ttl = 500ms;
    const auto r = run_sim(s);
    EXPECT_GT(lock_count(r, "acquired"), 0) << spec;
    EXPECT_EQ(lock_count(r, "lease_steals"), 0) << spec;
    EXPECT_EQ(violation_count(r, "overlap_person"), 0) << spec;
    EXPECT_EQ(lock_count(r, "lease_lost"), 0) << spec;
    // About one renewal per TTL/3 of call: 3 s / 167 ms = 18 per request.
    EXPECT_GE(lock_count(r, "renewals"), 10 * lock_count(r, "acquired")) << spec;
    EXPECT_EQ(lock_count(r, "renewal_failures"), 0) << spec;
  }
}

TEST(SimRenewal, RecoversFromACrashInAboutOneTtl) {
  for (const char* spec : {"row-lease:renew", "redis-lease:renew"}) {
    Settings s = base(spec);
    s.arrival = Arrival::burst;
    s.burst = 1;
    s.partner_latency = Distribution::fixed(10000);
    s.lease_ttl = 1s;
    s.crash_at = 2500ms;  // after several renewals
    const auto r = run_sim(s);
    EXPECT_EQ(r["faults"]["keys_held_at_crash"], 1) << spec;
    EXPECT_GT(lock_count(r, "renewals"), 0) << spec;
    const double recovery = r["faults"]["recovery_ms"].get<double>();
    EXPECT_GT(recovery, 0) << spec;
    EXPECT_LE(recovery, 1000 * 1.01) << spec;  // at most one TTL after the last renewal
  }
}

TEST(SimRenewal, APauseLongerThanTheTtlStillLetsAnotherPodStealTheLease) {
  for (const char* spec : {"row-lease:renew", "redis-lease:renew"}) {
    Settings s = base(spec);
    s.pods = 2;  // odd ids on pod 1
    s.partner_latency = Distribution::fixed(500);
    s.lease_ttl = 1s;
    s.rate_per_s = 1;
    const auto calm = run_sim(s);
    EXPECT_EQ(lock_count(calm, "lease_steals"), 0) << spec;
    // Request 1 runs on pod 1 and takes the lease; pod 1 then freezes for 5 s:
    // it renews nothing, the lease expires, pod 0 takes it over.
    s.pause_at = Workload(s).schedule().front().intended + 100ms;
    s.pause_for = 5s;
    const auto r = run_sim(s);
    EXPECT_GT(lock_count(r, "lease_steals"), 0) << spec;
    EXPECT_GT(r["sim"]["lease_steals_from_live"].get<int>(), 0) << spec;
    EXPECT_GT(lock_count(r, "renewal_failures"), 0) << spec;  // the woken holder finds its lease gone
  }
}

}  // namespace
}  // namespace lockbench

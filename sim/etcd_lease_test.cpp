// etcd-lease in the simulator: the etcd store's model (sim/etcd_store.hpp), its
// leader change set against redis-lease's failover, a crash and a pause of the
// holder, fencing with the key's revision, and keep-alive renewal.
#include <gtest/gtest.h>

#include "sim/run_sim.hpp"
#include "sim/test_support.hpp"
#include "core/workload.hpp"
#include "sim/etcd_store.hpp"

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

TEST(SimEtcdStore, GrantsOneHolderForWholeSecondsThenNamesTheHolderItTookOverFrom) {
  sim::EtcdStore st;
  EXPECT_EQ(sim::EtcdStore::granted_ttl(250ms), 1s);  // etcd grants whole seconds, at least one
  EXPECT_EQ(sim::EtcdStore::granted_ttl(1500ms), 2s);
  const auto a = st.acquire(0s, 7, "req-1", 500ms);
  EXPECT_TRUE(a.acquired);
  EXPECT_FALSE(st.acquire(900ms, 7, "req-2", 500ms).acquired);  // 500 ms asked, 1 s granted
  const auto b = st.acquire(1001ms, 7, "req-2", 1s);           // the lease expired
  EXPECT_TRUE(b.acquired);
  EXPECT_TRUE(b.took_over_expired);
  EXPECT_EQ(b.previous_owner, "req-1");
  EXPECT_GT(b.token, a.token);                  // the key's mod_revision
  EXPECT_FALSE(st.release(1100ms, 7, "req-1"));  // value == me fails: not req-1's any more
  EXPECT_FALSE(st.extend(1100ms, 7, "req-1"));
  EXPECT_TRUE(st.extend(1900ms, 7, "req-2"));  // keep-alive: held until 2.9 s
  EXPECT_FALSE(st.acquire(2500ms, 7, "req-3", 1s).acquired);
  EXPECT_TRUE(st.release(2500ms, 7, "req-2"));
  const auto c = st.acquire(2600ms, 7, "req-3", 1s);
  EXPECT_TRUE(c.acquired);
  EXPECT_FALSE(c.took_over_expired);  // released, not expired: no steal
  EXPECT_EQ(st.held(2700ms), 1);
}

TEST(SimEtcdStore, ANewLeaderKeepsEveryLeaseAndTheRevisionOnlyGrows) {
  sim::EtcdStore st;
  const auto a = st.acquire(0s, 1, "req-1", 2s);
  EXPECT_TRUE(st.release(500ms, 1, "req-1"));
  const auto b = st.acquire(600ms, 1, "req-2", 2s);
  // No leader from 1 s to 3 s: req-2's lease (due at 2.6 s) is not revoked
  // meanwhile, and the new leader gives it its whole TTL again.
  EXPECT_EQ(st.promote(1s, 3s), 1);
  EXPECT_EQ(st.owner_of(4500ms, 1), "req-2");
  EXPECT_FALSE(st.acquire(4500ms, 1, "req-3", 2s).acquired);
  const auto c = st.acquire(5001ms, 1, "req-3", 2s);
  EXPECT_TRUE(c.acquired);
  EXPECT_LT(a.token, b.token);
  EXPECT_LT(b.token, c.token);  // never a token handed out twice
}

// ---- etcd-lease on whole runs

TEST(SimEtcdLease, IsStolenWhenTheTtlIsBelowThePartnerTimeAndCleanAboveIt) {
  Settings s = base("etcd-lease");
  s.partner_latency = Distribution::fixed(1000);  // three calls: 3 s inside a 1 s lease
  s.lease_ttl = 1s;
  const auto r = run_sim(s);
  EXPECT_GT(lock_count(r, "lease_steals"), 0);
  EXPECT_GT(r["sim"]["lease_steals_from_live"].get<int>(), 0);
  EXPECT_GT(violation_count(r, "overlap_person"), 0);
  EXPECT_GT(lock_count(r, "unlock_failures"), 0);

  s.lease_ttl = 20s;  // above the worst case: no steal, no overlap
  const auto safe = run_sim(s);
  EXPECT_GT(lock_count(safe, "acquired"), 0);
  EXPECT_GT(lock_count(safe, "denied"), 0);  // the hot key: the txn's compare refuses the others
  EXPECT_EQ(lock_count(safe, "lease_steals"), 0);
  EXPECT_EQ(violation_count(safe, "overlap_person"), 0);
  EXPECT_EQ(lock_count(safe, "unlock_failures"), 0);
  EXPECT_EQ(lock_count(safe, "leaked"), 0);
  EXPECT_EQ(safe["strategy_info"]["lease_store"], "etcd");
}

TEST(SimEtcdLease, FencedWithAnEnforcingPartnerRefusesTheStaleHoldersCalls) {
  Settings s = base("etcd-lease:fenced");
  s.partner_latency = Distribution::fixed(1000);
  s.lease_ttl = 1s;
  s.fencing = "enforce";
  const auto r = run_sim(s);
  EXPECT_GT(lock_count(r, "lease_steals"), 0);
  EXPECT_GT(violation_count(r, "stale_token_rejected"), 0);

  s.strategy = "etcd-lease";  // no token sent: nothing to refuse
  EXPECT_EQ(violation_count(run_sim(s), "stale_token_rejected"), 0);
}

TEST(SimEtcdLease, AHolderPausedPastTheTtlIsStolenAndOnlyTheFencedVariantRefusesItsCalls) {
  Settings s = base("etcd-lease");
  s.pods = 2;             // odd ids on pod 1
  s.partner_latency = Distribution::fixed(500);
  s.lease_ttl = 2s;
  s.rate_per_s = 2;
  s.fencing = "enforce";
  const auto calm = run_sim(s);
  EXPECT_EQ(lock_count(calm, "lease_steals"), 0);
  // Request 1 (pod 1) holds the lease and reads its row (50 ms statements),
  // then pod 1 freezes for 5 s (a SIGSTOP) before its first partner call: its
  // lease expires, pod 0 takes it over; pod 1 wakes and calls anyway.
  s.db_latency = Distribution::fixed(50);
  s.pause_at = Workload(s).schedule().front().intended + 20ms;
  s.pause_for = 5s;
  const auto plain = run_sim(s);
  EXPECT_GT(lock_count(plain, "lease_steals"), 0);
  EXPECT_GT(plain["sim"]["lease_steals_from_live"].get<int>(), 0);
  EXPECT_GT(violation_count(plain, "overlap_person"), 0);
  EXPECT_EQ(violation_count(plain, "stale_token_rejected"), 0);
  std::cerr << "PLAIN " << plain["partner"]["violations"].dump() << "\n";

  s.strategy = "etcd-lease:fenced";
  const auto fenced = run_sim(s);
  EXPECT_GT(lock_count(fenced, "lease_steals"), 0);
  EXPECT_GT(violation_count(fenced, "stale_token_rejected"), 0);
  // The refused calls change nothing. (overlap_person still counts the stale
  // call's arrival beside its successor's, before the partner refuses it.)
  EXPECT_EQ(violation_count(fenced, "person_split"), 0);
  EXPECT_EQ(violation_count(fenced, "user_malformed"), 0);
  EXPECT_EQ(violation_count(fenced, "flow_interleaving"), 0);
}

TEST(SimEtcdLease, ACrashedHoldersKeyIsFreeAboutOneGrantedTtlLater) {
  Settings s = base("etcd-lease");
  s.arrival = Arrival::burst;
  s.burst = 1;
  s.partner_latency = Distribution::fixed(10000);
  s.lease_ttl = 1500ms;  // granted as 2 s
  s.crash_at = 500ms;
  const auto r = run_sim(s);
  EXPECT_EQ(r["faults"]["keys_held_at_crash"], 1);
  const double recovery = r["faults"]["recovery_ms"].get<double>();
  EXPECT_GT(recovery, 1000);
  EXPECT_LE(recovery, 2000 * 1.01);
}

TEST(SimEtcdLease, ALeaderChangePausesRequestsButLetsNoSecondHolderInUnlikeARedisFailover) {
  Settings s = base("redis-lease:fenced");
  s.partner_latency = Distribution::fixed(2000);
  s.lease_ttl = 30s;  // no steal from the TTL
  s.fencing = "enforce";
  s.duration = 10s;
  s.redis_failover_at = 3s;
  s.redis_replication_lag = 3s;
  const auto redis = run_sim(s);
  EXPECT_GE(redis["sim"]["lease_store"]["leases_lost_on_failover"].get<int>(), 1);
  EXPECT_GT(violation_count(redis, "overlap_person"), 0);  // the provoked failure, for contrast

  for (const char* spec : {"etcd-lease:fenced", "etcd-lease"}) {
    s.strategy = spec;
    s.etcd_leader_change_at = 3s;
    s.etcd_election = 3s;  // as long as the replication lag above: requests wait that long
    const auto r = run_sim(s);
    EXPECT_GT(r["sim"]["etcd"]["requests_paused_by_election"].get<int>(), 0) << spec;
    EXPECT_GE(r["sim"]["etcd"]["leases_refreshed_by_new_leader"].get<int>(), 1) << spec;
    EXPECT_GT(lock_count(r, "acquired"), 0) << spec;
    EXPECT_EQ(lock_count(r, "lease_steals"), 0) << spec;
    EXPECT_EQ(violation_count(r, "overlap_person"), 0) << spec;
    EXPECT_EQ(violation_count(r, "stale_token_rejected"), 0) << spec;  // no token went back: none to refuse
  }
}

TEST(SimEtcdLease, RenewKeepsAShortTtlLeaseThroughSlowCallsAndAPauseStillLosesIt) {
  Settings s = base("etcd-lease:renew");
  s.partner_latency = Distribution::fixed(1000);  // 3 s of calls against a 1 s TTL
  s.lease_ttl = 1s;
  const auto r = run_sim(s);
  EXPECT_GT(lock_count(r, "acquired"), 0);
  EXPECT_EQ(lock_count(r, "lease_steals"), 0);
  EXPECT_EQ(violation_count(r, "overlap_person"), 0);
  EXPECT_GE(lock_count(r, "renewals"), 5 * lock_count(r, "acquired"));  // every 333 ms of 3 s
  EXPECT_EQ(lock_count(r, "renewal_failures"), 0);

  s.pods = 2;
  s.rate_per_s = 1;
  s.partner_latency = Distribution::fixed(500);
  s.pause_at = Workload(s).schedule().front().intended + 100ms;
  s.pause_for = 5s;  // pod 1 renews nothing while frozen
  const auto paused = run_sim(s);
  EXPECT_GT(lock_count(paused, "lease_steals"), 0);
  EXPECT_GT(lock_count(paused, "renewal_failures"), 0);
}

}  // namespace
}  // namespace lockbench

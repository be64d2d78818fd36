// The advisory-lock article's incidents on the simulated world: reward-claim's
// lock key (which hash, its known vectors, what a collision costs), tables
// without a unique key, and synchronized's per-pod locks.
#include <gtest/gtest.h>

#include "scenarios/scenarios.hpp"
#include "sim/sim_world.hpp"
#include "strategies/registry.hpp"

namespace lockbench {
namespace {

using namespace std::chrono_literals;

// Every customer's lock string hashes to the same number: a collision on purpose.
std::uint64_t colliding_hash(std::string_view) { return 42; }

// Twenty claims of twenty different customers at the same instant.
Settings burst_of_claims(const std::string& strategy) {
  Settings s;
  s.scenario = "reward-claim";
  s.strategy = strategy;
  s.arrival = Arrival::burst;
  s.burst = 20;
  s.keys = 1000000;  // distinct customers (checked below: no claim is a noop)
  s.key_dist = KeyDist::uniform;
  s.partner_latency = Distribution::fixed(300);
  s.db_latency = Distribution::fixed(0.5);
  s.duration = 10s;
  return s;
}

nlohmann::json run_with(const Settings& s, Scenario& sc) {
  auto strategy = make_strategy(s.strategy);
  sim::SimWorld world(s, *strategy, sc);
  world.run();
  return world.result();
}

std::int64_t violation(const nlohmann::json& r, const char* kind) { return r["partner"]["violations"].value(kind, 0); }

TEST(RewardClaimLockKey, IsFnv1a64OfTheBusinessStringReadAsASignedBigint) {
  // FNV-1a 64's published vectors: the empty string is the offset basis.
  EXPECT_EQ(fnv1a_lock_hash(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a_lock_hash("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(reward_lock_string(42), "welcome-reward:customer-42");
  EXPECT_EQ(fnv1a_lock_hash(reward_lock_string(42)), 0xeabe0a58382c2906ULL);
  // What pg_advisory_xact_lock(bigint) receives (before the real world's per-run salt).
  EXPECT_EQ(static_cast<std::int64_t>(fnv1a_lock_hash(reward_lock_string(42))), -1531775449243571962LL);
  EXPECT_NE(fnv1a_lock_hash(reward_lock_string(42)), fnv1a_lock_hash(reward_lock_string(24)));
}

TEST(RewardClaimLockKey, WithDistinctHashesTwentyCustomersAtOnceAreAllServed) {
  const Settings s = burst_of_claims("advisory-xact:try");
  auto sc = make_reward_claim(false, &fnv1a_lock_hash);
  const auto r = run_with(s, *sc);
  EXPECT_EQ(r["requests"]["ok"], 20);
  EXPECT_EQ(r["requests"]["conflict"], 0);
  EXPECT_EQ(violation(r, "duplicate_reward"), 0);
}

TEST(RewardClaimLockKey, ACollisionCostsASpurious409WithATryLockButNeverADuplicate) {
  const Settings s = burst_of_claims("advisory-xact:try");
  auto sc = make_reward_claim(false, &colliding_hash);
  const auto r = run_with(s, *sc);
  // One lock for twenty customers: one is served, nineteen are told "busy"
  // although nobody else claims their reward.
  EXPECT_EQ(r["requests"]["ok"], 1);
  EXPECT_EQ(r["requests"]["conflict"], 19);
  EXPECT_EQ(violation(r, "duplicate_reward"), 0);
}

TEST(RewardClaimLockKey, ACollisionSerializesTwoCustomersWithAWaitingLock) {
  Settings s = burst_of_claims("advisory-xact:wait");
  s.burst = 2;
  s.lock_timeout = 10s;
  auto fast = make_reward_claim(false, &fnv1a_lock_hash);
  auto slow = make_reward_claim(false, &colliding_hash);
  const auto apart = run_with(s, *fast);
  const auto together = run_with(s, *slow);
  EXPECT_EQ(apart["requests"]["ok"], 2);
  EXPECT_EQ(together["requests"]["ok"], 2);
  EXPECT_EQ(violation(together, "duplicate_reward"), 0);
  // Both answered, but the second waited in pg_advisory_xact_lock for the first's credit call.
  EXPECT_EQ(apart["sim"]["lock_waits"], 0);
  EXPECT_EQ(together["sim"]["lock_waits"], 1);
}

TEST(RewardClaimTables, WithoutAUniqueKeyBothClaimsAreStoredAndWithOneTheSecondInsertFails) {
  Settings s = burst_of_claims("none");
  s.burst = 2;
  s.key_dist = KeyDist::hot;  // the same customer twice at once
  auto plain = make_reward_claim(false, &fnv1a_lock_hash);
  auto unique = make_reward_claim(true, &fnv1a_lock_hash);
  const auto two_rows = run_with(s, *plain);
  const auto one_row = run_with(s, *unique);
  // Two credits either way: the partner sees the duplicate.
  EXPECT_EQ(violation(two_rows, "duplicate_reward"), 1);
  EXPECT_EQ(violation(one_row, "duplicate_reward"), 1);
  // Without a unique key the service's table holds both claims (it agrees with the partner).
  EXPECT_EQ(violation(two_rows, "claim_divergence"), 0);
  EXPECT_EQ(two_rows["requests"]["ok"], 2);
  // With one, the second INSERT fails (a 500), the table holds one claim, the partner two credits.
  EXPECT_EQ(one_row["requests"]["error"], 1);
  EXPECT_EQ(violation(one_row, "claim_divergence"), 1);
}

TEST(SynchronizedLocalLocks, ExcludeWithinOnePodAndNotAcrossTwo) {
  Settings s;
  s.scenario = "payout";
  s.strategy = "synchronized";
  s.arrival = Arrival::burst;
  s.burst = 2;
  s.key_dist = KeyDist::hot;  // one account, two deliveries at once
  s.partner_latency = Distribution::fixed(300);
  s.db_latency = Distribution::fixed(0.5);
  s.duration = 10s;
  auto one_pod_sc = make_payout();
  const auto one_pod = run_with(s, *one_pod_sc);
  EXPECT_EQ(violation(one_pod, "overdrawn"), 0);
  EXPECT_EQ(one_pod["requests"]["ok"], 2);  // the second waited, then found the balance paid out
  s.pods = 2;                               // requests 1 and 2 land on different pods
  auto two_pods_sc = make_payout();
  const auto two_pods = run_with(s, *two_pods_sc);
  EXPECT_EQ(violation(two_pods, "overdrawn"), 1);
}

TEST(SynchronizedLocalLocks, ATryLockAnswersBusyAndAWaitTimesOutOnThePodsOwnClock) {
  Settings s;
  s.scenario = "payout";
  s.arrival = Arrival::burst;
  s.burst = 2;
  s.key_dist = KeyDist::hot;
  s.partner_latency = Distribution::fixed(1000);
  s.db_latency = Distribution::fixed(0.5);
  s.duration = 10s;
  s.strategy = "synchronized:try";
  auto a = make_payout();
  const auto busy = run_with(s, *a);
  EXPECT_EQ(busy["requests"]["conflict"], 1);
  EXPECT_EQ(busy["locks"]["denied"], 1);
  s.strategy = "synchronized:wait";
  s.lock_timeout = 200ms;  // shorter than the holder's 1 s payout
  auto b = make_payout();
  const auto timed_out = run_with(s, *b);
  EXPECT_EQ(timed_out["requests"]["conflict"], 1);
  EXPECT_EQ(violation(timed_out, "overdrawn"), 0);
}

TEST(SynchronizedLocalLocks, VanishWithACrashedPodSoTheReplacementServesTheKey) {
  // One virtual user promotes identities of one person back to back; the pod
  // crashes while a request holds the in-process lock (each holds it 2 s).
  Settings s;
  s.scenario = "switch-primary";
  s.strategy = "synchronized:try";
  s.arrival = Arrival::closed;
  s.users = 1;
  s.think_time = 10ms;
  s.key_dist = KeyDist::hot;
  s.partner_latency = Distribution::fixed(1000);
  s.db_latency = Distribution::fixed(0.5);
  s.duration = 10s;
  s.crash_at = 2500ms;
  auto sc = make_switch_primary();
  const auto r = run_with(s, *sc);
  EXPECT_EQ(r["faults"]["crashed_requests"], 1);
  // Had the lock outlived its pod, every later request would answer 409.
  EXPECT_EQ(r["requests"]["conflict"], 0);
  EXPECT_GE(r["requests"]["ok"].get<int>(), 3);
}

}  // namespace
}  // namespace lockbench

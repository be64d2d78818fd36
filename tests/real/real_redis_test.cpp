// redis-lease and lease renewal against a real redis-server (LOCKBENCH_TEST_REDIS,
// started by scripts/test), PostgreSQL and the fake partner: the store's
// scripts, a run's keys (its own, gone at its end), steals with a short TTL,
// fencing, and renewal keeping a short TTL through slow calls.
#include <string>
#include <thread>

#include <unistd.h>

#include "real/run_real.hpp"
#include "real/redis_store.hpp"
#include "test_env.hpp"

namespace lockbench {
namespace real_redis_test {

using namespace std::chrono_literals;
using nlohmann::json;

std::string test_redis() { return test::env_or_empty("LOCKBENCH_TEST_REDIS"); }
#define NEED_REDIS()         \
  LOCKBENCH_NEED_PARTNER();  \
  if (test_redis().empty()) GTEST_SKIP() << "LOCKBENCH_TEST_REDIS is unset: scripts/redis start DIR, or run scripts/test"

Settings base(const std::string& strategy) {
  Settings s;
  s.world = "real";
  s.db_url = test::test_db();
  s.partner_url = test::test_partner();
  s.redis_url = test_redis();
  s.strategy = strategy;
  s.scenario = "switch-primary";
  s.seed = 11;
  s.max_threads = 32;
  s.probe_interval = 0s;
  s.connection_timeout = 5s;
  s.key_dist = KeyDist::hot;
  s.keys = 1;
  return s;
}

std::int64_t locks(const json& r, const char* what) { return r["locks"][what].get<std::int64_t>(); }
std::int64_t violation(const json& r, const char* kind) { return r["partner"]["violations"].value(kind, 0); }

// Keys under "lockbench:" that are left in the test server (every run deletes its own).
std::int64_t lockbench_keys() { return real::RedisStore(test_redis(), "lockbench:", 2s).keys(); }

TEST(RealRedisStore, TakesRefusesExtendsAndReleasesALeaseWithOwnerCheckedScripts) {
  NEED_REDIS();
  real::RedisStore st(test_redis(), "lockbench-test:" + std::to_string(::getpid()) + ":", 2s);
  st.drop_run_keys();
  const LeaseResult a = st.acquire(5, "req-1", 300ms);
  EXPECT_TRUE(a.acquired);
  EXPECT_EQ(a.token, 1u);
  EXPECT_FALSE(a.took_over_expired);
  EXPECT_FALSE(st.acquire(5, "req-2", 300ms).acquired);  // SET NX
  EXPECT_FALSE(st.release(5, "req-2"));                   // not its lease
  EXPECT_FALSE(st.extend(5, "req-2", 300ms));
  EXPECT_TRUE(st.extend(5, "req-1", 300ms));
  EXPECT_EQ(st.held(), 1);
  std::this_thread::sleep_for(450ms);  // PX passes: the key is gone
  const LeaseResult b = st.acquire(5, "req-2", 10s);
  EXPECT_TRUE(b.acquired);
  EXPECT_TRUE(b.took_over_expired);  // req-1 never released
  EXPECT_EQ(b.previous_owner, "req-1");
  EXPECT_EQ(b.token, 2u);
  EXPECT_FALSE(st.release(5, "req-1"));  // the victim's release finds another owner
  EXPECT_TRUE(st.release(5, "req-2"));
  const LeaseResult c = st.acquire(5, "req-3", 10s);
  EXPECT_FALSE(c.took_over_expired);  // released, not expired
  EXPECT_TRUE(st.release(5, "req-3"));
  EXPECT_GT(st.drop_run_keys(), 0);  // the token counter
  EXPECT_EQ(st.keys(), 0);
}

TEST(RealRedisLease, LetsOneOfEightSimultaneousRequestsThroughAndLeavesNoKey) {
  NEED_REDIS();
  Settings s = base("redis-lease");
  s.arrival = Arrival::burst;
  s.burst = 8;
  s.duration = 1s;
  s.partner_latency = Distribution::fixed(200);
  s.lease_ttl = 30s;
  const json r = run_real(s);
  EXPECT_EQ(r["requests"]["ok"], 1) << r["requests"].dump();
  EXPECT_EQ(r["requests"]["conflict"], 7);
  EXPECT_EQ(locks(r, "lease_steals"), 0);
  EXPECT_EQ(locks(r, "leaked"), 0);
  EXPECT_EQ(violation(r, "overlap_person"), 0);
  EXPECT_EQ(lockbench_keys(), 0);
}

TEST(RealRedisLease, IsStolenWithATtlBelowTheCallAndFencingRefusesTheStaleHolder) {
  NEED_REDIS();
  Settings s = base("redis-lease");
  s.rate_per_s = 8;
  s.duration = 2s;
  s.partner_latency = Distribution::fixed(300);  // three calls: 900 ms inside a 250 ms lease
  s.lease_ttl = 250ms;
  const json r = run_real(s);
  EXPECT_GT(locks(r, "lease_steals"), 0);
  EXPECT_GT(locks(r, "unlock_failures"), 0);
  EXPECT_GT(violation(r, "overlap_person"), 0);

  s.strategy = "redis-lease:fenced";
  s.fencing = "enforce";
  const json fenced = run_real(s);
  EXPECT_GT(locks(fenced, "lease_steals"), 0);
  EXPECT_GT(violation(fenced, "stale_token_rejected"), 0);
  EXPECT_EQ(lockbench_keys(), 0);
}

TEST(RealRenewal, KeepsAShortTtlLeaseThroughSlowCallsWithoutSteals) {
  NEED_REDIS();
  for (const char* spec : {"row-lease:renew", "redis-lease:renew"}) {
    Settings s = base(spec);
    s.rate_per_s = 5;
    s.duration = 2s;
    s.partner_latency = Distribution::fixed(400);
    s.lease_ttl = 600ms;  // renewed every 200 ms through 800 ms of calls: a renewal 400 ms late would lose it
    const json r = run_real(s);
    EXPECT_GT(locks(r, "acquired"), 0) << spec;
    EXPECT_EQ(locks(r, "lease_steals"), 0) << spec;
    EXPECT_EQ(violation(r, "overlap_person"), 0) << spec;
    EXPECT_GE(locks(r, "renewals"), 2 * locks(r, "acquired")) << spec;
    EXPECT_EQ(locks(r, "leaked"), 0) << spec;
  }
}

TEST(RealRedisLease, RefusesAMissingMalformedOrUnreachableRedisInOneLine) {
  NEED_REDIS();
  Settings s = base("redis-lease");
  s.duration = 1s;
  for (const char* url : {"", "http://127.0.0.1:6379", "redis://127.0.0.1:1"}) {
    s.redis_url = url;
    try {
      run_real(s);
      ADD_FAILURE() << "accepted --redis '" << url << "'";
    } catch (const SettingError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("--redis: ", 0), 0u) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

}  // namespace real_redis_test
}  // namespace lockbench

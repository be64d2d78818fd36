// PgBouncer in the simulator (sim/bouncer.*): transaction pooling hands a
// session lock's backend to strangers; lock waiters keep backends; correct
// strategies stay clean; session pooling keeps today's behaviour.
#include <gtest/gtest.h>

#include "sim/run_sim.hpp"
#include "sim/test_support.hpp"

namespace lockbench {
namespace {

using namespace std::chrono_literals;

Settings behind_pgbouncer(const std::string& strategy, const std::string& mode, int backends) {
  Settings s;
  s.scenario = "switch-primary";
  s.strategy = strategy;
  s.pgbouncer = mode;
  s.pgbouncer_pool_size = backends;
  s.partner_latency = Distribution::fixed(200);
  s.db_latency = Distribution::fixed(0.5);
  s.rate_per_s = 20;
  s.keys = 5;
  s.duration = 10s;
  s.trace_requests = 5;
  return s;
}

std::int64_t violations_total(const nlohmann::json& r) {
  std::int64_t n = 0;
  for (const auto& [kind, count] : r["partner"]["violations"].items()) n += count.get<std::int64_t>();
  return n;
}

TEST(SimPgBouncer, GivesASessionLockToTheNextClientOnItsBackendUnderTransactionPooling) {
  // One backend: request 1 locks and returns it (autocommit); request 2 is
  // given the same backend and re-enters the lock: both hold it at once.
  Settings s = behind_pgbouncer("advisory-session:pinned", "transaction", 1);
  s.arrival = Arrival::burst;
  s.burst = 2;
  s.key_dist = KeyDist::hot;
  const auto r = run_sim(s);
  EXPECT_EQ(lock_count(r, "acquired"), 2) << r["locks"].dump();
  EXPECT_EQ(lock_count(r, "handed_to_stranger"), 1) << r["locks"].dump();
  EXPECT_GT(r["partner"]["violations"]["overlap_person"].get<int>(), 0);
  EXPECT_EQ(lock_count(r, "unlock_failures"), 0);  // both unlocks ran on that one backend

  s.pgbouncer = "none";  // the same burst on pinned connections: the second one is refused
  const auto direct = run_sim(s);
  EXPECT_EQ(lock_count(direct, "acquired"), 1);
  EXPECT_EQ(lock_count(direct, "handed_to_stranger"), 0);
}

TEST(SimPgBouncer, LeaksSessionLocksFailsTheirUnlocksAndRacesForPinnedAndPooledAlike) {
  for (const char* strategy : {"advisory-session:pinned", "advisory-session:pooled"}) {
    const auto r = run_sim(behind_pgbouncer(strategy, "transaction", 4));
    EXPECT_GT(lock_count(r, "handed_to_stranger"), 0) << strategy << r["locks"].dump();
    EXPECT_GT(lock_count(r, "unlock_failures"), 0) << strategy;  // "you don't own a lock": another backend
    EXPECT_GT(lock_count(r, "leaked"), 0) << strategy;           // the locks outlive every client
    EXPECT_GT(r["partner"]["violations"]["overlap_person"].get<int>(), 0) << strategy;
    EXPECT_EQ(r["pgbouncer"]["pool_mode"], "transaction");
  }
  // Pinned without PgBouncer: the same load, nothing of the above.
  const auto direct = run_sim(behind_pgbouncer("advisory-session:pinned", "none", 4));
  EXPECT_EQ(lock_count(direct, "handed_to_stranger") + lock_count(direct, "unlock_failures") + lock_count(direct, "leaked"), 0);
  EXPECT_EQ(violations_total(direct), 0);
}

TEST(SimPgBouncer, KeepsAdvisoryXactAndRowLeaseCleanUnderTransactionPooling) {
  for (const char* strategy : {"advisory-xact:try", "advisory-xact:wait", "row-lease"}) {
    const auto r = run_sim(behind_pgbouncer(strategy, "transaction", 4));
    EXPECT_EQ(violations_total(r), 0) << strategy << r["partner"]["violations"].dump();
    EXPECT_EQ(lock_count(r, "leaked") + lock_count(r, "unlock_failures") + lock_count(r, "handed_to_stranger"), 0) << strategy;
    EXPECT_GT(r["requests"]["ok"].get<int>(), 20) << strategy;
  }
}

TEST(SimPgBouncer, LetsLockWaitersHoldEveryBackendWhileOtherClientsQueueUntilLockTimeout) {
  // Two backends: the holder's transaction keeps one through its 3 s partner
  // call, a waiter for the same key keeps the other until lock_timeout; every
  // other client waits at PgBouncer for a backend, however unrelated its work.
  Settings s = behind_pgbouncer("advisory-xact:wait", "transaction", 2);
  s.arrival = Arrival::burst;
  s.burst = 8;
  s.key_dist = KeyDist::hot;
  s.partner_latency = Distribution::fixed(3000);
  s.lock_timeout = 1s;
  const auto r = run_sim(s);
  EXPECT_GE(r["pgbouncer"]["clients_waiting_max"].get<int>(), 5) << r["pgbouncer"].dump();
  EXPECT_GE(lock_count(r, "denied"), 2) << r["locks"].dump();  // the waiters' lock_timeout freed the backends
  EXPECT_GE(r["requests"]["ok"].get<int>(), 1);
  EXPECT_EQ(violations_total(r), 0);
}

TEST(SimPgBouncer, SessionPoolingKeepsSessionLocksWithTheirClient) {
  // As many backends as connections: one backend per client for its life.
  const auto r = run_sim(behind_pgbouncer("advisory-session:pinned", "session", 10));
  EXPECT_EQ(lock_count(r, "handed_to_stranger") + lock_count(r, "unlock_failures") + lock_count(r, "leaked"), 0) << r["locks"].dump();
  EXPECT_EQ(violations_total(r), 0);
  EXPECT_EQ(r["pgbouncer"]["query_wait_timeouts"], 0);
}

TEST(SimPgBouncer, GivesTheSameResultForASeed) {
  const Settings s = behind_pgbouncer("advisory-session:pooled", "transaction", 3);
  auto a = run_sim(s), b = run_sim(s);
  a["provenance"].erase("created_at");
  b["provenance"].erase("created_at");
  EXPECT_EQ(a.dump(), b.dump());
}

}  // namespace
}  // namespace lockbench

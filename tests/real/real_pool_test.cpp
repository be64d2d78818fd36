// The pool against a real PostgreSQL: FIFO waiters, connectionTimeout, broken
// connections replaced, leak detection, rollback on return.
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "real/pool.hpp"
#include "test_env.hpp"

namespace lockbench::real {
namespace real_pool_test {

using namespace std::chrono_literals;

constexpr std::int64_t kRun = 424242;  // this test's rows in lockbench.rows

PoolConfig config(int size) {
  PoolConfig c;
  c.url = test::test_db();
  c.run = kRun;
  c.maximum_pool_size = size;
  c.connection_timeout = 5s;
  return c;
}

void wait_for_pending(Pool& pool, int n) {
  for (int i = 0; i < 500 && pool.sample().pending < n; ++i) std::this_thread::sleep_for(2ms);
  ASSERT_EQ(pool.sample().pending, n);
}

// Ends a pool connection's backend from another session and waits until it is gone
// (pg_terminate_backend only signals it; the backend exits a moment later).
void terminate_backend(int pid) {
  auto admin = open_session(test::test_db());
  pqxx::nontransaction tx(*admin);
  tx.exec_params("SELECT pg_terminate_backend($1)", pid);
  for (int i = 0; i < 2000; ++i) {
    if (tx.exec_params("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", pid)[0][0].as<int>() == 0) return;
    std::this_thread::sleep_for(5ms);
  }
  FAIL() << "backend " << pid << " still listed in pg_stat_activity 10 s after pg_terminate_backend";
}

TEST(RealPool, ServesWaitersInTheOrderTheyArrived) {
  LOCKBENCH_NEED_DB();
  Pool pool(config(1), std::chrono::steady_clock::now());
  PgConn* held = pool.borrow();
  ASSERT_NE(held, nullptr);
  std::mutex mu;
  std::vector<int> order;  // GUARDED_BY(mu)
  std::vector<std::thread> waiters;
  for (int i = 0; i < 4; ++i) {
    waiters.emplace_back([&, i] {
      PgConn* c = pool.borrow();
      ASSERT_NE(c, nullptr);
      {
        std::lock_guard lock(mu);
        order.push_back(i);
      }
      c->release();
    });
    wait_for_pending(pool, i + 1);  // waiter i is queued before i + 1 starts
  }
  held->release();
  for (auto& t : waiters) t.join();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(pool.stats().pending_max, 4);
  EXPECT_EQ(pool.stats().timeouts, 0);
}

TEST(RealPool, GivesUpAfterConnectionTimeoutAndCountsIt) {
  LOCKBENCH_NEED_DB();
  Pool pool(config(1), std::chrono::steady_clock::now());
  PgConn* held = pool.borrow();
  ASSERT_NE(held, nullptr);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(pool.borrow(100ms), nullptr);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 100ms);
  EXPECT_EQ(pool.stats().timeouts, 1);
  EXPECT_EQ(pool.sample().pending, 0);  // the waiter left the queue
  held->release();
  PgConn* again = pool.borrow(100ms);
  EXPECT_NE(again, nullptr);
  again->release();
}

TEST(RealPool, HandsOutTheLeastRecentlyReturnedConnectionFirst) {
  LOCKBENCH_NEED_DB();
  Pool pool(config(2), std::chrono::steady_clock::now());
  PgConn* a = pool.borrow();
  PgConn* b = pool.borrow();
  const int a_id = a->id();
  a->release();
  b->release();
  PgConn* next = pool.borrow();
  EXPECT_EQ(next->id(), a_id);
  next->release();
}

TEST(RealPool, ReplacesABrokenConnectionInsteadOfHandingItOut) {
  LOCKBENCH_NEED_DB();
  Pool pool(config(2), std::chrono::steady_clock::now());
  const std::vector<int> before = pool.backend_pids();
  terminate_backend(before[0]);
  std::this_thread::sleep_for(600ms);  // past the 500 ms alive-bypass window: borrow validates
  PgConn* a = pool.borrow();
  PgConn* b = pool.borrow();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NO_THROW(a->select_one());
  EXPECT_NO_THROW(b->select_one());
  EXPECT_NE(a->backend_pid(), before[0]);
  EXPECT_NE(b->backend_pid(), before[0]);
  EXPECT_EQ(pool.replaced(), 1);
  a->release();
  b->release();
}

TEST(RealPool, ABrokenConnectionFailsItsStatementThenIsReplacedOnReturn) {
  LOCKBENCH_NEED_DB();
  Pool pool(config(1), std::chrono::steady_clock::now());
  PgConn* c = pool.borrow();
  const int pid = c->backend_pid();
  terminate_backend(pid);
  EXPECT_THROW(c->select_one(), DbError);
  EXPECT_TRUE(c->broken());
  c->release();
  PgConn* again = pool.borrow(1s);
  ASSERT_NE(again, nullptr);
  EXPECT_FALSE(again->broken());
  EXPECT_NE(again->backend_pid(), pid);
  EXPECT_NO_THROW(again->select_one());
  again->release();
}

TEST(RealPool, RetiresAConnectionOlderThanMaxLifetimeWhenItIsReturned) {
  LOCKBENCH_NEED_DB();
  PoolConfig cfg = config(1);
  cfg.max_lifetime = 50ms;
  Pool pool(cfg, std::chrono::steady_clock::now());
  PgConn* c = pool.borrow();
  const int pid = c->backend_pid();
  std::this_thread::sleep_for(80ms);
  c->release();
  EXPECT_EQ(pool.replaced(), 1);
  PgConn* again = pool.borrow();
  EXPECT_NE(again->backend_pid(), pid);
  EXPECT_NO_THROW(again->select_one());
  again->release();
}

TEST(RealPool, WarnsOnceForABorrowHeldPastTheLeakThresholdNamingItsStep) {
  LOCKBENCH_NEED_DB();
  PoolConfig cfg = config(2);
  cfg.leak_detection_threshold = 50ms;
  Pool pool(cfg, std::chrono::steady_clock::now());
  StepNote note;
  current_step_note() = &note;
  PgConn* c = pool.borrow();
  note.step = "partner.link";
  PgConn* quick = pool.borrow();
  quick->release();  // returned in time: no warning
  std::this_thread::sleep_for(120ms);
  pool.check_leaks();
  pool.check_leaks();  // once per borrow
  current_step_note() = nullptr;
  const PoolStats st = pool.stats();
  EXPECT_EQ(st.leaks, 1);
  ASSERT_EQ(st.leak_steps.size(), 1u);
  EXPECT_EQ(st.leak_steps[0], "partner.link");
  c->release();
}

TEST(RealPool, RollsBackAnOpenTransactionWhenAConnectionIsReturned) {
  LOCKBENCH_NEED_DB();
  {
    auto admin = open_session(test::test_db());
    create_schema(*admin);
    seed_rows(*admin, kRun, {{"users", true, TableSpec::Seed{"auth0|u", 0}}}, 3);
  }
  Pool pool(config(1), std::chrono::steady_clock::now());
  PgConn* c = pool.borrow();
  run_sync(c->begin());
  ASSERT_TRUE(run_sync(c->update(0, 2, Row{true, "github|u2", {}, 0, 0}, Guard::any())));
  c->release();  // without commit
  PgConn* again = pool.borrow();
  const Row row = run_sync(again->read(0, 2));
  EXPECT_TRUE(row.found);
  EXPECT_EQ(row.text, "auth0|u2");
  EXPECT_EQ(row.version, 0);
  again->release();
  auto admin = open_session(test::test_db());
  drop_rows(*admin, kRun);
}

TEST(RealPool, SessionAdvisoryLockStaysWithTheConnectionAcrossBorrows) {
  LOCKBENCH_NEED_DB();
  Pool pool(config(2), std::chrono::steady_clock::now());
  const LockMode try_lock{LockWait::try_lock, {}};
  PgConn* a = pool.borrow();
  ASSERT_EQ(run_sync(a->advisory_lock(42, try_lock)), LockResult::acquired);
  a->release();
  PgConn* b = pool.borrow();  // the other connection (least recently returned)
  ASSERT_NE(b->id(), a->id());
  EXPECT_EQ(run_sync(b->advisory_lock(42, try_lock)), LockResult::busy);
  EXPECT_FALSE(run_sync(b->advisory_unlock(42)));  // "you don't own a lock": the pooled trap
  b->release();
  PgConn* again = pool.borrow();
  ASSERT_EQ(again->id(), a->id());
  EXPECT_TRUE(run_sync(again->advisory_unlock(42)));
  again->release();
}


// The lease statements go through libpq directly (PgConn's hot path): same
// answers as through libpqxx, and the same outcome when the session is gone.
TEST(RealPool, LeaseStatementsOnTheLibpqPathTakeRefuseTakeOverAndRelease) {
  LOCKBENCH_NEED_DB();
  {
    auto admin = open_session(test::test_db());
    create_schema(*admin);
    seed_rows(*admin, kRun, {{"users", true, TableSpec::Seed{"auth0|u", 0}}}, 3);
  }
  Pool pool(config(2), std::chrono::steady_clock::now());
  PgConn* a = pool.borrow();
  PgConn* b = pool.borrow();
  const auto acquire = [](PgConn* c, const char* owner, Duration ttl) {
    return run_sync(c->lease_acquire(0, 2, owner, ttl, LeaseClock::database, LeaseSql::owned));
  };
  const LeaseResult first = acquire(a, "req-1", 30s);
  EXPECT_TRUE(first.acquired);
  EXPECT_FALSE(first.took_over_expired);
  EXPECT_FALSE(acquire(b, "req-2", 30s).acquired);  // held and not expired
  // A TTL of 1 us: the lease of req-1 counts as expired, and who held it is named.
  const LeaseResult second = acquire(b, "req-2", 1us);
  EXPECT_TRUE(second.acquired);
  EXPECT_TRUE(second.took_over_expired);
  EXPECT_EQ(second.previous_owner, "req-1");
  EXPECT_EQ(second.token, first.token + 1);
  EXPECT_FALSE(run_sync(a->lease_release(0, 2, "req-1", LeaseSql::owned)));  // no longer ours
  EXPECT_TRUE(run_sync(b->lease_release(0, 2, "req-2", LeaseSql::owned)));
  EXPECT_TRUE(acquire(a, "req-3", 30s).acquired);  // free again
  EXPECT_TRUE(run_sync(a->lease_release(0, 2, "req-3", LeaseSql::owned)));
  a->release();
  b->release();
  auto admin = open_session(test::test_db());
  drop_rows(*admin, kRun);
}

TEST(RealPool, ALeaseStatementOnAnEndedSessionThrowsDbErrorAndTheConnectionIsReplaced) {
  LOCKBENCH_NEED_DB();
  {
    auto admin = open_session(test::test_db());
    create_schema(*admin);
    seed_rows(*admin, kRun, {{"users", true, TableSpec::Seed{"auth0|u", 0}}}, 3);
  }
  Pool pool(config(1), std::chrono::steady_clock::now());
  PgConn* c = pool.borrow();
  const int pid = c->backend_pid();
  terminate_backend(pid);
  EXPECT_THROW(run_sync(c->lease_acquire(0, 1, "req-1", 30s, LeaseClock::database, LeaseSql::owned)), DbError);
  EXPECT_TRUE(c->broken());
  c->release();
  PgConn* again = pool.borrow(1s);
  ASSERT_NE(again, nullptr);
  EXPECT_NE(again->backend_pid(), pid);
  EXPECT_TRUE(run_sync(again->lease_acquire(0, 1, "req-1", 30s, LeaseClock::database, LeaseSql::owned)).acquired);
  EXPECT_TRUE(run_sync(again->lease_release(0, 1, "req-1", LeaseSql::owned)));
  again->release();
  auto admin = open_session(test::test_db());
  drop_rows(*admin, kRun);
}

}  // namespace real_pool_test
}  // namespace lockbench::real

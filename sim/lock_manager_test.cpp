#include "sim/lock_manager.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "core/task.hpp"

namespace lockbench::sim {
namespace {

using namespace std::chrono_literals;

std::optional<RowState> row_of(Key k) {
  if (k < 1 || k > 10) return std::nullopt;
  RowState r;
  r.text = "auth0|u" + std::to_string(k);
  return r;
}

struct Fixture {
  EventLoop loop;
  LockManager lm{loop, &row_of};
};

// A waiter: waits for the lock, notes when it got it (or not), and holds it
// until `hold` has passed, then commits.
Task<void> waiter(Fixture& f, Backend b, Space sp, Scope sc, Key k, Duration timeout, Duration hold,
                  std::vector<std::pair<Backend, LockResult>>& log) {
  LockResult r = f.lm.try_lock(sp, k, b, sc);
  if (r == LockResult::busy) r = co_await f.lm.wait_lock(sp, k, b, sc, timeout, kGlobal);
  log.emplace_back(b, r);
  if (r != LockResult::acquired) co_return;
  co_await Sleep{f.loop, hold, kGlobal};
  f.lm.end_xact(b, true);
}

void start(Task<void> t) {
  spawn(std::move(t), [](std::exception_ptr e) {
    if (e) std::rethrow_exception(e);
  });
}

void end_xact_of(void* lm, std::uint64_t b) { static_cast<LockManager*>(lm)->end_xact(static_cast<Backend>(b), true); }
void die(void* lm, std::uint64_t b) { static_cast<LockManager*>(lm)->backend_died(static_cast<Backend>(b)); }

TEST(LockManager, GrantsARowLockToItsWaitersInFifoOrder) {
  Fixture f;
  std::vector<std::pair<Backend, LockResult>> log;
  ASSERT_EQ(f.lm.try_lock(Space::row, 1, 0, Scope::xact), LockResult::acquired);
  for (Backend b : {3, 1, 2}) start(waiter(f, b, Space::row, Scope::xact, 1, Duration::zero(), 5ms, log));
  EXPECT_TRUE(log.empty());
  f.loop.at(10ms, kGlobal, &end_xact_of, &f.lm, 0);
  f.loop.run(Duration::max(), 1000);
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[0].first, 3);
  EXPECT_EQ(log[1].first, 1);
  EXPECT_EQ(log[2].first, 2);
  for (auto& [b, r] : log) EXPECT_EQ(r, LockResult::acquired);
  EXPECT_EQ(f.loop.now(), 25ms);  // 10 ms, then three holds of 5 ms one after the other
}

TEST(LockManager, EndsAWaitWithTimedOutAfterLockTimeout) {
  Fixture f;
  std::vector<std::pair<Backend, LockResult>> log;
  ASSERT_EQ(f.lm.try_lock(Space::advisory, 1, 0, Scope::xact), LockResult::acquired);
  start(waiter(f, 1, Space::advisory, Scope::xact, 1, 100ms, 1ms, log));
  start(waiter(f, 2, Space::advisory, Scope::xact, 1, Duration::zero(), 1ms, log));
  f.loop.run(Duration::max(), 1000);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0], std::make_pair(Backend{1}, LockResult::timed_out));
  EXPECT_EQ(f.loop.now(), 100ms);
  // The one behind the timed-out waiter is still first in line when the holder ends.
  f.lm.end_xact(0, true);
  f.loop.run(Duration::max(), 1000);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[1], std::make_pair(Backend{2}, LockResult::acquired));
}

TEST(LockManager, AnswersBusyWithoutWaitingForNowaitAndTryLock) {
  Fixture f;
  ASSERT_EQ(f.lm.try_lock(Space::row, 2, 0, Scope::xact), LockResult::acquired);
  EXPECT_EQ(f.lm.try_lock(Space::row, 2, 1, Scope::xact), LockResult::busy);
  EXPECT_EQ(f.lm.try_lock(Space::row, 3, 1, Scope::xact), LockResult::acquired);  // another key is free
  EXPECT_EQ(f.loop.pending(), 0u);  // nothing was queued or timed
}

TEST(LockManager, RechecksAnUpdateWhereClauseOnTheRowCommittedByTheLockHolder) {
  Fixture f;
  // Transaction A: SELECT ... FOR UPDATE, then writes version 1 (not committed yet).
  ASSERT_EQ(f.lm.try_lock(Space::row, 4, 0, Scope::xact), LockResult::acquired);
  RowState next = *f.lm.visible(4, 0);
  next.version = 1;
  f.lm.put(4, 0, true, next);
  EXPECT_EQ(f.lm.visible(4, 1)->version, 0);  // B sees the committed row: version 0
  EXPECT_EQ(f.lm.visible(4, 0)->version, 1);  // A sees its own write
  // B: UPDATE ... WHERE version = 0 must wait for A's row lock, then re-check.
  bool matched = true;
  auto update_if_version_0 = [](Fixture& fx, bool& out) -> Task<void> {
    co_await fx.lm.lock(Space::row, 4, 1, Scope::xact, Duration::zero(), kGlobal);
    out = fx.lm.visible(4, 1)->version == 0;
    fx.lm.release_row(4, 1);
  };
  start(update_if_version_0(f, matched));
  f.loop.run(Duration::max(), 100);
  EXPECT_TRUE(matched);  // not evaluated yet: still waiting
  f.lm.end_xact(0, true);
  f.loop.run(Duration::max(), 100);
  EXPECT_FALSE(matched);  // evaluated after A committed version 1: 0 rows
}

TEST(LockManager, CountsReentrantSessionLocksLikePostgresql) {
  Fixture f;
  EXPECT_EQ(f.lm.try_lock(Space::advisory, 7, 0, Scope::session), LockResult::acquired);
  EXPECT_EQ(f.lm.try_lock(Space::advisory, 7, 0, Scope::session), LockResult::acquired);
  EXPECT_EQ(f.lm.session_locks_held(), 1);  // one lock (held twice), one pg_locks row
  EXPECT_TRUE(f.lm.unlock_session(7, 0));
  EXPECT_EQ(f.lm.try_lock(Space::advisory, 7, 1, Scope::session), LockResult::busy);  // still held once
  EXPECT_TRUE(f.lm.unlock_session(7, 0));
  EXPECT_FALSE(f.lm.unlock_session(7, 0));  // a third unlock: nothing left
  EXPECT_EQ(f.lm.try_lock(Space::advisory, 7, 1, Scope::session), LockResult::acquired);
}

TEST(LockManager, RefusesAnUnlockByABackendThatDoesNotHoldTheLock) {
  Fixture f;
  ASSERT_EQ(f.lm.try_lock(Space::advisory, 8, 0, Scope::session), LockResult::acquired);
  EXPECT_FALSE(f.lm.unlock_session(8, 1));
  EXPECT_EQ(f.lm.try_lock(Space::advisory, 8, 1, Scope::session), LockResult::busy);
  // A commit does not release a session lock either.
  f.lm.end_xact(0, true);
  EXPECT_EQ(f.lm.try_lock(Space::advisory, 8, 1, Scope::session), LockResult::busy);
}

TEST(LockManager, ReleasesEverythingADeadBackendHeldAndForgetsItsWait) {
  Fixture f;
  std::vector<std::pair<Backend, LockResult>> log;
  ASSERT_EQ(f.lm.try_lock(Space::row, 1, 0, Scope::xact), LockResult::acquired);
  RowState next = *f.lm.visible(1, 0);
  next.text = "uncommitted";
  f.lm.put(1, 0, true, next);
  ASSERT_EQ(f.lm.try_lock(Space::advisory, 1, 0, Scope::xact), LockResult::acquired);
  ASSERT_EQ(f.lm.try_lock(Space::advisory, 2, 0, Scope::session), LockResult::acquired);
  ASSERT_EQ(f.lm.try_lock(Space::advisory, 3, 5, Scope::session), LockResult::acquired);
  start(waiter(f, 1, Space::row, Scope::xact, 1, Duration::zero(), 1ms, log));
  start(waiter(f, 0, Space::advisory, Scope::session, 3, Duration::zero(), 1ms, log));  // 0 waits for 5's lock
  start(waiter(f, 2, Space::advisory, Scope::session, 3, Duration::zero(), 1ms, log));  // behind 0
  f.loop.at(10ms, kGlobal, &die, &f.lm, 0);
  f.loop.run(Duration::max(), 100);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0], std::make_pair(Backend{1}, LockResult::acquired));  // the row lock went to the waiter
  EXPECT_EQ(f.lm.visible(1, 1)->text, "auth0|u1");                  // the open transaction rolled back
  EXPECT_EQ(f.lm.try_lock(Space::advisory, 1, 3, Scope::xact), LockResult::acquired);
  EXPECT_EQ(f.lm.try_lock(Space::advisory, 2, 3, Scope::session), LockResult::acquired);
  EXPECT_TRUE(f.lm.held_by(0).empty());
  // 0's wait vanished with it: when 5 unlocks, 2 (next in line) gets the lock.
  EXPECT_TRUE(f.lm.unlock_session(3, 5));
  f.loop.run(Duration::max(), 100);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[1], std::make_pair(Backend{2}, LockResult::acquired));
}

}  // namespace
}  // namespace lockbench::sim

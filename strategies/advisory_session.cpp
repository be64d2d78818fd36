// advisory-session: pg_[try_]advisory_lock(k), held by the database session
// (the connection), not by a transaction.
//   pinned: keep the same connection from lock to unlock. Correct, but the
//           connection is pinned through the partner calls, like held-tx.
//   pooled: give the connection back during the calls, as a request-scoped ORM
//           session would, and unlock on whatever connection the pool hands out
//           next. The unlock fails ("you don't own a lock") and the lock stays
//           with the first connection, leaked into the pool: later requests on
//           that connection re-enter it (session locks stack), others are denied.
#include <exception>

#include "strategies/strategies.hpp"

namespace lockbench {

Task<Outcome> AdvisorySession::run(RequestCtx& cx, Scenario& sc) {
  ConnHandle c = co_await cx.world().acquire(cx);
  if (!c) co_return Outcome::pool_timeout;
  const Key key = sc.hashed_lock_key(cx);  // --key-hash: two keys may share one lock number
  const LockMode mode{wait_ ? LockWait::wait : LockWait::try_lock, cx.settings().lock_timeout};
  AdvisoryHolding holding(cx, key);
  if (co_await c->advisory_lock(key, mode) != LockResult::acquired) {
    cx.locks().denied++;
    holding.denied();  // a false conflict when only other keys hold the number
    co_return Outcome::conflict;
  }
  cx.locks().acquired++;
  holding.held();

  // A session lock survives rollback and the return to the pool, so the unlock
  // must run on every path, the failing ones included (the `finally` of the
  // Java version; co_await cannot stand in a catch block, hence `failure`).
  std::exception_ptr failure;
  Effect effect = Effect::done;
  try {
    Plan plan;
    co_await sc.read(cx, *c, plan);
    if (!plan.noop) {
      if (!pinned_) c.reset();  // the trap: the lock stays on the connection we just gave back
      effect = co_await sc.external(cx, plan, CallOptions{});
      if (!pinned_) {
        c = co_await cx.world().acquire(cx);  // whichever connection is free now
        if (!c) {
          holding.keep();  // the lock stays with the first connection
          co_return Outcome::pool_timeout;
        }
      }
      if (effect == Effect::done) co_await sc.store(cx, *c, plan, Guard::any());
    }
  } catch (...) {
    failure = std::current_exception();
  }
  if (c && !co_await c->advisory_unlock(key)) {
    cx.locks().unlock_failures++;
    holding.keep();  // still held, by the connection that took it
  }
  if (failure) std::rethrow_exception(failure);
  co_return effect == Effect::done ? Outcome::ok : Outcome::error;
}

}  // namespace lockbench

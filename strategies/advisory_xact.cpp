// advisory-xact: BEGIN; pg_try_advisory_xact_lock(k) (fail fast) or
// pg_advisory_xact_lock(k) under SET LOCAL lock_timeout (bounded wait).
// COMMIT or ROLLBACK releases it, and so does a dead backend: crash-safe.
// The key is a number, so it protects a record that does not exist yet;
// --key-hash says how the business key becomes that number (hashtext-32's 32
// bits make unrelated keys share a lock: false conflicts).
// Like held-tx, it pins a pooled connection through the partner calls.
#include "strategies/strategies.hpp"

namespace lockbench {

Task<Outcome> AdvisoryXact::run(RequestCtx& cx, Scenario& sc) {
  ConnHandle c = co_await cx.world().acquire(cx);
  if (!c) co_return Outcome::pool_timeout;
  co_await c->begin();
  const LockMode mode{wait_ ? LockWait::wait : LockWait::try_lock, cx.settings().lock_timeout};
  const Key key = sc.hashed_lock_key(cx);  // --key-hash: two keys may share one lock number
  AdvisoryHolding holding(cx, key);        // COMMIT/ROLLBACK frees it: so does leaving this scope
  if (co_await c->advisory_xact_lock(key, mode) != LockResult::acquired) {
    cx.locks().denied++;
    holding.denied();  // a false conflict when only other keys hold the number
    co_await c->rollback();
    co_return Outcome::conflict;
  }
  cx.locks().acquired++;
  holding.held();
  Plan plan;
  co_await sc.read(cx, *c, plan);
  if (plan.noop) {
    co_await c->commit();
    co_return Outcome::ok;
  }
  const Effect effect = co_await sc.external(cx, plan, CallOptions{});  // lock and connection held
  if (effect != Effect::done) {
    co_await c->rollback();
    co_return Outcome::error;
  }
  co_await sc.store(cx, *c, plan, Guard::any());
  co_await c->commit();  // releases the advisory lock
  co_return Outcome::ok;
}

}  // namespace lockbench

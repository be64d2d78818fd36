// advisory-xact: BEGIN; pg_try_advisory_xact_lock(k) (fail fast) or
// pg_advisory_xact_lock(k) under SET LOCAL lock_timeout (bounded wait).
// COMMIT or ROLLBACK releases it, and so does a dead backend: crash-safe.
// The key is a number, so it protects a record that does not exist yet.
// Like held-tx, it pins a pooled connection through the partner calls.
#include "strategies/strategies.hpp"

namespace lockbench {

Task<Outcome> AdvisoryXact::run(RequestCtx& cx, Scenario& sc) {
  ConnHandle c = co_await cx.world().acquire(cx);
  if (!c) co_return Outcome::pool_timeout;
  co_await c->begin();
  const LockMode mode{wait_ ? LockWait::wait : LockWait::try_lock, cx.settings().lock_timeout};
  if (co_await c->advisory_xact_lock(sc.lock_key(cx), mode) != LockResult::acquired) {
    cx.locks().denied++;
    co_await c->rollback();
    co_return Outcome::conflict;
  }
  cx.locks().acquired++;
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

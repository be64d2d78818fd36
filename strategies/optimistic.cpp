// optimistic: read the version, do the work, write only if the version is
// unchanged (@Version). It detects a conflict, it does not prevent one: by the
// time the write fails, both requests have already called the partner.
#include "strategies/strategies.hpp"

namespace lockbench {

Task<Outcome> Optimistic::run(RequestCtx& cx, Scenario& sc) {
  ConnHandle c = co_await cx.world().acquire(cx);
  if (!c) co_return Outcome::pool_timeout;
  Plan plan;  // filled in place by read(): no Plan moved through a coroutine's return
  co_await sc.read(cx, *c, plan);
  c.reset();  // connection back to the pool
  if (plan.noop) co_return Outcome::ok;
  const Effect effect = co_await sc.external(cx, plan, CallOptions{});  // nothing stops a second request here
  if (effect != Effect::done) co_return Outcome::error;
  c = co_await cx.world().acquire(cx);
  if (!c) co_return Outcome::pool_timeout;
  if (!co_await sc.store(cx, *c, plan, Guard::if_version(plan.before.version))) {
    cx.locks().version_conflicts++;
    co_return Outcome::conflict;  // OptimisticLockException, after the side effect
  }
  co_return Outcome::ok;
}

}  // namespace lockbench

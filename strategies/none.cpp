// none: no exclusion at all. Two requests for one key run their partner calls
// at the same time (two promotions interleave their unlink/link, a double
// click charges twice): the race itself.
#include "strategies/strategies.hpp"

namespace lockbench {

Task<Outcome> None::run(RequestCtx& cx, Scenario& sc) {
  ConnHandle c = co_await cx.world().acquire(cx);
  if (!c) co_return Outcome::pool_timeout;
  Plan plan;  // filled in place by read(): no Plan moved through a coroutine's return
  co_await sc.read(cx, *c, plan);
  c.reset();  // connection back to the pool: nothing is held during the partner calls
  if (plan.noop) co_return Outcome::ok;
  const Effect effect = co_await sc.external(cx, plan, CallOptions{});
  if (effect != Effect::done) co_return Outcome::error;
  c = co_await cx.world().acquire(cx);
  if (!c) co_return Outcome::pool_timeout;
  co_await sc.store(cx, *c, plan, Guard::any());
  co_return Outcome::ok;
}

}  // namespace lockbench

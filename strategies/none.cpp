// none: no exclusion at all. Two promotions of one user interleave their
// unlink/link calls at the partner: the race itself.
#include "strategies/strategies.hpp"

namespace lockbench {

Task<Outcome> None::run(RequestCtx& cx, Scenario& sc) {
  Plan plan;
  {
    ConnHandle c = co_await cx.world().acquire(cx);
    if (!c) co_return Outcome::pool_timeout;
    plan = co_await sc.read(cx, *c);
  }  // connection back to the pool: nothing is held during the partner calls
  const bool done = co_await sc.external(cx, plan, std::nullopt);
  if (!done) co_return Outcome::error;
  ConnHandle c = co_await cx.world().acquire(cx);
  if (!c) co_return Outcome::pool_timeout;
  co_await sc.store(cx, *c, plan);
  co_return Outcome::ok;
}

}  // namespace lockbench

// split-tx: the @Transactional article's fix (TransactionTemplate). A short
// transaction records the intent (the order PAYMENT_PENDING) and commits; the
// partner call runs with no connection held, under an Idempotency-Key, so a
// duplicate submission or a retry cannot charge twice; a second short
// transaction records the result (PAID), or FAILED when the partner refused.
// When the outcome is unknown (a timeout) the record stays pending: a retry of
// the same request, with the same key, completes it. No exclusion: two
// submissions may both call, and the key makes the second one a replay.
#include "strategies/strategies.hpp"

namespace lockbench {

Task<Outcome> SplitTx::run(RequestCtx& cx, Scenario& sc) {
  Plan plan;
  {
    ConnHandle c = co_await cx.world().acquire(cx);
    if (!c) co_return Outcome::pool_timeout;
    co_await c->begin();
    plan = co_await sc.read(cx, *c);
    co_await c->commit();  // the intent is durable before the partner hears of it
  }  // connection back to the pool before the slow call
  if (plan.noop) co_return Outcome::ok;
  CallOptions opt;
  opt.idempotency_key = true;
  const Effect effect = co_await sc.external(cx, plan, opt);
  if (effect == Effect::unknown) co_return Outcome::error;  // stays pending; a retry replays the same key
  ConnHandle c = co_await cx.world().acquire(cx);
  if (!c) co_return Outcome::pool_timeout;
  co_await c->begin();
  if (effect == Effect::refused) {
    co_await sc.compensate(cx, *c, plan);
    co_await c->commit();
    co_return Outcome::error;
  }
  co_await sc.store(cx, *c, plan, Guard::any());
  co_await c->commit();
  co_return Outcome::ok;
}

}  // namespace lockbench

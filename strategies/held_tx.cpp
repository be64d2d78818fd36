// held-tx: @Transactional around the HTTP call. BEGIN; SELECT ... FOR UPDATE;
// partner calls; UPDATE; COMMIT. Correct exclusion, but the connection sits
// idle in transaction for the whole partner time: pool / hold caps throughput.
#include "strategies/strategies.hpp"

namespace lockbench {

Task<Outcome> HeldTx::run(RequestCtx& cx, Scenario& sc) {
  ConnHandle c = co_await cx.world().acquire(cx);
  if (!c) co_return Outcome::pool_timeout;
  co_await c->begin();
  const LockMode mode{nowait_ ? LockWait::nowait : LockWait::wait, cx.settings().lock_timeout};
  if (co_await c->lock_row(cx.key(), mode) != LockResult::acquired) {
    cx.locks().denied++;
    co_await c->rollback();
    co_return Outcome::conflict;
  }
  cx.locks().acquired++;
  const Plan plan = co_await sc.read(cx, *c);
  const bool done = co_await sc.external(cx, plan, std::nullopt);  // connection held, idle in transaction
  if (!done) {
    co_await c->rollback();  // rolls back the row, not the partner's side effects
    co_return Outcome::error;
  }
  co_await sc.store(cx, *c, plan);
  co_await c->commit();
  co_return Outcome::ok;
}

}  // namespace lockbench

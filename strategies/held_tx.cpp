// held-tx: @Transactional around the HTTP call. BEGIN; SELECT ... FOR UPDATE;
// partner calls; UPDATE; COMMIT. Correct exclusion while the row exists, but the
// connection sits idle in transaction for the whole partner time: pool / hold
// caps throughput. A record that does not exist yet has no row to lock.
#include "strategies/strategies.hpp"

namespace lockbench {

Task<Outcome> HeldTx::run(RequestCtx& cx, Scenario& sc) {
  // --pre-sql-work: what the @Transactional method does before its first SQL
  // (validation, a call). Spring's JpaTransactionManager takes the connection
  // when the transaction starts, so it is held through that work; with
  // --delay-connection-acquisition (provider_disables_autocommit=true and
  // Hikari auto-commit=false) Hibernate takes it at the first statement.
  const Duration pre_sql = cx.settings().pre_sql_work;
  const bool delayed = cx.settings().delay_connection_acquisition;
  if (pre_sql > Duration::zero() && delayed) co_await cx.world().sleep(cx, pre_sql);  // no connection yet
  ConnHandle c = co_await cx.world().acquire(cx);
  if (!c) co_return Outcome::pool_timeout;
  if (pre_sql > Duration::zero() && !delayed) co_await cx.world().sleep(cx, pre_sql);  // the trap: held, unused
  co_await c->begin();
  const LockMode mode{nowait_ ? LockWait::nowait : LockWait::wait, cx.settings().lock_timeout};
  const LockResult lock = co_await c->lock_row(sc.lock_table(), cx.key(), mode);
  if (lock == LockResult::busy || lock == LockResult::timed_out) {
    cx.locks().denied++;
    co_await c->rollback();
    co_return Outcome::conflict;
  }
  if (lock == LockResult::no_row) {
    cx.locks().nothing_locked++;  // the trap: FOR UPDATE found no row, so it excludes nothing
  } else {
    cx.locks().acquired++;
  }
  Plan plan;
  co_await sc.read(cx, *c, plan);
  if (plan.noop) {
    co_await c->commit();
    co_return Outcome::ok;
  }
  const Effect effect = co_await sc.external(cx, plan, CallOptions{});  // connection held, idle in transaction
  if (effect != Effect::done) {
    co_await c->rollback();  // rolls back the rows, not the partner's side effects
    co_return Outcome::error;
  }
  co_await sc.store(cx, *c, plan, Guard::any());
  co_await c->commit();  // a failed commit throws: the charge happened, the order did not (an orphan)
  co_return Outcome::ok;
}

}  // namespace lockbench

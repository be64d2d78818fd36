// held-tx: @Transactional around the HTTP call. BEGIN; SELECT ... FOR UPDATE;
// partner calls; UPDATE; COMMIT. Correct exclusion while the row exists, but the
// connection sits idle in transaction for the whole partner time: pool / hold
// caps throughput. A record that does not exist yet has no row to lock.
#include "strategies/family.hpp"

namespace lockbench {

class HeldTx final : public Strategy {
 public:
  explicit HeldTx(bool nowait) : nowait_(nowait) {}
  Task<Outcome> run(RequestCtx& cx, Scenario& sc) override;

 private:
  bool nowait_;
};

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

// The registry row (strategies/family.hpp): its variants, their properties, and the
// words `lockbench explain held-tx` prints.
constexpr StrategyProps kHeldTx{.holds_connection_during_call = true,
                                .exclusion = Exclusion::all_pods,
                                .crash_safe = true,
                                .needs_existing_row = true,
                                .lock_table = LockTableUse::per_connection};
constexpr StrategyInfo kHeldTxVariants[] = {
    {.spec = "held-tx:wait",
     .family = "held-tx",
     .in_all = true,
     .family_default = true,
     .props = kHeldTx,
     .teaches = "pool exhaustion (@Transactional around HTTP)",
     .make = strategy_maker<HeldTx, false>},
    {.spec = "held-tx:nowait",
     .family = "held-tx",
     .props = kHeldTx,
     .teaches = "pool exhaustion; a busy row answers 409 at once",
     .make = strategy_maker<HeldTx, true>},
};
constexpr StrategyFamily kHeldTxFamily{
    .name = "held-tx",
    .order = 20,
    .words =
        {
            .summary = "@Transactional around the HTTP call: correct exclusion, pool exhaustion",
            .how = "BEGIN; SELECT ... FROM users WHERE id = $1 FOR UPDATE; then the partner calls; then UPDATE ...; COMMIT. "
                   "The row lock is held until COMMIT, so the connection stays checked out of the pool and sits 'idle in "
                   "transaction' for the whole partner call. Variant wait: a second request for the same row blocks in "
                   "FOR UPDATE (bounded by lock_timeout) while holding its own connection. Variant nowait: FOR UPDATE "
                   "NOWAIT fails at once with SQLSTATE 55P03 (lock_not_available), which the service returns as 409.",
            .fails = "Every request holds a pooled connection for the partner time. Little's law caps throughput at "
                     "pool size / hold time (10 connections, 1.5 s hold: 6.6 requests/s); above that requests queue for a "
                     "connection, fail after connectionTimeout and starve the health check, so pods are marked unready. With "
                     "wait, blocked requests hold connections too, so one hot key can drain the whole pool. Long open "
                     "transactions also hold back VACUUM's xmin horizon, and idle_in_transaction_session_timeout, if set, "
                     "kills the session and rolls back the local write after the partner effect already happened. A crashed "
                     "service is cleaned up: when its session ends PostgreSQL rolls back and frees the row (a silently dead "
                     "client needs TCP keepalives before the server notices). Work before the first SQL (--pre-sql-work: "
                     "validation, a call made before any statement) is held time too: Spring takes the connection when the "
                     "transaction starts, unless spring.jpa.properties.hibernate.connection.provider_disables_autocommit=true "
                     "with spring.datasource.hikari.auto-commit=false (--delay-connection-acquisition on) lets Hibernate take it "
                     "at the first statement; the hold then shrinks by that work, and the ceiling grows by Little's law.",
            .choose = "When the critical section only talks to the database, or the external call is fast and bounded and "
                      "the pool has headroom: rate x hold time well below the pool size.",
            .avoid = "Around slow or retried HTTP calls. It also needs the row to exist: it cannot protect a record that is "
                     "not there yet.",
            .java = R"java(@Transactional   // the connection is checked out here and kept until COMMIT
public void switchPrimary(long userId, String identityId) {
  User u = users.findByIdForUpdate(userId);         // @Lock(PESSIMISTIC_WRITE): SELECT ... FOR UPDATE
  idp.unlink(identityId);                           // the partner calls, idle in transaction
  idp.link(u.getPrimaryIdentity(), identityId);
  u.setPrimaryIdentity(identityId);                 // UPDATE at COMMIT, when the method returns
}
// nowait: @QueryHints(@QueryHint(name = "jakarta.persistence.lock.timeout", value = "0"))
// on findByIdForUpdate makes Hibernate send FOR UPDATE NOWAIT (55P03 -> 409))java",
        },
    .lint = {.holds_pre_sql_work = true},
    .variants = kHeldTxVariants};
LOCKBENCH_STRATEGY(kHeldTxFamily);

}  // namespace lockbench

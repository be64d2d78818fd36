// split-tx: the @Transactional article's fix (TransactionTemplate). A short
// transaction records the intent (the order PAYMENT_PENDING) and commits; the
// partner call runs with no connection held, under an Idempotency-Key, so a
// duplicate submission or a retry cannot charge twice; a second short
// transaction records the result (PAID), or FAILED when the partner refused.
// When the outcome is unknown (a timeout) the record stays pending: a retry of
// the same request, with the same key, completes it. No exclusion: two
// submissions may both call, and the key makes the second one a replay.
//
// Database faults (--db-faults): both transactions are idempotent (INSERT ...
// ON CONFLICT DO NOTHING; UPDATE ... SET PAID), so a lost connection or a
// failed COMMIT is retried on a fresh connection (the pool replaced the lost
// one), up to kTxAttempts times each, as Spring Retry around a
// TransactionTemplate would. It matters most for the second one: the charge
// has happened by then. Only when every attempt fails does the order stay
// pending with its charge: the oracle then counts an orphan_charge, honestly.
//
// Reconciliation (split-tx, the default; split-tx:no-reconcile is the article's
// code as written): an unknown outcome (every attempt timed out), a pod that
// died between the charge and transaction 2, or a second transaction that
// failed every retry would leave the order PAYMENT_PENDING while the money may
// be taken. So transaction 1 also writes a reconciliation row (the delivery
// queue, strategies/delivery_queue.*) due after the claim lease, and
// transaction 2 settles it. Background reconcilers (--outbox-pollers per pod)
// re-drive the rows still due with the same Idempotency-Key: the partner
// replays the first charge (or makes it, once) and the order ends PAID. The
// result's reconcile block counts them (delivered = completed in the
// background, settled_inline = by the request itself).
#include "strategies/strategies.hpp"

#include "strategies/delivery_queue.hpp"

namespace lockbench {

namespace {
constexpr int kTxAttempts = 5;
const std::string kQueue = "reconcile";

// Transaction 1: the order PAYMENT_PENDING (or the duplicate's, or PAID already).
Task<Plan> intent(RequestCtx& cx, Scenario& sc, bool reconcile, bool& got_connection) {
  ConnHandle c = co_await cx.world().acquire(cx);
  got_connection = static_cast<bool>(c);
  if (!c) co_return Plan{};
  co_await c->begin();
  Plan plan;
  co_await sc.read(cx, *c, plan);
  bool queued = false;
  if (reconcile && !plan.noop) {  // due only if nobody settles it first
    const Row row = pending_delivery(cx.world(), claim_lease(cx.settings()));
    queued = co_await c->insert(kDeliveryTable, plan.key, row);
  }
  co_await c->commit();  // the intent is durable before the partner hears of it
  if (queued) cx.recorder().effects.queue_enqueued(kQueue);
  co_return plan;
}  // connection back to the pool before the slow call

// Transaction 2: PAID with the charge id, or FAILED when the charge was refused.
Task<Outcome> record(RequestCtx& cx, Scenario& sc, const Plan& plan, Effect effect, bool reconcile) {
  ConnHandle c = co_await cx.world().acquire(cx);
  if (!c) co_return Outcome::pool_timeout;
  co_await c->begin();
  if (effect == Effect::refused) {
    co_await sc.compensate(cx, *c, plan);
  } else {
    co_await sc.store(cx, *c, plan, Guard::any());
  }
  const bool settled = reconcile && co_await settle_delivery(*c, plan.key);
  co_await c->commit();
  if (settled) cx.recorder().effects.queue_settled_inline(kQueue);
  co_return effect == Effect::refused ? Outcome::error : Outcome::ok;
}
}  // namespace

Task<Outcome> split_transactions(RequestCtx& cx, Scenario& sc, bool reconcile, bool* paid_committed) {
  Plan plan;
  for (int attempt = 1;; ++attempt) {
    bool got_connection = false, failed = false;
    try {
      plan = co_await intent(cx, sc, reconcile, got_connection);
    } catch (const DbError&) {
      if (attempt >= kTxAttempts) throw;  // nothing charged: the client sees an error
      failed = true;
    }
    if (failed) continue;
    if (!got_connection) co_return Outcome::pool_timeout;
    break;
  }
  if (plan.noop) co_return Outcome::ok;
  CallOptions opt;
  opt.idempotency_key = true;
  const Effect effect = co_await sc.external(cx, plan, opt);
  if (effect == Effect::unknown) co_return Outcome::error;  // stays pending; a retry or the reconciler replays the key
  for (int attempt = 1;; ++attempt) {
    bool failed = false;
    Outcome o = Outcome::error;
    try {
      o = co_await record(cx, sc, plan, effect, reconcile);
    } catch (const DbError&) {
      if (attempt >= kTxAttempts) throw;  // the order stays pending with its charge
      failed = true;
    }
    if (failed) continue;  // the pool replaced a lost connection; the UPDATE is idempotent
    if (o == Outcome::ok && effect == Effect::done && paid_committed) *paid_committed = true;
    co_return o;
  }
}

Task<Outcome> SplitTx::run(RequestCtx& cx, Scenario& sc) { return split_transactions(cx, sc, reconcile_, nullptr); }

int SplitTx::background_workers(const Settings& s) const { return reconcile_ ? s.outbox_pollers : 0; }

Task<void> SplitTx::background(RequestCtx& cx, Scenario& sc) { return deliver_due_rows(cx, sc, kQueue); }

}  // namespace lockbench

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
#include "strategies/family.hpp"
#include "strategies/strategies.hpp"

#include "strategies/delivery_queue.hpp"

namespace lockbench {

class SplitTx final : public Strategy {
 public:
  explicit SplitTx(bool reconcile) : reconcile_(reconcile) {}
  Task<Outcome> run(RequestCtx& cx, Scenario& sc) override;
  int background_workers(const Settings& s) const override;
  Task<void> background(RequestCtx& cx, Scenario& sc) override;

 private:
  bool reconcile_;
};

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

// The registry row (strategies/family.hpp): its variants, their properties, and the
// words `lockbench explain split-tx` prints.
constexpr StrategyProps kSplitTx{.holds_connection_during_call = false,
                                 .exclusion = Exclusion::none,
                                 .crash_safe = false,
                                 .needs_idempotency = true};
constexpr StrategyInfo kSplitTxVariants[] = {
    {.spec = "split-tx",
     .family = "split-tx",
     .in_all = true,
     .family_default = true,
     .props = kSplitTx,
     .teaches = "short transactions around an idempotent call; a reconciler completes what stays pending",
     .make = strategy_maker<SplitTx, true>},
    {.spec = "split-tx:no-reconcile",
     .family = "split-tx",
     .props = kSplitTx,
     .teaches = "the article's code: an unknown outcome leaves the order pending, charged",
     .make = strategy_maker<SplitTx, false>},
};
constexpr StrategyFamily kSplitTxFamily{
    .name = "split-tx",
    .order = 90,
    .words =
        {
            .summary = "the @Transactional article's fix: short transactions around an idempotent call",
            .how = "Spring's TransactionTemplate instead of @Transactional around the whole method. Transaction 1: INSERT "
                   "the order as PAYMENT_PENDING and COMMIT (a few milliseconds). Then the charge, with no connection held, "
                   "under the Idempotency-Key checkout-order-<id>. Transaction 2: UPDATE the order to PAID with the charge "
                   "id, or to FAILED when the partner refused the charge for certain. Both transactions are idempotent, so a "
                   "lost connection or a failed COMMIT is retried on a fresh connection. When the outcome is unknown (every "
                   "attempt timed out) or the pod dies between the charge and transaction 2, the order stays "
                   "PAYMENT_PENDING: transaction 1 also wrote a reconciliation row, transaction 2 settles it, and background "
                   "reconcilers (--outbox-pollers per pod) re-drive the rows still due with the same key, so the partner "
                   "replays the first charge instead of making a second one and the order ends PAID.",
            .fails = "It does not exclude: two submissions of one order both call the partner, and only the idempotency key "
                     "makes the second one a replay (409 idempotency_key_in_use while the first is in flight, retried). "
                     "split-tx:no-reconcile is the article's code as written: an unknown outcome or a crash after the charge "
                     "leaves the order pending while the money is taken (orphan_charge), until someone reconciles it by hand. "
                     "It applies only where the partner takes an idempotency key (payments), not to the identity API's "
                     "two-call promotion.",
            .choose = "A slow payment-style call whose provider honours idempotency keys: the pool is held for milliseconds, "
                      "not for the call.",
            .avoid = "When the external operation has several steps that must not interleave (switch-primary): use a lock.",
            .java = R"java(public void checkout(Order o) {
  long id = tx.execute(s -> orders.insertPending(o));           // TransactionTemplate: COMMIT now
  Charge c = Charge.create(params(o),                            // no connection held
      RequestOptions.builder().setIdempotencyKey("checkout-order-" + id).build());
  tx.executeWithoutResult(s -> orders.markPaid(id, c.getId())); // a second short transaction
}
@Scheduled(fixedDelay = 1000)   // the reconciler: orders left PAYMENT_PENDING, charged again with
void reconcile() { ... }        // the same key, which the provider answers as a replay)java",
        },
    .variants = kSplitTxVariants};
LOCKBENCH_STRATEGY(kSplitTxFamily);

}  // namespace lockbench

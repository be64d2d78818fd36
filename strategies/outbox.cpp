// outbox: the transactional outbox, the article's fix for the critical
// integration. The request writes the order and an outbox row in ONE short
// transaction and answers at once; background pollers (--outbox-pollers per
// pod) deliver the charge later, with retries and exponential backoff, under
// the Idempotency-Key checkout-order-<id>: delivered at least once, charged once.
//
//   request   BEGIN; INSERT order PAYMENT_PENDING; INSERT outbox (id, 'PENDING',
//             created_ms, due = now) ON CONFLICT DO NOTHING; COMMIT  -> 200
//   poller    BEGIN; SELECT ... FROM outbox WHERE due BETWEEN 0 AND now ORDER BY id
//             LIMIT 1 FOR UPDATE SKIP LOCKED; UPDATE outbox SET due = now + claim lease;
//             COMMIT  (claimed: no connection held during the call; a poller that
//             dies mid-delivery leaves a row that is due again after the lease)
//             POST /v1/charges (Idempotency-Key: checkout-order-<id>)
//             BEGIN; UPDATE orders SET PAID, charge_id; UPDATE outbox SET 'SENT',
//             due = -1; COMMIT   (refused: FAILED; unknown: due = now + backoff)
//
// The outbox table and its pollers are strategies/delivery_queue.*. Lag =
// delivered - written, in the result's outbox.lag_ms; rows left when
// --outbox-drain-limit ends the run are outbox.undelivered.
#include "strategies/strategies.hpp"

#include "strategies/delivery_queue.hpp"

namespace lockbench {

namespace {

constexpr int kTxAttempts = 5;
const std::string kQueue = "outbox";

// The request's one transaction: the order and its outbox row.
Task<Outcome> write_order_and_outbox_row(RequestCtx& cx, Scenario& sc) {
  ConnHandle c = co_await cx.world().acquire(cx);
  if (!c) co_return Outcome::pool_timeout;
  co_await c->begin();
  Plan plan;  // the order, PAYMENT_PENDING (or a duplicate's)
  co_await sc.read(cx, *c, plan);
  if (plan.noop) {
    co_await c->commit();
    co_return Outcome::ok;
  }
  const Row row = pending_delivery(cx.world(), Duration::zero());  // due now
  const bool written = co_await c->insert(kDeliveryTable, plan.key, row);  // a duplicate finds the first one's row
  co_await c->commit();  // a failed commit throws: neither the order nor its outbox row exists
  if (written) cx.recorder().effects.queue_enqueued(kQueue);
  co_return Outcome::ok;  // accepted: the charge follows in the background
}

}  // namespace

Task<Outcome> Outbox::run(RequestCtx& cx, Scenario& sc) {
  // Idempotent (both inserts are ON CONFLICT DO NOTHING): a lost connection or
  // a failed COMMIT is retried on a fresh connection, kTxAttempts times at most.
  for (int attempt = 1;; ++attempt) {
    Outcome o = Outcome::error;
    bool failed = false;
    try {
      o = co_await write_order_and_outbox_row(cx, sc);
    } catch (const DbError&) {
      if (attempt >= kTxAttempts) throw;
      failed = true;
    }
    if (!failed) co_return o;
  }
}

Task<void> Outbox::background(RequestCtx& cx, Scenario& sc) { return deliver_due_rows(cx, sc, kQueue); }

}  // namespace lockbench

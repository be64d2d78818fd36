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
#include "strategies/family.hpp"

#include "strategies/delivery_queue.hpp"

namespace lockbench {

class Outbox final : public Strategy {
 public:
  Task<Outcome> run(RequestCtx& cx, Scenario& sc) override;
  int background_workers(const Settings& s) const override { return s.outbox_pollers; }
  Task<void> background(RequestCtx& cx, Scenario& sc) override;
};

namespace {

constexpr int kOutboxTxAttempts = 5;
const std::string kOutboxQueue = "outbox";

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
  if (written) cx.recorder().effects.queue_enqueued(kOutboxQueue);
  co_return Outcome::ok;  // accepted: the charge follows in the background
}

}  // namespace

Task<Outcome> Outbox::run(RequestCtx& cx, Scenario& sc) {
  // Idempotent (both inserts are ON CONFLICT DO NOTHING): a lost connection or
  // a failed COMMIT is retried on a fresh connection, kOutboxTxAttempts times at most.
  for (int attempt = 1;; ++attempt) {
    Outcome o = Outcome::error;
    bool failed = false;
    try {
      o = co_await write_order_and_outbox_row(cx, sc);
    } catch (const DbError&) {
      if (attempt >= kOutboxTxAttempts) throw;
      failed = true;
    }
    if (!failed) co_return o;
  }
}

Task<void> Outbox::background(RequestCtx& cx, Scenario& sc) { return deliver_due_rows(cx, sc, kOutboxQueue); }

// The registry row (strategies/family.hpp): its variants, their properties, and the
// words `lockbench explain outbox` prints.
// A poller that dies leaves its claimed row, which is due again after the claim lease.
constexpr StrategyProps kOutbox{.holds_connection_during_call = false,
                                .exclusion = Exclusion::none,
                                .crash_safe = true,
                                .needs_idempotency = true};
constexpr StrategyInfo kOutboxVariants[] = {
    {.spec = "outbox",
     .family = "outbox",
     .in_all = true,
     .family_default = true,
     .props = kOutbox,
     .teaches = "order + outbox row in one transaction; pollers deliver at least once, charge once",
     .make = strategy_maker<Outbox>},
};
constexpr StrategyFamily kOutboxFamily{
    .name = "outbox",
    .order = 110,
    .words =
        {
            .summary = "the transactional outbox: order and outbox row in one transaction, pollers deliver at least once",
            .how = "The request INSERTs the order PAYMENT_PENDING and an outbox row in one short transaction and answers at "
                   "once: no partner call on the request's path. Background pollers (--outbox-pollers per pod) claim due "
                   "rows with SELECT ... FOR UPDATE SKIP LOCKED (pollers on every pod skip each other's rows instead of "
                   "waiting), move the row's due time past a claim lease and commit, call the partner with the "
                   "Idempotency-Key checkout-order-<id> and no connection held, then mark the order PAID and the row SENT "
                   "in one transaction. An unknown outcome (timeout, 5xx, outage) reschedules the row with exponential "
                   "backoff; a poller that dies leaves its row claimed until the lease ends, then another one redelivers "
                   "it. At least once, and the key makes it charge once.",
            .fails = "The customer's answer no longer says \"paid\": it says \"accepted\", and the charge follows after the "
                     "delivery lag (outbox.lag_ms: p50, p99, max), which grows with the partner's latency, its outages and "
                     "too few pollers (each poller delivers one row per partner call: pollers x pods must exceed rate x call "
                     "time). Rows left when --outbox-drain-limit ends the run are outbox.undelivered. Without the "
                     "idempotency key a redelivery after a lost mark would charge twice.",
            .choose = "A critical integration that must happen exactly once in effect and may happen later: payments, "
                      "ERP/CRM sync, events to Kafka. The pool is held for milliseconds and the request path never waits for "
                      "the partner.",
            .avoid = "When the user must see the partner's answer before the request returns, or the partner takes no "
                     "idempotency key (then deduplicate at the receiver).",
            .java = R"java(@Transactional
public long checkout(Order o) {
  long id = orders.insertPending(o);
  outbox.insert(id, "checkout-order-" + id);        // the same transaction as the order
  return id;                                        // answered at once: "accepted"
}
@Scheduled(fixedDelay = 100)   // per poller; Spring Modulith's event publication registry is alike
void deliver() {
  Row r = tx.execute(s -> outbox.claimOne());   // SELECT ... FOR UPDATE SKIP LOCKED, due_at moved
  if (r == null) return;                        // past a claim lease, COMMIT
  Charge c = Charge.create(params(r), RequestOptions.builder()
      .setIdempotencyKey(r.key()).build());     // no connection held; retried with backoff
  tx.executeWithoutResult(s -> {
    orders.markPaid(r.orderId(), c.getId());
    outbox.markSent(r.id());
  });
})java",
        },
    .variants = kOutboxVariants};
LOCKBENCH_STRATEGY(kOutboxFamily);

}  // namespace lockbench

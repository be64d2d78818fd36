// after-commit: the article's @TransactionalEventListener(AFTER_COMMIT) for the
// non-critical side effect, the confirmation email. The payment itself runs as
// split-tx (two short transactions around the idempotent charge); the
// transaction that marks the order PAID publishes an OrderPaid event, and the
// listener sends the email only after that COMMIT returned:
//
//   split-tx ... UPDATE orders SET status = 'PAID'; COMMIT   -- event published here
//   listener: send the confirmation email (no connection, no transaction)
//
// It never runs for a rolled-back order (a failed COMMIT throws first), nor for
// one that split-tx's reconciler completes in the background (its event was
// never published: counted as lost too). But the
// event lives only in the pod's memory: a pod that dies between the COMMIT and
// the listener's send loses the email for an order that is PAID. Nothing
// retries it; the service's counters show it (emails{sent, lost, paid_orders}:
// lost = orders whose PAID commit returned and that got no email). The listener
// runs on the request's own thread after the commit (Spring's default without
// @Async), so the request's latency includes the send.
#include "strategies/strategies.hpp"

#include "strategies/delivery_queue.hpp"

namespace lockbench {

Task<Outcome> AfterCommit::run(RequestCtx& cx, Scenario& sc) {
  bool paid_committed = false;
  const Outcome o = co_await split_transactions(cx, sc, /*reconcile=*/true, &paid_committed);
  if (!paid_committed) co_return o;  // rolled back, refused or already paid: no event, no email
  cx.recorder().effects.paid_committed(cx.key());
  // The listener: the email provider's send (its own latency, no failures).
  // A crash of the pod here loses the email; the order stays PAID.
  const Duration t0 = cx.world().now();
  co_await cx.world().sleep(cx, cx.settings().email_latency);
  cx.recorder().effects.email_sent(cx.key());
  cx.trace("listener.email", t0, cx.world().now(), -1, "order confirmation sent after commit");
  co_return o;
}

// split-tx's reconciler: orders it completes get no email (no event was published).
Task<void> AfterCommit::background(RequestCtx& cx, Scenario& sc) {
  static const std::string queue = "reconcile";  // outlives the lazy coroutine that refers to it
  return deliver_due_rows(cx, sc, queue);
}

}  // namespace lockbench

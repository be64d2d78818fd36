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
#include "strategies/family.hpp"
#include "strategies/strategies.hpp"

#include "strategies/delivery_queue.hpp"

namespace lockbench {

class AfterCommit final : public Strategy {
 public:
  Task<Outcome> run(RequestCtx& cx, Scenario& sc) override;
  int background_workers(const Settings& s) const override { return s.outbox_pollers; }
  Task<void> background(RequestCtx& cx, Scenario& sc) override;
};

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

// The registry row (strategies/family.hpp): its variants, their properties, and the
// words `lockbench explain after-commit` prints.
constexpr StrategyProps kAfterCommit{.holds_connection_during_call = false,
                                     .exclusion = Exclusion::none,
                                     .crash_safe = false,
                                     .needs_idempotency = true};
constexpr StrategyInfo kAfterCommitVariants[] = {
    {.spec = "after-commit",
     .family = "after-commit",
     .in_all = true,
     .family_default = true,
     .props = kAfterCommit,
     .teaches = "the email after COMMIT: never for a rollback, lost when the pod dies first",
     .make = strategy_maker<AfterCommit>},
};
constexpr StrategyFamily kAfterCommitFamily{
    .name = "after-commit",
    .order = 100,
    .words =
        {
            .summary = "@TransactionalEventListener(AFTER_COMMIT): the confirmation email after the order committed",
            .how = "The payment runs as split-tx. The transaction that marks the order PAID publishes an OrderPaid event; "
                   "Spring holds it until the COMMIT returned and then calls the listener, which sends the confirmation "
                   "email with no connection and no transaction. A rolled-back order (a failed COMMIT, a lost connection) "
                   "never gets an email: the listener only runs after a successful commit.",
            .fails = "The event lives only in the pod's memory. A pod that dies between the COMMIT and the listener's send "
                     "(a crash, a kill -9, a deploy) loses the email of an order that is PAID, and nothing retries it: the "
                     "result counts emails.lost (orders whose PAID commit returned without an email). The payment itself "
                     "keeps split-tx's weakness: a crash between the charge and the PAID commit leaves an orphan_charge.",
            .choose = "For a side effect you can afford to lose now and then (a notification, an audit event, a cache "
                      "eviction): it costs nothing on the request's path and never fires for a rolled-back change.",
            .avoid = "For anything that must happen: the money, a ledger entry, a message another system relies on. Use the "
                     "outbox.",
            .java = R"java(@Transactional
public void markPaid(long orderId, String chargeId) {
  orders.markPaid(orderId, chargeId);
  events.publishEvent(new OrderPaid(orderId));      // held by Spring until the COMMIT returns
}
@TransactionalEventListener(phase = TransactionPhase.AFTER_COMMIT)
void onPaid(OrderPaid e) {
  mail.sendConfirmation(e.orderId());               // only in this pod's memory: a pod that dies
}                                                   // between COMMIT and here loses the email)java",
        },
    .variants = kAfterCommitVariants};
LOCKBENCH_STRATEGY(kAfterCommitFamily);

}  // namespace lockbench

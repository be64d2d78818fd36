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
// The outbox table is the strategy's own (table kOutboxTable beside the
// scenario's tables): key = the order's key, text = status, ref = the time it
// was written (ms since the run's start), num = when it is due (ms; negative =
// done), version = +1 per claim and per result (so version / 2 = attempts).
// Pollers stop when requests are over and no row is left (claimed rows
// included), or --outbox-drain-limit after --duration; what is left is
// outbox.undelivered. Lag = delivered - written, in outbox.lag_ms.
#include "strategies/strategies.hpp"

#include <algorithm>
#include <optional>

#include "core/partner_client.hpp"

namespace lockbench {

namespace {

constexpr Table kOutboxTable = 64;  // beyond any scenario's tables
constexpr const char* kPending = "PENDING";
constexpr const char* kSent = "SENT";
constexpr const char* kFailed = "FAILED";
constexpr int kTxAttempts = 5;

std::int64_t now_ms(World& w) { return static_cast<std::int64_t>(to_ms(w.now())); }

// What one poll did.
struct Poll {
  bool delivered_one = false;  // a row was worked on: poll again at once
  std::int64_t undone = -1;    // rows not done, as the claim saw them (-1: unknown)
};

// A claimed row is due again after this: longer than any one delivery can take,
// so a live poller's row is never taken over; a dead poller's row is redone.
Duration claim_lease(const Settings& s) { return 2 * worst_case_call(s) + std::chrono::seconds(1); }

// Exponential backoff with full jitter, as the partner client's (partner-api.md G).
Duration backoff(RequestCtx& cx, std::int64_t attempts) {
  const Settings& s = cx.settings();
  const double ceiling_ms = std::min(to_ms(s.retry_backoff_cap),
                                     to_ms(s.retry_backoff_base) * static_cast<double>(1LL << std::min<std::int64_t>(attempts, 30)));
  return from_ms(cx.rng().uniform(0, ceiling_ms));
}

Task<Poll> poll_once(RequestCtx& cx, Scenario& sc) {
  World& w = cx.world();
  Poll out;
  Claimed item;
  Plan plan;
  std::optional<RequestCtx> order_cx;  // the delivery runs as the order's request: key = the order
  {
    ConnHandle c = co_await w.acquire(cx);
    if (!c) co_return out;
    co_await c->begin();
    const Claim claim = co_await c->claim_due(kOutboxTable, now_ms(w), 1);
    out.undone = claim.undone;
    if (claim.rows.empty()) {
      co_await c->rollback();
      co_return out;
    }
    item = claim.rows.front();
    Request r = cx.request();
    r.key = item.key;
    r.intended = w.now();
    order_cx.emplace(w, cx.recorder(), cx.settings(), r);
    plan = co_await sc.read(*order_cx, *c);
    Row claimed = item.row;
    claimed.num = now_ms(w) + static_cast<std::int64_t>(to_ms(claim_lease(cx.settings())));
    co_await c->update(kOutboxTable, item.key, claimed, Guard::any());
    co_await c->commit();
  }  // no connection held during the delivery
  out.delivered_one = true;
  Effect effect = Effect::done;
  if (!plan.noop) {  // PAID already (a delivery whose mark was lost, then redone): nothing to send
    cx.recorder().effects.outbox_attempt();
    CallOptions opt;
    opt.idempotency_key = true;
    effect = co_await sc.external(*order_cx, plan, opt);
  }
  ConnHandle c = co_await w.acquire(cx);
  if (!c) co_return out;  // the row stays claimed; due again after the lease
  co_await c->begin();
  Row row = item.row;
  if (effect == Effect::done) {
    if (!plan.noop) co_await sc.store(*order_cx, *c, plan, Guard::any());
    row.text = kSent;
    row.num = -1;
  } else if (effect == Effect::refused) {
    co_await sc.compensate(*order_cx, *c, plan);
    row.text = kFailed;
    row.num = -1;
  } else {  // unknown (timeouts, 5xx, an outage): at least once, so try again later
    row.num = now_ms(w) + static_cast<std::int64_t>(to_ms(backoff(cx, item.row.version / 2)));
  }
  co_await c->update(kOutboxTable, item.key, row, Guard::any());
  co_await c->commit();
  if (effect != Effect::unknown) {
    const double written_ms = static_cast<double>(std::strtoll(item.row.ref.c_str(), nullptr, 10));
    cx.recorder().effects.outbox_done(effect == Effect::refused, to_ms(w.now()) - written_ms);
  }
  co_return out;
}

// The request's one transaction: the order and its outbox row.
Task<Outcome> write_order_and_outbox_row(RequestCtx& cx, Scenario& sc) {
  ConnHandle c = co_await cx.world().acquire(cx);
  if (!c) co_return Outcome::pool_timeout;
  co_await c->begin();
  const Plan plan = co_await sc.read(cx, *c);  // the order, PAYMENT_PENDING (or a duplicate's)
  if (plan.noop) {
    co_await c->commit();
    co_return Outcome::ok;
  }
  const std::int64_t t = now_ms(cx.world());
  const Row pending{true, kPending, std::to_string(t), t, 0};
  const bool written = co_await c->insert(kOutboxTable, plan.key, pending);  // a duplicate finds the first one's row
  co_await c->commit();  // a failed commit throws: neither the order nor its outbox row exists
  if (written) cx.recorder().effects.outbox_enqueued();
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

Task<void> Outbox::background(RequestCtx& cx, Scenario& sc) {
  World& w = cx.world();
  const Settings& s = cx.settings();
  const Duration stop_at = s.duration + s.outbox_drain_limit;
  while (w.now() < stop_at) {
    Poll p;
    bool failed = false;
    try {
      p = co_await poll_once(cx, sc);
    } catch (const DbError&) {
      failed = true;  // a lost connection or a failed commit: the row stays due (or claimed until its lease ends)
    }
    if (failed) cx.recorder().effects.outbox_claim_failed();
    if (p.delivered_one && !failed) continue;
    if (p.undone == 0 && w.requests_over()) co_return;  // drained
    co_await w.sleep(cx, s.outbox_poll_interval);
  }
}

}  // namespace lockbench

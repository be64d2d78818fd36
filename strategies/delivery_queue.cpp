#include "strategies/delivery_queue.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "core/partner_client.hpp"

namespace lockbench {

namespace {

constexpr const char* kPending = "PENDING";
constexpr const char* kSent = "SENT";
constexpr const char* kFailed = "FAILED";

std::int64_t now_ms(World& w) { return static_cast<std::int64_t>(to_ms(w.now())); }

// What one poll did.
struct Poll {
  bool worked = false;       // a row was worked on: poll again at once
  std::int64_t undone = -1;  // rows not done, as the claim saw them (-1: unknown)
};

// Exponential backoff with full jitter, as the partner client's (docs/reference/partner-api.md G).
Duration backoff(RequestCtx& cx, std::int64_t attempts) {
  const Settings& s = cx.settings();
  const double ceiling_ms = std::min(to_ms(s.retry_backoff_cap), to_ms(s.retry_backoff_base) *
                                                                     static_cast<double>(1LL << std::min<std::int64_t>(attempts, 30)));
  return from_ms(cx.rng().uniform(0, ceiling_ms));
}

Task<Poll> poll_once(RequestCtx& cx, Scenario& sc, const std::string& queue) {
  World& w = cx.world();
  Poll out;
  Claimed item;
  Plan plan;
  std::optional<RequestCtx> order_cx;  // the delivery runs as the order's request: key = the order
  {
    ConnHandle c = co_await w.acquire(cx);
    if (!c) co_return out;
    co_await c->begin();
    const Claim claim = co_await c->claim_due(kDeliveryTable, now_ms(w), 1);
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
    co_await sc.read(*order_cx, *c, plan);
    Row claimed = item.row;
    claimed.num = now_ms(w) + static_cast<std::int64_t>(to_ms(claim_lease(cx.settings())));
    co_await c->update(kDeliveryTable, item.key, claimed, Guard::any());
    co_await c->commit();
  }  // no connection held during the delivery
  out.worked = true;
  Effect effect = Effect::done;
  if (!plan.noop) {  // PAID already (the request itself, or a delivery whose mark was lost): nothing to send
    cx.recorder().effects.queue_attempt(queue);
    CallOptions opt;
    opt.idempotency_key = true;
    effect = co_await sc.external(*order_cx, plan, opt);
  }
  ConnHandle c = co_await w.acquire(cx);
  if (!c) co_return out;  // the row stays claimed; due again after the lease
  co_await c->begin();
  Row row = item.row;
  if (effect == Effect::unknown) {  // timeouts, 5xx, an outage: at least once, so try again later
    row.num = now_ms(w) + static_cast<std::int64_t>(to_ms(backoff(cx, item.row.version / 2)));
  } else {
    row.text = effect == Effect::done ? kSent : kFailed;
    row.num = -1;
  }
  // The order first, then the queue row: the order split-tx's own second
  // transaction locks them in, so the two never deadlock.
  if (effect == Effect::done && !plan.noop) co_await sc.store(*order_cx, *c, plan, Guard::any());
  if (effect == Effect::refused) co_await sc.compensate(*order_cx, *c, plan);
  // Still the row we claimed? The request itself (split-tx) may have settled it
  // meanwhile: then it is done (and its order recorded), nothing is counted twice.
  const Guard ours = Guard::if_version(item.row.version + 1);
  if (!co_await c->update(kDeliveryTable, item.key, row, ours)) {
    co_await c->rollback();
    co_return out;
  }
  co_await c->commit();
  if (effect != Effect::unknown) {
    const double written_ms = static_cast<double>(std::strtoll(item.row.ref.c_str(), nullptr, 10));
    cx.recorder().effects.queue_done(queue, effect == Effect::refused, to_ms(w.now()) - written_ms);
  }
  co_return out;
}

}  // namespace

Duration claim_lease(const Settings& s) { return 2 * worst_case_call(s) + s.retry_backoff_cap; }

Row pending_delivery(World& w, Duration due_in) {
  const std::int64_t t = now_ms(w);
  return Row{true, kPending, std::to_string(t), t + static_cast<std::int64_t>(to_ms(due_in)), 0};
}

Task<bool> settle_delivery(Conn& c, Key order) {
  const Row row = co_await c.read(kDeliveryTable, order);
  if (!row.found || row.num < 0) co_return false;
  Row done = row;
  done.text = kSent;
  done.num = -1;
  // A concurrent settle (a duplicate submission) waits for our row lock, then finds the version moved.
  co_return co_await c.update(kDeliveryTable, order, done, Guard::if_version(row.version));
}

Task<void> deliver_due_rows(RequestCtx& cx, Scenario& sc, const std::string& queue) {
  World& w = cx.world();
  const Settings& s = cx.settings();
  const Duration stop_at = s.duration + s.outbox_drain_limit;
  while (w.now() < stop_at) {
    Poll p;
    bool failed = false;
    try {
      p = co_await poll_once(cx, sc, queue);
    } catch (const DbError&) {
      failed = true;  // a lost connection or a failed commit: the row stays due (or claimed until its lease ends)
    }
    if (failed) cx.recorder().effects.queue_claim_failed(queue);
    if (p.worked && !failed) continue;
    if (p.undone == 0 && w.requests_over()) co_return;  // drained
    co_await w.sleep(cx, s.outbox_poll_interval);
  }
}

}  // namespace lockbench

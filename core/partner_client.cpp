#include "core/partner_client.hpp"

#include <algorithm>

#include "core/client_policy.hpp"

namespace lockbench {

namespace {
// docs/reference/partner-api.md G: retry timeouts, resets, 429 and 5xx, and payments' 409
// idempotency_key_in_use (the same key still in flight). A 409 from the identity
// API ("Specified identity already exists") proves the effect happened, so it is
// never retried. A garbled answer is not retried either: the effect may have happened.
bool retryable(const PartnerReply& r) {
  if (!r.answered())
    return r.failure == CallFailure::timeout || r.failure == CallFailure::reset || r.failure == CallFailure::connect;
  if (r.status == 409) return r.error_code == "idempotency_key_in_use";
  return r.status == 429 || r.status >= 500;
}

Duration backoff(const Settings& s, int retry, Rng& rng) {
  return from_ms(rng.uniform(0, backoff_ceiling_ms(retry_policy(s), retry)));  // full jitter
}
}  // namespace

std::string_view partner_call_name(PartnerCall::Kind k) {
  switch (k) {
    case PartnerCall::Kind::get_user: return "partner.get";
    case PartnerCall::Kind::unlink: return "partner.unlink";
    case PartnerCall::Kind::link: return "partner.link";
    case PartnerCall::Kind::charge: return "partner.charge";
    case PartnerCall::Kind::payout: return "partner.payout";
    case PartnerCall::Kind::credit: return "partner.credit";
  }
  return "partner.?";
}

std::string_view call_failure_name(CallFailure f) {
  switch (f) {
    case CallFailure::none: return "";
    case CallFailure::connect: return "connect";
    case CallFailure::timeout: return "timeout";
    case CallFailure::reset: return "reset";
    case CallFailure::bad_response: return "bad_response";
    case CallFailure::breaker_open: return "breaker_open";
  }
  return "?";
}

namespace {
// The whole call (retries and backoff included) as partner time, and as one
// trace event: "subject identity -> 200[ after N attempts]".
void account_call(RequestCtx& cx, const PartnerCall& call, Duration start, const PartnerReply& reply, int attempts) {
  const Duration end = cx.world().now();
  cx.split().partner += end - start;
  if (!cx.recorder().tracing()) return;  // a full trace drops the event: build no strings for it
  std::string detail;  // written once into one string
  detail.reserve(call.subject.size() + call.identity.size() + 40);
  detail.append(call.subject).append(" ").append(call.identity).append(" -> ");
  if (reply.answered())
    detail.append(std::to_string(reply.status));
  else
    detail.append(call_failure_name(reply.failure));
  if (attempts > 1) detail.append(" after ").append(std::to_string(attempts)).append(" attempts");
  cx.trace(std::string(partner_call_name(call.kind)), start, end, -1, std::move(detail));
}

// call_partner through the pod's guard: an attempt is refused at once while
// its breaker is open (it never leaves the pod, and is not retried); a made
// attempt's outcome is recorded (a failure is what the client retries, or a
// garbled answer: what a Spring client throws on); a retry needs the budget's
// consent.
Task<PartnerReply> guarded_call(RequestCtx& cx, const PartnerCall& call, PartnerGuard& guard) {
  World& w = cx.world();
  const Settings& s = cx.settings();
  SideEffects& effects = cx.recorder().effects;
  effects.partner_guard_event(PartnerGuardEvent::call);
  const Duration start = w.now();
  for (int attempt = 1;; ++attempt) {
    PartnerReply reply;
    if (!guard.permit(w.now())) {
      effects.partner_guard_event(PartnerGuardEvent::breaker_rejected);
      reply.failure = CallFailure::breaker_open;
    } else {
      const Duration t0 = w.now();
      reply = co_await w.partner_attempt(cx, call);
      const bool failed = retryable(reply) || reply.failure == CallFailure::bad_response;
      if (guard.record(w.now(), failed, w.now() - t0)) effects.partner_guard_event(PartnerGuardEvent::breaker_opened);
    }
    if (attempt < s.partner_max_attempts && retryable(reply)) {
      if (guard.allow_retry()) {
        effects.partner_guard_event(PartnerGuardEvent::retried);
        co_await w.sleep(cx, backoff(s, attempt - 1, cx.rng()));
        continue;
      }
      effects.partner_guard_event(PartnerGuardEvent::retry_denied);
    }
    account_call(cx, call, start, reply, attempt);
    co_return reply;
  }
}
}  // namespace

Task<PartnerReply> call_partner(RequestCtx& cx, const PartnerCall& call) {
  World& w = cx.world();
  const Settings& s = cx.settings();
  if (s.circuit_breaker.on || s.retry_budget.on) {
    PartnerGuard* guard = w.partner_guard(cx);
    if (!guard) throw DbError("--circuit-breaker / --retry-budget: this world keeps no partner guard for its pods");
    co_return co_await guarded_call(cx, call, *guard);
  }
  const Duration start = w.now();
  for (int attempt = 1;; ++attempt) {
    // Initialised from the attempt itself: no empty reply assigned over on every attempt.
    PartnerReply reply = co_await w.partner_attempt(cx, call);
    // The attempt count first: with one attempt (the default) the reply is never examined.
    if (attempt < s.partner_max_attempts && retryable(reply)) {
      co_await w.sleep(cx, backoff(s, attempt - 1, cx.rng()));
      continue;
    }
    account_call(cx, call, start, reply, attempt);
    co_return reply;
  }
}

RetryPolicy retry_policy(const Settings& s) {
  return {.connect_timeout = s.partner_connect_timeout,
          .read_timeout = s.partner_read_timeout,
          .max_attempts = s.partner_max_attempts,
          .backoff_base = s.retry_backoff_base,
          .backoff_cap = s.retry_backoff_cap};
}

double backoff_ceiling_ms(const RetryPolicy& p, int retry) {
  return std::min(to_ms(p.backoff_cap), to_ms(p.backoff_base) * static_cast<double>(1ULL << std::min(retry, 30)));
}

Duration worst_case_call(const RetryPolicy& p) {
  Duration total = (p.connect_timeout + p.read_timeout) * p.max_attempts;
  for (int retry = 0; retry + 1 < p.max_attempts; ++retry) total += from_ms(backoff_ceiling_ms(p, retry));
  return total;
}

}  // namespace lockbench

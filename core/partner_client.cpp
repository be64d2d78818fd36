#include "core/partner_client.hpp"

#include <algorithm>

namespace lockbench {

namespace {
// partner-api.md G: retry timeouts, resets, 429 and 5xx, and payments' 409
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
  }
  return "?";
}

Task<PartnerReply> call_partner(RequestCtx& cx, const PartnerCall& call) {
  World& w = cx.world();
  const Settings& s = cx.settings();
  const Duration start = w.now();
  for (int attempt = 1;; ++attempt) {
    // Initialised from the attempt itself: no empty reply assigned over on every attempt.
    PartnerReply reply = co_await w.partner_attempt(cx, call);
    // The attempt count first: with one attempt (the default) the reply is never examined.
    if (attempt < s.partner_max_attempts && retryable(reply)) {
      co_await w.sleep(cx, backoff(s, attempt - 1, cx.rng()));
      continue;
    }
    const Duration end = w.now();
    cx.split().partner += end - start;
    if (cx.recorder().tracing()) {  // a full trace drops the event: build no strings for it
      // "subject identity -> 200[ after N attempts]", written once into one string.
      std::string detail;
      detail.reserve(call.subject.size() + call.identity.size() + 40);
      detail.append(call.subject).append(" ").append(call.identity).append(" -> ");
      if (reply.answered())
        detail.append(std::to_string(reply.status));
      else
        detail.append(call_failure_name(reply.failure));
      if (attempt > 1) detail.append(" after ").append(std::to_string(attempt)).append(" attempts");
      cx.trace(std::string(partner_call_name(call.kind)), start, end, -1, std::move(detail));
    }
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

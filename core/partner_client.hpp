// The service's partner client policy (docs/reference/partner-api.md section G), written once
// over World::partner_attempt so both worlds retry the same way.
#pragma once

#include "core/context.hpp"
#include "core/world.hpp"

namespace lockbench {

// Retries timeouts, resets, 429 and 5xx, up to
// partner_max_attempts, sleeping min(cap, base * 2^n) with full jitter between
// attempts. Never retries an answer that proves the effect happened (2xx, or
// a 4xx other than 429). Records the whole call (retries and backoff
// included) as partner time and as one trace event.
// `call` is read after suspensions and not copied (two string copies per call
// on the simulator's hot path): pass a named object that outlives the
// co_await (every caller does; g++ 12 also destroys braced temporaries in a
// co_await expression twice).
Task<PartnerReply> call_partner(RequestCtx& cx, const PartnerCall& call);

// The client's retry policy as the settings give it: call_partner follows it,
// and worst_case_call, lint and plan bound it, from this one arithmetic.
struct RetryPolicy {
  Duration connect_timeout{};
  Duration read_timeout{};
  int max_attempts = 1;  // the first attempt included; 1 = no retry
  Duration backoff_base{};
  Duration backoff_cap{};
};
RetryPolicy retry_policy(const Settings& s);

// The longest sleep before retry `retry` (0 = between the first and second
// attempts), in ms: min(cap, base * 2^retry), the exponent stopping at 30.
// call_partner sleeps a uniform draw below it (full jitter).
double backoff_ceiling_ms(const RetryPolicy& p, int retry);

// Worst case for one call: every attempt hits its connect + read timeout and
// every backoff is at its ceiling. A lease TTL below this can be stolen from live work.
Duration worst_case_call(const RetryPolicy& p);
inline Duration worst_case_call(const Settings& s) { return worst_case_call(retry_policy(s)); }

}  // namespace lockbench

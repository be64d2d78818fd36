#include "fake_partner/model/rate_limiter.hpp"

#include <algorithm>
#include <cmath>

namespace lockbench::partner {

bool RateLimiter::take(const RateLimitSpec& spec, std::string_view tenant, Endpoint e, Duration now,
                       RateLimitHeaders& out) {
  out = {};
  if (spec.size <= 0) return true;
  auto it = tenants_.find(tenant);
  if (it == tenants_.end()) {
    // Clients choose tenant names: past the bound, newcomers share one bucket set.
    if (tenants_.size() >= kMaxTenants) tenant = kOverflowTenant;
    it = tenants_.try_emplace(std::string(tenant)).first;
  }
  Bucket& b = it->second[spec.scope == RateLimitSpec::Scope::tenant ? 0 : 1 + index_of(e)];
  if (!b.started) {
    b = {true, spec.size, now};
  } else if (now > b.refilled_at) {
    b.tokens += to_s(now - b.refilled_at) * spec.refill_per_s;
    b.refilled_at = now;
  }
  b.tokens = std::min(b.tokens, spec.size);  // also when a config update shrank the bucket
  const bool ok = b.tokens >= 1;
  if (ok) b.tokens -= 1;
  out.present = true;
  out.limit = static_cast<std::int64_t>(spec.size);
  out.remaining = static_cast<std::int64_t>(std::floor(b.tokens));
  // When the bucket is full again, in whole seconds of the caller's epoch.
  const double full_in_s = spec.refill_per_s > 0 ? (spec.size - b.tokens) / spec.refill_per_s : 0;
  out.reset_epoch_s = static_cast<std::int64_t>(std::ceil(to_s(now) + full_in_s));
  return ok;
}

}  // namespace lockbench::partner

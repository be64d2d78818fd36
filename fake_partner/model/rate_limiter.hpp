// Token buckets per tenant, or per tenant and endpoint (private).
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <unordered_map>

#include "fake_partner/model/call.hpp"
#include "fake_partner/model/config.hpp"
#include "fake_partner/model/identity_store.hpp"  // StringHash

namespace lockbench::partner {

class RateLimiter {
 public:
  void reset() { tenants_.clear(); }
  // Takes one token if there is one. Fills the X-RateLimit-* values either way.
  // With rate limiting off: always true, headers absent.
  bool take(const RateLimitSpec& spec, std::string_view tenant, Endpoint e, Duration now, RateLimitHeaders& out);

 private:
  struct Bucket {
    bool started = false;
    double tokens = 0;
    Duration refilled_at{0};
  };
  // [0] = the tenant's bucket, [1 + endpoint] = per endpoint buckets.
  using Buckets = std::array<Bucket, kEndpointCount + 1>;
  static constexpr std::size_t kMaxTenants = 1024;
  static constexpr std::string_view kOverflowTenant = "\n(more tenants)";
  // One entry per tenant seen since reset, at most kMaxTenants + 1.
  std::unordered_map<std::string, Buckets, StringHash, std::equal_to<>> tenants_;
};

}  // namespace lockbench::partner

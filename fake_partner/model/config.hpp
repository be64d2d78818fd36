// The partner's configuration document (partner-api.md section E) and the
// reset document, parsed into typed settings once, so the hot path never
// looks at JSON.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/distribution.hpp"
#include "core/units.hpp"
#include "fake_partner/model/call.hpp"

namespace lockbench::partner {

struct LatencySpec {
  Distribution dist = Distribution::fixed(50);
  double apply_at = 0.5;  // share of the delay that passes before the effect, in [0, 1]
};

// One configured fault: the kind, its probability and its parameters.
struct FaultSpec {
  FaultPlan plan;  // kind, phase, status, hang_for, bytes_per_s
  double p = 0;    // probability per call, drawn independently of the other faults
};

// A one-shot fault on the nth call (1-based, counted since reset) of an endpoint.
struct ScriptedFault {
  Endpoint endpoint = Endpoint::auth0_get;
  std::uint64_t nth = 1;
  FaultPlan fault;
};

struct RateLimitSpec {
  enum class Scope : std::uint8_t { tenant, endpoint };
  double size = 0;  // bucket size; 0 = no rate limit, no X-RateLimit-* headers
  double refill_per_s = 0;
  Scope scope = Scope::tenant;
};

enum class Fencing : std::uint8_t { ignore, enforce };

struct PaymentsSpec {
  Duration idem_ttl{std::chrono::hours(24)};  // idempotency keys expire after this
  bool object_lock = false;                   // a concurrent charge for one order waits, then 429 lock_timeout
  Duration lock_timeout{std::chrono::seconds(2)};
};

// The typed form of:
// {"seed": 1,
//  "latency": {"*": {"dist": "fixed", "ms": 50}, "auth0.link": {"dist": "lognormal", ..., "apply_at": 0.5}},
//  "faults": {"auth0.unlink": [{"kind": "error", "p": 0.01, "status": 503, "phase": "before"}], "*": [...]},
//  "script": [{"endpoint": "auth0.link", "nth": 2, "fault": {"kind": "reset", "phase": "after"}}],
//  "rate_limit": {"size": 100, "refill_per_s": 50, "scope": "tenant"},
//  "fencing": "ignore",
//  "payments": {"idem_ttl_ms": 86400000, "object_lock": false, "lock_timeout_ms": 2000}}
// Fault kinds: error{p,status,phase} rate_limit_429{p} hang{p,ms|"forever",phase}
// reset{p,phase} slow_body{p,bytes_per_s} truncate{p} garbage{p,phase}.
// Defaults: phase "before" for error/hang/reset, "after" for slow_body/truncate/garbage.
struct Config {
  std::uint64_t seed = 1;
  std::array<LatencySpec, kEndpointCount> latency{};          // "*" already applied
  std::array<std::vector<FaultSpec>, kEndpointCount> faults;  // "*" applies where an endpoint has no entry
  std::vector<ScriptedFault> script;
  RateLimitSpec rate_limit;
  Fencing fencing = Fencing::ignore;
  PaymentsSpec payments;
  // The document the typed fields were parsed from: the base that merged()
  // patches. Change settings through from_json()/merged() so both stay in step.
  nlohmann::json source = nlohmann::json::object();

  // The effective document, every endpoint spelled out; what GET /admin/config shows.
  nlohmann::json to_json() const;
  // Parses a full document; missing parts take defaults. Throws SettingError
  // naming the JSON path ("latency.auth0.link.p50_ms: ...") and what is accepted.
  static Config from_json(const nlohmann::json& doc);
  // JSON merge patch (RFC 7386) of `partial` onto this config's document,
  // then parsed: a bad partial throws SettingError and changes nothing.
  Config merged(const nlohmann::json& partial) const;
};

struct PersonSeed {
  std::vector<std::string> identities;  // "provider|user_id"
  std::string primary;                  // one of identities; "" = the first
};

struct OrderSeed {
  std::string order_id;
  std::int64_t amount = 0;
  std::string currency = "eur";
};

// {"seed": 1, "persons": [{"identities": [...], "primary": "..."}], "orders": [{"order_id","amount","currency"}]}
struct ResetSpec {
  std::optional<std::uint64_t> seed;  // replaces the config seed when given
  std::vector<PersonSeed> persons;
  std::vector<OrderSeed> orders;

  // `count` persons "auth0|u<i>" (primary) + "google-oauth2|u<i>", i = 1..count.
  static ResetSpec persons_with_two_identities(int count);
  nlohmann::json to_json() const;
  // Throws SettingError naming the path ("reset.persons[2].primary: ...").
  static ResetSpec from_json(const nlohmann::json& doc);
};

}  // namespace lockbench::partner

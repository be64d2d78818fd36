// The partner's configuration document (docs/reference/partner-api.md section E) and the
// reset document, parsed into typed settings once, so the hot path never
// looks at JSON.
#pragma once

#include <array>
#include <cstdint>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/distribution.hpp"
#include "base/units.hpp"
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
  // The window in which it strikes: calls arriving in [from, until), measured
  // from the partner's last reset ("from_ms", "until_ms"; absent = always).
  // Outside it the fault still draws, so the random streams stay as they were.
  Duration from{0};
  std::optional<Duration> until;
  bool windowed() const { return from > Duration(0) || until.has_value(); }
  bool strikes_at(Duration since_reset) const { return since_reset >= from && (!until || since_reset < *until); }
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
// reset{p,phase} slow_body{p,bytes_per_s} truncate{p} garbage{p,phase} slow{p,ms};
// each (not in "script") may have a window "from_ms", "until_ms" since reset.
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
  // The faults' windows put together: the earliest "from" and the latest
  // "until" of every windowed fault; nullopt when no fault has a window.
  struct Window {
    Duration from{0};
    std::optional<Duration> until;  // nullopt: one of them never ends
  };
  std::optional<Window> fault_window() const;
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

struct AccountSeed {
  std::string account_id;
  std::int64_t balance = 0;  // opening balance, smallest currency unit; payouts beyond it overdraw
  std::string currency = "eur";
};

// The providers of a person_range, in order: person k has "<kRangeProviders[i]>|u<k>" for
// i < identities. The same list, in the same order, as core/scenario.cpp's kProviders.
inline constexpr std::string_view kRangeProviders[] = {
    "auth0",    "google-oauth2", "github", "apple",   "facebook", "twitter", "linkedin", "windowslive",
    "gitlab",   "slack",         "discord", "okta",   "saml",     "oidc",    "email",    "sms"};
inline constexpr int kRangeProvidersMax = static_cast<int>(std::size(kRangeProviders));

// Persons 1..count, generated, never stored: person k has identities "<provider_i>|u<k>" for the
// first `identities` providers of kRangeProviders, primary "auth0|u<k>". A person comes into being
// in the model when one of its identities is first named by a call (lazily).
struct PersonRange {
  std::int64_t count = 0;  // 1 .. kRangeCountMax
  int identities = 2;      // 1 .. kRangeProvidersMax
};
// Orders "o<k>", k = 1..count, each of `amount` in `currency`.
struct OrderRange {
  std::int64_t count = 0;
  std::int64_t amount = 0;
  std::string currency = "eur";
};
// Accounts "a<k>", k = 1..count, each opening with `balance`.
struct AccountRange {
  std::int64_t count = 0;
  std::int64_t balance = 0;
  std::string currency = "eur";
};
inline constexpr std::int64_t kRangeCountMax = 1'000'000'000;

// {"seed": 1, "persons": [{"identities": [...], "primary": "..."}],
//  "person_range": {"count": N, "identities": K},
//  "orders": [{"order_id","amount","currency"}], "order_range": {"count","amount","currency"},
//  "accounts": [{"account_id","balance","currency"}], "account_range": {"count","balance","currency"}}
// Listed persons, orders and accounts may not use a name the ranges generate.
struct ResetSpec {
  std::optional<std::uint64_t> seed;  // replaces the config seed when given
  std::vector<PersonSeed> persons;
  std::optional<PersonRange> person_range;
  std::vector<OrderSeed> orders;
  std::optional<OrderRange> order_range;
  std::vector<AccountSeed> accounts;
  std::optional<AccountRange> account_range;

  // `count` persons "auth0|u<i>" (primary) + "google-oauth2|u<i>", i = 1..count.
  static ResetSpec persons_with_two_identities(int count);
  nlohmann::json to_json() const;
  // Throws SettingError naming the path ("reset.persons[2].primary: ...").
  static ResetSpec from_json(const nlohmann::json& doc);
};

// k when `name` is "<prefix><k>" with k canonical decimal (no sign, no leading zero) in 1..count;
// 0 otherwise. How ranges recognise their names: "u7" with prefix "u", "o12" with prefix "o".
std::int64_t range_index(std::string_view name, std::string_view prefix, std::int64_t count);

// A refusal of a document's value in one line: its JSON path, then why.
inline SettingError bad_at(const std::string& path, const std::string& why) { return SettingError(path + ": " + why); }

}  // namespace lockbench::partner

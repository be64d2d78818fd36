// The typed face of one partner call: what arrives (Call + Tags), what the
// partner decides on arrival (Plan), and what it answers (Reply).
//
// Typed on purpose: the simulator calls the model hundreds of thousands of
// times per second, so no JSON on this path. Reply::body() renders JSON only
// for the HTTP front.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/units.hpp"

namespace lockbench::partner {

enum class Endpoint : std::uint8_t {
  auth0_get, auth0_link, auth0_unlink, stripe_charge, stripe_get, stripe_refund, stripe_payout, stripe_credit
};
inline constexpr int kEndpointCount = 8;
inline constexpr Endpoint kEndpoints[kEndpointCount] = {
    Endpoint::auth0_get,  Endpoint::auth0_link,    Endpoint::auth0_unlink,  Endpoint::stripe_charge,
    Endpoint::stripe_get, Endpoint::stripe_refund, Endpoint::stripe_payout, Endpoint::stripe_credit};

// "auth0.get", "auth0.link", "auth0.unlink", "stripe.charge", "stripe.get", "stripe.refund",
// "stripe.payout", "stripe.credit".
std::string_view endpoint_name(Endpoint e);
std::optional<Endpoint> endpoint_from_name(std::string_view name);
// Mutations are what the witnesses (overlap, fencing, idempotency) look at.
bool is_mutation(Endpoint e);
inline int index_of(Endpoint e) { return static_cast<int>(e); }

// Attribution headers. They never change behaviour, except the fencing token
// when fencing is "enforce".
struct Tags {
  std::uint64_t op_id = 0;                    // X-Op-Id (0 = absent)
  int op_step = 0;                            // X-Op-Step: 1 = unlink, 2 = link of a promotion (0 = absent)
  std::optional<std::uint64_t> fencing_token; // X-Fencing-Token
  std::string idempotency_key;                // Idempotency-Key ("" = none)
  std::string tenant = "default";             // rate limits and idempotency keys are per tenant
  // X-Client-Timeout-Ms: how long the client waits for this answer (its read timeout). The
  // oracle only reads it: a call older than this was abandoned by its client, which then may
  // have released its lock while the call still runs here (overlap_abandoned, not overlap_person).
  std::optional<Duration> client_timeout;
};

// Typed arguments, one struct for every endpoint; unused fields stay empty.
// A new field must also be added to CallView below and copied in InFlight::start (partner_impl.hpp).
struct Call {
  Endpoint endpoint = Endpoint::auth0_get;
  std::string user_id;           // auth0: path {id}, e.g. "auth0|u1"
  std::string provider;          // auth0.link body / auth0.unlink path
  std::string identity_user_id;  // auth0.link body / auth0.unlink path ("u1", without the provider)
  std::int64_t amount = 0;       // stripe.charge / payout (> 0), stripe.credit (< 0)
  std::string currency;          // stripe.charge / payout / credit
  std::string order_id;          // stripe.charge metadata[order_id]
  std::string charge_id;         // stripe.get path, stripe.refund body
  std::string account_id;        // stripe.payout metadata[account_id]
  std::string customer_id;       // stripe.credit path {id}
  std::string reward;            // stripe.credit metadata[reward]

  static Call get_user(std::string user_id);
  // POST /users/{primary}/identities {provider, user_id} built from the key "provider|user_id".
  static Call link(std::string primary, std::string_view secondary_key);
  // DELETE /users/{primary}/identities/{provider}/{user_id} built from the key "provider|user_id".
  static Call unlink(std::string primary, std::string_view identity_key);
  static Call charge(std::string order_id, std::int64_t amount, std::string currency);
  static Call get_charge(std::string charge_id);
  static Call refund(std::string charge_id);
  // POST /v1/payouts: money leaves the service's account.
  static Call payout(std::string account_id, std::int64_t amount, std::string currency);
  // POST /v1/customers/{id}/balance_transactions: a credit (amount < 0) for a reward, currency "eur".
  static Call credit(std::string customer_id, std::int64_t amount, std::string reward);
};

// The same fields as a Call, with borrowed strings: what Partner::arrive reads. The
// simulator's front points these at its own request's strings, so a call costs no
// string copies; a Call converts implicitly. The strings must outlive the arrive() call.
struct CallView {
  Endpoint endpoint = Endpoint::auth0_get;
  std::string_view user_id;
  std::string_view provider;
  std::string_view identity_user_id;
  // link / unlink: "provider|identity_user_id" when the caller holds the key whole (the
  // simulator does), so arrive() need not join the two; empty = not given.
  std::string_view identity_key;
  std::int64_t amount = 0;
  std::string_view currency;
  std::string_view order_id;
  std::string_view charge_id;
  std::string_view account_id;
  std::string_view customer_id;
  std::string_view reward;

  CallView() = default;
  CallView(const Call& c)  // implicit: a Call is usable wherever a view is
      : endpoint(c.endpoint), user_id(c.user_id), provider(c.provider), identity_user_id(c.identity_user_id),
        amount(c.amount), currency(c.currency), order_id(c.order_id), charge_id(c.charge_id),
        account_id(c.account_id), customer_id(c.customer_id), reward(c.reward) {}
};

enum class Phase : std::uint8_t { before, after };  // a fault strikes before or after the effect

struct FaultPlan {
  // A new kind goes before count_, with its name in kFaultKindNames (a test checks both).
  // slow: the answer leaves hang_for after arrival instead of the drawn latency, as
  // planned otherwise (the model turns it into a plain slower call on arrival).
  enum class Kind : std::uint8_t { none, error, rate_limit_429, hang, reset, slow_body, truncate, garbage, slow, count_ };
  Kind kind = Kind::none;
  Phase phase = Phase::before;
  int status = 0;                    // error: the HTTP status sent
  std::optional<Duration> hang_for;  // hang: how long after `delay` before the connection closes; nullopt = forever
                                     // slow: the delay itself
  double bytes_per_s = 0;            // slow_body

  bool before_effect() const { return kind != Kind::none && phase == Phase::before; }
  bool any() const { return kind != Kind::none; }
};
// How many kinds there are (none included): the size of every per-kind table.
inline constexpr std::size_t kFaultKindCount = static_cast<std::size_t>(FaultPlan::Kind::count_);
// Each kind's name, by its value.
inline constexpr std::array<std::string_view, kFaultKindCount> kFaultKindNames = {
    "none", "error", "rate_limit_429", "hang", "reset", "slow_body", "truncate", "garbage", "slow"};
std::string_view fault_kind_name(FaultPlan::Kind k);  // "error", "rate_limit_429", ...

// What the partner decided when the call arrived. The front end must call
// execute(call_id) at arrival + apply_after and complete(call_id) when the
// answer left (arrival + delay, + hang_for for a hang) or the connection died.
// How the answer leaves depends on fault.kind:
//   none / error / rate_limit_429: send the Reply as is
//   hang: wait hang_for more (or forever), then close without an answer
//   reset: close with RST, no answer
//   slow_body: send the Reply's body at fault.bytes_per_s
//   truncate: send headers with a Content-Length larger than the body, part of it, then close
//   garbage: send bytes that are not HTTP, then close
struct Plan {
  std::uint64_t call_id = 0;
  Duration delay{0};        // arrival -> answer leaves
  Duration apply_after{0};  // arrival -> execute(); = apply_at * delay (0 for refusals at the door)
  FaultPlan fault;
  bool rate_limited = false;  // the bucket was empty: 429 at once, nothing executes
};

// Every error a reply can carry; error_code_name() gives the errorCode / code string.
enum class Error : std::uint8_t {
  none,
  // identity provider (section A)
  user_not_found,       // 404 "The user does not exist."
  same_identity,        // 400 "Main identity and the new one are the same."
  identity_exists,      // 409 "Specified identity already exists."
  secondary_not_found,  // 400 "Provided secondary account not found."
  main_identity,        // 400 "Main identity cannot be removed."
  invalid_body,         // 400 payload validation error
  // both
  rate_limited,         // 429, from the bucket or an injected rate_limit_429 fault
  stale_token,          // 409, fencing "enforce"
  injected_fault,       // status from an injected error fault
  // payments (section B)
  charge_not_found,          // 404 resource_missing
  invalid_amount,            // 400 amount must be > 0
  invalid_credit_amount,     // 400 a credit's amount must be < 0
  idempotency_key_in_use,    // 409
  idempotency_error,         // 400 same key, other parameters
  idempotency_key_too_long,  // 400 key longer than 255
  lock_timeout,              // 429 object lock
  already_refunded,          // 400 charge_already_refunded
};
std::string_view error_code_name(Error e);
std::string_view error_message(Error e);

struct RateLimitHeaders {
  bool present = false;  // false when rate limiting is off
  std::int64_t limit = 0;
  std::int64_t remaining = 0;
  std::int64_t reset_epoch_s = 0;  // in the time base of `now` the front end passes
};

struct Charge {
  std::string id;  // "ch_000001"
  std::int64_t amount = 0;
  std::string currency;
  std::string order_id;
  bool refunded = false;
  std::string refund_id;  // "re_000001" once refunded
};

struct Payout {
  std::string id;  // "po_000001"
  std::int64_t amount = 0;
  std::string currency;
  std::string account_id;
};

struct Credit {
  std::string id;  // "cbtxn_000001"
  std::int64_t amount = 0;  // < 0: a credit to the customer
  std::string currency;
  std::string customer_id;
  std::string reward;
};

// The answer to one call. status 0 = no HTTP answer is due (a before-phase
// hang, reset or garbage). The typed fields are usable without JSON.
// A new field (here or in Charge, Payout, Credit) is also reset in clear().
struct Reply {
  Endpoint endpoint = Endpoint::auth0_get;
  int status = 0;
  Error error = Error::none;
  bool applied = false;   // the effect happened (state changed)
  bool replayed = false;  // Idempotent-Replayed: true
  std::string user_id;                  // auth0: the user answered about (path user)
  std::vector<std::string> identities;  // auth0: that user's identity keys "provider|user_id", primary first
  Charge charge;                        // stripe.charge / get / refund
  Payout payout;                        // stripe.payout
  Credit credit;                        // stripe.credit
  RateLimitHeaders rate_limit;

  bool ok() const { return status >= 200 && status < 300; }
  // As a fresh Reply, keeping the strings' capacity (the simulator reuses one per call).
  void clear();
  // Auth0 errors: {"statusCode","error","message","errorCode"}; Stripe errors:
  // {"error":{"type","code","message"}}; success bodies as the real APIs.
  nlohmann::json body() const;
  // X-RateLimit-*, Idempotent-Replayed, Content-Type.
  std::vector<std::pair<std::string, std::string>> headers() const;
};

}  // namespace lockbench::partner

#include "fake_partner/model/call.hpp"

#include <tuple>

namespace lockbench::partner {

namespace {
constexpr std::string_view kEndpointNames[kEndpointCount] = {"auth0.get",     "auth0.link",    "auth0.unlink",
                                                             "stripe.charge", "stripe.get",    "stripe.refund",
                                                             "stripe.payout", "stripe.credit"};

// Splits "provider|user_id" at the first '|' (user ids may contain more).
std::pair<std::string, std::string> split_key(std::string_view key) {
  const auto bar = key.find('|');
  if (bar == std::string_view::npos) return {std::string(key), std::string()};
  return {std::string(key.substr(0, bar)), std::string(key.substr(bar + 1))};
}
}  // namespace

std::string_view endpoint_name(Endpoint e) { return kEndpointNames[index_of(e)]; }

std::optional<Endpoint> endpoint_from_name(std::string_view name) {
  for (int i = 0; i < kEndpointCount; ++i)
    if (kEndpointNames[i] == name) return kEndpoints[i];
  return std::nullopt;
}

bool is_mutation(Endpoint e) {
  return e == Endpoint::auth0_link || e == Endpoint::auth0_unlink || e == Endpoint::stripe_charge ||
         e == Endpoint::stripe_refund || e == Endpoint::stripe_payout || e == Endpoint::stripe_credit;
}

Call Call::get_user(std::string user_id) {
  Call c;
  c.endpoint = Endpoint::auth0_get;
  c.user_id = std::move(user_id);
  return c;
}

Call Call::link(std::string primary, std::string_view secondary_key) {
  Call c;
  c.endpoint = Endpoint::auth0_link;
  c.user_id = std::move(primary);
  std::tie(c.provider, c.identity_user_id) = split_key(secondary_key);
  return c;
}

Call Call::unlink(std::string primary, std::string_view identity_key) {
  Call c = link(std::move(primary), identity_key);
  c.endpoint = Endpoint::auth0_unlink;
  return c;
}

Call Call::charge(std::string order_id, std::int64_t amount, std::string currency) {
  Call c;
  c.endpoint = Endpoint::stripe_charge;
  c.order_id = std::move(order_id);
  c.amount = amount;
  c.currency = std::move(currency);
  return c;
}

Call Call::get_charge(std::string charge_id) {
  Call c;
  c.endpoint = Endpoint::stripe_get;
  c.charge_id = std::move(charge_id);
  return c;
}

Call Call::refund(std::string charge_id) {
  Call c = get_charge(std::move(charge_id));
  c.endpoint = Endpoint::stripe_refund;
  return c;
}

Call Call::payout(std::string account_id, std::int64_t amount, std::string currency) {
  Call c;
  c.endpoint = Endpoint::stripe_payout;
  c.account_id = std::move(account_id);
  c.amount = amount;
  c.currency = std::move(currency);
  return c;
}

Call Call::credit(std::string customer_id, std::int64_t amount, std::string reward) {
  Call c;
  c.endpoint = Endpoint::stripe_credit;
  c.customer_id = std::move(customer_id);
  c.amount = amount;
  c.currency = "eur";
  c.reward = std::move(reward);
  return c;
}

std::string_view fault_kind_name(FaultPlan::Kind k) {
  const auto i = static_cast<std::size_t>(k);
  return i < kFaultKindCount ? kFaultKindNames[i] : "none";
}

std::string_view error_code_name(Error e) {
  switch (e) {
    case Error::none: return "";
    case Error::user_not_found: return "inexistent_user";
    case Error::same_identity: return "invalid_body";
    case Error::identity_exists: return "identity_conflict";
    case Error::secondary_not_found: return "inexistent_secondary_user";
    case Error::main_identity: return "operation_not_supported";
    case Error::invalid_body: return "invalid_body";
    case Error::rate_limited: return "too_many_requests";
    case Error::stale_token: return "stale_token";
    case Error::injected_fault: return "injected_fault";
    case Error::charge_not_found: return "resource_missing";
    case Error::invalid_amount: return "parameter_invalid_integer";
    case Error::invalid_credit_amount: return "parameter_invalid_integer";
    case Error::idempotency_key_in_use: return "idempotency_key_in_use";
    case Error::idempotency_error: return "idempotency_error";
    case Error::idempotency_key_too_long: return "idempotency_key_too_long";
    case Error::lock_timeout: return "lock_timeout";
    case Error::already_refunded: return "charge_already_refunded";
  }
  return "";
}

std::string_view error_message(Error e) {
  switch (e) {
    case Error::none: return "";
    case Error::user_not_found: return "The user does not exist.";
    case Error::same_identity: return "Main identity and the new one are the same.";
    case Error::identity_exists: return "Specified identity already exists.";
    case Error::secondary_not_found: return "Provided secondary account not found.";
    case Error::main_identity: return "Main identity cannot be removed.";
    case Error::invalid_body: return "Payload validation error: provider and user_id are required.";
    case Error::rate_limited: return "Global limit has been reached";
    case Error::stale_token: return "The fencing token is lower than one already seen for this resource.";
    case Error::injected_fault: return "Injected fault.";
    case Error::charge_not_found: return "No such charge.";
    case Error::invalid_amount: return "Invalid positive integer: amount must be greater than 0.";
    case Error::invalid_credit_amount: return "Invalid integer: a credit's amount must be negative.";
    case Error::idempotency_key_in_use:
      return "There is currently another in-progress request using this Idempotent Key (that probably means "
             "you submitted twice, and the other request is still going through): please retry later.";
    case Error::idempotency_error:
      return "Keys for idempotent requests can only be used with the same parameters they were first used with.";
    case Error::idempotency_key_too_long: return "Idempotency keys may be at most 255 characters long.";
    case Error::lock_timeout:
      return "This object cannot be accessed right now because another API request or Stripe process is "
             "currently accessing it.";
    case Error::already_refunded: return "Charge has already been refunded.";
  }
  return "";
}

}  // namespace lockbench::partner

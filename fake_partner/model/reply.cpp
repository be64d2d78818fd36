// Rendering a typed Reply as the real APIs would send it (HTTP front only).
#include <string>

#include "fake_partner/model/call.hpp"

namespace lockbench::partner {

namespace {
std::string_view status_text(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 409: return "Conflict";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "Error";
  }
}

bool is_stripe(Endpoint e) {
  return e == Endpoint::stripe_charge || e == Endpoint::stripe_get || e == Endpoint::stripe_refund ||
         e == Endpoint::stripe_payout || e == Endpoint::stripe_credit;
}

nlohmann::json identity_json(std::string_view key) {
  const auto bar = key.find('|');
  const auto provider = key.substr(0, bar);
  const auto user_id = bar == std::string_view::npos ? std::string_view() : key.substr(bar + 1);
  return {{"provider", provider}, {"user_id", user_id}, {"connection", provider}, {"isSocial", provider != "auth0"}};
}

nlohmann::json charge_json(const Charge& c) {
  return {{"id", c.id},
          {"object", "charge"},
          {"amount", c.amount},
          {"amount_refunded", c.refunded ? c.amount : 0},
          {"currency", c.currency},
          {"status", "succeeded"},
          {"paid", true},
          {"refunded", c.refunded},
          {"metadata", {{"order_id", c.order_id}}}};
}

nlohmann::json error_json(const Reply& r) {
  if (is_stripe(r.endpoint)) {
    std::string_view type = "invalid_request_error";
    if (r.error == Error::idempotency_error) type = "idempotency_error";
    if (r.error == Error::injected_fault) type = "api_error";
    std::string_view code = r.error == Error::rate_limited ? "rate_limit" : error_code_name(r.error);
    return {{"error", {{"type", type}, {"code", code}, {"message", error_message(r.error)}}}};
  }
  return {{"statusCode", r.status},
          {"error", status_text(r.status)},
          {"message", error_message(r.error)},
          {"errorCode", error_code_name(r.error)}};
}
}  // namespace

void Reply::clear() {
  endpoint = Endpoint::auth0_get;
  status = 0;
  error = Error::none;
  applied = replayed = false;
  user_id.clear();
  identities.clear();
  charge.id.clear();
  charge.amount = 0;
  charge.currency.clear();
  charge.order_id.clear();
  charge.refunded = false;
  charge.refund_id.clear();
  payout.id.clear();
  payout.amount = 0;
  payout.currency.clear();
  payout.account_id.clear();
  credit.id.clear();
  credit.amount = 0;
  credit.currency.clear();
  credit.customer_id.clear();
  credit.reward.clear();
  rate_limit = {};
}

nlohmann::json Reply::body() const {
  if (error != Error::none) return error_json(*this);
  if (status == 0) return nullptr;
  switch (endpoint) {
    case Endpoint::auth0_get: {
      nlohmann::json ids = nlohmann::json::array();
      for (const auto& k : identities) ids.push_back(identity_json(k));
      return {{"user_id", user_id}, {"identities", std::move(ids)}};
    }
    case Endpoint::auth0_link:
    case Endpoint::auth0_unlink: {
      nlohmann::json ids = nlohmann::json::array();
      for (const auto& k : identities) ids.push_back(identity_json(k));
      return ids;
    }
    case Endpoint::stripe_charge:
    case Endpoint::stripe_get:
      return charge_json(charge);
    case Endpoint::stripe_refund:
      return {{"id", charge.refund_id},     {"object", "refund"}, {"amount", charge.amount},
              {"currency", charge.currency}, {"charge", charge.id}, {"status", "succeeded"}};
    case Endpoint::stripe_payout:
      return {{"id", payout.id},
              {"object", "payout"},
              {"amount", payout.amount},
              {"currency", payout.currency},
              {"status", "paid"},
              {"metadata", {{"account_id", payout.account_id}}}};
    case Endpoint::stripe_credit:
      return {{"id", credit.id},
              {"object", "customer_balance_transaction"},
              {"amount", credit.amount},
              {"currency", credit.currency},
              {"customer", credit.customer_id},
              {"type", "adjustment"},
              {"metadata", {{"reward", credit.reward}}}};
  }
  return nullptr;
}

std::vector<std::pair<std::string, std::string>> Reply::headers() const {
  std::vector<std::pair<std::string, std::string>> h;
  h.emplace_back("Content-Type", "application/json; charset=utf-8");
  if (rate_limit.present) {
    h.emplace_back("X-RateLimit-Limit", std::to_string(rate_limit.limit));
    h.emplace_back("X-RateLimit-Remaining", std::to_string(rate_limit.remaining));
    h.emplace_back("X-RateLimit-Reset", std::to_string(rate_limit.reset_epoch_s));
  }
  if (replayed) h.emplace_back("Idempotent-Replayed", "true");
  return h;
}

}  // namespace lockbench::partner

// The HTTP <-> model mapping without sockets.
#include "fake_partner/server/http_api.hpp"

#include <gtest/gtest.h>

#include "fake_partner/model/partner.hpp"

namespace lockbench::partner_server {
namespace {

using partner::Endpoint;

HttpRequest req(std::string method, std::string target, std::string body = "", HeaderList headers = {}) {
  return {std::move(method), std::move(target), std::move(headers), std::move(body)};
}

std::variant<ApiRequest, HttpResponse> map(const HttpRequest& r) { return map_api_request(r, *parse_target(r.target)); }

const ApiRequest& ok(const std::variant<ApiRequest, HttpResponse>& v) {
  if (auto* e = std::get_if<HttpResponse>(&v)) ADD_FAILURE() << e->status << " " << e->body;
  return std::get<ApiRequest>(v);
}

int status(const std::variant<ApiRequest, HttpResponse>& v) {
  return std::holds_alternative<HttpResponse>(v) ? std::get<HttpResponse>(v).status : 0;
}

TEST(HttpApiMapping, Auth0PathsBecomeTypedCallsWithDecodedIds) {
  auto get = map(req("GET", "/api/v2/users/auth0%7Cu1"));
  ASSERT_EQ(status(get), 0);
  EXPECT_EQ(ok(get).call.endpoint, Endpoint::auth0_get);
  EXPECT_EQ(ok(get).call.user_id, "auth0|u1");

  auto link = map(req("POST", "/api/v2/users/auth0|u1/identities", R"({"provider":"google-oauth2","user_id":"u1"})"));
  ASSERT_EQ(status(link), 0);
  EXPECT_EQ(ok(link).call.endpoint, Endpoint::auth0_link);
  EXPECT_EQ(ok(link).call.provider, "google-oauth2");
  EXPECT_EQ(ok(link).call.identity_user_id, "u1");

  auto numeric = map(req("POST", "/api/v2/users/auth0|u1/identities", R"({"provider":"github","user_id":42})"));
  ASSERT_EQ(status(numeric), 0);
  EXPECT_EQ(ok(numeric).call.identity_user_id, "42");

  auto unlink = map(req("DELETE", "/api/v2/users/auth0%7Cu1/identities/google-oauth2/u1"));
  ASSERT_EQ(status(unlink), 0);
  EXPECT_EQ(ok(unlink).call.endpoint, Endpoint::auth0_unlink);
  EXPECT_EQ(ok(unlink).call.provider, "google-oauth2");
  EXPECT_EQ(ok(unlink).call.identity_user_id, "u1");
}

TEST(HttpApiMapping, StripeParametersComeFromFormOrJson) {
  auto form = map(req("POST", "/v1/charges", "amount=2500&currency=eur&metadata%5Border_id%5D=o1",
                      {{"Content-Type", "application/x-www-form-urlencoded"}}));
  ASSERT_EQ(status(form), 0);
  EXPECT_EQ(ok(form).call.endpoint, Endpoint::stripe_charge);
  EXPECT_EQ(ok(form).call.amount, 2500);
  EXPECT_EQ(ok(form).call.currency, "eur");
  EXPECT_EQ(ok(form).call.order_id, "o1");

  auto js = map(req("POST", "/v1/charges", R"({"amount":7,"currency":"usd","metadata":{"order_id":"o9"}})",
                    {{"Content-Type", "application/json"}}));
  ASSERT_EQ(status(js), 0);
  EXPECT_EQ(ok(js).call.amount, 7);
  EXPECT_EQ(ok(js).call.order_id, "o9");

  auto refund = map(req("POST", "/v1/refunds", "charge=ch_1"));
  ASSERT_EQ(status(refund), 0);
  EXPECT_EQ(ok(refund).call.charge_id, "ch_1");
  auto get = map(req("GET", "/v1/charges/ch_1"));
  ASSERT_EQ(status(get), 0);
  EXPECT_EQ(ok(get).call.endpoint, Endpoint::stripe_get);
}

TEST(HttpApiMapping, AttributionHeadersBecomeTags) {
  auto m = map(req("GET", "/api/v2/users/x", "",
                   {{"x-op-id", "42"}, {"X-Op-Step", "2"}, {"X-Fencing-Token", "9"}, {"Idempotency-Key", "k"},
                    {"X-Tenant", "t1"}}));
  ASSERT_EQ(status(m), 0);
  const auto& tags = ok(m).tags;
  EXPECT_EQ(tags.op_id, 42u);
  EXPECT_EQ(tags.op_step, 2);
  EXPECT_EQ(tags.fencing_token, 9u);
  EXPECT_EQ(tags.idempotency_key, "k");
  EXPECT_EQ(tags.tenant, "t1");
  EXPECT_EQ(ok(map(req("GET", "/api/v2/users/x"))).tags.tenant, "default");
}

TEST(HttpApiMapping, BadInputBecomes4xxWithTheRightErrorShape) {
  EXPECT_EQ(status(map(req("GET", "/nope"))), 404);
  EXPECT_EQ(status(map(req("GET", "/api/v2/users/x/identities"))), 405);
  EXPECT_EQ(status(map(req("POST", "/api/v2/users/x/identities", "{"))), 400);
  EXPECT_EQ(status(map(req("POST", "/api/v2/users/x/identities", R"({"provider":"p"})"))), 400);
  EXPECT_EQ(status(map(req("POST", "/v1/charges", "currency=eur"))), 400);
  EXPECT_EQ(status(map(req("POST", "/v1/charges", "amount=1.5&currency=eur"))), 400);
  EXPECT_EQ(status(map(req("GET", "/api/v2/users/x", "", {{"X-Op-Id", "abc"}}))), 400);

  const auto auth0 = std::get<HttpResponse>(map(req("GET", "/api/v2/users/x/identities")));
  const auto a = nlohmann::json::parse(auth0.body);
  EXPECT_EQ(a["statusCode"], 405);
  EXPECT_EQ(a["error"], "Method Not Allowed");
  EXPECT_TRUE(a.contains("errorCode"));
  const auto stripe = std::get<HttpResponse>(map(req("POST", "/v1/charges", "currency=eur")));
  EXPECT_EQ(nlohmann::json::parse(stripe.body)["error"]["code"], "parameter_missing");
}

TEST(HttpApiAdmin, AdminEndpointsAnswerAtOnceAndApiCallsArePlanned) {
  partner::Partner model;
  HttpApi api(model);
  const Duration t0{0};
  auto reset = api.handle(req("POST", "/admin/reset", R"({"persons":[{"identities":["auth0|u1"]}]})"), t0);
  ASSERT_TRUE(std::holds_alternative<HttpResponse>(reset));
  EXPECT_EQ(std::get<HttpResponse>(reset).status, 200);

  auto call = api.handle(req("GET", "/api/v2/users/auth0%7Cu1"), t0);
  ASSERT_TRUE(std::holds_alternative<Pending>(call));
  const Pending p = std::get<Pending>(call);
  EXPECT_LE(p.apply_after, p.delay);
  const HttpResponse answer = api.execute(p.call_id, t0 + p.apply_after);
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(nlohmann::json::parse(answer.body)["user_id"], "auth0|u1");
  api.complete(p.call_id, t0 + p.delay, false);

  auto prom = api.handle(req("GET", "/admin/metrics?format=prometheus"), t0);
  ASSERT_TRUE(std::holds_alternative<HttpResponse>(prom));
  EXPECT_EQ(std::get<HttpResponse>(prom).content_type.rfind("text/plain", 0), 0u);
  auto bad = api.handle(req("PUT", "/admin/config", R"({"fencing":"maybe"})"), t0);
  EXPECT_EQ(std::get<HttpResponse>(bad).status, 400);
  EXPECT_EQ(std::get<HttpResponse>(api.handle(req("DELETE", "/admin/state"), t0)).status, 405);
}

}  // namespace
}  // namespace lockbench::partner_server

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
                    {"X-Tenant", "t1"}, {"X-Client-Timeout-Ms", "1500"}}));
  ASSERT_EQ(status(m), 0);
  const auto& tags = ok(m).tags;
  EXPECT_EQ(tags.client_timeout, std::chrono::milliseconds(1500));
  EXPECT_FALSE(ok(map(req("GET", "/api/v2/users/x"))).tags.client_timeout.has_value());
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
  EXPECT_EQ(status(map(req("GET", "/api/v2/users/x", "", {{"X-Client-Timeout-Ms", "1.5s"}}))), 400);

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
  auto conventional = api.handle(req("GET", "/metrics"), t0);  // where Prometheus scrapes by default
  ASSERT_TRUE(std::holds_alternative<HttpResponse>(conventional));
  EXPECT_EQ(std::get<HttpResponse>(conventional).body, std::get<HttpResponse>(prom).body);
  EXPECT_EQ(std::get<HttpResponse>(api.handle(req("POST", "/metrics"), t0)).status, 405);
  auto bad = api.handle(req("PUT", "/admin/config", R"({"fencing":"maybe"})"), t0);
  EXPECT_EQ(std::get<HttpResponse>(bad).status, 400);
  EXPECT_EQ(std::get<HttpResponse>(api.handle(req("DELETE", "/admin/state"), t0)).status, 405);
}

TEST(HttpApiMapping, PayoutsAndCreditsBecomeTypedCallsAndMissingParamsAre400) {
  const auto& payout = ok(map(req("POST", "/v1/payouts", "amount=4000&currency=eur&metadata%5Baccount_id%5D=a1",
                                  {{"Idempotency-Key", "payout-1"}, {"X-Op-Id", "9"}})));
  EXPECT_EQ(payout.call.endpoint, Endpoint::stripe_payout);
  EXPECT_EQ(payout.call.amount, 4000);
  EXPECT_EQ(payout.call.account_id, "a1");
  EXPECT_EQ(payout.tags.idempotency_key, "payout-1");
  EXPECT_EQ(payout.tags.op_id, 9u);
  const auto& credit = ok(map(req("POST", "/v1/customers/c%201/balance_transactions",
                                  R"({"amount": -500, "metadata": {"reward": "welcome"}})",
                                  {{"Content-Type", "application/json"}})));
  EXPECT_EQ(credit.call.endpoint, Endpoint::stripe_credit);
  EXPECT_EQ(credit.call.customer_id, "c 1");
  EXPECT_EQ(credit.call.amount, -500);
  EXPECT_EQ(credit.call.currency, "eur");
  EXPECT_EQ(credit.call.reward, "welcome");
  const auto missing = std::get<HttpResponse>(map(req("POST", "/v1/payouts", "amount=1&currency=eur")));
  EXPECT_EQ(missing.status, 400);
  EXPECT_NE(missing.body.find("metadata[account_id]"), std::string::npos);
  EXPECT_EQ(status(map(req("POST", "/v1/customers/c1/balance_transactions", "amount=-5"))), 400);  // no reward
  EXPECT_EQ(status(map(req("POST", "/v1/payouts", "amount=x&currency=eur&metadata%5Baccount_id%5D=a1"))), 400);
  EXPECT_EQ(status(map(req("GET", "/v1/payouts"))), 405);
  EXPECT_EQ(status(map(req("GET", "/v1/customers/c1/balance_transactions"))), 405);
}

// Drives one API call through HttpApi at time t and returns its answer.
HttpResponse call(HttpApi& api, const HttpRequest& r, Duration t) {
  auto routed = api.handle(r, t);
  if (auto* response = std::get_if<HttpResponse>(&routed)) return *response;
  const Pending p = std::get<Pending>(routed);
  HttpResponse answer = api.execute(p.call_id, t + p.apply_after);
  api.complete(p.call_id, t + p.delay, false);
  return answer;
}

nlohmann::json admin(HttpApi& api, const char* method, const char* target, std::string body, int expect = 200) {
  const auto r = std::get<HttpResponse>(api.handle(req(method, target, std::move(body)), Duration{0}));
  EXPECT_EQ(r.status, expect) << target << ": " << r.body;
  return nlohmann::json::parse(r.body);
}

TEST(HttpApiAdmin, CheckWithTheServicesViewComparesBothSidesAndNoBodyKeepsTodaysVerdict) {
  partner::Partner model(partner::Config::from_json({{"latency", {{"*", {{"dist", "fixed"}, {"ms", 0}}}}}}));
  HttpApi api(model);
  const auto reset = admin(api, "POST", "/admin/reset",
                           R"({"person_range": {"count": 10000000, "identities": 2},
                               "accounts": [{"account_id": "a1", "balance": 10000}]})");
  EXPECT_EQ(reset["persons"], 10000000);
  EXPECT_EQ(reset["accounts"], 1);
  EXPECT_EQ(call(api, req("DELETE", "/api/v2/users/auth0%7Cu7/identities/google-oauth2/u7", "", {{"X-Op-Id", "1"}, {"X-Op-Step", "1"}}), Duration{0}).status, 200);
  EXPECT_EQ(call(api, req("POST", "/api/v2/users/google-oauth2%7Cu7/identities", R"({"provider":"auth0","user_id":"u7"})",
                          {{"X-Op-Id", "1"}, {"X-Op-Step", "2"}}), Duration{0}).status, 201);
  EXPECT_EQ(call(api, req("POST", "/v1/charges", "amount=2500&currency=eur&metadata%5Border_id%5D=o1", {{"X-Op-Id", "2"}}), Duration{0}).status, 200);
  for (int i = 0; i < 2; ++i)
    EXPECT_EQ(call(api, req("POST", "/v1/payouts", "amount=6000&currency=eur&metadata%5Baccount_id%5D=a1"), Duration{0}).status, 200);
  EXPECT_EQ(model.persons_touched(), 1u);

  const auto plain = admin(api, "POST", "/admin/check", "");
  EXPECT_EQ(plain["counts"]["overdrawn"], 1);
  EXPECT_EQ(plain["counts"]["db_partner_divergence"], 0);
  EXPECT_EQ(plain["counts"]["orphan_charge"], 0);  // without the service's view there is no verdict
  EXPECT_TRUE(plain.contains("episodes"));
  EXPECT_FALSE(plain["counts"].contains("identity_lost"));

  const auto two_sided = admin(api, "POST", "/admin/check", R"({"service": {
      "primaries": {"auth0|u7": "auth0|u7", "auth0|u8": "auth0|u8"},
      "orders": {"o1": {"status": "PAYMENT_PENDING"}},
      "balances": {"a1": -2000}}})");
  EXPECT_EQ(two_sided["counts"]["db_partner_divergence"], 1);  // u7: the promotion was never stored
  EXPECT_EQ(two_sided["counts"]["orphan_charge"], 1);
  EXPECT_EQ(two_sided["counts"]["balance_divergence"], 0);  // the service's balance agrees: overdrawn on both sides
  bool listed = false;
  for (const auto& v : two_sided["violations"])
    listed = listed || (v["kind"] == "db_partner_divergence" && v["subject"] == "auth0|u7" && v["request_ids"] == nlohmann::json{1});
  EXPECT_TRUE(listed);

  const auto bad = admin(api, "POST", "/admin/check", R"({"service": {"orders": {"o1": "PAID"}}})", 400);
  EXPECT_NE(bad["message"].get<std::string>().find("service.orders.o1"), std::string::npos);
  admin(api, "POST", "/admin/check", R"({"servce": {}})", 400);
}

// Issue #42: a second run reset the partner under a live run, silently spoiling its checks.
TEST(HttpApiAdmin, AResetForAnotherRunWhileOneIsLiveIsRefusedNamingItUnlessForced) {
  partner::Partner model(partner::Config::from_json({{"latency", {{"*", {{"dist", "fixed"}, {"ms", 0}}}}}}));
  HttpApi api(model);
  using std::chrono::milliseconds;
  const auto at = [&](const char* target, const std::string& body, Duration now) {
    return std::get<HttpResponse>(api.handle(req("POST", target, body), now));
  };
  const auto call = [&](Duration now) { api.handle(req("GET", "/api/v2/users/auth0%7Cu1"), now); };
  const Duration t0{0};
  EXPECT_EQ(at("/admin/reset", R"j({"run": "A (host h pid 1)"})j", t0).status, 200);
  call(t0 + std::chrono::seconds(5));
  // Run B, 6 s in: A reset and called within the live window.
  const auto refused = at("/admin/reset", R"j({"run": "B (host h pid 2)"})j", t0 + std::chrono::seconds(6));
  EXPECT_EQ(refused.status, 409);
  const std::string message = nlohmann::json::parse(refused.body)["message"];
  EXPECT_NE(message.find("run A (host h pid 1) is live"), std::string::npos) << message;
  EXPECT_NE(message.find("--force"), std::string::npos) << message;
  EXPECT_EQ(at("/admin/reset", "{}", t0 + std::chrono::seconds(6)).status, 409);  // an unnamed reset too
  EXPECT_EQ(at("/admin/reset", R"j({"run": "A (host h pid 1)"})j", t0 + std::chrono::seconds(7)).status, 200);  // its own
  EXPECT_EQ(at("/admin/reset", R"j({"run": "B (host h pid 2)", "force": true})j", t0 + std::chrono::seconds(8)).status, 200);
  // B is live now; once it says it is done, C resets at once.
  EXPECT_EQ(at("/admin/reset", R"j({"run": "C"})j", t0 + std::chrono::seconds(9)).status, 409);
  EXPECT_EQ(nlohmann::json::parse(at("/admin/run-done", R"j({"run": "A (host h pid 1)"})j", t0 + std::chrono::seconds(9)).body)["was_live"], false);
  EXPECT_EQ(nlohmann::json::parse(at("/admin/run-done", R"j({"run": "B (host h pid 2)"})j", t0 + std::chrono::seconds(9)).body)["was_live"], true);
  EXPECT_EQ(at("/admin/reset", R"j({"run": "C"})j", t0 + std::chrono::seconds(9)).status, 200);
  // A runner killed with kill -9 never says it is done: the partner is free kLiveWindow after its last call.
  call(t0 + std::chrono::seconds(10));
  EXPECT_EQ(at("/admin/reset", R"j({"run": "D"})j", t0 + std::chrono::seconds(10) + HttpApi::kLiveWindow - milliseconds(1)).status, 409);
  EXPECT_EQ(at("/admin/reset", R"j({"run": "D"})j", t0 + std::chrono::seconds(10) + HttpApi::kLiveWindow).status, 200);
  EXPECT_EQ(at("/admin/reset", R"j({"run": 7})j", t0).status, 400);
  EXPECT_EQ(at("/admin/reset", R"j({"run": "E", "force": "yes"})j", t0).status, 400);
}

TEST(AdminGuard, ACrossOriginTextPostIsRefusedAndTheRunnersOwnRequestPasses) {
  const HeaderList runner = {{"Host", "127.0.0.1:8080"}, {"Content-Type", "application/json"}};
  EXPECT_FALSE(admin_refusal(req("POST", "/admin/reset", "{}", runner), {}));
  // What a page's form or fetch without preflight can send: text/plain.
  const auto text = admin_refusal(req("POST", "/admin/reset", "{}", {{"Host", "127.0.0.1:8080"}, {"Content-Type", "text/plain"}}), {});
  ASSERT_TRUE(text);
  EXPECT_EQ(text->status, 415);
  EXPECT_EQ(admin_refusal(req("POST", "/admin/check", "", {{"Host", "localhost"}}), {})->status, 415);  // none at all
  EXPECT_FALSE(admin_refusal(req("GET", "/admin/state", "", {{"Host", "[::1]:9"}}), {}));  // reads need no body type
  EXPECT_FALSE(admin_refusal(req("POST", "/v1/charges", "amount=1", {{"Host", "evil.example"}}), {}));  // the API is not admin
}

TEST(AdminGuard, AForeignHostIsRefusedUnlessNamedWithAdminHost) {
  const HeaderList rebound = {{"Host", "evil.example:8080"}, {"Content-Type", "application/json"}};
  const auto r = admin_refusal(req("POST", "/admin/reset", "{}", rebound), {});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403);
  EXPECT_EQ(admin_refusal(req("GET", "/admin/metrics", "", {}), {})->status, 403);  // no Host at all
  EXPECT_EQ(admin_refusal(req("GET", "/admin/state", "", {{"Host", "127.0.0.1.evil.example"}}), {})->status, 403);
  EXPECT_FALSE(admin_refusal(req("GET", "/admin/metrics", "", {{"Host", "lockbench-partner:8080"}}), {"lockbench-partner"}));
  EXPECT_FALSE(admin_refusal(req("GET", "/admin/state", "", {{"Host", "10.201.3.1:8080"}}), {}));  // an address: no rebinding
  EXPECT_EQ(admin_refusal(req("GET", "/admin/state", "", {{"Host", "localhost.evil.example"}}), {})->status, 403);
}

TEST(AdminGuard, TheTargetIsNormalisedOnceForTheGuardAndTheRouter) {
  using Segs = std::vector<std::string>;
  const Segs reset = {"admin", "reset"};
  for (const char* spelling : {"/admin/reset", "//admin/reset", "///admin/reset", "/%61dmin/reset", "/admin//reset/",
                               "/./admin/reset", "/admin/./reset", "/v1/../admin/reset", "/x/%2e%2E/admin/reset",
                               "/../admin/reset", "/admin;x=1/reset", "/admin/reset;jsessionid=2", "/admin/reset?x=1"}) {
    const auto t = parse_target(spelling);
    ASSERT_TRUE(t) << spelling;
    EXPECT_EQ(t->segments, reset) << spelling;
    EXPECT_TRUE(guarded_target(*t)) << spelling;
  }
  // Spellings that would split, escape or re-encode a segment are no target at all (400).
  for (const char* spelling : {"/admin%2freset", "/admin%2Freset", "/%2fadmin/reset", "/admin%5creset", "/admin\\reset",
                               "/%2561dmin/reset", "/admin%00/reset", "/admin%0d%0a/reset", "/admin%3breset",
                               "/admin/reset#x", "admin/reset", "http://evil.com/admin/reset", "*"})
    EXPECT_FALSE(parse_target(spelling)) << spelling;
  // The guard reads the first segment as a lenient server would; the router stays exact (404).
  for (const char* spelling : {"/ADMIN/reset", "/Admin/Reset", "/admin./reset", "/admin../reset", "/admin%20/reset",
                               "/METRICS", "/metrics.", "//metrics"})
    EXPECT_TRUE(guarded_target(*parse_target(spelling))) << spelling;
  EXPECT_FALSE(guarded_target(*parse_target("/v1/charges")));
  EXPECT_FALSE(guarded_target(*parse_target("/administrator")));
  EXPECT_EQ(parse_target("/api/v2/users/auth0%7Cu1")->segments, (Segs{"api", "v2", "users", "auth0|u1"}));  // ids still decode
}

TEST(AdminGuard, TheHostIsOneValidAuthorityGivenOnce) {
  const auto host = [](HeaderList h) { return parse_host_header(req("GET", "/admin/state", "", std::move(h))); };
  EXPECT_TRUE(host({{"Host", "127.0.0.1:8080"}})->address);
  EXPECT_TRUE(host({{"Host", "[::1]:9"}})->address);
  EXPECT_TRUE(host({{"Host", "10.201.3.1"}})->address);
  EXPECT_EQ(host({{"Host", "Lockbench-Partner:8080"}})->host, "Lockbench-Partner");
  EXPECT_FALSE(host({{"Host", "lockbench-partner"}})->address);
  for (const char* bad : {"[evil.com]", "[evil.com]:80", "999.999.999.999", "256.0.0.1", "010.0.0.1", "127.1", "0x7f.0.0.1",
                          "127.0.0.1:99999", "127.0.0.1:", "127.0.0.1:8o", "evil.com@127.0.0.1", "127.0.0.1/x",
                          "127.0.0.1, evil.com", "127.0.0.1 evil.com", "localhost.", "-evil.com", "", "[::1", "[::1]x"})
    EXPECT_FALSE(host({{"Host", bad}})) << bad;
  EXPECT_FALSE(host({{"Host", "127.0.0.1"}, {"host", "evil.com"}}));  // given twice
  EXPECT_FALSE(host({}));
  // The guard: a foreign or malformed Host is 403 on every guarded path, /metrics included.
  const HeaderList json_type = {{"Content-Type", "application/json"}};
  for (const char* bad : {"[evil.com]", "999.999.999.999", "evil.example"}) {
    HeaderList h = json_type;
    h.emplace_back("Host", bad);
    EXPECT_EQ(admin_refusal(req("POST", "//admin/reset", "{}", h), {})->status, 403) << bad;
    EXPECT_EQ(admin_refusal(req("GET", "/metrics", "", h), {})->status, 403) << bad;
  }
  EXPECT_EQ(admin_refusal(req("POST", "/admin/reset", "{}",
                              {{"Host", "127.0.0.1"}, {"Host", "evil.com"}, {"Content-Type", "application/json"}}), {})
                ->status,
            403);
  EXPECT_FALSE(admin_refusal(req("GET", "/metrics", "", {{"Host", "127.0.0.1:8080"}}), {}));
}

TEST(AdminGuard, TheContentTypeIsParsedAsAMediaType) {
  EXPECT_EQ(parse_media_type("Application/JSON; charset=utf-8")->subtype, "json");
  EXPECT_EQ(parse_media_type("application/json;charset=\"utf-8\"")->type, "application");
  for (const char* bad : {"application/json, text/plain", "application/json text/plain", "application json", "json",
                          "application/", "/json", "application/json; charset", "application/json; a=\"b", "application/json;;"})
    EXPECT_FALSE(parse_media_type(bad)) << bad;
  const auto refusal = [](HeaderList h) {
    h.emplace_back("Host", "127.0.0.1");
    const auto r = admin_refusal(req("POST", "/admin/reset", "{}", std::move(h)), {});
    return r ? r->status : 200;
  };
  EXPECT_EQ(refusal({{"Content-Type", "application/json"}}), 200);
  EXPECT_EQ(refusal({{"Content-Type", "application/json; charset=utf-8"}}), 200);
  // What a no-cors fetch or a form can send, and look-alikes.
  for (const char* bad : {"text/plain", "text/plain; x=application/json", "text/plain;charset=application/json",
                          "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonp",
                          "application/json, text/plain", "application/json-patch+json", ""})
    EXPECT_EQ(refusal({{"Content-Type", bad}}), 415) << bad;
  EXPECT_EQ(refusal({}), 415);
  EXPECT_EQ(refusal({{"Content-Type", "application/json"}, {"Content-Type", "text/plain"}}), 415);  // given twice
  EXPECT_EQ(admin_refusal(req("POST", "/ADMIN/reset", "{}", {{"Host", "127.0.0.1"}, {"Content-Type", "text/plain"}}), {})
                ->status,
            415);
}

TEST(RequestFraming, AnUnknownTransferEncodingOrOneWithContentLengthIsRefused) {
  EXPECT_FALSE(framing_refusal({}, true));
  EXPECT_FALSE(framing_refusal({"chunked"}, false));
  EXPECT_EQ(framing_refusal({"xchunked"}, true)->status, 400);  // the smuggling attempt
  EXPECT_EQ(framing_refusal({"chunked"}, true)->status, 400);
  EXPECT_EQ(framing_refusal({"gzip, chunked"}, false)->status, 400);  // a coding we do not decode
  EXPECT_EQ(framing_refusal({"chunked", "chunked"}, false)->status, 400);
}

}  // namespace
}  // namespace lockbench::partner_server

// Socket-level tests of the fake_partner executable: each test starts its own
// server on a free port (see test_support.hpp) and talks HTTP to it.
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <future>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "fake_partner/server/server_fixture.hpp"

namespace lockbench::partner_server::testing {
namespace {

// --- section A: identity provider -------------------------------------------

TEST_F(FakePartner, GetUserAnswersTheUserOr404WithTheAuth0ErrorBody) {
  auto res = http().Get("/api/v2/users/auth0%7Cu1");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  const json user = body_of(res);
  EXPECT_EQ(user["user_id"], "auth0|u1");
  EXPECT_EQ(user["identities"].size(), 2u);

  res = http().Get("/api/v2/users/auth0%7Cnobody");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  const json err = body_of(res);
  EXPECT_EQ(err["statusCode"], 404);
  EXPECT_EQ(err["error"], "Not Found");
  EXPECT_TRUE(err["message"].is_string());
  EXPECT_TRUE(err["errorCode"].is_string());
}

TEST_F(FakePartner, UnlinkAndLinkAnswerTheRealStatusesAndMessages) {
  // Removing the primary identity is refused.
  auto res = http().Delete("/api/v2/users/auth0%7Cu1/identities/auth0/u1");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(body_of(res)["message"], "Main identity cannot be removed.");

  // Unlinking the secondary: 200 with the remaining identities.
  res = http().Delete("/api/v2/users/auth0%7Cu1/identities/google-oauth2/u1");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(body_of(res).size(), 1u);

  // Linking the primary to itself.
  res = http().Post("/api/v2/users/auth0%7Cu1/identities", R"({"provider":"auth0","user_id":"u1"})",
                    "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(body_of(res)["message"], "Main identity and the new one are the same.");

  // Linking it back: 201 with both identities.
  res = http().Post("/api/v2/users/auth0%7Cu1/identities", R"({"provider":"google-oauth2","user_id":"u1"})",
                    "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 201);
  EXPECT_EQ(body_of(res).size(), 2u);

  // Linking it again: already there.
  res = http().Post("/api/v2/users/auth0%7Cu1/identities", R"({"provider":"google-oauth2","user_id":"u1"})",
                    "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 409);
  EXPECT_EQ(body_of(res)["message"], "Specified identity already exists.");

  // Linking an identity nobody has.
  res = http().Post("/api/v2/users/auth0%7Cu1/identities", R"({"provider":"github","user_id":"zz"})",
                    "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(body_of(res)["message"], "Provided secondary account not found.");
}

TEST_F(FakePartner, UnknownPathsAre404AndWrongMethodsAre405WithAllow) {
  auto res = http().Get("/api/v2/nothing-here");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_EQ(body_of(res)["statusCode"], 404);

  res = http().Get("/v1/nothing-here");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_TRUE(body_of(res)["error"]["message"].is_string());  // Stripe's shape under /v1

  res = http().Put("/api/v2/users/auth0%7Cu1", "{}", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 405);
  EXPECT_EQ(res->get_header_value("Allow"), "GET");

  res = http().Get("/admin/reset");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 405);
  EXPECT_EQ(res->get_header_value("Allow"), "POST");
}

TEST_F(FakePartner, KeepAliveServesManyRequestsOnOneConnection) {
  http().set_keep_alive(true);
  for (int i = 0; i < 20; ++i) {
    auto res = http().Get("/api/v2/users/auth0%7Cu2");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200);
  }
  const json metrics = get_json("/admin/metrics");
  EXPECT_TRUE(metrics.is_object());
}

// --- section B: payments ------------------------------------------------------

TEST_F(FakePartner, ChargeGetAndRefundFollowStripe) {
  auto res = http().Post("/v1/charges", "amount=2500&currency=eur&metadata%5Border_id%5D=o1",
                         "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const json charge = body_of(res);
  EXPECT_EQ(charge["object"], "charge");
  EXPECT_EQ(charge["amount"], 2500);
  EXPECT_EQ(charge["metadata"]["order_id"], "o1");
  const std::string id = charge["id"];
  EXPECT_EQ(id.rfind("ch_", 0), 0u);

  res = http().Get(("/v1/charges/" + id).c_str());
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(body_of(res)["id"], id);

  res = http().Get("/v1/charges/ch_missing");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_TRUE(body_of(res)["error"]["code"].is_string());

  res = http().Post("/v1/refunds", "charge=" + id, "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(body_of(res)["object"], "refund");
  res = http().Post("/v1/refunds", "charge=" + id, "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);

  // JSON bodies are accepted too.
  res = http().Post("/v1/charges", R"({"amount":100,"currency":"eur","metadata":{"order_id":"o2"}})",
                    "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST_F(FakePartner, ChargeWithMissingOrBadParametersIs400) {
  auto res = http().Post("/v1/charges", "currency=eur", "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(body_of(res)["error"]["code"], "parameter_missing");

  res = http().Post("/v1/charges", "amount=12x&currency=eur", "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(body_of(res)["error"]["code"], "parameter_invalid_integer");

  res = http().Post("/v1/charges", "amount=0&currency=eur", "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);

  res = http().Post("/v1/refunds", "", "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(body_of(res)["error"]["code"], "parameter_missing");
}

TEST_F(FakePartner, IdempotencyKeysAnswerInFlight409ReplayAndMismatch400) {
  start({{"latency", {{"stripe.charge", {{"dist", "fixed"}, {"ms", 3000}}}}}});
  const httplib::Headers key = {{"Idempotency-Key", "k1"}};
  const std::string params = "amount=2500&currency=eur&metadata%5Border_id%5D=o1";
  auto first = std::async(std::launch::async, [&] {
    httplib::Client c("127.0.0.1", port());
    c.set_read_timeout(10, 0);
    auto r = c.Post("/v1/charges", key, params, "application/x-www-form-urlencoded");
    return r ? std::make_pair(r->status, r->body) : std::make_pair(0, std::string());
  });
  // The first call is in flight (the partner counts it), inside its 3 s: the second one meets it.
  ASSERT_TRUE(wait_until([&] {
    auto m = http().Get("/admin/metrics");
    return m && m->status == 200 && json::parse(m->body, nullptr, false).value("inflight", 0) >= 1;
  }));
  auto res = http().Post("/v1/charges", key, params, "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 409);
  EXPECT_EQ(body_of(res)["error"]["code"], "idempotency_key_in_use");

  const auto [status, body] = first.get();
  ASSERT_EQ(status, 200) << body;
  const std::string id = json::parse(body)["id"];

  res = http().Post("/v1/charges", key, params, "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Idempotent-Replayed"), "true");
  EXPECT_EQ(body_of(res)["id"], id);

  res = http().Post("/v1/charges", key, "amount=9999&currency=eur&metadata%5Border_id%5D=o1",
                    "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(body_of(res)["error"]["type"], "idempotency_error");

  // One charge happened for the order, whatever the retries.
  EXPECT_EQ(check()["counts"]["double_charge"], 0);
}

// --- rate limits and fencing ---------------------------------------------------

TEST_F(FakePartner, RateLimitHeadersCountDownAndAnEmptyBucketAnswers429) {
  start({{"rate_limit", {{"size", 3}, {"refill_per_s", 0.001}, {"scope", "tenant"}}}});
  for (int i = 0; i < 3; ++i) {
    auto res = http().Get("/api/v2/users/auth0%7Cu1");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200);
    EXPECT_EQ(res->get_header_value("X-RateLimit-Limit"), "3");
    EXPECT_EQ(res->get_header_value("X-RateLimit-Remaining"), std::to_string(2 - i));
    // Epoch seconds, as the real API sends: not before this test started.
    EXPECT_GE(std::stoll(res->get_header_value("X-RateLimit-Reset")), static_cast<long long>(std::time(nullptr)) - 60);
  }
  auto res = http().Get("/api/v2/users/auth0%7Cu1");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 429);
  EXPECT_EQ(res->get_header_value("X-RateLimit-Remaining"), "0");
  // Another tenant has its own bucket; admin endpoints are never limited.
  res = http().Get("/api/v2/users/auth0%7Cu1", {{"X-Tenant", "other"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  res = http().Get("/admin/state");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST_F(FakePartner, FencingEnforceRejectsAStaleToken) {
  start({{"fencing", "enforce"}});
  auto res = http().Delete("/api/v2/users/auth0%7Cu1/identities/google-oauth2/u1", {{"X-Fencing-Token", "5"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  res = http().Post("/api/v2/users/auth0%7Cu1/identities", {{"X-Fencing-Token", "3"}},
                    R"({"provider":"google-oauth2","user_id":"u1"})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 409);
  EXPECT_EQ(body_of(res)["errorCode"], "stale_token");
  res = http().Post("/api/v2/users/auth0%7Cu1/identities", {{"X-Fencing-Token", "6"}},
                    R"({"provider":"google-oauth2","user_id":"u1"})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 201);
  EXPECT_EQ(check()["counts"]["stale_token_rejected"], 1);
}

TEST_F(FakePartner, MalformedAttributionHeadersAre400) {
  auto res = http().Get("/api/v2/users/auth0%7Cu1", {{"X-Op-Id", "12abc"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  res = http().Get("/api/v2/users/auth0%7Cu1", {{"X-Fencing-Token", "-1"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  res = http().Get("/api/v2/users/auth0%7Cu1", {{"X-Op-Id", "12"}, {"X-Op-Step", "1"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

// --- section E: admin -----------------------------------------------------------

TEST_F(FakePartner, AdminResetSeedsStateAndRefusesABadDocument) {
  auto res = http().Post("/admin/reset", R"({"persons":[{"identities":["auth0|x"]}]})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(body_of(res)["persons"], 1);
  res = http().Get("/api/v2/users/auth0%7Cu1");  // gone with the reset
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);

  res = http().Post("/admin/reset", R"({"persons":"many"})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(body_of(res)["errorCode"], "invalid_setting");
  res = http().Post("/admin/reset", "{not json", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(body_of(res)["errorCode"], "invalid_json");
}

TEST_F(FakePartner, AdminConfigMergesPartialUpdatesAndRefusesBadValuesWithoutChange) {
  auto res = http().Put("/admin/config", R"({"fencing":"enforce"})", "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  json config = get_json("/admin/config");
  EXPECT_EQ(config["fencing"], "enforce");

  res = http().Put("/admin/config", R"({"fencing":"sometimes"})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(body_of(res)["message"].get<std::string>().find("fencing"), std::string::npos);
  EXPECT_EQ(get_json("/admin/config"), config);
}

TEST_F(FakePartner, AdminCheckCountsEveryKindAndListsADoubleCharge) {
  json report = check();
  ASSERT_TRUE(report["counts"].is_object());
  for (const char* kind : {"user_malformed", "person_split", "lost_promotion", "abandoned_effect", "overlap_person",
                           "flow_interleaving",
                           "db_partner_divergence", "double_charge", "order_overlap", "orphan_charge",
                           "paid_without_charge", "overdrawn", "balance_divergence", "duplicate_reward",
                           "claim_divergence", "retry_overlap", "overlap_abandoned", "ambiguous_commit",
                           "stale_token_rejected"}) {
    EXPECT_EQ(report["counts"][kind], 0) << kind;
  }
  EXPECT_EQ(report["counts"].size(), 19u);
  // Two charges for one order without an idempotency key: a double charge.
  for (int i = 0; i < 2; ++i) {
    auto res = http().Post("/v1/charges", "amount=2500&currency=eur&metadata%5Border_id%5D=o1",
                           "application/x-www-form-urlencoded");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200);
  }
  report = check();
  EXPECT_EQ(report["counts"]["double_charge"], 1);
  ASSERT_FALSE(report["violations"].empty());
  EXPECT_EQ(report["violations"][0]["kind"], "double_charge");
}

// Payouts and credits over HTTP: idempotency keys honoured, the duplicate
// reward and the overdrawn account seen by /admin/check, and the service's view compared.
TEST_F(FakePartner, PayoutsAndCreditsAreServedIdempotentlyAndCheckedAgainstTheServicesView) {
  auto res = http().Post("/admin/reset", R"({"persons": [], "accounts": [{"account_id": "a1", "balance": 10000, "currency": "eur"}]})",
                         "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const std::string payout = "amount=6000&currency=eur&metadata%5Baccount_id%5D=a1";
  res = http().Post("/v1/payouts", {{"Idempotency-Key", "p-1"}}, payout, "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(body_of(res)["object"], "payout");
  res = http().Post("/v1/payouts", {{"Idempotency-Key", "p-1"}}, payout, "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->get_header_value("Idempotent-Replayed"), "true");
  EXPECT_EQ(check()["counts"]["overdrawn"], 0);
  res = http().Post("/v1/payouts", {{"Idempotency-Key", "p-2"}}, payout, "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  EXPECT_EQ(check()["counts"]["overdrawn"], 1);

  for (int i = 0; i < 2; ++i) {
    res = http().Post("/v1/customers/c1/balance_transactions", {{"X-Op-Id", std::to_string(10 + i)}},
                      "amount=-500&currency=eur&metadata%5Breward%5D=welcome", "application/x-www-form-urlencoded");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200) << res->body;
    EXPECT_EQ(body_of(res)["object"], "customer_balance_transaction");
  }
  res = http().Post("/admin/check", R"({"service": {"balances": {"a1": 4000}, "claims": {"c1": {"welcome": 1}}}})",
                    "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const json report = body_of(res);
  EXPECT_EQ(report["counts"]["duplicate_reward"], 1);
  EXPECT_EQ(report["counts"]["claim_divergence"], 1);
  EXPECT_EQ(report["counts"]["balance_divergence"], 1);  // 10000 - 12000 paid out is not the 4000 it holds
  const json metrics = get_json("/admin/metrics");
  EXPECT_EQ(metrics["arrivals"]["stripe.payout"], 3);
  EXPECT_EQ(metrics["arrivals"]["stripe.credit"], 2);
}

// The oracle over HTTP: two promotions of one person at once, tagged with
// X-Op-Id / X-Op-Step, overlap at the partner.
TEST_F(FakePartner, TwoConcurrentPromotionsOfOnePersonAreSeenToOverlap) {
  start({{"latency", {{"auth0.unlink", {{"dist", "fixed"}, {"ms", 300}}}, {"auth0.link", {{"dist", "fixed"}, {"ms", 300}}}}}});
  auto promote = [&](int op) {
    httplib::Client c("127.0.0.1", port());
    c.set_read_timeout(5, 0);
    const std::string id = std::to_string(op);
    auto unlink = c.Delete("/api/v2/users/auth0%7Cu1/identities/google-oauth2/u1", {{"X-Op-Id", id}, {"X-Op-Step", "1"}});
    auto link = c.Post("/api/v2/users/google-oauth2%7Cu1/identities", {{"X-Op-Id", id}, {"X-Op-Step", "2"}},
                       R"({"provider":"auth0","user_id":"u1"})", "application/json");
    return std::make_pair(unlink ? unlink->status : 0, link ? link->status : 0);
  };
  auto a = std::async(std::launch::async, promote, 1);
  auto b = std::async(std::launch::async, promote, 2);
  const auto ra = a.get();
  const auto rb = b.get();
  EXPECT_NE(ra.first, 0);
  EXPECT_NE(rb.first, 0);
  const json report = check();
  EXPECT_GE(report["counts"]["overlap_person"].get<int>(), 1) << report.dump();
  EXPECT_EQ(report["max_inflight_per_person"], 2) << report.dump();
}

TEST_F(FakePartner, AdminServerCountsAnswersAndTheirLateness) {
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(http().Get("/api/v2/users/auth0%7Cu1"));
  const json stats = get_json("/admin/server");
  EXPECT_EQ(stats["answers"], 5);  // API answers only; admin requests are not calls
  EXPECT_GE(stats["connections"]["peak"], 1);
  EXPECT_GE(stats["lateness_ms"]["max"].get<double>(), stats["lateness_ms"]["p50"].get<double>());
  auto res = http().Post("/admin/server", "", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 405);
}

// The Prometheus text exposition format, line by line: comments (# HELP / #
// TYPE), blank lines, and samples `name{label="value",...} number`.
struct PromSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

std::optional<std::vector<PromSample>> parse_prometheus(const std::string& text, std::string& problem) {
  std::vector<PromSample> out;
  std::set<std::string> typed;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  const auto name_char = [](char c, bool first) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':' ||
           (!first && std::isdigit(static_cast<unsigned char>(c)));
  };
  while (std::getline(in, line)) {
    ++n;
    const auto fail = [&](const std::string& why) {
      problem = "line " + std::to_string(n) + ": " + why + ": " + line;
      return std::nullopt;
    };
    if (line.empty()) continue;
    if (line[0] == '#') {
      std::istringstream words(line);
      std::string hash, keyword, name, type;
      words >> hash >> keyword >> name >> type;
      if (keyword == "TYPE") {
        if (type != "counter" && type != "gauge" && type != "histogram" && type != "summary" && type != "untyped") {
          return fail("unknown type");
        }
        typed.insert(name);
      }
      continue;
    }
    PromSample s;
    std::size_t i = 0;
    while (i < line.size() && name_char(line[i], i == 0)) ++i;
    if (i == 0) return fail("no metric name");
    s.name = line.substr(0, i);
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        std::size_t k = i;
        while (k < line.size() && name_char(line[k], k == i)) ++k;
        if (k == i || k + 1 >= line.size() || line[k] != '=' || line[k + 1] != '"') return fail("bad label");
        const std::string key = line.substr(i, k - i);
        std::string value;
        std::size_t v = k + 2;
        while (v < line.size() && line[v] != '"') {
          if (line[v] == '\\' && v + 1 < line.size()) ++v;
          value += line[v++];
        }
        if (v >= line.size()) return fail("unterminated label value");
        s.labels[key] = value;
        i = v + 1;
        if (i < line.size() && line[i] == ',') ++i;
      }
      if (i >= line.size()) return fail("unterminated labels");
      ++i;
    }
    if (i >= line.size() || line[i] != ' ') return fail("no value");
    std::istringstream rest(line.substr(i + 1));
    std::string value;
    rest >> value;
    try {
      std::size_t used = 0;
      s.value = (value == "+Inf") ? HUGE_VAL : (value == "-Inf") ? -HUGE_VAL : std::stod(value, &used);
      if (value != "+Inf" && value != "-Inf" && value != "NaN" && used != value.size()) return fail("bad value");
    } catch (const std::exception&) {
      return fail("bad value");
    }
    // A sample belongs to a declared family (histograms add _bucket/_sum/_count).
    std::string family = s.name;
    for (const char* suffix : {"_bucket", "_sum", "_count", "_total"}) {
      const std::string sfx = suffix;
      if (!typed.count(family) && family.size() > sfx.size() &&
          family.compare(family.size() - sfx.size(), sfx.size(), sfx) == 0) {
        family = family.substr(0, family.size() - sfx.size());
      }
    }
    if (!typed.count(s.name) && !typed.count(family)) return fail("sample without a # TYPE line");
    out.push_back(std::move(s));
  }
  return out;
}

TEST_F(FakePartner, MetricsComeAsJsonAndAsParsablePrometheusText) {
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(http().Get("/api/v2/users/auth0%7Cu1"));
  EXPECT_TRUE(get_json("/admin/metrics").is_object());

  auto res = http().Get("/admin/metrics?format=prometheus");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type").rfind("text/plain", 0), 0u);
  std::string problem;
  auto samples = parse_prometheus(res->body, problem);
  ASSERT_TRUE(samples) << problem;
  ASSERT_FALSE(samples->empty());
  double get_calls = 0;
  for (const auto& s : *samples) {
    for (const auto& [k, v] : s.labels) {
      const bool counts_calls = s.name.find("arrivals") != std::string::npos || s.name.find("requests") != std::string::npos;
      if (k == "endpoint" && v == "auth0.get" && counts_calls) {
        get_calls = std::max(get_calls, s.value);
      }
    }
  }
  EXPECT_GE(get_calls, 3);

  res = http().Get("/admin/metrics?format=xml");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);

  res = http().Post("/admin/metrics/reset", "", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

// --- determinism -----------------------------------------------------------------

std::vector<int> statuses_of_a_fixed_sequence(std::uint16_t port) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(5, 0);
  json reset = kReset;
  reset.erase("seed");  // the reset's seed would override --seed
  c.Post("/admin/reset", reset.dump(), "application/json");
  std::vector<int> out;
  for (int i = 0; i < 40; ++i) {
    auto r = c.Get(i % 2 ? "/api/v2/users/auth0%7Cu1" : "/api/v2/users/auth0%7Cu2");
    out.push_back(r ? r->status : 0);
  }
  return out;
}

TEST(FakePartnerSeed, SameSeedAndSameRequestsGiveTheSameFaultsAndMetrics) {
  const json doc = {{"latency", {{"*", {{"dist", "uniform"}, {"min_ms", 0}, {"max_ms", 4}}}}},
                    {"faults", {{"auth0.get", {{{"kind", "error"}, {"p", 0.5}, {"status", 503}}}}}}};
  ConfigFile file(doc);
  auto run = [&](const std::string& seed) {
    PartnerProcess server({"--config", file.path(), "--seed", seed});
    const auto statuses = statuses_of_a_fixed_sequence(server.port());
    httplib::Client c("127.0.0.1", server.port());
    auto metrics = c.Get("/admin/metrics");
    return std::make_pair(statuses, metrics ? json::parse(metrics->body, nullptr, false) : json());
  };
  const auto a = run("7");
  const auto b = run("7");
  const auto other = run("8");
  EXPECT_EQ(a.first, b.first);
  EXPECT_EQ(a.second, b.second);
  EXPECT_NE(a.first, other.first);
  EXPECT_NE(std::count(a.first.begin(), a.first.end(), 503), 0);
  EXPECT_NE(std::count(a.first.begin(), a.first.end(), 200), 0);
}

// Latencies are only visible as time, so this compares them with a wide margin:
// draws spread over 0..800 ms must match call by call within 150 ms.
TEST(FakePartnerSeed, SameSeedGivesTheSameLatencyCallByCall) {
  ConfigFile file(json{{"latency", {{"*", {{"dist", "uniform"}, {"min_ms", 0}, {"max_ms", 800}}}}}});
  auto latencies_ms = [&] {
    PartnerProcess server({"--config", file.path(), "--seed", "11"});
    httplib::Client c("127.0.0.1", server.port());
    c.set_read_timeout(5, 0);
    c.Post("/admin/reset", R"({"persons":[{"identities":["auth0|u1"]}]})", "application/json");
    std::vector<double> out;
    for (int i = 0; i < 8; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      auto r = c.Get("/api/v2/users/auth0%7Cu1");
      out.push_back(r ? std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() : -1);
    }
    return out;
  };
  auto other = std::async(std::launch::async, latencies_ms);  // both runs at once: half the wall time
  const auto a = latencies_ms();
  const auto b = other.get();
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_GE(a[i], 0);
    EXPECT_NEAR(a[i], b[i], 150) << "call " << i;
  }
  EXPECT_GT(*std::max_element(a.begin(), a.end()) - *std::min_element(a.begin(), a.end()), 200)
      << "the draws should spread over 0..800 ms";
}

// --- the executable ---------------------------------------------------------------

TEST(FakePartnerFlags, ABadFlagOrConfigGetsOneLineAndExitCode2) {
  auto r = run_to_exit({"--port", "not-a-port"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.stderr_text.begin(), r.stderr_text.end(), '\n'), 1) << r.stderr_text;

  r = run_to_exit({"--config", "/nonexistent/partner.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.stderr_text.find("--config"), std::string::npos) << r.stderr_text;

  ConfigFile bad(json{{"fencing", "sometimes"}});
  r = run_to_exit({"--port", "0", "--config", bad.path()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.stderr_text.find("fencing"), std::string::npos) << r.stderr_text;
  EXPECT_EQ(std::count(r.stderr_text.begin(), r.stderr_text.end(), '\n'), 1) << r.stderr_text;

  r = run_to_exit({"--port", "0", "--idle-timeout", "soon"});
  EXPECT_EQ(r.exit_code, 2);
  r = run_to_exit({"--port", "0", "--seed", "-1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.stderr_text.find("--seed"), std::string::npos) << r.stderr_text;
  r = run_to_exit({"--port", "0", "--bind", "not-an-address"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.stderr_text.begin(), r.stderr_text.end(), '\n'), 1) << r.stderr_text;
}

TEST(FakePartnerFlags, SigtermStopsTheServerCleanly) {
  PartnerProcess server;
  const int status = server.stop();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace lockbench::partner_server::testing

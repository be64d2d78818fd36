// Token buckets: an empty bucket answers 429 at the door and nothing executes.
#include "fake_partner/model/test_support.hpp"

namespace lockbench::partner {
namespace {
using testing::Harness;
using testing::instant_config;

std::string header(const Reply& r, std::string_view name) {
  for (const auto& [k, v] : r.headers())
    if (k == name) return v;
  return "";
}

TEST(RateLimit, AnEmptyBucketAnswers429WithoutExecuting) {
  Harness h(instant_config({{"rate_limit", {{"size", 2}, {"refill_per_s", 1}, {"scope", "tenant"}}}}));
  EXPECT_EQ(h.call(Call::get_user("auth0|u1")).status, 200);
  EXPECT_EQ(h.call(Call::get_user("auth0|u1")).status, 200);
  const Plan p = h.partner.arrive(Call::unlink("auth0|u1", "google-oauth2|u1"), {}, h.now);
  EXPECT_TRUE(p.rate_limited);
  EXPECT_EQ(p.delay, Duration(0));
  const Reply r = h.partner.execute(p.call_id, h.now);
  h.partner.complete(p.call_id, h.now);
  EXPECT_EQ(r.status, 429);
  EXPECT_FALSE(r.applied);
  EXPECT_EQ(r.body()["message"], "Global limit has been reached");
  EXPECT_EQ(header(r, "X-RateLimit-Limit"), "2");
  EXPECT_EQ(header(r, "X-RateLimit-Remaining"), "0");
  // The identity is still linked: the call never executed.
  EXPECT_EQ(h.partner.state_json()["users"].size(), 2u);
  EXPECT_EQ(h.partner.metrics_json()["requests"]["auth0.unlink"]["429"], 1);
}

TEST(RateLimit, TheBucketRefillsOverTimeAndTheResetHeaderSaysWhenItIsFull) {
  Harness h(instant_config({{"rate_limit", {{"size", 1}, {"refill_per_s", 1}}}}));
  h.now = std::chrono::seconds(100);
  const Reply first = h.call(Call::get_user("auth0|u1"));
  EXPECT_EQ(first.status, 200);
  EXPECT_EQ(header(first, "X-RateLimit-Reset"), "101");
  EXPECT_EQ(h.call(Call::get_user("auth0|u1")).status, 429);
  h.now += std::chrono::seconds(1);
  EXPECT_EQ(h.call(Call::get_user("auth0|u1")).status, 200);
}

TEST(RateLimit, EndpointScopeKeepsOneBucketPerEndpoint) {
  Harness h(instant_config({{"rate_limit", {{"size", 1}, {"refill_per_s", 0}, {"scope", "endpoint"}}}}));
  EXPECT_EQ(h.call(Call::get_user("auth0|u1")).status, 200);
  EXPECT_EQ(h.call(Call::get_user("auth0|u1")).status, 429);
  EXPECT_EQ(h.call(Call::get_charge("ch_000001")).status, 404);  // its own bucket: not limited
}

TEST(RateLimit, TenantScopeKeepsOneBucketPerTenant) {
  Harness h(instant_config({{"rate_limit", {{"size", 1}, {"refill_per_s", 0}}}}));
  Tags acme;
  acme.tenant = "acme";
  EXPECT_EQ(h.call(Call::get_user("auth0|u1")).status, 200);
  EXPECT_EQ(h.call(Call::get_charge("ch_000001")).status, 429);
  EXPECT_EQ(h.call(Call::get_user("auth0|u1"), acme).status, 200);
}

TEST(RateLimit, WithoutRateLimitThereAreNoRateLimitHeaders) {
  Harness h;
  EXPECT_EQ(header(h.call(Call::get_user("auth0|u1")), "X-RateLimit-Limit"), "");
}

TEST(RateLimit, AConfigUpdateThatShrinksTheBucketTakesEffectAtOnce) {
  Harness h(instant_config({{"rate_limit", {{"size", 10}, {"refill_per_s", 0}}}}));
  EXPECT_EQ(h.call(Call::get_user("auth0|u1")).status, 200);  // 9 left
  h.partner.update_config({{"rate_limit", {{"size", 1}}}});
  EXPECT_EQ(h.call(Call::get_user("auth0|u1")).status, 200);
  EXPECT_EQ(h.call(Call::get_user("auth0|u1")).status, 429);
}

TEST(RateLimit, PastTheTenantBoundNewTenantsShareOneBucket) {
  Harness h(instant_config({{"rate_limit", {{"size", 1}, {"refill_per_s", 0}}}}));
  Tags t;
  for (int i = 0; i < 1024; ++i) {
    t.tenant = "t" + std::to_string(i);
    ASSERT_EQ(h.call(Call::get_user("auth0|u1"), t).status, 200) << t.tenant;
  }
  t.tenant = "late1";
  EXPECT_EQ(h.call(Call::get_user("auth0|u1"), t).status, 200);
  t.tenant = "late2";
  EXPECT_EQ(h.call(Call::get_user("auth0|u1"), t).status, 429);  // the shared bucket is empty
}

}  // namespace
}  // namespace lockbench::partner

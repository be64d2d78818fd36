// Section B: charges, refunds and every row of the idempotency table.
#include "fake_partner/model/test_support.hpp"

namespace lockbench::partner {
namespace {
using testing::Harness;
using testing::instant_config;
using testing::keyed;

bool replayed_header(const Reply& r) {
  for (const auto& [k, v] : r.headers())
    if (k == "Idempotent-Replayed" && v == "true") return true;
  return false;
}

std::size_t charge_count(const Partner& p) { return p.state_json()["charges"].size(); }

TEST(Payments, AChargeSucceedsWithTheStripeChargeObject) {
  Harness h;
  const Reply r = h.call(Call::charge("o1", 2500, "eur"));
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.applied);
  const auto b = r.body();
  EXPECT_EQ(b["object"], "charge");
  EXPECT_EQ(b["status"], "succeeded");
  EXPECT_EQ(b["amount"], 2500);
  EXPECT_EQ(b["metadata"]["order_id"], "o1");
  EXPECT_EQ(b["id"].get<std::string>().rfind("ch_", 0), 0u);
}

TEST(Payments, AChargeOfZeroIsRefusedWith400) {
  Harness h;
  const Reply r = h.call(Call::charge("o1", 0, "eur"));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body()["error"]["type"], "invalid_request_error");
  EXPECT_EQ(charge_count(h.partner), 0u);
}

TEST(Payments, GetFindsAChargeAnd404sAnUnknownOne) {
  Harness h;
  const Reply c = h.call(Call::charge("o1", 2500, "eur"));
  const Reply g = h.call(Call::get_charge(c.charge.id));
  EXPECT_EQ(g.status, 200);
  EXPECT_EQ(g.charge.order_id, "o1");
  const Reply missing = h.call(Call::get_charge("ch_999999"));
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.body()["error"]["code"], "resource_missing");
}

TEST(Payments, ARefundSucceedsOnceThenIs400) {
  Harness h;
  const Reply c = h.call(Call::charge("o1", 2500, "eur"));
  const Reply r = h.call(Call::refund(c.charge.id));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body()["object"], "refund");
  EXPECT_EQ(r.body()["charge"], c.charge.id);
  EXPECT_EQ(h.call(Call::refund(c.charge.id)).status, 400);
  EXPECT_EQ(h.call(Call::refund("ch_nope")).status, 404);
}

TEST(Idempotency, ANewKeyExecutesAndASecondIdenticalCallReplaysTheStoredAnswer) {
  Harness h;
  const Reply first = h.call(Call::charge("o1", 2500, "eur"), keyed("k1"));
  const Reply again = h.call(Call::charge("o1", 2500, "eur"), keyed("k1"));
  EXPECT_EQ(first.status, 200);
  EXPECT_FALSE(replayed_header(first));
  EXPECT_EQ(again.status, 200);
  EXPECT_TRUE(again.replayed);
  EXPECT_FALSE(again.applied);
  EXPECT_TRUE(replayed_header(again));
  EXPECT_EQ(again.charge.id, first.charge.id);
  EXPECT_EQ(charge_count(h.partner), 1u);
  EXPECT_EQ(h.check().count("double_charge"), 0);
}

TEST(Idempotency, AKeyInFlightAnswers409AndIsNotStored) {
  Harness h;
  const Plan a = h.partner.arrive(Call::charge("o1", 2500, "eur"), keyed("k1"), h.now);
  const Plan b = h.partner.arrive(Call::charge("o1", 2500, "eur"), keyed("k1"), h.now);
  const Reply rb = h.partner.execute(b.call_id, h.now);
  EXPECT_EQ(rb.status, 409);
  EXPECT_EQ(rb.body()["error"]["code"], "idempotency_key_in_use");
  EXPECT_EQ(h.partner.execute(a.call_id, h.now).status, 200);
  h.partner.complete(a.call_id, h.now);
  h.partner.complete(b.call_id, h.now);
  EXPECT_EQ(charge_count(h.partner), 1u);
  EXPECT_TRUE(h.call(Call::charge("o1", 2500, "eur"), keyed("k1")).replayed);  // the 200 was stored, not the 409
  EXPECT_EQ(h.check().count("order_overlap"), 0);  // the 409 never executed
}

TEST(Idempotency, TheSameKeyWithOtherParametersIs400IdempotencyError) {
  Harness h;
  h.call(Call::charge("o1", 2500, "eur"), keyed("k1"));
  const Reply r = h.call(Call::charge("o1", 2600, "eur"), keyed("k1"));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body()["error"]["type"], "idempotency_error");
  EXPECT_EQ(charge_count(h.partner), 1u);
}

TEST(Idempotency, KeysAreScopedPerTenant) {
  Harness h;
  Tags other = keyed("k1");
  other.tenant = "acme";
  h.call(Call::charge("o1", 2500, "eur"), keyed("k1"));
  EXPECT_FALSE(h.call(Call::charge("o1", 2500, "eur"), other).replayed);
  EXPECT_EQ(charge_count(h.partner), 2u);
}

TEST(Idempotency, KeysExpireAfterIdemTtl) {
  Harness h(instant_config({{"payments", {{"idem_ttl_ms", 1000}}}}));
  h.call(Call::charge("o1", 2500, "eur"), keyed("k1"));
  EXPECT_TRUE(h.call(Call::charge("o1", 2500, "eur"), keyed("k1")).replayed);
  h.now += std::chrono::seconds(2);
  const Reply late = h.call(Call::charge("o1", 2500, "eur"), keyed("k1"));
  EXPECT_FALSE(late.replayed);
  EXPECT_EQ(charge_count(h.partner), 2u);
}

TEST(Idempotency, A5xxAfterExecutionBeganIsStoredAndReplayed) {
  Harness h(instant_config(
      {{"script", {{{"endpoint", "stripe.charge"}, {"nth", 1}, {"fault", {{"kind", "error"}, {"status", 500}, {"phase", "after"}}}}}}}));
  const Reply first = h.call(Call::charge("o1", 2500, "eur"), keyed("k1"));
  EXPECT_EQ(first.status, 500);
  EXPECT_TRUE(first.applied);
  const Reply retry = h.call(Call::charge("o1", 2500, "eur"), keyed("k1"));
  EXPECT_EQ(retry.status, 500);
  EXPECT_TRUE(retry.replayed);
  EXPECT_EQ(charge_count(h.partner), 1u);
}

TEST(Idempotency, AFaultBeforeTheEffectStoresNothingSoTheRetryExecutes) {
  Harness h(instant_config(
      {{"script", {{{"endpoint", "stripe.charge"}, {"nth", 1}, {"fault", {{"kind", "error"}, {"status", 503}}}}}}}));
  EXPECT_EQ(h.call(Call::charge("o1", 2500, "eur"), keyed("k1")).status, 503);
  const Reply retry = h.call(Call::charge("o1", 2500, "eur"), keyed("k1"));
  EXPECT_EQ(retry.status, 200);
  EXPECT_FALSE(retry.replayed);
  EXPECT_EQ(charge_count(h.partner), 1u);
}

TEST(Idempotency, AKeyLongerThan255Is400) {
  Harness h;
  EXPECT_EQ(h.call(Call::charge("o1", 2500, "eur"), keyed(std::string(256, 'k'))).status, 400);
  EXPECT_EQ(h.call(Call::charge("o1", 2500, "eur"), keyed(std::string(255, 'k'))).status, 200);
}

}  // namespace
}  // namespace lockbench::partner

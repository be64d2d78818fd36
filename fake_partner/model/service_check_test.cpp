// The two-sided verdict: what the service's database stored against what the partner holds,
// and the payouts and credits of the advisory-lock article's incidents.
#include "fake_partner/model/test_support.hpp"

namespace lockbench::partner {
namespace {
using std::chrono::milliseconds;
using testing::Harness;
using testing::instant_config;
using testing::keyed;
using testing::op;

bool listed(const CheckReport& r, std::string_view kind, std::string_view subject, std::uint64_t op_id) {
  for (const auto& v : r.violations)
    if (v.kind == kind && v.subject == subject &&
        std::find(v.request_ids.begin(), v.request_ids.end(), op_id) != v.request_ids.end())
      return true;
  return false;
}

ServiceView view(const char* json) { return ServiceView::from_json(nlohmann::json::parse(json)); }

ResetSpec with_accounts() {
  ResetSpec r = ResetSpec::persons_with_two_identities(2);
  r.accounts.push_back({"a1", 10000, "eur"});
  return r;
}

std::int64_t violations(const CheckReport& r) {
  std::int64_t n = 0;
  for (auto kind : kCheckKinds)
    if (is_violation_kind(kind)) n += r.count(kind);
  return n;
}

TEST(ServiceView, APromotionTheServiceNeverStoredIsADivergenceWithTheOpThatMadeIt) {
  Harness h;
  h.call(Call::unlink("auth0|u1", "google-oauth2|u1"), op(4, 1));
  h.call(Call::link("google-oauth2|u1", "auth0|u1"), op(4, 2));
  // The link succeeded at the partner, the service's commit failed: it still says auth0|u1.
  const CheckReport r = h.partner.check(h.now, view(R"({"primaries": {"auth0|u1": "auth0|u1", "auth0|u2": "auth0|u2"}})"));
  EXPECT_EQ(r.count("db_partner_divergence"), 1);
  EXPECT_TRUE(listed(r, "db_partner_divergence", "auth0|u1", 4));
  // Stored: no divergence.
  const CheckReport ok = h.partner.check(h.now, view(R"({"primaries": {"auth0|u1": "google-oauth2|u1"}})"));
  EXPECT_EQ(ok.count("db_partner_divergence"), 0);
  EXPECT_EQ(violations(ok), 0);
}

TEST(ServiceView, ASplitPersonDivergesWhateverTheServiceStored) {
  Harness h;
  h.call(Call::unlink("auth0|u1", "google-oauth2|u1"), op(1, 1));  // step 2 never came
  const CheckReport r = h.partner.check(h.now, view(R"({"primaries": {"auth0|u1": "auth0|u1"}})"));
  EXPECT_EQ(r.count("db_partner_divergence"), 1);
  EXPECT_EQ(r.count("person_split"), 1);
}

TEST(ServiceView, AnUntouchedRangePersonIsComparedWithItsSeededPrimaryWithoutComingIntoBeing) {
  ResetSpec spec;
  spec.person_range = PersonRange{1000000, 3};
  Harness h(instant_config(), spec);
  const CheckReport ok = h.partner.check(h.now, view(R"({"primaries": {"auth0|u77": "auth0|u77"}})"));
  EXPECT_EQ(ok.count("db_partner_divergence"), 0);
  const CheckReport bad = h.partner.check(h.now, view(R"({"primaries": {"auth0|u78": "github|u78", "auth0|u0": "x|y"}})"));
  EXPECT_EQ(bad.count("db_partner_divergence"), 2);  // wrong primary; a person the partner does not know
  EXPECT_EQ(h.partner.persons_touched(), 0u);
}

TEST(ServiceView, AChargeWhoseOrderIsNotPaidWithItIsAnOrphanAndAPaidOrderWithoutAChargeIsCaught) {
  Harness h;
  const Reply c1 = h.call(Call::charge("o1", 2500, "eur"), op(11));
  const Reply c2 = h.call(Call::charge("o2", 1000, "eur"), op(12));
  const CheckReport r = h.partner.check(h.now, view(R"({"orders": {
      "o1": {"status": "PAID", "charge_id": "ch_000001"},
      "o2": {"status": "PAYMENT_PENDING", "charge_id": null},
      "o3": {"status": "PAID", "charge_id": "ch_000099"},
      "o4": {"status": "PAID", "charge_id": "ch_000002"}}})"));
  EXPECT_EQ(c1.charge.id, "ch_000001");
  EXPECT_EQ(c2.charge.id, "ch_000002");
  EXPECT_EQ(r.count("orphan_charge"), 1);  // o2: money taken, order not paid
  EXPECT_TRUE(listed(r, "orphan_charge", "o2", 12));
  EXPECT_EQ(r.count("paid_without_charge"), 2);  // o3: unknown charge; o4: another order's charge
  const CheckReport ok = h.partner.check(h.now, view(R"({"orders": {
      "o1": {"status": "PAID", "charge_id": "ch_000001"}, "o2": {"status": "PAID", "charge_id": "ch_000002"}}})"));
  EXPECT_EQ(violations(ok), 0);
}

TEST(ServiceView, ARefundedChargeBehindAPaidOrderIsPaidWithoutCharge) {
  Harness h;
  const Reply c = h.call(Call::charge("o1", 2500, "eur"));
  h.call(Call::refund(c.charge.id));
  const CheckReport r = h.partner.check(h.now, view(R"({"orders": {"o1": {"status": "PAID", "charge_id": "ch_000001"}}})"));
  EXPECT_EQ(r.count("paid_without_charge"), 1);
  EXPECT_EQ(r.count("orphan_charge"), 0);
}

TEST(ServiceView, BadDocumentsAreRefusedByPath) {
  const auto refused = [](const char* json, const char* path) {
    try {
      ServiceView::from_json(nlohmann::json::parse(json));
    } catch (const SettingError& e) {
      return std::string(e.what()).rfind(path, 0) == 0;
    }
    return false;
  };
  EXPECT_TRUE(refused(R"([])", "service"));
  EXPECT_TRUE(refused(R"({"users": {}})", "service.users"));
  EXPECT_TRUE(refused(R"({"primaries": {"auth0|u1": 3}})", "service.primaries.auth0|u1"));
  EXPECT_TRUE(refused(R"({"orders": {"o1": {"state": "PAID"}}})", "service.orders.o1.state"));
  EXPECT_TRUE(refused(R"({"balances": {"a1": "10"}})", "service.balances.a1"));
  EXPECT_TRUE(refused(R"({"claims": {"c1": {"welcome": -1}}})", "service.claims.c1.welcome"));
  const auto v = view(R"({"primaries": {"auth0|u1": "auth0|u1"}, "orders": {"o1": {"status": "PAID", "charge_id": "ch_000001"}},
                          "balances": {"a1": 5}, "claims": {"c1": {"welcome": 1}}})");
  EXPECT_EQ(ServiceView::from_json(v.to_json()).to_json(), v.to_json());
}

TEST(Payouts, APayoutSucceedsWithTheStripePayoutObjectAndAZeroAmountIsRefused) {
  Harness h(instant_config(), with_accounts());
  const Reply r = h.call(Call::payout("a1", 4000, "eur"));
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.applied);
  EXPECT_EQ(r.body()["object"], "payout");
  EXPECT_EQ(r.body()["metadata"]["account_id"], "a1");
  EXPECT_EQ(r.body()["id"], "po_000001");
  EXPECT_EQ(h.call(Call::payout("a1", 0, "eur")).status, 400);
  EXPECT_EQ(h.partner.state_json()["payouts"].size(), 1u);
}

TEST(Payouts, PayoutsBeyondTheOpeningBalanceOverdrawTheAccount) {
  Harness h(instant_config(), with_accounts());
  // Two pods read a balance of 10000 and each pays out 6000.
  h.call(Call::payout("a1", 6000, "eur"), op(1));
  EXPECT_EQ(h.check().count("overdrawn"), 0);
  h.call(Call::payout("a1", 6000, "eur"), op(2));
  const CheckReport r = h.check();
  EXPECT_EQ(r.count("overdrawn"), 1);
  EXPECT_TRUE(listed(r, "overdrawn", "a1", 1));
  EXPECT_TRUE(listed(r, "overdrawn", "a1", 2));
  // The service's lost update: it believes 4000 is left, the partner paid out 12000 of 10000.
  const CheckReport two = h.partner.check(h.now, view(R"({"balances": {"a1": 4000}})"));
  EXPECT_EQ(two.count("balance_divergence"), 1);
}

TEST(Payouts, PayoutsWithinTheBalanceAndAServiceThatAgreesAreClean) {
  Harness h(instant_config(), with_accounts());
  h.call(Call::payout("a1", 6000, "eur"), op(1));
  h.call(Call::payout("a1", 3000, "eur"), op(2));
  const CheckReport r = h.partner.check(h.now, view(R"({"balances": {"a1": 1000}})"));
  EXPECT_EQ(violations(r), 0);
}

TEST(Payouts, AnIdempotencyKeyMakesARetriedPayoutPayOnce) {
  Harness h(instant_config(), with_accounts());
  const Reply a = h.call(Call::payout("a1", 6000, "eur"), keyed("payout-1"));
  const Reply b = h.call(Call::payout("a1", 6000, "eur"), keyed("payout-1"));
  EXPECT_TRUE(b.replayed);
  EXPECT_EQ(b.payout.id, a.payout.id);
  EXPECT_EQ(h.call(Call::payout("a1", 7000, "eur"), keyed("payout-1")).status, 400);  // other parameters
  EXPECT_EQ(h.partner.state_json()["payouts"].size(), 1u);
  EXPECT_EQ(h.check().count("overdrawn"), 0);
}

TEST(Payouts, LatencyAndFaultsApplyByTheEndpointName) {
  Harness h(instant_config({{"latency", {{"stripe.payout", {{"dist", "fixed"}, {"ms", 250}}}}},
                            {"faults", {{"stripe.credit", {{{"kind", "error"}, {"p", 1.0}, {"status", 502}}}}}}}),
            with_accounts());
  const Plan p = h.partner.arrive(Call::payout("a1", 10, "eur"), {}, h.now);
  EXPECT_EQ(p.delay, milliseconds(250));
  h.partner.execute(p.call_id, h.now + p.apply_after);
  h.partner.complete(p.call_id, h.now + p.delay);
  EXPECT_EQ(h.call(Call::credit("c1", -500, "welcome")).status, 502);
  const auto m = h.partner.metrics_json();
  EXPECT_EQ(m["arrivals"]["stripe.payout"], 1);
  EXPECT_EQ(m["requests"]["stripe.credit"]["502"], 1);
  EXPECT_EQ(m["faults"]["stripe.credit"]["error"], 1);
}

TEST(Credits, ACreditSucceedsAndAPositiveAmountIsRefused) {
  Harness h;
  const Reply r = h.call(Call::credit("c1", -500, "welcome"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body()["object"], "customer_balance_transaction");
  EXPECT_EQ(r.body()["customer"], "c1");
  EXPECT_EQ(r.body()["metadata"]["reward"], "welcome");
  const Reply bad = h.call(Call::credit("c1", 500, "welcome"));
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.body()["error"]["code"], "parameter_invalid_integer");
}

TEST(Credits, TwoCreditsOfOneRewardForOneCustomerAreADuplicateReward) {
  Harness h;
  h.call(Call::credit("c1", -500, "welcome"), op(1));
  h.call(Call::credit("c1", -500, "referral"), op(2));
  h.call(Call::credit("c2", -500, "welcome"), op(3));
  const CheckReport clean = h.partner.check(h.now, view(R"({"claims": {"c1": {"welcome": 1, "referral": 1}, "c2": {"welcome": 1}}})"));
  EXPECT_EQ(violations(clean), 0);
  h.call(Call::credit("c1", -500, "welcome"), op(4));
  // The unique constraint kept one claim row: the second credit already happened at the partner.
  const CheckReport r = h.partner.check(h.now, view(R"({"claims": {"c1": {"welcome": 1, "referral": 1}, "c2": {"welcome": 1}}})"));
  EXPECT_EQ(r.count("duplicate_reward"), 1);
  EXPECT_TRUE(listed(r, "duplicate_reward", "c1", 1));
  EXPECT_TRUE(listed(r, "duplicate_reward", "c1", 4));
  EXPECT_EQ(r.count("claim_divergence"), 1);
}

TEST(Credits, AnIdempotencyKeyMakesARetriedCreditGrantOnce) {
  Harness h;
  h.call(Call::credit("c1", -500, "welcome"), keyed("claim-c1-welcome"));
  EXPECT_TRUE(h.call(Call::credit("c1", -500, "welcome"), keyed("claim-c1-welcome")).replayed);
  EXPECT_EQ(h.check().count("duplicate_reward"), 0);
}

TEST(Charges, OrderOverlapStillWitnessesTwoChargeExecutionsOfOneOrder) {
  Harness h;
  const Plan a = h.partner.arrive(Call::charge("o1", 2500, "eur"), op(1), h.now);
  const Plan b = h.partner.arrive(Call::charge("o1", 2500, "eur"), op(1), h.now);  // the same checkout, resubmitted
  h.partner.execute(a.call_id, h.now);
  h.partner.execute(b.call_id, h.now);
  h.partner.complete(a.call_id, h.now);
  h.partner.complete(b.call_id, h.now);
  const CheckReport r = h.check();
  EXPECT_EQ(r.count("order_overlap"), 1);
  EXPECT_EQ(r.count("double_charge"), 1);
  EXPECT_TRUE(listed(r, "double_charge", "o1", 1));
}

}  // namespace
}  // namespace lockbench::partner

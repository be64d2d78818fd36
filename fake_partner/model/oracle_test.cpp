// The oracle: races are seen, correct runs are clean.
#include "fake_partner/model/test_support.hpp"

namespace lockbench::partner {
namespace {
using testing::Harness;
using testing::instant_config;
using testing::keyed;
using testing::op;
using testing::three_identities;

bool has_violation(const CheckReport& r, std::string_view kind, std::uint64_t op_id) {
  for (const auto& v : r.violations)
    if (v.kind == kind && std::find(v.request_ids.begin(), v.request_ids.end(), op_id) != v.request_ids.end()) return true;
  return false;
}

// Op 1 promotes google-oauth2|u1, op 2 promotes github|u1; both read auth0|u1 as primary.
TEST(Oracle, TwoInterleavedPromotionsOfOnePersonSplitItAndInterleaveTheirFlows) {
  Harness h(instant_config(), three_identities());
  EXPECT_EQ(h.call(Call::unlink("auth0|u1", "google-oauth2|u1"), op(1, 1)).status, 200);
  EXPECT_EQ(h.call(Call::unlink("auth0|u1", "github|u1"), op(2, 1)).status, 200);
  EXPECT_EQ(h.call(Call::link("google-oauth2|u1", "auth0|u1"), op(1, 2)).status, 201);
  EXPECT_EQ(h.call(Call::link("github|u1", "auth0|u1"), op(2, 2)).status, 400);  // auth0|u1 is gone
  const CheckReport r = h.check();
  EXPECT_GE(r.count("person_split") + r.count("lost_promotion"), 1);
  EXPECT_EQ(r.count("person_split"), 1);
  EXPECT_EQ(r.count("flow_interleaving"), 2);  // each op saw the other commit between its steps
  EXPECT_TRUE(has_violation(r, "flow_interleaving", 1));
  EXPECT_TRUE(has_violation(r, "flow_interleaving", 2));
  EXPECT_EQ(r.count("overlap_person"), 0);  // one call at a time: the calls never overlapped
  EXPECT_EQ(r.count("user_malformed"), 0);
}

TEST(Oracle, ConcurrentPromotionsWithLatencyAreSeenByEveryWitness) {
  using std::chrono::milliseconds;
  Harness h(instant_config({{"latency", {{"*", {{"dist", "fixed"}, {"ms", 100}, {"apply_at", 0.5}}}}}}), three_identities());
  Partner& p = h.partner;
  // Each call: effect 50 ms after arrival, answer 100 ms after arrival.
  const Plan a1 = p.arrive(Call::unlink("auth0|u1", "google-oauth2|u1"), op(1, 1), milliseconds(0));
  const Plan b1 = p.arrive(Call::unlink("auth0|u1", "github|u1"), op(2, 1), milliseconds(10));
  EXPECT_EQ(p.execute(a1.call_id, milliseconds(50)).status, 200);
  EXPECT_EQ(p.execute(b1.call_id, milliseconds(60)).status, 200);
  p.complete(a1.call_id, milliseconds(100));
  const Plan a2 = p.arrive(Call::link("google-oauth2|u1", "auth0|u1"), op(1, 2), milliseconds(100));
  p.complete(b1.call_id, milliseconds(110));
  const Plan b2 = p.arrive(Call::link("github|u1", "auth0|u1"), op(2, 2), milliseconds(110));
  EXPECT_EQ(p.execute(a2.call_id, milliseconds(150)).status, 201);
  EXPECT_EQ(p.execute(b2.call_id, milliseconds(160)).status, 400);
  p.complete(a2.call_id, milliseconds(200));
  p.complete(b2.call_id, milliseconds(210));
  const CheckReport r = p.check(milliseconds(210));
  EXPECT_EQ(r.count("overlap_person"), 3);  // b1 over a1, a2 over b1, b2 over a2
  EXPECT_EQ(r.max_inflight_per_person, 2);
  EXPECT_EQ(r.count("flow_interleaving"), 2);
  EXPECT_EQ(r.count("person_split"), 1);
  EXPECT_EQ(p.inflight(), 0u);
}

TEST(Oracle, TheSamePromotionsOneAfterTheOtherGiveNoViolation) {
  Harness h(instant_config(), three_identities());
  EXPECT_EQ(h.call(Call::unlink("auth0|u1", "google-oauth2|u1"), op(1, 1)).status, 200);
  EXPECT_EQ(h.call(Call::link("google-oauth2|u1", "auth0|u1"), op(1, 2)).status, 201);
  // Op 2 reads the new primary and promotes github|u1.
  EXPECT_EQ(h.call(Call::unlink("google-oauth2|u1", "github|u1"), op(2, 1)).status, 200);
  EXPECT_EQ(h.call(Call::link("github|u1", "google-oauth2|u1"), op(2, 2)).status, 201);
  const CheckReport r = h.check();
  for (auto kind : kCheckKinds) EXPECT_EQ(r.count(kind), 0) << kind;
  EXPECT_TRUE(r.violations.empty());
  EXPECT_EQ(r.max_inflight_per_person, 1);
}

TEST(Oracle, OverlappingMutationsOfOnePersonAreWitnessedEvenWhenTheResultIsRight) {
  Harness h;
  const Plan a = h.partner.arrive(Call::unlink("auth0|u1", "google-oauth2|u1"), op(1, 1), h.now);
  const Plan b = h.partner.arrive(Call::unlink("auth0|u1", "google-oauth2|u1"), op(2, 1), h.now);
  EXPECT_EQ(h.partner.execute(a.call_id, h.now).status, 200);
  EXPECT_FALSE(h.partner.execute(b.call_id, h.now).applied);  // already unlinked: 200 unchanged
  h.partner.complete(a.call_id, h.now);
  h.partner.complete(b.call_id, h.now);
  EXPECT_EQ(h.call(Call::link("google-oauth2|u1", "auth0|u1"), op(1, 2)).status, 201);
  const CheckReport r = h.check();
  EXPECT_EQ(r.count("overlap_person"), 1);
  EXPECT_EQ(r.max_inflight_per_person, 2);
  EXPECT_TRUE(has_violation(r, "overlap_person", 1));
  EXPECT_TRUE(has_violation(r, "overlap_person", 2));
  EXPECT_EQ(r.count("person_split"), 0);
}

TEST(Oracle, MutationsOfDifferentPersonsDoNotOverlap) {
  Harness h;
  const Plan a = h.partner.arrive(Call::unlink("auth0|u1", "google-oauth2|u1"), op(1, 1), h.now);
  const Plan b = h.partner.arrive(Call::unlink("auth0|u2", "google-oauth2|u2"), op(2, 1), h.now);
  const Plan g = h.partner.arrive(Call::get_user("auth0|u1"), op(3), h.now);  // reads are not mutations
  for (auto id : {a.call_id, b.call_id, g.call_id}) h.partner.execute(id, h.now);
  for (auto id : {a.call_id, b.call_id, g.call_id}) h.partner.complete(id, h.now);
  const CheckReport r = h.check();
  EXPECT_EQ(r.count("overlap_person"), 0);
  EXPECT_EQ(r.max_inflight_per_person, 1);
}

TEST(Oracle, APromotionUndoneByOtherCallsIsALostPromotion) {
  Harness h;
  EXPECT_EQ(h.call(Call::unlink("auth0|u1", "google-oauth2|u1"), op(1, 1)).status, 200);
  EXPECT_EQ(h.call(Call::link("google-oauth2|u1", "auth0|u1"), op(1, 2)).status, 201);
  // Untagged calls (not a promotion) put auth0|u1 back on top.
  EXPECT_EQ(h.call(Call::unlink("google-oauth2|u1", "auth0|u1")).status, 200);
  EXPECT_EQ(h.call(Call::link("auth0|u1", "google-oauth2|u1")).status, 201);
  const CheckReport r = h.check();
  EXPECT_EQ(r.count("lost_promotion"), 1);
  EXPECT_TRUE(has_violation(r, "lost_promotion", 1));
  EXPECT_EQ(r.count("person_split"), 0);
}

TEST(Oracle, DuplicateChargesWithoutIdempotencyKeyAreADoubleCharge) {
  Harness h;
  EXPECT_EQ(h.call(Call::charge("o1", 2500, "eur")).status, 200);
  EXPECT_EQ(h.call(Call::charge("o1", 2500, "eur")).status, 200);
  EXPECT_EQ(h.call(Call::charge("o2", 1000, "eur")).status, 200);
  const CheckReport r = h.check();
  EXPECT_EQ(r.count("double_charge"), 1);
  EXPECT_EQ(r.violations.at(0).subject, "o1");
  EXPECT_EQ(r.count("order_overlap"), 0);  // they ran one after the other
}

TEST(Oracle, ARefundedDuplicateIsNoLongerADoubleCharge) {
  Harness h;
  h.call(Call::charge("o1", 2500, "eur"));
  const Reply second = h.call(Call::charge("o1", 2500, "eur"));
  EXPECT_EQ(h.call(Call::refund(second.charge.id)).status, 200);
  EXPECT_EQ(h.check().count("double_charge"), 0);
}

TEST(Oracle, TwoChargeExecutionsForOneOrderInFlightAtOnceAreAnOrderOverlap) {
  Harness h;
  const Plan a = h.partner.arrive(Call::charge("o1", 2500, "eur"), op(1), h.now);
  const Plan b = h.partner.arrive(Call::charge("o1", 2500, "eur"), op(2), h.now);
  h.partner.execute(a.call_id, h.now);
  h.partner.execute(b.call_id, h.now);
  h.partner.complete(a.call_id, h.now);
  h.partner.complete(b.call_id, h.now);
  const CheckReport r = h.check();
  EXPECT_EQ(r.count("order_overlap"), 1);
  EXPECT_TRUE(has_violation(r, "order_overlap", 2));
  EXPECT_EQ(r.count("double_charge"), 1);
}

TEST(Oracle, TheObjectLockTurnsAConcurrentChargeInto429LockTimeout) {
  Harness h(instant_config({{"payments", {{"object_lock", true}, {"lock_timeout_ms", 100}}}}));
  const Plan a = h.partner.arrive(Call::charge("o1", 2500, "eur"), op(1), h.now);
  const Plan b = h.partner.arrive(Call::charge("o1", 2500, "eur"), op(2), h.now);
  EXPECT_EQ(b.delay, std::chrono::milliseconds(100));  // it waited for the lock
  EXPECT_EQ(h.partner.execute(a.call_id, h.now).status, 200);
  const Reply rb = h.partner.execute(b.call_id, h.now + b.apply_after);
  EXPECT_EQ(rb.status, 429);
  EXPECT_EQ(rb.body()["error"]["code"], "lock_timeout");
  h.partner.complete(a.call_id, h.now);
  h.partner.complete(b.call_id, h.now + b.delay);
  const CheckReport r = h.check();
  EXPECT_EQ(r.count("order_overlap"), 0);
  EXPECT_EQ(r.count("double_charge"), 0);
}

TEST(Oracle, AChargeForAnOrderTheServiceDoesNotHoldAsPaidIsAnOrphan) {
  Harness h;
  h.call(Call::charge("o1", 2500, "eur"));
  h.call(Call::charge("o2", 1000, "eur"));
  CheckInput in;
  in.paid_orders = std::vector<std::string>{"o1"};
  const CheckReport r = h.check(in);
  EXPECT_EQ(r.count("orphan_charge"), 1);
  EXPECT_EQ(h.check().count("orphan_charge"), 0);  // without the service's view there is no verdict
}

TEST(Oracle, AnAppliedCallWhoseAnswerIsLostIsAnAmbiguousCommitNotAViolation) {
  Harness h;
  const Plan p = h.partner.arrive(Call::unlink("auth0|u1", "google-oauth2|u1"), op(1, 1), h.now);
  EXPECT_TRUE(h.partner.execute(p.call_id, h.now).applied);
  h.partner.complete(p.call_id, h.now, Delivery::lost);  // the client timed out first
  const Plan q = h.partner.arrive(Call::get_user("auth0|u2"), op(2), h.now);
  h.partner.execute(q.call_id, h.now);
  h.partner.complete(q.call_id, h.now, Delivery::lost);  // a read changes nothing: not ambiguous
  const CheckReport r = h.check();
  EXPECT_EQ(r.count("ambiguous_commit"), 1);
  for (const auto& v : r.violations) EXPECT_NE(v.kind, "ambiguous_commit");
}

TEST(Oracle, CheckingTwiceGivesTheSameCounts) {
  Harness h(instant_config(), three_identities());
  h.call(Call::unlink("auth0|u1", "google-oauth2|u1"), op(1, 1));
  h.call(Call::charge("o1", 2500, "eur"));
  h.call(Call::charge("o1", 2500, "eur"));
  EXPECT_EQ(h.check().to_json(), h.check().to_json());
}

TEST(Oracle, ResetClearsTheVerdicts) {
  Harness h;
  h.call(Call::charge("o1", 2500, "eur"));
  h.call(Call::charge("o1", 2500, "eur"));
  h.partner.reset(ResetSpec::persons_with_two_identities(1), h.now);
  const CheckReport r = h.check();
  for (auto kind : kCheckKinds) EXPECT_EQ(r.count(kind), 0) << kind;
  EXPECT_EQ(r.to_json()["counts"].size(), std::size(kCheckKinds));
}

}  // namespace
}  // namespace lockbench::partner

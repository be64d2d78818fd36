// The oracle's episodes and retries: a request's own retry is not an overlap,
// and a person is judged each time its calls end, so later traffic cannot heal the evidence.
#include "fake_partner/model/test_support.hpp"

namespace lockbench::partner {
namespace {
using std::chrono::milliseconds;
using testing::Harness;
using testing::instant_config;
using testing::op;
using testing::three_identities;

bool listed(const std::vector<Violation>& list, std::string_view kind, std::uint64_t op_id) {
  for (const auto& v : list)
    if (v.kind == kind && std::find(v.request_ids.begin(), v.request_ids.end(), op_id) != v.request_ids.end()) return true;
  return false;
}

TEST(Retries, AnOperationRetriedWhileItsFirstAttemptIsInFlightIsARetryOverlapNotAnOverlap) {
  Harness h;
  Partner& p = h.partner;
  // The client's read timeout fires, it retries step 1 of the same operation; the first attempt is still running.
  const Plan first = p.arrive(Call::unlink("auth0|u1", "google-oauth2|u1"), op(7, 1), milliseconds(0));
  const Plan retry = p.arrive(Call::unlink("auth0|u1", "google-oauth2|u1"), op(7, 1), milliseconds(10));
  EXPECT_TRUE(p.execute(first.call_id, milliseconds(20)).applied);
  EXPECT_FALSE(p.execute(retry.call_id, milliseconds(30)).applied);
  p.complete(first.call_id, milliseconds(40), Delivery::lost);
  p.complete(retry.call_id, milliseconds(50));
  h.now = milliseconds(60);
  EXPECT_EQ(h.call(Call::link("google-oauth2|u1", "auth0|u1"), op(7, 2)).status, 201);
  const CheckReport r = h.check();
  EXPECT_EQ(r.count("retry_overlap"), 1);
  EXPECT_EQ(r.count("overlap_person"), 0);
  EXPECT_EQ(r.max_inflight_per_person, 1);  // one operation, two attempts
  EXPECT_TRUE(listed(r.notes, "retry_overlap", 7));
  for (const auto& v : r.violations) EXPECT_NE(v.kind, "retry_overlap");
  EXPECT_FALSE(is_violation_kind("retry_overlap"));
  EXPECT_EQ(r.count("person_split") + r.count("lost_promotion"), 0);
}

TEST(Retries, TwoOperationsInFlightOnOnePersonAreStillAnOverlap) {
  Harness h;
  Partner& p = h.partner;
  const Plan a = p.arrive(Call::unlink("auth0|u1", "google-oauth2|u1"), op(1, 1), milliseconds(0));
  const Plan again = p.arrive(Call::unlink("auth0|u1", "google-oauth2|u1"), op(1, 1), milliseconds(1));
  const Plan b = p.arrive(Call::get_user("auth0|u1"), op(2), milliseconds(2));  // a read: not a mutation
  const Plan c = p.arrive(Call::unlink("auth0|u1", "google-oauth2|u1"), op(2, 1), milliseconds(3));
  for (auto id : {a.call_id, again.call_id, b.call_id, c.call_id}) p.execute(id, milliseconds(5));
  for (auto id : {a.call_id, again.call_id, b.call_id, c.call_id}) p.complete(id, milliseconds(6));
  const CheckReport r = p.check(milliseconds(6));
  EXPECT_EQ(r.count("retry_overlap"), 1);
  EXPECT_EQ(r.count("overlap_person"), 1);  // op 2 arrived while op 1 (twice) was in flight
  EXPECT_TRUE(listed(r.violations, "overlap_person", 1));
  EXPECT_TRUE(listed(r.violations, "overlap_person", 2));
  EXPECT_EQ(r.max_inflight_per_person, 2);
}

Tags timed(std::uint64_t op_id, int step, int timeout_ms) {
  Tags t = op(op_id, step);
  t.client_timeout = milliseconds(timeout_ms);
  return t;
}

TEST(AbandonedCalls, AMutationArrivingAfterAnotherOperationsClientGaveUpIsOverlapAbandonedNotOverlapPerson) {
  Harness h;
  Partner& p = h.partner;
  // Op 1's client waits 1 s; the partner works 4 s. At 1.5 s op 1 has given up (and released its lock): op 2 arrives.
  const Plan a = p.arrive(Call::unlink("auth0|u1", "google-oauth2|u1"), timed(1, 1, 1000), milliseconds(0));
  const Plan b = p.arrive(Call::unlink("auth0|u1", "google-oauth2|u1"), timed(2, 1, 1000), milliseconds(1500));
  p.execute(a.call_id, milliseconds(2000));
  p.execute(b.call_id, milliseconds(3500));
  p.complete(a.call_id, milliseconds(4000), Delivery::lost);
  p.complete(b.call_id, milliseconds(5500), Delivery::lost);
  const CheckReport r = p.check(milliseconds(6000));
  EXPECT_EQ(r.count("overlap_abandoned"), 1);
  EXPECT_EQ(r.count("overlap_person"), 0);
  EXPECT_TRUE(listed(r.notes, "overlap_abandoned", 1));
  EXPECT_TRUE(listed(r.notes, "overlap_abandoned", 2));
  for (const auto& v : r.violations) EXPECT_NE(v.kind, "overlap_abandoned");
  EXPECT_FALSE(is_violation_kind("overlap_abandoned"));
  bool names_fix = false;
  for (const auto& n : r.notes) names_fix = names_fix || n.detail.find("idempotency key") != std::string::npos;
  EXPECT_TRUE(names_fix);
}

TEST(AbandonedCalls, AMutationArrivingWhileAnotherOperationsClientStillWaitsIsOverlapPerson) {
  Harness h;
  Partner& p = h.partner;
  // Same calls, but op 2 arrives at 0.5 s, inside op 1's timeout: two holders at once.
  const Plan a = p.arrive(Call::unlink("auth0|u1", "google-oauth2|u1"), timed(1, 1, 1000), milliseconds(0));
  const Plan b = p.arrive(Call::unlink("auth0|u1", "google-oauth2|u1"), timed(2, 1, 1000), milliseconds(500));
  for (auto id : {a.call_id, b.call_id}) p.execute(id, milliseconds(2000));
  for (auto id : {a.call_id, b.call_id}) p.complete(id, milliseconds(4000), Delivery::lost);
  const CheckReport r = p.check(milliseconds(6000));
  EXPECT_EQ(r.count("overlap_person"), 1);
  EXPECT_EQ(r.count("overlap_abandoned"), 0);
}

TEST(AbandonedCalls, OneLiveCallAmongAbandonedOnesMakesItOverlapPerson) {
  Harness h;
  Partner& p = h.partner;
  // Op 1 gave up on its first attempt but its retry (sent at 1.1 s) is still awaited when op 2 arrives.
  const Plan first = p.arrive(Call::unlink("auth0|u1", "google-oauth2|u1"), timed(1, 1, 1000), milliseconds(0));
  const Plan retry = p.arrive(Call::unlink("auth0|u1", "google-oauth2|u1"), timed(1, 1, 1000), milliseconds(1100));
  const Plan b = p.arrive(Call::unlink("auth0|u1", "google-oauth2|u1"), timed(2, 1, 1000), milliseconds(1500));
  for (auto id : {first.call_id, retry.call_id, b.call_id}) p.execute(id, milliseconds(3000));
  for (auto id : {first.call_id, retry.call_id, b.call_id}) p.complete(id, milliseconds(6000), Delivery::lost);
  const CheckReport r = p.check(milliseconds(7000));
  EXPECT_EQ(r.count("overlap_person"), 1);
  EXPECT_EQ(r.count("overlap_abandoned"), 0);
  EXPECT_EQ(r.count("retry_overlap"), 1);
}

TEST(AbandonedCalls, ACallWithoutAClientTimeoutIsNeverTakenForAbandoned) {
  Harness h;
  Partner& p = h.partner;
  const Plan a = p.arrive(Call::unlink("auth0|u1", "google-oauth2|u1"), op(1, 1), milliseconds(0));
  const Plan b = p.arrive(Call::unlink("auth0|u1", "google-oauth2|u1"), timed(2, 1, 1000), milliseconds(60'000));
  for (auto id : {a.call_id, b.call_id}) p.execute(id, milliseconds(60'001));
  for (auto id : {a.call_id, b.call_id}) p.complete(id, milliseconds(60'002));
  EXPECT_EQ(p.check(milliseconds(60'003)).count("overlap_person"), 1);
}

TEST(AbandonedCalls, ASplitLeftByAnEffectAppliedAfterItsClientGaveUpIsAbandonedEffectNotPersonSplit) {
  for (const bool told : {true, false}) {
    Harness h;
    Partner& p = h.partner;
    // Step 1 of op 1 applies at 2 s; its client gave up at 1 s and never sends step 2: the person stays split.
    const Plan a = p.arrive(Call::unlink("auth0|u1", "google-oauth2|u1"), told ? timed(1, 1, 1000) : op(1, 1),
                            milliseconds(0));
    EXPECT_TRUE(p.execute(a.call_id, milliseconds(2000)).applied);
    p.complete(a.call_id, milliseconds(4000), Delivery::lost);
    const CheckReport r = p.check(milliseconds(5000));
    EXPECT_EQ(r.count("abandoned_effect"), told ? 1 : 0) << told;
    EXPECT_EQ(r.count("person_split"), told ? 0 : 1) << told;
    EXPECT_TRUE(is_violation_kind("abandoned_effect"));
  }
}

TEST(AbandonedCalls, AnEffectAppliedInTimeButAnsweredAfterTheClientGaveUpIsAbandonedEffectToo) {
  Harness h;
  Partner& p = h.partner;
  // Applied at 500 ms, answered at 1.5 s: the client waiting 1 s never heard of it.
  const Plan a = p.arrive(Call::unlink("auth0|u1", "google-oauth2|u1"), timed(1, 1, 1000), milliseconds(0));
  EXPECT_TRUE(p.execute(a.call_id, milliseconds(500)).applied);
  p.complete(a.call_id, milliseconds(1500), Delivery::lost);
  const CheckReport r = p.check(milliseconds(2000));
  EXPECT_EQ(r.count("abandoned_effect"), 1);
  EXPECT_EQ(r.count("person_split"), 0);
}

TEST(Retries, UntaggedCallsKeepCountingAsOverlaps) {
  Harness h;
  Partner& p = h.partner;
  const Plan a = p.arrive(Call::unlink("auth0|u1", "google-oauth2|u1"), {}, milliseconds(0));
  const Plan b = p.arrive(Call::unlink("auth0|u1", "google-oauth2|u1"), {}, milliseconds(1));
  for (auto id : {a.call_id, b.call_id}) p.execute(id, milliseconds(2));
  for (auto id : {a.call_id, b.call_id}) p.complete(id, milliseconds(3));
  const CheckReport r = p.check(milliseconds(3));
  EXPECT_EQ(r.count("overlap_person"), 1);
  EXPECT_EQ(r.count("retry_overlap"), 0);
  EXPECT_EQ(r.max_inflight_per_person, 2);
}

// Op 1 promotes google-oauth2|u1 while op 2 promotes github|u1, interleaved; op 3 later promotes
// github|u1 properly and heals the person. The split was seen when the racing calls ended.
TEST(Episodes, ASplitLaterHealedByAnotherPromotionIsStillCountedOnce) {
  Harness h(instant_config(), three_identities());
  EXPECT_EQ(h.call(Call::unlink("auth0|u1", "google-oauth2|u1"), op(1, 1)).status, 200);
  EXPECT_EQ(h.call(Call::unlink("auth0|u1", "github|u1"), op(2, 1)).status, 200);
  EXPECT_EQ(h.call(Call::link("google-oauth2|u1", "auth0|u1"), op(1, 2)).status, 201);
  EXPECT_EQ(h.call(Call::link("github|u1", "auth0|u1"), op(2, 2)).status, 400);
  EXPECT_EQ(h.partner.check(h.now).count("person_split"), 1);
  // Healing: github|u1 takes the rest under it (two steps of op 3, a correct promotion).
  EXPECT_EQ(h.call(Call::unlink("google-oauth2|u1", "auth0|u1"), op(3, 1)).status, 200);
  EXPECT_EQ(h.call(Call::link("github|u1", "google-oauth2|u1"), op(3, 2)).status, 201);
  EXPECT_EQ(h.call(Call::link("github|u1", "auth0|u1"), op(3, 2)).status, 201);
  const CheckReport r = h.check();
  EXPECT_EQ(r.count("person_split"), 1);  // at the end the person is whole, yet the split stays counted
  EXPECT_GE(r.episodes, 3);
  EXPECT_GT(r.corrupted_ms_max, 0);
  EXPECT_EQ(r.corrupted_ms_total, r.corrupted_ms_max);  // one stretch
  EXPECT_EQ(h.partner.state_json()["persons"][0]["split"], false);
}

TEST(Episodes, AStillSplitPersonIsNotCountedAgainAtTheEndOrByLaterFailedCalls) {
  Harness h(instant_config(), three_identities());
  h.call(Call::unlink("auth0|u1", "google-oauth2|u1"), op(1, 1));
  h.call(Call::unlink("auth0|u1", "github|u1"), op(2, 1));
  h.call(Call::link("google-oauth2|u1", "auth0|u1"), op(1, 2));
  h.call(Call::link("github|u1", "auth0|u1"), op(2, 2));
  // Later traffic that changes nothing; each call's end is a quiet point.
  for (std::uint64_t i = 3; i < 6; ++i) EXPECT_EQ(h.call(Call::link("github|u1", "auth0|u1"), op(i, 2)).status, 400);
  const CheckReport r = h.check();
  EXPECT_EQ(r.count("person_split"), 1);
  EXPECT_EQ(h.check().count("person_split"), 1);
  EXPECT_GE(r.episodes, 4);
  const Duration later = h.now + milliseconds(500);
  EXPECT_GE(h.partner.check(later).corrupted_ms_max, 500);  // the stretch is still open: it runs to now
}

TEST(Episodes, ALostPromotionIsJudgedWhenItsCallsEndAndCountedOnceEvenIfLaterUndone) {
  Harness h;
  EXPECT_EQ(h.call(Call::unlink("auth0|u1", "google-oauth2|u1"), op(1, 1)).status, 200);
  EXPECT_EQ(h.call(Call::link("google-oauth2|u1", "auth0|u1"), op(1, 2)).status, 201);
  // Op 2 puts auth0|u1 back on top without being a promotion (no step tags): op 1's promotion is lost.
  EXPECT_EQ(h.call(Call::unlink("google-oauth2|u1", "auth0|u1"), op(2)).status, 200);
  EXPECT_EQ(h.partner.check(h.now).count("person_split"), 1);  // op 2 left it split when its call ended
  EXPECT_EQ(h.call(Call::link("auth0|u1", "google-oauth2|u1"), op(2)).status, 201);
  EXPECT_EQ(h.partner.check(h.now).count("lost_promotion"), 1);
  // Op 3 puts google-oauth2|u1 back on top (untagged as a promotion too): the primary matches op 1's target again.
  EXPECT_EQ(h.call(Call::unlink("auth0|u1", "google-oauth2|u1"), op(3)).status, 200);
  EXPECT_EQ(h.call(Call::link("google-oauth2|u1", "auth0|u1"), op(3)).status, 201);
  const CheckReport r = h.check();
  EXPECT_EQ(r.count("lost_promotion"), 1);
  EXPECT_TRUE(listed(r.violations, "lost_promotion", 1));
  EXPECT_GT(r.corrupted_ms_total, 0);
}

TEST(Episodes, APromotionBetweenItsStepsIsNotAQuietPoint) {
  // A correct promotion: the person is split between step 1 and step 2, with nothing in flight.
  Harness h(instant_config({{"latency", {{"*", {{"dist", "fixed"}, {"ms", 10}}}}}}));
  EXPECT_EQ(h.call(Call::unlink("auth0|u1", "google-oauth2|u1"), op(1, 1)).status, 200);
  h.now += milliseconds(1000);  // the service does its database work between the steps
  EXPECT_EQ(h.call(Call::link("google-oauth2|u1", "auth0|u1"), op(1, 2)).status, 201);
  const CheckReport r = h.check();
  for (auto kind : kCheckKinds) EXPECT_EQ(r.count(kind), 0) << kind;
  EXPECT_EQ(r.episodes, 1);  // only after step 2
  EXPECT_EQ(r.corrupted_ms_max, 0);
}

TEST(Episodes, AStepTwoThatFailsAndIsRetriedKeepsThePromotionOpen) {
  Harness h(instant_config({{"script", {{{"endpoint", "auth0.link"}, {"nth", 1}, {"fault", {{"kind", "error"}, {"status", 503}}}}}}}));
  EXPECT_EQ(h.call(Call::unlink("auth0|u1", "google-oauth2|u1"), op(1, 1)).status, 200);
  EXPECT_EQ(h.call(Call::link("google-oauth2|u1", "auth0|u1"), op(1, 2)).status, 503);
  EXPECT_EQ(h.call(Call::link("google-oauth2|u1", "auth0|u1"), op(1, 2)).status, 201);
  const CheckReport r = h.check();
  EXPECT_EQ(r.count("person_split"), 0);
  EXPECT_EQ(r.count("lost_promotion"), 0);
}

TEST(Episodes, APromotionAbandonedBetweenItsStepsIsSplitAtTheEnd) {
  Harness h;
  EXPECT_EQ(h.call(Call::unlink("auth0|u1", "google-oauth2|u1"), op(1, 1)).status, 200);
  // The pod died: step 2 never comes. No quiet point was judged, the end-of-run check sees it.
  const CheckReport r = h.check();
  EXPECT_EQ(r.episodes, 0);
  EXPECT_EQ(r.count("person_split"), 1);
  EXPECT_TRUE(listed(r.violations, "person_split", 1));
}

}  // namespace
}  // namespace lockbench::partner

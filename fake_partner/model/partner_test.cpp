// The call lifecycle: fencing, faults and their phase, the script, seeds.
#include <regex>
#include <sstream>

#include "fake_partner/model/test_support.hpp"

namespace lockbench::partner {
namespace {
using testing::Harness;
using testing::instant_config;
using testing::op;

Tags fenced(std::uint64_t op_id, int step, std::uint64_t token) {
  Tags t = op(op_id, step);
  t.fencing_token = token;
  return t;
}

TEST(Fencing, EnforceRejectsAMutationWithATokenBelowTheHighestSeen) {
  Harness h(instant_config({{"fencing", "enforce"}}));
  const Plan old_holder = h.partner.arrive(Call::unlink("auth0|u1", "google-oauth2|u1"), fenced(1, 1, 4), h.now);
  const Plan new_holder = h.partner.arrive(Call::get_user("auth0|u1"), fenced(2, 0, 5), h.now);  // reads do not count
  h.partner.execute(new_holder.call_id, h.now);
  h.partner.complete(new_holder.call_id, h.now);
  EXPECT_EQ(h.partner.execute(old_holder.call_id, h.now).status, 200);  // 4 is still the highest
  h.partner.complete(old_holder.call_id, h.now);
  EXPECT_EQ(h.call(Call::link("google-oauth2|u1", "auth0|u1"), fenced(3, 2, 6)).status, 201);
  const Reply stale = h.call(Call::unlink("google-oauth2|u1", "auth0|u1"), fenced(1, 1, 4));
  EXPECT_EQ(stale.status, 409);
  EXPECT_FALSE(stale.applied);
  EXPECT_EQ(stale.body()["errorCode"], "stale_token");
  const CheckReport r = h.check();
  EXPECT_EQ(r.count("stale_token_rejected"), 1);
  EXPECT_EQ(r.count("person_split"), 0);  // the stale unlink did not happen
}

TEST(Fencing, EnforceJudgesTheTokenWhenTheEffectHappensNotWhenTheCallArrived) {
  Harness h(instant_config({{"fencing", "enforce"}}));
  const Plan a = h.partner.arrive(Call::unlink("auth0|u1", "google-oauth2|u1"), fenced(1, 1, 1), h.now);
  const Plan b = h.partner.arrive(Call::unlink("auth0|u1", "google-oauth2|u1"), fenced(2, 1, 2), h.now);
  EXPECT_EQ(h.partner.execute(a.call_id, h.now).status, 409);  // a newer holder already showed up
  EXPECT_EQ(h.partner.execute(b.call_id, h.now).status, 200);
  h.partner.complete(a.call_id, h.now);
  h.partner.complete(b.call_id, h.now);
}

TEST(Fencing, IgnoreLetsAStaleTokenThrough) {
  Harness h(instant_config({{"fencing", "ignore"}}));
  h.call(Call::get_user("auth0|u1"), fenced(2, 0, 9));
  h.call(Call::unlink("auth0|u2", "google-oauth2|u2"), fenced(2, 1, 9));
  const Reply r = h.call(Call::unlink("auth0|u2", "google-oauth2|u2"), fenced(1, 1, 3));
  EXPECT_EQ(r.status, 200);
  const Reply s = h.call(Call::link("google-oauth2|u2", "auth0|u2"), fenced(1, 2, 3));
  EXPECT_EQ(s.status, 201);
  EXPECT_TRUE(s.applied);
  EXPECT_EQ(h.check().count("stale_token_rejected"), 0);
}

struct FaultCase {
  const char* json;
  FaultPlan::Kind kind;
  Phase phase;
  bool applied;
  int status;  // what execute() answers
};

class FaultKinds : public ::testing::TestWithParam<FaultCase> {};

TEST_P(FaultKinds, EachFaultIsPlannedWithItsPhaseAndOnlyAfterPhaseFaultsExecuteTheEffect) {
  const FaultCase c = GetParam();
  nlohmann::json fault = nlohmann::json::parse(c.json);
  fault["p"] = 1.0;
  Harness h(instant_config({{"faults", {{"auth0.unlink", {fault}}}}}));
  const Plan p = h.partner.arrive(Call::unlink("auth0|u1", "google-oauth2|u1"), op(1, 1), h.now);
  EXPECT_EQ(p.fault.kind, c.kind);
  EXPECT_EQ(p.fault.phase, c.phase);
  EXPECT_EQ(p.fault.before_effect(), c.phase == Phase::before);
  const Reply r = h.partner.execute(p.call_id, h.now + p.apply_after);
  h.partner.complete(p.call_id, h.now + p.delay);
  EXPECT_EQ(r.applied, c.applied);
  EXPECT_EQ(r.status, c.status);
  // The state tells the same story as the reply.
  EXPECT_EQ(h.partner.state_json()["users"].size(), c.applied ? 3u : 2u);
  EXPECT_EQ(h.partner.metrics_json()["faults"]["auth0.unlink"][std::string(fault_kind_name(c.kind))], 1);
}

using K = FaultPlan::Kind;
INSTANTIATE_TEST_SUITE_P(
    Partner, FaultKinds,
    ::testing::Values(
        FaultCase{R"({"kind":"error","status":503})", K::error, Phase::before, false, 503},
        FaultCase{R"({"kind":"error","status":502,"phase":"after"})", K::error, Phase::after, true, 502},
        FaultCase{R"({"kind":"rate_limit_429"})", K::rate_limit_429, Phase::before, false, 429},
        FaultCase{R"({"kind":"hang","ms":"forever"})", K::hang, Phase::before, false, 0},
        FaultCase{R"({"kind":"hang","ms":500,"phase":"after"})", K::hang, Phase::after, true, 200},
        FaultCase{R"({"kind":"reset"})", K::reset, Phase::before, false, 0},
        FaultCase{R"({"kind":"reset","phase":"after"})", K::reset, Phase::after, true, 200},
        FaultCase{R"({"kind":"slow_body","bytes_per_s":10})", K::slow_body, Phase::after, true, 200},
        FaultCase{R"({"kind":"truncate"})", K::truncate, Phase::after, true, 200},
        FaultCase{R"({"kind":"garbage"})", K::garbage, Phase::after, true, 200},
        FaultCase{R"({"kind":"garbage","phase":"before"})", K::garbage, Phase::before, false, 0}));

TEST(Faults, AHangCarriesItsDurationOrForever) {
  Harness h(instant_config({{"faults", {{"auth0.get", {{{"kind", "hang"}, {"p", 1}, {"ms", 250}}}},
                                        {"auth0.link", {{{"kind", "hang"}, {"p", 1}}}}}}}));
  EXPECT_EQ(h.partner.arrive(Call::get_user("auth0|u1"), {}, h.now).fault.hang_for, std::chrono::milliseconds(250));
  EXPECT_FALSE(h.partner.arrive(Call::link("auth0|u1", "auth0|u2"), {}, h.now).fault.hang_for.has_value());
}

TEST(Faults, AnAfterPhaseResetIsAnAmbiguousCommit) {
  Harness h(instant_config({{"faults", {{"auth0.unlink", {{{"kind", "reset"}, {"p", 1}, {"phase", "after"}}}}}}}));
  EXPECT_TRUE(h.call(Call::unlink("auth0|u1", "google-oauth2|u1"), op(1, 1)).applied);
  EXPECT_EQ(h.check().count("ambiguous_commit"), 1);
}

TEST(Faults, TheWildcardAppliesWhereAnEndpointHasNoFaultsOfItsOwn) {
  Harness h(instant_config({{"faults", {{"*", {{{"kind", "reset"}, {"p", 1}}}}, {"auth0.get", nlohmann::json::array()}}}}));
  EXPECT_EQ(h.partner.arrive(Call::charge("o1", 1, "eur"), {}, h.now).fault.kind, K::reset);
  EXPECT_EQ(h.partner.arrive(Call::get_user("auth0|u1"), {}, h.now).fault.kind, K::none);
}

TEST(Script, AScriptedFaultFiresOnTheNthCallOfItsEndpointOnly) {
  Harness h(instant_config({{"script",
                             {{{"endpoint", "auth0.get"}, {"nth", 2}, {"fault", {{"kind", "error"}, {"status", 503}}}},
                              {{"endpoint", "auth0.get"}, {"nth", 3}, {"fault", {{"kind", "reset"}}}}}}}));
  EXPECT_EQ(h.call(Call::charge("o1", 1, "eur")).status, 200);  // other endpoints do not count
  EXPECT_EQ(h.call(Call::get_user("auth0|u1")).status, 200);
  EXPECT_EQ(h.call(Call::get_user("auth0|u1")).status, 503);
  EXPECT_EQ(h.partner.arrive(Call::get_user("auth0|u1"), {}, h.now).fault.kind, K::reset);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(h.partner.arrive(Call::get_user("auth0|u1"), {}, h.now).fault.kind, K::none);
}

TEST(Script, CountingStartsAgainAtReset) {
  Harness h(instant_config({{"script", {{{"endpoint", "auth0.get"}, {"nth", 1}, {"fault", {{"kind", "error"}}}}}}}));
  EXPECT_EQ(h.call(Call::get_user("auth0|u1")).status, 503);
  EXPECT_EQ(h.call(Call::get_user("auth0|u1")).status, 200);
  h.partner.reset(ResetSpec::persons_with_two_identities(1), h.now);
  EXPECT_EQ(h.call(Call::get_user("auth0|u1")).status, 503);
}

// A config with randomness everywhere.
Config noisy(std::uint64_t seed) {
  return Config::from_json({{"seed", seed},
                            {"latency", {{"*", {{"dist", "lognormal"}, {"p50_ms", 100}, {"p99_ms", 900}}},
                                         {"auth0.link", {{"dist", "uniform"}, {"min_ms", 10}, {"max_ms", 500}, {"apply_at", 0.3}}}}},
                            {"faults", {{"*", {{{"kind", "error"}, {"p", 0.2}, {"status", 503}},
                                               {{"kind", "reset"}, {"p", 0.1}, {"phase", "after"}}}}}}});
}

std::vector<Plan> run_sequence(Partner& p) {
  p.reset(ResetSpec::persons_with_two_identities(3), Duration(0));
  std::vector<Plan> plans;
  Duration now{0};
  for (int i = 0; i < 300; ++i) {
    const Call c = i % 3 == 0 ? Call::get_user("auth0|u1")
                   : i % 3 == 1 ? Call::link("auth0|u2", "auth0|u3")
                                : Call::charge("o" + std::to_string(i), 100, "eur");
    const Plan plan = p.arrive(c, testing::op(static_cast<std::uint64_t>(i)), now);
    p.execute(plan.call_id, now + plan.apply_after);
    p.complete(plan.call_id, now + plan.delay);
    now += std::chrono::milliseconds(7);
    plans.push_back(plan);
  }
  return plans;
}

bool same(const std::vector<Plan>& a, const std::vector<Plan>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].delay != b[i].delay || a[i].apply_after != b[i].apply_after || a[i].fault.kind != b[i].fault.kind ||
        a[i].fault.phase != b[i].fault.phase)
      return false;
  return true;
}

TEST(Seeds, TheSameSeedAndCallSequenceGiveIdenticalPlans) {
  Partner a(noisy(42)), b(noisy(42));
  const auto pa = run_sequence(a);
  EXPECT_TRUE(same(pa, run_sequence(b)));
  EXPECT_TRUE(same(pa, run_sequence(a)));  // a reset re-seeds: the run repeats
  int faults = 0;
  for (const auto& p : pa) faults += p.fault.any();
  EXPECT_GT(faults, 30);  // about 28% of 300: the faults really are drawn
  EXPECT_LT(faults, 140);
}

TEST(Seeds, AnotherSeedGivesOtherPlans) {
  Partner a(noisy(42)), b(noisy(43));
  EXPECT_FALSE(same(run_sequence(a), run_sequence(b)));
}

TEST(Seeds, AResetSeedOverridesTheConfigSeed) {
  Partner a(noisy(1)), b(noisy(2));
  ResetSpec r = ResetSpec::persons_with_two_identities(1);
  r.seed = 7;
  a.reset(r, Duration(0));
  b.reset(r, Duration(0));
  for (int i = 0; i < 20; ++i)
    EXPECT_EQ(a.arrive(Call::get_user("auth0|u1"), {}, Duration(0)).delay,
              b.arrive(Call::get_user("auth0|u1"), {}, Duration(0)).delay);
}

TEST(Latency, ApplyAtSetsTheShareOfTheDelayBeforeTheEffect) {
  Partner p(Config::from_json({{"latency", {{"*", {{"dist", "fixed"}, {"ms", 200}, {"apply_at", 0.25}}}}}}));
  p.reset(ResetSpec::persons_with_two_identities(1), Duration(0));
  const Plan plan = p.arrive(Call::get_user("auth0|u1"), {}, Duration(0));
  EXPECT_EQ(plan.delay, std::chrono::milliseconds(200));
  EXPECT_EQ(plan.apply_after, std::chrono::milliseconds(50));
}

TEST(Lifecycle, ExecuteAndCompleteRefuseUnknownOrOutOfOrderCalls) {
  Harness h;
  EXPECT_THROW(h.partner.execute(12345, h.now), std::out_of_range);
  const Plan p = h.partner.arrive(Call::get_user("auth0|u1"), {}, h.now);
  EXPECT_THROW(h.partner.complete(p.call_id, h.now), std::logic_error);
  h.partner.execute(p.call_id, h.now);
  EXPECT_THROW(h.partner.execute(p.call_id, h.now), std::logic_error);
  EXPECT_EQ(h.partner.inflight(), 1u);
  h.partner.complete(p.call_id, h.now);
  EXPECT_EQ(h.partner.inflight(), 0u);
}

TEST(Metrics, CountersPerEndpointAndStatusAppearInBothFormats) {
  Harness h;
  h.call(Call::get_user("auth0|u1"));
  h.call(Call::get_user("auth0|nobody"));
  const Plan open = h.partner.arrive(Call::charge("o1", 1, "eur"), {}, h.now);
  const auto j = h.partner.metrics_json();
  EXPECT_EQ(j["requests"]["auth0.get"]["200"], 1);
  EXPECT_EQ(j["requests"]["auth0.get"]["404"], 1);
  EXPECT_EQ(j["inflight"], 1);
  const std::string prom = h.partner.metrics_prometheus();
  EXPECT_NE(prom.find("# TYPE partner_requests_total counter\n"), std::string::npos);
  EXPECT_NE(prom.find("partner_requests_total{endpoint=\"auth0.get\",status=\"404\"} 1\n"), std::string::npos);
  EXPECT_NE(prom.find("partner_inflight 1\n"), std::string::npos);
  EXPECT_NE(prom.find("partner_violations_total{kind=\"overlap_person\"} 0\n"), std::string::npos);
  h.partner.execute(open.call_id, h.now);
  h.partner.complete(open.call_id, h.now);
  h.partner.reset_metrics();
  EXPECT_TRUE(h.partner.metrics_json()["requests"]["auth0.get"].empty());
}

TEST(Metrics, EveryPrometheusLineIsACommentOrANameLabelsValueSample) {
  Harness h(instant_config({{"faults", {{"auth0.get", {{{"kind", "error"}, {"p", 1}}}}}}}));
  h.call(Call::get_user("auth0|u1"));
  h.call(Call::charge("o1", 1, "eur"));
  h.check();
  const std::regex sample(R"([a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? -?[0-9]+)");
  const std::regex comment(R"(# (HELP|TYPE) [a-z_]+ .+)");
  std::istringstream in(h.partner.metrics_prometheus());
  int samples = 0;
  for (std::string line; std::getline(in, line);) {
    EXPECT_TRUE(std::regex_match(line, sample) || std::regex_match(line, comment)) << line;
    samples += line[0] != '#';
  }
  EXPECT_GT(samples, static_cast<int>(std::size(kCheckKinds)));
  EXPECT_NE(h.partner.metrics_prometheus().find("partner_faults_total{endpoint=\"auth0.get\",kind=\"error\"} 1"),
            std::string::npos);
}

}  // namespace
}  // namespace lockbench::partner

namespace lockbench::partner {
namespace {
using testing::Harness;
using testing::instant_config;

// A fault with a window strikes only for calls arriving in [from_ms, until_ms)
// since the partner's reset, in whatever time base the front passes.
TEST(FaultWindow, StrikesOnlyForCallsArrivingInsideItMeasuredFromTheReset) {
  const nlohmann::json fault = {{"kind", "error"}, {"p", 1.0}, {"status", 503}, {"from_ms", 1000}, {"until_ms", 3000}};
  Harness h(instant_config({{"faults", {{"auth0.get", {fault}}}}}));
  const Duration epoch = std::chrono::hours(1000);  // the server passes Unix time: the reset's counts
  h.partner.reset(ResetSpec::persons_with_two_identities(2), epoch);
  const auto status_at = [&](Duration since_reset) {
    const Plan p = h.partner.arrive(Call::get_user("auth0|u1"), {}, epoch + since_reset);
    const int status = h.partner.execute(p.call_id, epoch + since_reset).status;
    h.partner.complete(p.call_id, epoch + since_reset);
    return status;
  };
  EXPECT_EQ(status_at(std::chrono::milliseconds(999)), 200);
  EXPECT_EQ(status_at(std::chrono::milliseconds(1000)), 503);
  EXPECT_EQ(status_at(std::chrono::milliseconds(2999)), 503);
  EXPECT_EQ(status_at(std::chrono::milliseconds(3000)), 200);  // the window is half-open
  EXPECT_EQ(h.partner.metrics_json()["faults"]["auth0.get"]["error"], 2);
}

TEST(FaultWindow, OutsideItsWindowAFaultStillDrawsSoTheNextFaultsStreamStaysAsItWas) {
  // The same calls with a windowed error in front of a reset (its window never
  // comes) and with the same error unwindowed: the reset strikes the same calls,
  // and where the error would have struck first the windowed one lets the call through.
  const nlohmann::json reset = {{"kind", "reset"}, {"p", 0.3}};
  const nlohmann::json never = {{"kind", "error"}, {"p", 0.5}, {"from_ms", 1e9}};
  const nlohmann::json always = {{"kind", "error"}, {"p", 0.5}};
  Harness windowed(instant_config({{"faults", {{"auth0.get", {never, reset}}}}}));
  Harness unwindowed(instant_config({{"faults", {{"auth0.get", {always, reset}}}}}));
  int resets = 0, errors = 0;
  for (int i = 0; i < 200; ++i) {
    const auto kind = [&](Harness& h) {
      const Plan p = h.partner.arrive(Call::get_user("auth0|u1"), {}, h.now);
      h.partner.execute(p.call_id, h.now);
      h.partner.complete(p.call_id, h.now);
      return p.fault.kind;
    };
    const auto a = kind(windowed), b = kind(unwindowed);
    EXPECT_NE(a, FaultPlan::Kind::error) << "call " << i << ": the window never comes";
    if (b == FaultPlan::Kind::reset) {
      EXPECT_EQ(a, FaultPlan::Kind::reset) << "call " << i;
    }
    if (b == FaultPlan::Kind::none) {
      EXPECT_EQ(a, FaultPlan::Kind::none) << "call " << i;
    }
    resets += a == FaultPlan::Kind::reset ? 1 : 0;
    errors += b == FaultPlan::Kind::error ? 1 : 0;
  }
  EXPECT_GT(resets, 20);
  EXPECT_GT(errors, 50);
}

TEST(FaultWindow, ASlowFaultMakesThePlainCallSlowerInsideItsWindow) {
  const nlohmann::json slow = {{"kind", "slow"}, {"p", 1.0}, {"ms", 10000}, {"until_ms", 60000}};
  Harness h(instant_config({{"faults", {{"*", {slow}}}}, {"latency", {{"*", {{"dist", "fixed"}, {"ms", 100}, {"apply_at", 0.5}}}}}}));
  const Plan in = h.partner.arrive(Call::get_user("auth0|u1"), {}, std::chrono::seconds(1));
  EXPECT_EQ(in.delay, std::chrono::seconds(10));
  EXPECT_EQ(in.apply_after, std::chrono::seconds(5));
  EXPECT_FALSE(in.fault.any());  // answered as planned, only later
  EXPECT_EQ(h.partner.execute(in.call_id, std::chrono::seconds(6)).status, 200);
  h.partner.complete(in.call_id, std::chrono::seconds(11));
  const Plan after = h.partner.arrive(Call::get_user("auth0|u1"), {}, std::chrono::seconds(60));
  EXPECT_EQ(after.delay, std::chrono::milliseconds(100));
  h.partner.execute(after.call_id, std::chrono::seconds(60));
  h.partner.complete(after.call_id, std::chrono::seconds(61));
  EXPECT_EQ(h.partner.metrics_json()["faults"]["auth0.get"]["slow"], 1);
}

TEST(FaultWindow, IsRefusedWhenItEndsBeforeItStartsAndTheConfigSaysWhereItsWindowIs) {
  EXPECT_THROW(instant_config({{"faults", {{"*", {{{"kind", "error"}, {"p", 1.0}, {"from_ms", 5000}, {"until_ms", 5000}}}}}}}),
               SettingError);
  EXPECT_THROW(instant_config({{"faults", {{"*", {{{"kind", "slow"}, {"p", 1.0}}}}}}}), SettingError);  // slow needs ms
  const Config c = instant_config({{"faults",
                                    {{"auth0.get", {{{"kind", "error"}, {"p", 1.0}, {"from_ms", 2000}, {"until_ms", 4000}}}},
                                     {"auth0.link", {{{"kind", "slow"}, {"p", 1.0}, {"ms", 9000}, {"from_ms", 1000}, {"until_ms", 3000}}}}}}});
  ASSERT_TRUE(c.fault_window().has_value());
  EXPECT_EQ(c.fault_window()->from, std::chrono::seconds(1));
  EXPECT_EQ(c.fault_window()->until, std::chrono::seconds(4));
  EXPECT_FALSE(instant_config().fault_window().has_value());
  const nlohmann::json shown = c.to_json()["faults"]["auth0.link"][0];
  EXPECT_EQ(shown["from_ms"], 1000);
  EXPECT_EQ(shown["until_ms"], 3000);
  EXPECT_EQ(shown["ms"], 9000);
}

}  // namespace
}  // namespace lockbench::partner

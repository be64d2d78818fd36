// The partner client's circuit breaker (resilience4j's count-based window) and
// retry budget (gRPC's retry throttling), as state machines on a given clock.
#include "core/client_policy.hpp"

#include <gtest/gtest.h>

#include "core/settings.hpp"

namespace lockbench {
namespace {

BreakerSpec breaker(const std::string& text) { return parse_breaker(text, "--circuit-breaker"); }
const RetryBudgetSpec kNoBudget{};
const BreakerSpec kNoBreaker{};

// `n` attempts at `now`, each failed or not, taking `took`.
void attempts(PartnerGuard& g, Duration now, int n, bool failed, Duration took = 10ms) {
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(g.permit(now)) << "attempt " << i;
    g.record(now, failed, took);
  }
}

TEST(CircuitBreaker, OpensOnlyOnceTheWindowHoldsTheMinimumNumberOfCallsAndTheRateReachesTheThreshold) {
  PartnerGuard g(breaker("failure-rate-threshold=50,sliding-window-size=10,minimum-number-of-calls=4"), kNoBudget);
  attempts(g, 0s, 3, true);  // 3 of 3 failed, but fewer than 4 calls: no rate yet
  EXPECT_EQ(g.state(0s), PartnerGuard::State::closed);
  ASSERT_TRUE(g.permit(0s));
  EXPECT_TRUE(g.record(1s, true, 10ms));  // the fourth: 100 % >= 50 %: opens
  EXPECT_EQ(g.state(1s), PartnerGuard::State::open);
}

TEST(CircuitBreaker, StaysClosedBelowTheThresholdAndCountsOnlyTheWindow) {
  PartnerGuard g(breaker("failure-rate-threshold=50,sliding-window-size=4,minimum-number-of-calls=4"), kNoBudget);
  attempts(g, 0s, 6, false);
  attempts(g, 0s, 1, true);  // window: ok ok ok fail = 25 %
  EXPECT_EQ(g.state(0s), PartnerGuard::State::closed);
  attempts(g, 0s, 1, true);  // ok ok fail fail = 50 %: opens
  EXPECT_EQ(g.state(0s), PartnerGuard::State::open);
}

TEST(CircuitBreaker, RefusesWhileOpenThenLetsTheTrialCallsThroughAndClosesWhenTheySucceed) {
  PartnerGuard g(breaker("sliding-window-size=2,minimum-number-of-calls=2,wait-in-open=10s,permitted-calls-in-half-open=2"),
                 kNoBudget);
  attempts(g, 0s, 2, true);
  EXPECT_FALSE(g.permit(5s));  // open for 10 s
  EXPECT_FALSE(g.permit(9999ms));
  EXPECT_TRUE(g.permit(10s));  // half-open: two trials
  EXPECT_TRUE(g.permit(10s));
  EXPECT_FALSE(g.permit(10s));  // the third waits for the trials' verdict
  EXPECT_EQ(g.state(10s), PartnerGuard::State::half_open);
  EXPECT_FALSE(g.record(11s, false, 10ms));
  EXPECT_FALSE(g.record(11s, false, 10ms));
  EXPECT_EQ(g.state(11s), PartnerGuard::State::closed);
  EXPECT_TRUE(g.permit(11s));
}

TEST(CircuitBreaker, OpensAgainWhenTheTrialCallsFailAndWaitsAFullPeriodFromThen) {
  PartnerGuard g(breaker("sliding-window-size=2,minimum-number-of-calls=2,wait-in-open=10s,permitted-calls-in-half-open=2"),
                 kNoBudget);
  attempts(g, 0s, 2, true);
  attempts(g, 10s, 1, true);
  ASSERT_TRUE(g.permit(10s));
  EXPECT_TRUE(g.record(12s, false, 10ms));  // 1 of 2 trials failed = 50 %: open again, from 12 s
  EXPECT_FALSE(g.permit(21s));
  EXPECT_TRUE(g.permit(22s));
}

TEST(CircuitBreaker, SlowCallsOpenItThoughTheyAnswer) {
  PartnerGuard g(breaker("slow-call-rate-threshold=50,slow-call-duration-threshold=2s,sliding-window-size=4,"
                         "minimum-number-of-calls=4"),
                 kNoBudget);
  attempts(g, 0s, 2, false, 100ms);
  attempts(g, 0s, 1, false, 5s);
  EXPECT_EQ(g.state(0s), PartnerGuard::State::closed);
  attempts(g, 0s, 1, false, 2s);  // 2 of 4 at or above 2 s
  EXPECT_EQ(g.state(0s), PartnerGuard::State::open);
}

TEST(CircuitBreaker, OffItPermitsEverything) {
  PartnerGuard g(kNoBreaker, kNoBudget);
  EXPECT_FALSE(g.active());
  attempts(g, 0s, 500, true);
  EXPECT_TRUE(g.permit(0s));
  EXPECT_TRUE(g.allow_retry());
}

TEST(RetryBudget, RetriesStopOnceHalfTheTokensAreSpentAndComeBackWithSuccesses) {
  PartnerGuard g(kNoBreaker, parse_retry_budget("max-tokens=10,token-ratio=0.5", "--retry-budget"));
  attempts(g, 0s, 4, true);  // 10 -> 6
  EXPECT_TRUE(g.allow_retry());
  attempts(g, 0s, 1, true);  // 5: not above 10 / 2
  EXPECT_FALSE(g.allow_retry());
  attempts(g, 0s, 1, false);  // 5.5
  EXPECT_TRUE(g.allow_retry());
  attempts(g, 0s, 100, false);  // capped at 10
  attempts(g, 0s, 4, true);
  EXPECT_TRUE(g.allow_retry());
}

TEST(ClientPolicySettings, ReadResilience4jsAndGrpcsNamesAndShowWhatTheyRead) {
  const BreakerSpec b = breaker("failureRateThreshold=25,waitDurationInOpenState=5s,slidingWindowSize=20,"
                                "minimumNumberOfCalls=10,permittedNumberOfCallsInHalfOpenState=3,"
                                "slowCallRateThreshold=80,slowCallDurationThreshold=3s");
  EXPECT_EQ(breaker_text(b),
            "failure-rate-threshold=25,slow-call-rate-threshold=80,slow-call-duration-threshold=3s,wait-in-open=5s,"
            "sliding-window-size=20,minimum-number-of-calls=10,permitted-calls-in-half-open=3");
  EXPECT_EQ(breaker(breaker_text(b)), b);
  EXPECT_EQ(breaker("on"), BreakerSpec{.on = true});
  EXPECT_EQ(breaker_text(breaker("off")), "off");
  const RetryBudgetSpec r = parse_retry_budget("maxTokens=20,tokenRatio=0.25", "--retry-budget");
  EXPECT_EQ(retry_budget_text(r), "max-tokens=20,token-ratio=0.25");
  EXPECT_EQ(parse_retry_budget(retry_budget_text(r), "--retry-budget"), r);
}

TEST(ClientPolicySettings, RefuseWhatResilience4jAndGrpcRefuseInOneLineNamingTheSetting) {
  for (const char* bad : {"failure-rate-threshold=0", "failure-rate-threshold=101", "sliding-window-size=0",
                          "wait-in-open=0s", "minimum-number-of-calls=x", "unknown=1", "failure-rate-threshold"}) {
    try {
      breaker(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const SettingError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--circuit-breaker: ", 0), 0u) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
  for (const char* bad : {"max-tokens=0", "max-tokens=1001", "token-ratio=0", "tokens=3"})
    EXPECT_THROW(parse_retry_budget(bad, "--retry-budget"), SettingError) << bad;
}

}  // namespace
}  // namespace lockbench

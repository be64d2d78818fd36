// The partner client's two guards against a retry storm, as the settings give
// them and as each pod keeps them (core/partner_client.cpp consults them on
// every attempt, so both worlds guard the same way):
//
//   circuit breaker  resilience4j's CircuitBreaker, count-based sliding window:
//                    closed, it records each attempt's outcome; once the window
//                    holds minimumNumberOfCalls and the failure rate (or the
//                    slow-call rate) reaches its threshold it opens, and every
//                    attempt fails at once without reaching the partner for
//                    waitDurationInOpenState; then half-open lets
//                    permittedNumberOfCallsInHalfOpenState attempts through and
//                    closes, or opens again, on their failure rate.
//   retry budget     gRPC's retry throttling (A6, retryThrottling): a pod's
//                    token count starts at maxTokens; a failed attempt takes
//                    one token, a success gives tokenRatio back; a retry is
//                    made only while the count is above maxTokens / 2.
//
// A failure is what the client retries (timeout, reset, refused connect, 429,
// 5xx) or a garbled answer: what a Spring client throws on. A pod keeps one
// PartnerGuard per incarnation: a restarted pod starts closed with a full budget.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>

#include "base/units.hpp"

namespace lockbench {

using namespace std::chrono_literals;

// resilience4j's names and defaults.
struct BreakerSpec {
  bool on = false;
  double failure_rate_threshold = 50;           // failureRateThreshold, percent
  double slow_call_rate_threshold = 100;        // slowCallRateThreshold, percent
  Duration slow_call_duration_threshold = 60s;  // slowCallDurationThreshold
  Duration wait_in_open = 60s;                  // waitDurationInOpenState
  int sliding_window_size = 100;                // slidingWindowSize (count-based)
  int minimum_number_of_calls = 100;            // minimumNumberOfCalls
  int permitted_calls_in_half_open = 10;        // permittedNumberOfCallsInHalfOpenState
  bool operator==(const BreakerSpec&) const = default;
};

// gRPC's retryThrottling names and a common setting (maxTokens 10, tokenRatio 0.1).
struct RetryBudgetSpec {
  bool on = false;
  double max_tokens = 10;    // maxTokens
  double token_ratio = 0.1;  // tokenRatio
  bool operator==(const RetryBudgetSpec&) const = default;
};

// --circuit-breaker: "off", "on" (resilience4j's defaults) or key=value pairs,
// resilience4j's names (failureRateThreshold=50,waitDurationInOpenState=10s,...)
// or their kebab-case (failure-rate-threshold=50,...), or a JSON object.
// Throws SettingError naming the setting and what is accepted.
BreakerSpec parse_breaker(const std::string& text, std::string_view setting);
std::string breaker_text(const BreakerSpec& b);  // "off" or every field, in the form parse_breaker reads
void check_breaker(const BreakerSpec& b, std::string_view setting);
// --retry-budget: "off", "on" (maxTokens 10, tokenRatio 0.1) or
// max-tokens=10,token-ratio=0.1 (maxTokens, tokenRatio too).
RetryBudgetSpec parse_retry_budget(const std::string& text, std::string_view setting);
std::string retry_budget_text(const RetryBudgetSpec& b);

// One pod's breaker and budget. Thread-safe (the real world's workers share
// their pod's); times are the world's clock (virtual in the simulator).
class PartnerGuard {
 public:
  PartnerGuard(const BreakerSpec& breaker, const RetryBudgetSpec& budget);
  bool active() const { return breaker_.on || budget_.on; }

  // May an attempt go out now? False while the breaker is open, or half-open
  // with its trial attempts all out.
  bool permit(Duration now);
  // The attempt's outcome. True when it opened the breaker.
  bool record(Duration now, bool failed, Duration took);
  // May a failed attempt be retried? The budget's answer (true without one).
  bool allow_retry();

  enum class State { closed, open, half_open };
  State state(Duration now);

 private:
  void open(Duration now);
  bool record_closed(Duration now, bool failed, bool slow);
  bool record_half_open(Duration now, bool failed, bool slow);

  const BreakerSpec breaker_;
  const RetryBudgetSpec budget_;
  std::mutex mu_;
  // GUARDED_BY(mu_): everything below.
  State state_ = State::closed;
  Duration opened_at_{};
  struct Outcome {
    bool failed, slow;
  };
  std::deque<Outcome> window_;       // closed: the last sliding_window_size attempts
  int failed_in_window_ = 0, slow_in_window_ = 0;
  int half_open_permitted_ = 0;      // half-open: attempts let through
  int half_open_done_ = 0, half_open_failed_ = 0, half_open_slow_ = 0;
  double tokens_;
};

}  // namespace lockbench

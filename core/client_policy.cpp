#include "core/client_policy.hpp"

#include <algorithm>
#include <cstdlib>

#include "core/settings.hpp"

namespace lockbench {

namespace {

// A decimal number within [lo, hi] (strtod: em++'s libc++ has no from_chars
// for double; hexadecimal, "inf" and "nan" are refused by the character check).
double policy_number(const std::string& v, const std::string& where, double lo, double hi, const char* accepted) {
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || v.find_first_not_of("0123456789.eE+-") != std::string::npos || end != v.c_str() + v.size() ||
      !(x >= lo && x <= hi))
    throw SettingError(where + ": '" + v + "' is not accepted (" + accepted + ")");
  return x;
}

int policy_count(const std::string& v, const std::string& where) {
  return static_cast<int>(policy_number(v, where, 1, 100000, "a whole number from 1 to 100000"));
}

std::string number_text(double x) {
  std::string t = std::to_string(x);
  t.erase(t.find_last_not_of('0') + 1);
  if (!t.empty() && t.back() == '.') t.pop_back();
  return t;
}

}  // namespace

BreakerSpec parse_breaker(const std::string& text, std::string_view setting) {
  const std::string name(setting);
  const std::string keys =
      "failure-rate-threshold, slow-call-rate-threshold, slow-call-duration-threshold, wait-in-open, "
      "sliding-window-size, minimum-number-of-calls, permitted-calls-in-half-open (or resilience4j's "
      "failureRateThreshold, slowCallRateThreshold, slowCallDurationThreshold, waitDurationInOpenState, "
      "slidingWindowSize, minimumNumberOfCalls, permittedNumberOfCallsInHalfOpenState)";
  BreakerSpec b;
  if (text == "off" || text == "none" || text == "false") return b;
  b.on = true;
  if (text == "on" || text == "true") return b;
  for (const auto& [k, v] : key_value_pairs(text, name, keys)) {
    const std::string where = name + ": " + k;
    const char* percent = "a percentage above 0, at most 100";
    if (k == "failure-rate-threshold" || k == "failureRateThreshold")
      b.failure_rate_threshold = policy_number(v, where, 1e-9, 100, percent);
    else if (k == "slow-call-rate-threshold" || k == "slowCallRateThreshold")
      b.slow_call_rate_threshold = policy_number(v, where, 1e-9, 100, percent);
    else if (k == "slow-call-duration-threshold" || k == "slowCallDurationThreshold")
      b.slow_call_duration_threshold = parse_duration(v, where);
    else if (k == "wait-in-open" || k == "waitDurationInOpenState")
      b.wait_in_open = parse_duration(v, where);
    else if (k == "sliding-window-size" || k == "slidingWindowSize")
      b.sliding_window_size = policy_count(v, where);
    else if (k == "minimum-number-of-calls" || k == "minimumNumberOfCalls")
      b.minimum_number_of_calls = policy_count(v, where);
    else if (k == "permitted-calls-in-half-open" || k == "permittedNumberOfCallsInHalfOpenState")
      b.permitted_calls_in_half_open = policy_count(v, where);
    else
      throw SettingError(where + ": unknown key (accepted: " + keys + ")");
  }
  check_breaker(b, setting);
  return b;
}

void check_breaker(const BreakerSpec& b, std::string_view setting) {
  if (!b.on) return;
  const std::string name(setting);
  if (b.wait_in_open <= Duration::zero())
    throw SettingError(name + ": wait-in-open must be above 0 (resilience4j: waitDurationInOpenState)");
  if (b.slow_call_duration_threshold <= Duration::zero())
    throw SettingError(name + ": slow-call-duration-threshold must be above 0 (resilience4j: slowCallDurationThreshold)");
}

std::string breaker_text(const BreakerSpec& b) {
  if (!b.on) return "off";
  return "failure-rate-threshold=" + number_text(b.failure_rate_threshold) +
         ",slow-call-rate-threshold=" + number_text(b.slow_call_rate_threshold) +
         ",slow-call-duration-threshold=" + format_duration(b.slow_call_duration_threshold) +
         ",wait-in-open=" + format_duration(b.wait_in_open) +
         ",sliding-window-size=" + std::to_string(b.sliding_window_size) +
         ",minimum-number-of-calls=" + std::to_string(b.minimum_number_of_calls) +
         ",permitted-calls-in-half-open=" + std::to_string(b.permitted_calls_in_half_open);
}

RetryBudgetSpec parse_retry_budget(const std::string& text, std::string_view setting) {
  const std::string name(setting);
  const std::string keys = "max-tokens, token-ratio (or gRPC's maxTokens, tokenRatio)";
  RetryBudgetSpec b;
  if (text == "off" || text == "none" || text == "false") return b;
  b.on = true;
  if (text == "on" || text == "true") return b;
  for (const auto& [k, v] : key_value_pairs(text, name, keys)) {
    const std::string where = name + ": " + k;
    // gRPC's limits: maxTokens in (0, 1000], tokenRatio above 0.
    if (k == "max-tokens" || k == "maxTokens")
      b.max_tokens = policy_number(v, where, 1e-9, 1000, "a number above 0, at most 1000 (gRPC's limit)");
    else if (k == "token-ratio" || k == "tokenRatio")
      b.token_ratio = policy_number(v, where, 1e-9, 1000, "a number above 0");
    else
      throw SettingError(where + ": unknown key (accepted: " + keys + ")");
  }
  return b;
}

std::string retry_budget_text(const RetryBudgetSpec& b) {
  if (!b.on) return "off";
  return "max-tokens=" + number_text(b.max_tokens) + ",token-ratio=" + number_text(b.token_ratio);
}

// ---- PartnerGuard

PartnerGuard::PartnerGuard(const BreakerSpec& breaker, const RetryBudgetSpec& budget)
    : breaker_(breaker), budget_(budget), tokens_(budget.max_tokens) {}

PartnerGuard::State PartnerGuard::state(Duration now) {
  std::lock_guard lock(mu_);
  if (state_ == State::open && now - opened_at_ >= breaker_.wait_in_open) return State::half_open;
  return state_;
}

bool PartnerGuard::permit(Duration now) {
  if (!breaker_.on) return true;
  std::lock_guard lock(mu_);
  if (state_ == State::open) {
    if (now - opened_at_ < breaker_.wait_in_open) return false;
    state_ = State::half_open;  // resilience4j: the first call after the wait moves it
    half_open_permitted_ = half_open_done_ = half_open_failed_ = half_open_slow_ = 0;
  }
  if (state_ == State::half_open) {
    if (half_open_permitted_ >= breaker_.permitted_calls_in_half_open) return false;
    ++half_open_permitted_;
  }
  return true;
}

bool PartnerGuard::record(Duration now, bool failed, Duration took) {
  std::lock_guard lock(mu_);
  if (budget_.on)
    tokens_ = failed ? std::max(0.0, tokens_ - 1) : std::min(budget_.max_tokens, tokens_ + budget_.token_ratio);
  if (!breaker_.on) return false;
  const bool slow = took >= breaker_.slow_call_duration_threshold;
  switch (state_) {
    case State::closed: return record_closed(now, failed, slow);
    case State::half_open: return record_half_open(now, failed, slow);
    case State::open: return false;  // an attempt let through before it opened
  }
  return false;
}

bool PartnerGuard::record_closed(Duration now, bool failed, bool slow) {
  window_.push_back({failed, slow});
  failed_in_window_ += failed;
  slow_in_window_ += slow;
  if (static_cast<int>(window_.size()) > breaker_.sliding_window_size) {
    failed_in_window_ -= window_.front().failed;
    slow_in_window_ -= window_.front().slow;
    window_.pop_front();
  }
  // resilience4j: no rate before minimumNumberOfCalls (capped by the window's size).
  const int n = static_cast<int>(window_.size());
  if (n < std::min(breaker_.minimum_number_of_calls, breaker_.sliding_window_size)) return false;
  if (100.0 * failed_in_window_ / n >= breaker_.failure_rate_threshold ||
      100.0 * slow_in_window_ / n >= breaker_.slow_call_rate_threshold) {
    open(now);
    return true;
  }
  return false;
}

bool PartnerGuard::record_half_open(Duration now, bool failed, bool slow) {
  ++half_open_done_;
  half_open_failed_ += failed;
  half_open_slow_ += slow;
  if (half_open_done_ < breaker_.permitted_calls_in_half_open) return false;
  const double n = half_open_done_;
  if (100.0 * half_open_failed_ / n >= breaker_.failure_rate_threshold ||
      100.0 * half_open_slow_ / n >= breaker_.slow_call_rate_threshold) {
    open(now);
    return true;
  }
  state_ = State::closed;
  window_.clear();
  failed_in_window_ = slow_in_window_ = 0;
  return false;
}

void PartnerGuard::open(Duration now) {
  state_ = State::open;
  opened_at_ = now;
  window_.clear();
  failed_in_window_ = slow_in_window_ = 0;
}

bool PartnerGuard::allow_retry() {
  if (!budget_.on) return true;
  std::lock_guard lock(mu_);
  return tokens_ > budget_.max_tokens / 2;
}

}  // namespace lockbench

// The partner client's circuit breaker and retry budget in the simulator
// (core/client_policy.hpp, consulted by call_partner in both worlds): what
// each does to the calls that reach a failing partner. Counts and orderings
// with wide margins.
#include <gtest/gtest.h>

#include "sim/run_sim.hpp"

namespace lockbench {
namespace {

using namespace std::chrono_literals;

// switch-primary at 20/s on 2 pods, the partner answering 503 to every call
// from 20 s to 40 s of an 80 s run; the client tries 3 times.
Settings outage() {
  Settings s;
  s.scenario = "switch-primary";
  s.strategy = "row-lease";
  s.pods = 2;
  s.rate_per_s = 20;
  s.keys = 200;
  s.duration = 80s;
  s.partner_latency = Distribution::fixed(100);
  s.partner_max_attempts = 3;
  s.trace_requests = 0;
  s.partner_faults =
      nlohmann::json::parse(R"({"*":[{"kind":"error","p":1,"status":503,"from_ms":20000,"until_ms":40000}]})");
  return s;
}

std::int64_t client(const nlohmann::json& r, const char* field) { return r["partner_client"][field].get<std::int64_t>(); }
std::int64_t calls(const nlohmann::json& r) { return r["partner"]["calls"].get<std::int64_t>(); }
std::int64_t ok(const nlohmann::json& r) { return r["requests"]["ok"].get<std::int64_t>(); }

TEST(SimCircuitBreaker, OpensInAnOutageKeepsTheAttemptsFromThePartnerAndClosesAfterIt) {
  const auto plain = run_sim(outage());
  Settings s = outage();
  s.circuit_breaker = parse_breaker("sliding-window-size=20,minimum-number-of-calls=10,wait-in-open=5s", "test");
  const auto guarded = run_sim(s);
  ASSERT_TRUE(guarded.contains("partner_client")) << guarded.dump().substr(0, 300);
  EXPECT_FALSE(plain.contains("partner_client"));  // off: the result keeps its bytes
  EXPECT_GE(client(guarded, "breaker_opened"), 2);  // opened, tried after 5 s, opened again
  EXPECT_GT(client(guarded, "breaker_rejected"), 300);
  // The partner met far fewer attempts: 20 s x 20/s x 3 attempts against a few trial calls.
  EXPECT_LT(calls(guarded) * 10, calls(plain) * 7) << calls(guarded) << " against " << calls(plain);
  // It closed again: outside the outage every request is as ok as without it.
  EXPECT_GT(ok(guarded), ok(plain) * 9 / 10) << ok(guarded) << " against " << ok(plain);
  EXPECT_EQ(guarded["partner"]["violations"]["overlap_person"], 0);
  // The partner's own count: every attempt but those refused at once reached it.
  EXPECT_EQ(calls(guarded), client(guarded, "calls") + client(guarded, "retries") - client(guarded, "breaker_rejected"));
}

TEST(SimRetryBudget, CapsTheRetriesOfAnOutageAndSpendsNoneWhenThePartnerIsWell) {
  // The baseline: the same client with a budget too large to bind in a 10 s
  // outage (at most 3 x 100 failed attempts a pod against 500 tokens to spend;
  // the same code path, so its retries are counted too).
  Settings unbounded = outage();
  unbounded.partner_faults["*"][0]["until_ms"] = 30000;
  unbounded.retry_budget = parse_retry_budget("max-tokens=1000", "test");
  Settings s = unbounded;
  s.retry_budget = parse_retry_budget("on", "test");
  const auto base = run_sim(unbounded);
  const auto budgeted = run_sim(s);
  ASSERT_TRUE(budgeted.contains("partner_client"));
  EXPECT_EQ(client(base, "retries_denied"), 0);
  EXPECT_GT(client(base, "retries"), 300);  // two retries per call in the outage
  EXPECT_GT(client(budgeted, "retries_denied"), 150);
  EXPECT_LT(client(budgeted, "retries") * 20, client(base, "retries")) << client(budgeted, "retries");
  // The partner's own count agrees: the attempts that reached it are the calls
  // plus the retries.
  for (const auto* r : {&base, &budgeted})
    EXPECT_EQ(calls(*r), client(*r, "calls") + client(*r, "retries")) << (*r)["partner_client"].dump();
  EXPECT_EQ(client(budgeted, "breaker_opened"), 0);

  Settings well = s;
  well.partner_faults = nlohmann::json::object();
  const auto w = run_sim(well);
  EXPECT_EQ(client(w, "retries"), 0);
  EXPECT_EQ(client(w, "retries_denied"), 0);
  EXPECT_EQ(calls(w), client(w, "calls"));  // one attempt a call
}

TEST(SimCircuitBreaker, AResultReadsBackItsSettings) {
  Settings s = outage();
  s.circuit_breaker = parse_breaker("failureRateThreshold=30,waitDurationInOpenState=7s", "test");
  s.retry_budget = parse_retry_budget("maxTokens=4", "test");
  const auto r = run_sim(s);
  EXPECT_EQ(r["settings"]["circuit-breaker"], breaker_text(s.circuit_breaker));
  EXPECT_EQ(r["settings"]["retry-budget"], "max-tokens=4,token-ratio=0.1");
}

}  // namespace
}  // namespace lockbench

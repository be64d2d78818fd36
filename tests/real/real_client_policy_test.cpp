// The partner client's circuit breaker and retry budget in the real world
// (core/client_policy.hpp, in the client both worlds share): against the real
// fake partner answering 503, over HTTP, on thread pods and on `lockbench
// serve` process pods. The partner's own count of the attempts it received is
// the check: calls + retries - attempts the breaker refused.
#include <string>

#include <nlohmann/json.hpp>

#include "real/run_real.hpp"
#include "tests/cli/run_command.hpp"
#include "tests/real/test_env.hpp"

namespace lockbench {
namespace real_client_policy_test {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::run_command;

// Every partner call answered 503; the client tries 3 times.
constexpr const char* kOutage = R"({"*":[{"kind":"error","p":1,"status":503}]})";

Settings failing_partner() {
  Settings s;
  s.world = "real";
  s.db_url = test::test_db();
  s.partner_url = test::test_partner();
  s.scenario = "switch-primary";
  s.strategy = "row-lease";
  s.seed = 5;
  s.pods = 2;
  s.probe_interval = 0s;
  s.rate_per_s = 40;
  s.keys = 100;
  s.duration = 3s;
  s.partner_latency = Distribution::fixed(5);
  s.partner_max_attempts = 3;
  s.retry_backoff_base = 5ms;
  s.retry_backoff_cap = 20ms;
  s.partner_faults = json::parse(kOutage);
  return s;
}

std::int64_t client(const json& r, const char* field) { return r["partner_client"][field].get<std::int64_t>(); }

void expect_the_partners_count(const json& r) {
  ASSERT_TRUE(r.contains("partner_client")) << r.dump().substr(0, 400);
  EXPECT_EQ(r["partner"]["calls"].get<std::int64_t>(),
            client(r, "calls") + client(r, "retries") - client(r, "breaker_rejected"))
      << r["partner_client"].dump();
}

TEST(RealCircuitBreaker, OpensOnEachPodAgainstAFailingPartnerAndKeepsItsAttemptsAway) {
  LOCKBENCH_NEED_PARTNER();
  Settings s = failing_partner();
  s.circuit_breaker = parse_breaker("sliding-window-size=10,minimum-number-of-calls=5,wait-in-open=60s", "test");
  const json r = run_real(s);
  expect_the_partners_count(r);
  EXPECT_EQ(client(r, "breaker_opened"), 2);  // once a pod: it stays open for the rest of the run
  EXPECT_GT(client(r, "breaker_rejected"), 50);
  EXPECT_LE(r["partner"]["calls"].get<std::int64_t>(), 2 * 10);  // at most a window's attempts a pod
  EXPECT_EQ(r["requests"]["ok"], 0);
}

TEST(RealRetryBudget, DeniesRetriesOnceHalfTheTokensAreSpent) {
  LOCKBENCH_NEED_PARTNER();
  Settings s = failing_partner();
  s.retry_budget = parse_retry_budget("max-tokens=10,token-ratio=0.1", "test");
  const json r = run_real(s);
  expect_the_partners_count(r);
  EXPECT_LE(client(r, "retries"), 2 * 5);  // five spare tokens a pod, and no success to earn more
  EXPECT_GT(client(r, "retries_denied"), 50);
  EXPECT_EQ(client(r, "breaker_opened"), 0);
}

TEST(RealCircuitBreaker, ProcessPodsGetTheSettingAndTheirCountsAreSummed) {
  LOCKBENCH_NEED_PARTNER();
  const auto out = run_command(std::string(LOCKBENCH_BIN) + " run --world real --quiet --json --db '" + test::test_db() +
                               "' --partner " + test::test_partner() +
                               " --pods 2 --pod-mode process --scenario switch-primary --strategy row-lease --rate 40"
                               " --keys 100 --duration 3s --probe-interval 0s --partner-latency fixed:5ms"
                               " --partner-max-attempts 3 --retry-backoff-base 5ms --retry-backoff-cap 20ms"
                               " --circuit-breaker sliding-window-size=10,minimum-number-of-calls=5,wait-in-open=60s"
                               " --partner-faults '" + kOutage + "'");
  ASSERT_EQ(out.status, 0) << out.err;
  const json r = json::parse(out.out).at(0);
  expect_the_partners_count(r);
  EXPECT_EQ(client(r, "breaker_opened"), 2);
  EXPECT_GT(client(r, "breaker_rejected"), 50);
  EXPECT_EQ(r["settings"]["circuit-breaker"],
            breaker_text(parse_breaker("sliding-window-size=10,minimum-number-of-calls=5,wait-in-open=60s", "test")));
}

}  // namespace real_client_policy_test
}  // namespace lockbench

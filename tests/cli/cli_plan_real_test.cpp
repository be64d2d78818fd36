// `lockbench plan --world real`: the plan's recommended settings, time-scaled,
// run against the throw-away PostgreSQL and fake partner that scripts/test
// starts, meet the targets there too (issue 31: "its recommended settings, run
// in the simulator and, time-scaled, in the real world, do meet the targets").
#include <gtest/gtest.h>

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "run_command.hpp"

using lockbench::testing::run_command;
using nlohmann::json;

namespace cli_plan_real_test {

const std::string kBin = LOCKBENCH_BIN;
const std::string kIncident = std::string(LOCKBENCH_SOURCE_DIR) + "/examples/incident/application.yml";

std::string servers() {
  const char* db = std::getenv("LOCKBENCH_TEST_DB");
  const char* partner = std::getenv("LOCKBENCH_TEST_PARTNER");
  if (!db || !*db || !partner || !*partner) return "";
  return std::string(" --db ") + db + " --partner " + partner;
}

// The incident's plan for a lease (no connection held across the call) and a
// transaction lock (a connection held across it): 20 s runs in the plan's
// time, 10 s in the real world's at time scale 0.5, with a 25 % margin.
TEST(CliPlanReal, TheRecommendedSettingsTimeScaledMeetTheTargetsInTheRealWorld) {
  const std::string srv = servers();
  if (srv.empty()) GTEST_SKIP() << "LOCKBENCH_TEST_DB / LOCKBENCH_TEST_PARTNER not set (scripts/test sets them)";
  const auto r = run_command(kBin + " plan --from " + kIncident + " --strategy row-lease,held-tx:wait --world real" +
                             srv + " --time-scale 0.5 --duration 20s --horizon 5m --seeds 1 --margin 25% --format json");
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  const json plan = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(plan.is_discarded()) << r.out;
  EXPECT_TRUE(plan["real_world"].get<bool>());
  EXPECT_DOUBLE_EQ(plan["given_rate_per_s"].get<double>(), 20);
  EXPECT_DOUBLE_EQ(plan["rate_per_s"].get<double>(), 25);  // planned with the margin
  EXPECT_NE(plan["inputs"].dump().find("the real stack, measured"), std::string::npos) << plan["inputs"];
  EXPECT_FALSE(plan["recommended"].is_null());
  for (const auto& s : plan["strategies"]) {
    const json& sim = s["simulator"];
    ASSERT_TRUE(sim["feasible"].get<bool>()) << s["strategy"] << ": " << sim["chosen"].dump();
    const json& real = sim["real"];
    ASSERT_TRUE(real.is_object()) << s["strategy"];
    EXPECT_DOUBLE_EQ(real["time_scale"].get<double>(), 0.5);
    EXPECT_TRUE(real["run"]["met"].get<bool>()) << s["strategy"] << ": " << real.dump();
    EXPECT_DOUBLE_EQ(real["run"]["rate"].get<double>(), 20);  // the given rate, not the margin's
    EXPECT_EQ(real["run"]["maximum-pool-size"], sim["chosen"]["maximum-pool-size"]) << s["strategy"];
    EXPECT_EQ(real["counts"]["violations"].get<double>(), 0) << s["strategy"];
    EXPECT_EQ(real["counts"]["pool_timeouts"].get<double>(), 0) << s["strategy"];
    EXPECT_GT(real["counts"]["ok"].get<double>(), 100) << s["strategy"];  // 20/s for 20 s, in the plan's time
    const std::string line = real["run"]["runs"][0];
    for (const char* part : {"--world real", "--time-scale 0.5", "--fail-on"})
      EXPECT_NE(line.find(part), std::string::npos) << part << " in " << line;
    // The same point in both worlds: the real p99 (in the plan's time) within a factor of 2 of the simulator's.
    const double sim_p99 = sim["chosen"]["p99_ms"][0].get<double>(), real_p99 = real["run"]["p99_ms"][0].get<double>();
    EXPECT_GT(real_p99, sim_p99 / 2) << s["strategy"];
    EXPECT_LT(real_p99, sim_p99 * 2) << s["strategy"];
  }
}

}  // namespace cli_plan_real_test

// Lease renewal on pods as processes (`lockbench serve`, --pod-mode process):
// row-lease:renew with a TTL shorter than the calls keeps its lease (no steal),
// and a real SIGSTOP longer than the TTL stops its renewals, so another pod
// steals the lease from live work (why fencing still matters).
#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli/run_command.hpp"
#include "tests/real/test_env.hpp"

namespace lockbench {
namespace {

using nlohmann::json;
using testing::run_command;

json run_json(const std::string& args) {
  const auto r = run_command(std::string(LOCKBENCH_BIN) + " run --world real --quiet --json --db " + test::test_db() +
                             " --partner " + test::test_partner() + " " + args);
  EXPECT_EQ(r.status, 0) << r.err;
  if (r.status != 0) return json::object();
  return json::parse(r.out).at(0);
}

TEST(RealRenewalPods, a_renewed_short_lease_is_not_stolen_by_slow_calls_but_is_by_a_pause_longer_than_its_ttl) {
  LOCKBENCH_NEED_PARTNER();
  // Two calls of 300 ms against a 500 ms TTL, renewed every 167 ms.
  const std::string common = "--pods 2 --pod-mode process --rate 10 --duration 3s --keys 1 --key-dist hot "
                             "--partner-latency fixed:300ms --lease-ttl 500ms --strategy row-lease:renew ";
  const json calm = run_json(common);
  ASSERT_TRUE(calm.contains("locks"));
  EXPECT_GT(calm["locks"]["acquired"].get<int>(), 0);
  EXPECT_EQ(calm["locks"]["lease_steals"], 0);
  EXPECT_EQ(calm["partner"]["violations"].value("overlap_person", 0), 0);
  EXPECT_GE(calm["locks"]["renewals"].get<int>(), calm["locks"]["acquired"].get<int>());  // read from each pod

  const json paused = run_json(common + "--pause-at 500ms:1 --pause-for 2500ms");
  ASSERT_TRUE(paused.contains("locks"));
  EXPECT_GE(paused["faults"]["pause"]["in_partner_at_pause"].get<int>(), 1);
  EXPECT_GE(paused["locks"]["lease_steals"].get<int>(), 1);
}

}  // namespace
}  // namespace lockbench

// Virtual threads in the real world (--virtual-threads, real/carriers.hpp): a
// request thread per request on the pod's --carriers, and synchronized below
// JDK 24 pinning them, on thread pods and on serve pods, beside the
// simulator's figures (sim/virtual_threads_test.cpp). Time-scaled runs of a
// few seconds; ratios with wide margins, never absolute times.
#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli/run_command.hpp"
#include "tests/real/test_env.hpp"

namespace lockbench {
namespace real_virtual_threads_test {

using nlohmann::json;
using testing::run_command;

// synchronized on 1000 keys (hardly a key twice at once), two partner calls of
// 1 s a request, 5 requests/s for 20 s, one pod on 2 carriers: pinned, it
// serves about 2 requests per 2 s; on JDK 24 the offered 5/s.
const std::string kShape =
    "--scenario switch-primary --strategy synchronized --virtual-threads on --carriers 2 --keys 1000 "
    "--partner-latency fixed:1s --rate 5 --seed 3 --trace-requests 0 ";
const std::string kLoad = kShape + "--duration 20s ";

json run_json(const std::string& args) {
  const auto r = run_command(std::string(LOCKBENCH_BIN) + " run --quiet --json " + args);
  EXPECT_EQ(r.status, 0) << r.err;
  if (r.status != 0) return json::object();
  return json::parse(r.out).at(0);
}

std::string real_world(const char* pod_mode) {
  return "--world real --pod-mode " + std::string(pod_mode) + " --db " + test::test_db() + " --partner " +
         test::test_partner() + " --time-scale 0.1 ";
}

// ok/s at the configured scale (a time-scaled real run's `unscaled` block).
double rate(const json& r) {
  return (r.contains("unscaled") ? r["unscaled"] : r)["throughput_ok_per_s"].get<double>();
}

TEST(RealVirtualThreads, SynchronizedBelowJdk24PinsTheCarriersOfThreadPodsAsInTheSimulator) {
  LOCKBENCH_NEED_PARTNER();
  const json real21 = run_json(real_world("thread") + kLoad + "--jdk 21");
  const json real24 = run_json(real_world("thread") + kLoad + "--jdk 24");
  const json sim21 = run_json("--world sim " + kLoad + "--jdk 21");
  ASSERT_TRUE(real21.contains("virtual_threads")) << real21.dump().substr(0, 400);
  const json& vt = real21["virtual_threads"];
  EXPECT_EQ(vt["pinning"], true);
  EXPECT_EQ(vt["carriers"], 2);
  EXPECT_EQ(vt["pinned_peak"], 2);  // never more pinned than carriers
  EXPECT_GT(vt["stalls"].get<std::int64_t>(), 5);
  EXPECT_GT(vt["starts_waited_for_a_carrier"].get<std::int64_t>(), 20);
  EXPECT_EQ(real24["virtual_threads"], json({{"pinning", false}}));
  EXPECT_EQ(real21["requests"]["rejected"], 0);  // no worker cap, no accept queue
  // Pinned, the carriers are the ceiling; unpinned, the offered load is served.
  EXPECT_LT(rate(real21), 0.4 * rate(real24));
  // The two worlds agree on the ceiling within a factor of two.
  EXPECT_GT(rate(real21), 0.5 * rate(sim21));
  EXPECT_LT(rate(real21), 2.0 * rate(sim21));
}

TEST(RealVirtualThreads, AServePodWithEveryCarrierPinnedFailsALivenessProbeWithoutTheDatabase) {
  LOCKBENCH_NEED_PARTNER();
  // The liveness handler waits for a carrier behind the requests that came
  // before it; kubelet's timeout (3 s, scaled 300 ms) passes and the pod is killed.
  const std::string probed = kShape + "--duration 60s --liveness db=off,timeout=3s --pod-startup 20s ";
  const json jdk21 = run_json(real_world("process") + probed + "--jdk 21");
  const json jdk24 = run_json(real_world("process") + probed + "--jdk 24");
  ASSERT_TRUE(jdk21.contains("pods")) << jdk21.dump().substr(0, 400);
  EXPECT_GE(jdk21["pods"]["restarts"].get<std::int64_t>(), 1);
  EXPECT_EQ(jdk24["pods"]["restarts"], 0);
  EXPECT_EQ(jdk24["virtual_threads"]["pinning"], false);
  EXPECT_EQ(jdk21["virtual_threads"]["killed_pods_not_counted"], jdk21["pods"]["restarts"]);
  // The simulator's run of the same: its ok requests within half of the real ones either way.
  const json sim = run_json("--world sim " + probed + "--jdk 21");
  const auto ok = [](const json& r) { return static_cast<double>(r["requests"]["ok"].get<std::int64_t>()); };
  EXPECT_GT(ok(jdk21), 0.5 * ok(sim));
  EXPECT_LT(ok(jdk21), 1.5 * ok(sim));
  EXPECT_LT(ok(jdk21), 0.5 * ok(jdk24));
}

}  // namespace real_virtual_threads_test
}  // namespace lockbench

// kubelet's rules (core/kubelet.hpp), the ones both worlds run: thresholds,
// the restart back-off and its scale, the load balancer's choice.
#include "core/kubelet.hpp"

#include <gtest/gtest.h>

namespace lockbench {
namespace {

using namespace std::chrono_literals;

Settings probed() {
  Settings s;
  s.readiness = parse_probe("failure-threshold=2,success-threshold=2", "--readiness", false);
  s.liveness = parse_probe("failure-threshold=3", "--liveness", true);
  s.pod_startup = 5s;
  return s;
}

TEST(KubeletRules, ReadinessPullsAfterFailureThresholdFailuresInARowAndReturnsAfterSuccessThresholdSuccesses) {
  const Settings s = probed();
  KubeletRules k(s, 2);
  EXPECT_FALSE(k.probe_result(0, ProbeKind::readiness, false, 1s));
  EXPECT_TRUE(k.life(0).ready);
  k.probe_result(0, ProbeKind::readiness, true, 2s);  // the run of failures is broken
  k.probe_result(0, ProbeKind::readiness, false, 3s);
  EXPECT_TRUE(k.life(0).ready);
  k.probe_result(0, ProbeKind::readiness, false, 4s);
  EXPECT_FALSE(k.life(0).ready);
  k.probe_result(0, ProbeKind::readiness, true, 5s);
  EXPECT_FALSE(k.life(0).ready);
  k.probe_result(0, ProbeKind::readiness, true, 6s);
  EXPECT_TRUE(k.life(0).ready);
  EXPECT_EQ(k.stats().pulled, 1);
  EXPECT_EQ(k.stats().returned, 1);
  EXPECT_EQ(k.stats().readiness_failed, 3);
}

TEST(KubeletRules, LivenessAsksForAKillAtItsThirdFailureInARow) {
  const Settings s = probed();
  KubeletRules k(s, 1);
  EXPECT_FALSE(k.probe_result(0, ProbeKind::liveness, false, 1s));
  EXPECT_FALSE(k.probe_result(0, ProbeKind::liveness, false, 2s));
  EXPECT_TRUE(k.probe_result(0, ProbeKind::liveness, false, 3s));
}

TEST(KubeletRules, AKillRestartsAtOnceThenAfterTenAndTwentySecondsAndTheScaleScalesTheBackOff) {
  const Settings s = probed();
  for (const double scale : {1.0, 0.1}) {
    KubeletRules k(s, 1, scale);
    const auto scaled = [scale](Duration d) { return Duration(static_cast<Duration::rep>(static_cast<double>(d.count()) * scale)); };
    const PodLife first = k.kill(0, 100s);
    EXPECT_EQ(first.running_from, 100s);
    EXPECT_EQ(first.serving_from, 105s);  // --pod-startup (already scaled by the caller's settings)
    EXPECT_EQ(first.incarnation, 1u);
    EXPECT_FALSE(first.ready);
    EXPECT_EQ(k.kill(0, 110s).running_from, 110s + scaled(10s));
    EXPECT_EQ(k.kill(0, 150s).running_from, 150s + scaled(20s));
    EXPECT_EQ(k.stats().kills, 3);
  }
}

TEST(KubeletRules, TheBalancerSendsToTheHomePodOrAnotherReadyOneAndRefusesWithNone) {
  const Settings s = probed();
  KubeletRules k(s, 3);
  EXPECT_EQ(k.route(4), 1);
  k.set_ready(1, false, 1s);
  for (std::uint64_t id = 0; id < 30; ++id) EXPECT_NE(k.route(id), 1);
  k.set_ready(0, false, 2s);
  k.set_ready(2, false, 3s);
  EXPECT_EQ(k.route(4), -1);
  EXPECT_EQ(k.stats().peak_unready, 3);
  k.set_ready(2, true, 7s);
  EXPECT_EQ(k.route(4), 2);
  const auto block = k.pods_json(10s);
  EXPECT_DOUBLE_EQ(block["unavailable_s"].get<double>(), 4.0);
  EXPECT_EQ(block["readiness"]["pulled"], 3);
}

TEST(KubeletRules, EveryChangeInAPodsLifeIsAnEventWithItsTimeItsOneBasedPodAndItsName) {
  const Settings s = probed();
  KubeletRules k(s, 2);
  k.probe_result(1, ProbeKind::readiness, false, 1s);
  k.probe_result(1, ProbeKind::readiness, false, 2s);  // pulled
  k.kill(1, 3s);                                       // killed (already out: no second "pulled")
  k.container_running(1, 3s);                          // started (with a readiness probe: still out)
  k.note(1, "listening", 8s);                          // the world's own
  k.probe_result(1, ProbeKind::readiness, true, 9s);
  k.probe_result(1, ProbeKind::readiness, true, 10s);  // returned
  const auto events = k.pods_json(11s)["events"];
  const nlohmann::json expected = {{2.0, 2, "pulled"},  {3.0, 2, "killed"},   {3.0, 2, "started"},
                                   {8.0, 2, "listening"}, {10.0, 2, "returned"}};
  EXPECT_EQ(events, expected);
  EXPECT_EQ(k.stats().pulled, 1);
  EXPECT_EQ(k.stats().returned, 1);
}

TEST(KubeletRules, AKillOfAPodStillInTheLoadBalancerIsAPullThenAKillAsReadinessPulledCountsIt) {
  const Settings s = probed();
  KubeletRules k(s, 1);
  k.kill(0, 4s);  // liveness was faster than readiness
  EXPECT_EQ(k.pods_json(5s)["events"], (nlohmann::json{{4.0, 1, "pulled"}, {4.0, 1, "killed"}}));
  EXPECT_EQ(k.stats().pulled, 1);
}

TEST(KubeletRules, WithoutAReadinessProbeAKilledPodsEventsAreKilledAndStartedOnlyAndTheListIsCapped) {
  Settings s = probed();
  s.readiness = ProbeSpec{};  // off: in the load balancer while its container runs
  KubeletRules k(s, 1);
  k.kill(0, 1s);
  k.container_running(0, 1s);
  EXPECT_TRUE(k.life(0).ready);
  EXPECT_EQ(k.pods_json(2s)["events"], (nlohmann::json{{1.0, 1, "killed"}, {1.0, 1, "started"}}));
  for (int i = 0; i < 500; ++i) k.note(0, "listening", 2s);
  EXPECT_EQ(k.pods_json(3s)["events"].size(), kPodEventsListed);
}

}  // namespace
}  // namespace lockbench

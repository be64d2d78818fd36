// Kubernetes probes with consequences in the simulator (sim/kubelet.cpp) and
// partner outages that end (fault windows, the recovery block). Counts and
// orderings with wide margins, never timings.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/kubelet.hpp"
#include "sim/run_sim.hpp"

namespace lockbench {
namespace {

using namespace std::chrono_literals;

// The seeds' incident on 3 pods: 10 connections each, the partner at p50 1.5 s /
// p99 4 s, 20 requests/s (examples/incident.toml), shorter.
Settings incident(const std::string& strategy, Duration duration = 120s) {
  Settings s;
  s.scenario = "switch-primary";
  s.strategy = strategy;
  s.pods = 3;
  s.partner_latency = Distribution::parse("lognormal:p50=1.5s,p99=4s", "test");
  s.rate_per_s = 20;
  s.keys = 200;
  s.duration = duration;
  s.trace_requests = 0;
  return s;
}

// Spring's default probes as the article's users point them: both at /actuator/health, db included.
Settings with_spring_default_probes(Settings s) {
  s.readiness = parse_probe("on", "--readiness", false);
  s.liveness = parse_probe("on", "--liveness", true);
  return s;
}

std::int64_t pods(const nlohmann::json& r, const char* field) { return r["pods"][field].get<std::int64_t>(); }

// ---- liveness: the restart cascade

TEST(SimProbes, HeldTxOnTheIncidentWithADbLivenessProbeRestartsPodsAndLosesRequests) {
  const auto r = run_sim(with_spring_default_probes(incident("held-tx")));
  EXPECT_GE(pods(r, "restarts"), 2);
  EXPECT_GT(pods(r, "killed_in_flight"), 0);
  EXPECT_EQ(pods(r, "requests_lost"), pods(r, "killed_in_flight") + pods(r, "refused"));
  EXPECT_GT(pods(r, "peak_unready"), 0);
  EXPECT_EQ(r["pods"]["liveness"]["kills"], pods(r, "restarts"));
  // Nothing vanishes: every request made has its outcome.
  EXPECT_EQ(r["requests"]["total"].get<std::int64_t>(),
            r["requests"]["ok"].get<std::int64_t>() + r["requests"]["conflict"].get<std::int64_t>() +
                r["requests"]["pool_timeout"].get<std::int64_t>() + r["requests"]["rejected"].get<std::int64_t>() +
                r["requests"]["error"].get<std::int64_t>());
  EXPECT_GE(r["requests"]["error"].get<std::int64_t>(), pods(r, "killed_in_flight"));
  EXPECT_GE(r["requests"]["rejected"].get<std::int64_t>(), pods(r, "refused"));
}

TEST(SimProbes, RowLeaseOnTheIncidentWithTheSameProbesRestartsNoPodAndPullsNone) {
  const auto r = run_sim(with_spring_default_probes(incident("row-lease")));
  EXPECT_EQ(pods(r, "restarts"), 0);
  EXPECT_EQ(pods(r, "peak_unready"), 0);
  EXPECT_EQ(pods(r, "requests_lost"), 0);
  EXPECT_GT(r["pods"]["liveness"]["total"].get<std::int64_t>(), 30);  // probed all along
  EXPECT_EQ(r["pods"]["verdict"], "available (a pod was ready throughout)");
}

TEST(SimProbes, HeldTxWithALivenessProbeWithoutTheDatabaseRestartsNoPodThoughReadinessPullsThem) {
  Settings s = with_spring_default_probes(incident("held-tx"));
  s.liveness = parse_probe("db=off", "--liveness", true);  // /actuator/health/liveness: the recommended setting
  const auto r = run_sim(s);
  EXPECT_EQ(pods(r, "restarts"), 0);
  EXPECT_EQ(pods(r, "killed_in_flight"), 0);
  EXPECT_GT(r["pods"]["readiness"]["pulled"].get<std::int64_t>(), 0);  // its pool is still dry
}

TEST(SimProbes, AKilledPodIsRestartedAfterKubeletsBackOffAndServesAgain) {
  Settings s = with_spring_default_probes(incident("held-tx", 300s));
  const auto r = run_sim(s);
  // Restarted pods come back: readiness returns them to the load balancer.
  EXPECT_GT(r["pods"]["readiness"]["returned"].get<std::int64_t>(), 0);
  EXPECT_GT(r["requests"]["ok"].get<std::int64_t>(), 0);
}

// pods.events: the rules' names (core/kubelet.hpp), as the real runner writes
// them, one per change, in time order, each pod's in the order of its life.
TEST(SimProbes, EveryKillRestartAndReadinessChangeIsAnEventOfItsPodInTimeOrder) {
  const auto r = run_sim(with_spring_default_probes(incident("held-tx", 300s)));
  const auto& events = r["pods"]["events"];
  ASSERT_TRUE(events.is_array());
  ASSERT_LT(events.size(), kPodEventsListed);  // all of them: the counts below hold
  std::map<std::string, std::int64_t> n;
  double last = 0;
  std::vector<std::string> state(3, "ready");  // running before the run started
  for (const auto& e : events) {
    ASSERT_EQ(e.size(), 3u);
    const double t = e[0].get<double>();
    const int pod = e[1].get<int>();
    const std::string what = e[2].get<std::string>();
    EXPECT_GE(t, last);
    last = t;
    ASSERT_TRUE(pod >= 1 && pod <= 3) << e;
    ++n[what];
    std::string& st = state[static_cast<std::size_t>(pod - 1)];
    // Each pod's life: pulled -> killed -> started -> listening -> returned, or pulled -> returned.
    if (what == "pulled") EXPECT_EQ(st, "ready") << e;
    else if (what == "killed") EXPECT_NE(st, "killed") << e;
    else if (what == "started") EXPECT_EQ(st, "killed") << e;
    else if (what == "listening") EXPECT_EQ(st, "started") << e;
    else if (what == "returned") EXPECT_TRUE(st == "pulled" || st == "listening") << e;
    else ADD_FAILURE() << "unknown event " << e;
    st = what == "returned" ? "ready" : what;
  }
  EXPECT_EQ(n["killed"], pods(r, "restarts"));
  EXPECT_GE(n["killed"], 2);
  EXPECT_LE(n["started"], n["killed"]);  // a kill near the end may restart after the run
  EXPECT_GE(n["started"], n["killed"] - 1);
  EXPECT_LE(n["listening"], n["started"]);
  EXPECT_GE(n["listening"], 1);
  EXPECT_EQ(n["pulled"], r["pods"]["readiness"]["pulled"].get<std::int64_t>());
  EXPECT_EQ(n["returned"], r["pods"]["readiness"]["returned"].get<std::int64_t>());
}

TEST(SimProbes, ARunWhosePodsStayReadyHasNoEvents) {
  const auto r = run_sim(with_spring_default_probes(incident("row-lease")));
  EXPECT_EQ(r["pods"]["events"], nlohmann::json::array());
}

// ---- readiness: the load balancer

TEST(SimProbes, ReadinessPullsAFrozenPodAndItsTrafficMovesToTheOthers) {
  Settings s = incident("row-lease", 60s);
  s.readiness = parse_probe("period=2s,timeout=1s,failure-threshold=2,db=off", "--readiness", false);
  s.pause_at = 10s;  // pod 2 (index 1) freezes for 30 s
  s.pause_for = 30s;
  const auto paused = run_sim(s);
  s.pause_at.reset();
  s.pause_for = 0s;
  const auto calm = run_sim(s);
  const auto by_pod = [](const nlohmann::json& r, int i) { return r["pods"]["requests_by_pod"][i].get<std::int64_t>(); };
  EXPECT_GE(paused["pods"]["readiness"]["pulled"].get<std::int64_t>(), 1);
  EXPECT_GE(paused["pods"]["readiness"]["returned"].get<std::int64_t>(), 1);  // back after the pause
  EXPECT_EQ(calm["pods"]["readiness"]["pulled"], 0);
  EXPECT_EQ(pods(paused, "refused"), 0);  // two pods stayed ready
  // Round-robin gives each pod a third while all are ready; pulled for most of
  // the pause, pod 2 gets far less, and pods 1 and 3 take its share.
  EXPECT_LT(by_pod(paused, 1), by_pod(calm, 1) * 3 / 4);
  EXPECT_GT(by_pod(paused, 0) + by_pod(paused, 2), by_pod(calm, 0) + by_pod(calm, 2));
  EXPECT_EQ(by_pod(paused, 0) + by_pod(paused, 1) + by_pod(paused, 2), paused["requests"]["total"].get<std::int64_t>());
}

TEST(SimProbes, WithNoPodReadyTheLoadBalancerRefusesRequestsAndCountsThem) {
  Settings s = incident("held-tx", 90s);
  s.pods = 1;
  s.readiness = parse_probe("on", "--readiness", false);
  const auto r = run_sim(s);
  EXPECT_GT(pods(r, "refused"), 0);
  EXPECT_GT(r["pods"]["unavailable_s"].get<double>(), 0);
  EXPECT_NE(r["pods"]["verdict"].get<std::string>().find("unavailable for"), std::string::npos);
  EXPECT_GE(r["requests"]["rejected"].get<std::int64_t>(), pods(r, "refused"));
  EXPECT_TRUE(r["complete"]);  // the run keeps its result
}

TEST(SimProbes, AServiceWhosePodsAreAllDeadKeepsItsResultAndCountsEveryRequest) {
  Settings s = with_spring_default_probes(incident("held-tx", 150s));
  s.pods = 1;
  s.pod_startup = 30s;
  const auto r = run_sim(s);
  EXPECT_GT(pods(r, "restarts"), 0);
  EXPECT_GT(r["pods"]["unavailable"].size(), 0u);
  EXPECT_GT(pods(r, "refused"), 0);
  const auto arrivals = r["requests"]["total"].get<std::int64_t>();
  EXPECT_GT(arrivals, 2500);  // about 20/s x 150 s: no request was lost from the counts
  EXPECT_TRUE(r["complete"]);
}

// ---- defaults: today's results stay as they were

TEST(SimProbes, ProbesOffByDefaultLeaveTheResultAsItWasAndAddNoBlock) {
  Settings s = incident("held-tx", 30s);
  const auto plain = run_sim(s);
  s.readiness = parse_probe("off", "--readiness", false);
  s.liveness = parse_probe("off", "--liveness", true);
  s.pod_startup = 45s;  // read only with --liveness
  auto off = run_sim(s);
  EXPECT_FALSE(plain.contains("pods"));
  EXPECT_FALSE(plain.contains("recovery"));
  EXPECT_FALSE(plain["settings"].contains("readiness"));
  auto a = plain, b = off;
  a["provenance"].erase("created_at");
  b["provenance"].erase("created_at");
  EXPECT_EQ(a.dump(), b.dump());
}

TEST(SimProbes, AReadinessProbeThatNeverActsMeasuresWhatTheCountingProbeMeasured) {
  // Same period and timeout as --probe-interval 1s --probe-timeout 1s, a threshold it never reaches.
  Settings s = incident("row-lease", 30s);
  const auto counting = run_sim(s);
  s.readiness = parse_probe("period=1s,timeout=1s,failure-threshold=1000,db=on", "--readiness", false);
  const auto acting = run_sim(s);
  EXPECT_EQ(acting["probe"], counting["probe"]);
  EXPECT_EQ(acting["requests"], counting["requests"]);
  EXPECT_EQ(acting["latency_ms"], counting["latency_ms"]);
  EXPECT_EQ(acting["pods"]["readiness"]["total"], counting["probe"]["total"]);
}

// ---- partner outages that end

// A 30 s partner slowdown to 10 s per call from 60 s on, a 150 s run.
Settings with_slowdown(Settings s) {
  s.partner_faults = nlohmann::json::parse(R"({"*":[{"kind":"slow","p":1,"ms":10000,"from_ms":60000,"until_ms":90000}]})");
  s.partner_read_timeout = 15s;
  return s;
}

TEST(SimRecovery, RowLeaseRecoversFromAPartnerSlowdownThatEnds) {
  const auto r = run_sim(with_spring_default_probes(with_slowdown(incident("row-lease", 150s))));
  ASSERT_TRUE(r.contains("recovery"));
  EXPECT_DOUBLE_EQ(r["recovery"]["window_from_s"].get<double>(), 60.0);
  EXPECT_DOUBLE_EQ(r["recovery"]["window_until_s"].get<double>(), 90.0);
  EXPECT_GT(r["recovery"]["before"]["answered_share"].get<double>(), 0.9);
  ASSERT_TRUE(r["recovery"]["recovered"]) << r["recovery"].dump();
  EXPECT_LT(r["recovery"]["recovery_s"].get<double>(), 45.0);
  EXPECT_EQ(pods(r, "restarts"), 0);
}

TEST(SimRecovery, HeldTxWithDbProbesRecoversLaterThanRowLeaseOrNotAtAll) {
  // 6/s: below held-tx's Little's-law ceiling (30 connections / ~3.4 s), so it is well before the window.
  Settings held = with_spring_default_probes(with_slowdown(incident("held-tx", 150s)));
  held.rate_per_s = 6;
  Settings row = held;
  row.strategy = "row-lease";
  const auto h = run_sim(held), r = run_sim(row);
  ASSERT_GT(h["recovery"]["before"]["answered_share"].get<double>(), 0.9) << h["recovery"].dump();
  ASSERT_TRUE(r["recovery"]["recovered"]) << r["recovery"].dump();
  if (h["recovery"]["recovered"].get<bool>()) {
    EXPECT_GT(h["recovery"]["recovery_s"].get<double>(), r["recovery"]["recovery_s"].get<double>());
  }
  EXPECT_GT(pods(h, "restarts"), pods(r, "restarts"));
}

TEST(SimRecovery, NoWindowNoRecoveryBlock) {
  Settings s = incident("row-lease", 20s);
  s.partner_faults = nlohmann::json::parse(R"({"*":[{"kind":"error","p":0.1,"status":503}]})");
  EXPECT_FALSE(run_sim(s).contains("recovery"));
}

// ---- settings: what Kubernetes refuses

std::string refusal(const std::string& text, bool liveness) {
  try {
    parse_probe(text, liveness ? "--liveness" : "--readiness", liveness);
  } catch (const SettingError& e) {
    return e.what();
  }
  return "";
}

TEST(SimProbeSettings, RefuseWhatKubernetesRefusesInOneLineNamingTheSetting) {
  EXPECT_NE(refusal("failure-threshold=0", false).find("--readiness: failure-threshold 0"), std::string::npos);
  EXPECT_NE(refusal("failureThreshold=0", true).find("minimum value is 1"), std::string::npos);
  EXPECT_NE(refusal("success-threshold=2", true).find("must be 1 for liveness"), std::string::npos);
  EXPECT_NE(refusal("period=0", false).find("--readiness: period"), std::string::npos);
  EXPECT_NE(refusal("perod=10s", false).find("unknown key"), std::string::npos);
  EXPECT_NE(refusal("db=maybe", true).find("accepted: on, off"), std::string::npos);
  for (const auto& line : {refusal("failure-threshold=0", false), refusal("success-threshold=2", true)})
    EXPECT_EQ(line.find('\n'), std::string::npos);
}

TEST(SimProbeSettings, AcceptWhatKubernetesAcceptsInItsNamesOrOursAndReadBackWhatTheyShow) {
  EXPECT_EQ(refusal("success-threshold=2", false), "");  // readiness may ask for more
  EXPECT_EQ(refusal("period=1s,timeout=5s", false), "");  // Kubernetes takes a timeout above the period
  const ProbeSpec k8s = parse_probe("periodSeconds=5,timeoutSeconds=2,failureThreshold=6,initialDelaySeconds=30", "--liveness", true);
  EXPECT_EQ(k8s.period, 5s);
  EXPECT_EQ(k8s.timeout, 2s);
  EXPECT_EQ(k8s.failure_threshold, 6);
  EXPECT_EQ(k8s.initial_delay, 30s);
  EXPECT_TRUE(k8s.db);
  const ProbeSpec toml = parse_probe(R"({"period":"5s","timeout":"2s","failure-threshold":6,"initial-delay":"30s","db":true})",
                                     "--liveness", true);
  EXPECT_EQ(toml, k8s);
  EXPECT_EQ(parse_probe(probe_text(k8s), "--liveness", true), k8s);
  const ProbeSpec defaults = parse_probe("on", "--readiness", false);
  EXPECT_EQ(defaults.period, 10s);
  EXPECT_EQ(defaults.timeout, 1s);
  EXPECT_EQ(defaults.failure_threshold, 3);
  EXPECT_EQ(defaults.success_threshold, 1);
  EXPECT_FALSE(parse_probe("off", "--readiness", false).on);
  EXPECT_EQ(probe_text(ProbeSpec{}), "off");
}

}  // namespace
}  // namespace lockbench

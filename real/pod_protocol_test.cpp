// The pod protocol (real/pod_protocol.hpp) without servers: a pod's flags are
// the settings table's, statuses and the split header read as written, and a
// clock skew reaches the skewed pods only.
#include "real/pod_protocol.hpp"

#include <map>
#include <set>

#include <gtest/gtest.h>

#include "settings/table.hpp"
#include "real/faults.hpp"

namespace lockbench::real {
namespace {

// A value other than Settings{}'s for every row of the settings table (the
// arrival models' three in the variants below). A new row fails
// EveryRowHasANonDefaultValueHere until it gets one: then it is checked to
// reach the pods.
const std::map<std::string, std::string>& non_default() {
  static const std::map<std::string, std::string> v = {
      {"world", "real"}, {"scenario", "checkout"}, {"strategy", "row-lease:fenced"}, {"seed", "77"},
      {"db", "postgresql://u:secret@127.0.0.1:5432/x"}, {"partner", "http://127.0.0.1:9"},
      {"maximum-pool-size", "7"}, {"connection-timeout", "3s"}, {"leak-detection-threshold", "2s"},
      {"max-lifetime", "10m"}, {"probe-interval", "250ms"}, {"probe-timeout", "300ms"}, {"pods", "3"},
      {"pod-mode", "process"}, {"targets", "http://127.0.0.1:1"}, {"max-threads", "17"}, {"accept-count", "3"},
      {"rate", "12.5"}, {"users", "6"}, {"think-time", "40ms"}, {"burst", "9"}, {"keys", "33"},
      {"key-dist", "zipf:1.3"}, {"duration", "4s"}, {"duplicate-share", "0.25"}, {"duplicate-gap", "20ms"},
      {"partner-latency", "uniform:100ms..300ms"}, {"apply-at", "0.25"}, {"partner-connect-timeout", "700ms"},
      {"partner-read-timeout", "3s"}, {"partner-max-attempts", "3"}, {"retry-backoff-base", "50ms"},
      {"retry-backoff-cap", "1s"}, {"partner-faults", R"({"auth0.link":[{"kind":"error","p":0.5,"status":503}]})"},
      {"fencing", "enforce"}, {"identities-per-person", "4"}, {"lease-ttl", "7s"}, {"lock-timeout", "2s"},
      {"db-latency", "fixed:2ms"}, {"partner-overhead", "1ms"}, {"pool-handoff", "30us"}, {"pool-order", "hikari"},
      {"worker-handoff", "20us"},
      {"db-faults", "commit_fail:p=0.05,conn_lost:p=0.02"}, {"outbox-pollers", "2"}, {"outbox-poll-interval", "70ms"},
      {"outbox-drain-limit", "30s"}, {"email-latency", "75ms"}, {"time-scale", "0.5"}, {"crash-at", "1s:2"},
      {"restart-after", "2s"}, {"pause-at", "2s:3"}, {"pause-for", "1500ms"}, {"clock-skew", "3s:2"},
      {"trace-requests", "12"}, {"pgbouncer", "session"}, {"pgbouncer-pool-size", "5"}, {"statements", "unnamed"},
      {"redis", "redis://:pw@127.0.0.1:6379"}, {"redis-latency", "fixed:1ms"}, {"redis-failover-at", "2s"},
      {"redis-replication-lag", "200ms"}, {"max-connections", "300"}, {"max-locks-per-transaction", "128"},
      {"key-hash", "hashtext-32"}, {"key-id-base", "70606"}, {"key-id-stride", "85889"}, {"pre-sql-work", "200ms"},
      {"delay-connection-acquisition", "on"}, {"bypass-share", "0.05"}, {"orm-writer-rate", "4"},
      {"orm-writer-gap", "200ms"}, {"etcd", "http://127.0.0.1:2379"}, {"etcd-latency", "fixed:3ms"},
      {"etcd-leader-change-at", "2s"}, {"etcd-election", "1500ms"},
      {"readiness", "period=5s,timeout=2s,failure-threshold=2,success-threshold=2,initial-delay=1s,db=on"},
      {"liveness", "periodSeconds=20,timeoutSeconds=3,failureThreshold=4,db=off"}, {"pod-startup", "25s"},
      {"virtual-threads", "on"}, {"jdk", "21"}, {"carriers", "4"},
      {"circuit-breaker", "failure-rate-threshold=40,wait-in-open=5s,sliding-window-size=20,minimum-number-of-calls=10"},
      {"retry-budget", "max-tokens=8,token-ratio=0.2"},
  };
  return v;
}

Settings fixture(const char* arrival) {
  std::map<std::string, std::string> given = non_default();
  for (const char* a : {"rate", "users", "burst"})
    if (std::string(a) != arrival) given.erase(a);
  Settings s;
  apply_given(s, given);
  return s;
}

// What `lockbench serve` makes of a pod's flags and environment (cli/main.cpp's serve).
Settings parsed_back(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  std::map<std::string, std::string> given;
  for (std::size_t i = 0; i + 1 < args.size(); i += 2) {
    EXPECT_EQ(args[i].rfind("--", 0), 0u) << args[i];
    const std::string name = args[i].substr(2);
    if (name == "run-id" || name == "pod" || name == "port") continue;  // serve's own options
    EXPECT_FALSE(given.contains(name)) << "--" << name << " given twice";
    given[name] = args[i + 1];
  }
  Settings s;
  apply_given(s, given);
  for (const auto& e : env) {
    const std::string name = e.substr(0, e.find('=')), value = e.substr(e.find('=') + 1);
    if (name == kServeDbEnv) s.db_url = value;
    if (name == kServeRedisEnv) s.redis_url = value;
    if (name == kServeEtcdEnv) s.etcd_url = value;
  }
  return s;
}

TEST(PodProtocol, EveryRowHasANonDefaultValueHere) {
  const Settings defaults;
  for (const auto& d : setting_defs()) {
    ASSERT_TRUE(d.show) << "--" << d.name << " has no show(): a pod could not be given it";
    const auto it = non_default().find(d.name);
    ASSERT_NE(it, non_default().end()) << "give --" << d.name << " a non-default value in non_default()";
    Settings s;
    apply_setting(s, d.name, it->second);
    EXPECT_NE(d.show(s), d.show(defaults)) << "--" << d.name << " " << it->second << " is its default";
  }
}

TEST(PodProtocol, EverySettingRoundTripsThroughAPodsFlagsAndEnvironment) {
  for (const char* arrival : {"rate", "users", "burst"}) {
    const Settings s = fixture(arrival);
    const Settings back = parsed_back(pod_args(s, 42, 0), pod_env(s));
    for (const auto& d : setting_defs()) EXPECT_EQ(d.show(back), d.show(s)) << "--" << d.name << " (" << arrival << ")";
    EXPECT_EQ(back.arrival, s.arrival) << arrival;
    EXPECT_EQ(settings_json(back), settings_json(s)) << arrival;
    EXPECT_EQ(back.db_url, s.db_url);
    EXPECT_EQ(back.redis_url, s.redis_url);
    EXPECT_EQ(back.etcd_url, s.etcd_url);
    EXPECT_EQ(back.partner_url, s.partner_url);
  }
}

TEST(PodProtocol, APodsFlagsHoldNoPasswordAndNameItsRunAndPod) {
  const Settings s = fixture("rate");
  const std::vector<std::string> args = pod_args(s, 42, 2);
  std::string all;
  for (const auto& a : args) all += a + " ";
  EXPECT_EQ(all.find("secret"), std::string::npos) << all;
  EXPECT_EQ(all.find(":pw@"), std::string::npos) << all;
  EXPECT_NE(all.find("--run-id 42 --pod 3 --port 0"), std::string::npos) << all;
}

TEST(PodProtocol, DefaultSettingsGiveOnlyTheRunAndPod) {
  Settings s;
  s.partner_url = "http://127.0.0.1:9";
  const std::vector<std::string> expected = {"--partner", "http://127.0.0.1:9", "--run-id", "1", "--pod", "1", "--port", "0"};
  EXPECT_EQ(pod_args(s, 1, 0), expected);
}

TEST(PodProtocol, StatusesAndOutcomesMapBothWays) {
  std::set<int> statuses;
  for (Outcome o : kOutcomes) {
    EXPECT_EQ(outcome_of_status(status_of(o)), o) << outcome_name(o);
    statuses.insert(status_of(o));
  }
  EXPECT_EQ(statuses.size(), kOutcomes.size());
  for (int other : {400, 404, 502}) EXPECT_EQ(outcome_of_status(other), Outcome::error) << other;
}

TEST(PodProtocol, TheSplitHeaderIsReadAsWrittenWithTheTimeOutsideThePodAsQueueing) {
  using std::chrono::microseconds;
  TimeSplit split;
  split.queue = microseconds(10);
  split.pool_wait = microseconds(20);
  split.lock_wait = microseconds(30);
  split.partner = microseconds(40);
  split.db = microseconds(50);
  split.held = microseconds(60);
  const std::string header = split_header(split, microseconds(1000));
  EXPECT_EQ(header, "10 20 30 40 50 60 1000");
  const TimeSplit back = parse_split(header, microseconds(1500));
  EXPECT_EQ(back.queue, microseconds(510));
  EXPECT_EQ(back.pool_wait, microseconds(20));
  EXPECT_EQ(back.lock_wait, microseconds(30));
  EXPECT_EQ(back.partner, microseconds(40));
  EXPECT_EQ(back.db, microseconds(50));
  EXPECT_EQ(back.held, microseconds(60));
  EXPECT_EQ(parse_split("10 20", microseconds(1500)).queue, microseconds(1500));
}

TEST(PodProtocol, AClockSkewReachesTheSkewedPodsOnly) {
  Settings s;
  s.clock_skew = std::chrono::seconds(5);
  EXPECT_EQ(pod_settings(s, 0).clock_skew, Duration::zero());
  EXPECT_EQ(pod_settings(s, 1).clock_skew, std::chrono::seconds(5));
  EXPECT_EQ(pod_settings(s, 2).clock_skew, std::chrono::seconds(5));
  s.skew_pod = 3;
  EXPECT_EQ(pod_settings(s, 1).clock_skew, Duration::zero());
  EXPECT_EQ(pod_settings(s, 2).clock_skew, std::chrono::seconds(5));
  const auto has_skew = [](const std::vector<std::string>& a) {
    return std::find(a.begin(), a.end(), "--clock-skew") != a.end();
  };
  EXPECT_FALSE(has_skew(pod_args(pod_settings(s, 1), 1, 1)));
  EXPECT_TRUE(has_skew(pod_args(pod_settings(s, 2), 1, 2)));
}

// Issue 32's settings that need the runner's own process pods: refused, one
// line each naming the setting, for the in-process pods and --targets; done
// (not refused) with --pod-mode process.
TEST(RealRefusals, ProbesAndFaultWindowsAreRefusedInOneLineWithoutTheRunnersOwnProcessPods) {
  const auto refusal = [](const Settings& s) -> std::string {
    try {
      refuse_without_own_pods(s);
    } catch (const SettingError& e) {
      return e.what();
    }
    return "";
  };
  Settings s;
  EXPECT_EQ(refusal(s), "");
  s.partner_faults = nlohmann::json::parse(R"({"*":[{"kind":"slow","p":1,"ms":100}]})");
  EXPECT_EQ(refusal(s), "");  // a slow fault without a window: the server does it
  Settings ready = s;
  apply_setting(ready, "readiness", "on");
  EXPECT_EQ(refusal(ready).rfind("--readiness: needs --pod-mode process", 0), 0u) << refusal(ready);
  Settings live = s;
  apply_setting(live, "liveness", "db=off");
  EXPECT_EQ(refusal(live).rfind("--liveness: needs --pod-mode process", 0), 0u) << refusal(live);
  Settings window = s;
  window.partner_faults = nlohmann::json::parse(R"({"auth0.link":[{"kind":"error","p":1,"from_ms":1000}]})");
  EXPECT_EQ(refusal(window).rfind("--partner-faults: auth0.link: a fault window", 0), 0u) << refusal(window);
  Settings targets = live;
  targets.pod_mode = "process";
  targets.targets = "http://127.0.0.1:1";
  EXPECT_EQ(refusal(targets).rfind("--liveness: is not done with --targets", 0), 0u) << refusal(targets);
  for (const auto& line : {refusal(ready), refusal(live), refusal(window), refusal(targets)})
    EXPECT_EQ(line.find('\n'), std::string::npos);
  // The runner's own process pods: the runner plays kubelet, and starts the window with the load.
  for (Settings own : {ready, live, window}) {
    own.pod_mode = "process";
    EXPECT_EQ(refusal(own), "");
  }
}

// --time-scale scales the partner's fault times as every configured duration:
// a fault's delay and its window.
TEST(RealRefusals, TimeScaleScalesAFaultsDelayAndWindow) {
  Settings s;
  s.time_scale = 0.1;
  s.partner_faults = nlohmann::json::parse(
      R"({"*":[{"kind":"slow","p":1,"ms":10000,"from_ms":120000,"until_ms":240000}],"auth0.get":[{"kind":"hang","p":1,"ms":"forever"}]})");
  const Settings scaled = s.scaled();
  EXPECT_DOUBLE_EQ(scaled.partner_faults["*"][0]["ms"].get<double>(), 1000);
  EXPECT_DOUBLE_EQ(scaled.partner_faults["*"][0]["from_ms"].get<double>(), 12000);
  EXPECT_DOUBLE_EQ(scaled.partner_faults["*"][0]["until_ms"].get<double>(), 24000);
  EXPECT_EQ(scaled.partner_faults["auth0.get"][0]["ms"], "forever");
}

}  // namespace
}  // namespace lockbench::real

// Pods as processes over HTTP (real/serve.hpp, real/run_pods.hpp), against a
// real PostgreSQL and the fake partner, on loopback. Each test is bounded: a few
// seconds of load at most, every child killed and reaped by the code under test
// (and by this file's own guard for the child it starts itself).
#include <cerrno>
#include <chrono>
#include <csignal>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "real/partner_http.hpp"
#include "real/pg_conn.hpp"
#include "real/pod_protocol.hpp"
#include "scenarios/registry.hpp"
#include "tests/cli/run_command.hpp"
#include "tests/real/test_env.hpp"

namespace lockbench {
namespace real_pods_test {

using nlohmann::json;
using testing::run_command;

std::string servers() { return " --db " + test::test_db() + " --partner " + test::test_partner(); }

json run_json(const std::string& args) {
  const auto r = run_command(std::string(LOCKBENCH_BIN) + " run --world real --quiet --json" + servers() + " " + args);
  EXPECT_EQ(r.status, 0) << r.err;
  if (r.status != 0) return json::object();
  return json::parse(r.out).at(0);
}

bool process_gone(long pid) { return ::kill(static_cast<pid_t>(pid), 0) == -1 && errno == ESRCH; }

// One `lockbench serve` child, killed and reaped whatever the test does.
class ServeChild {
 public:
  explicit ServeChild(std::vector<std::string> args) {
    int fds[2];
    if (::pipe(fds) != 0) return;
    args.insert(args.begin(), {"lockbench", "serve"});
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(fds[1], STDOUT_FILENO);
      ::close(fds[0]);
      ::execv(LOCKBENCH_BIN, argv.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    std::string line;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (line.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      pollfd p{fds[0], POLLIN, 0};
      if (::poll(&p, 1, 200) <= 0) continue;
      char buf[256];
      const ssize_t n = ::read(fds[0], buf, sizeof buf);
      if (n <= 0) break;
      line.append(buf, static_cast<std::size_t>(n));
    }
    fd_ = fds[0];
    const std::string prefix = "listening on ";
    if (const auto at = line.find(prefix); at != std::string::npos)
      url_ = "http://" + line.substr(at + prefix.size(), line.find('\n') - at - prefix.size());
  }
  ~ServeChild() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) ::close(fd_);
  }
  const std::string& url() const { return url_; }
  // SIGTERM and the exit status (-1 when it does not exit within 10 s).
  int stop() {
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 1000; ++i) {
      int st = 0;
      if (::waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string url_;
};

TEST(RealPods, ServeAnswersEachOutcomeContractAndItsMetricsParse) {
  LOCKBENCH_NEED_PARTNER();
  const std::int64_t run = test::private_run_id();
  Settings s;
  s.scenario = "switch-primary";
  s.keys = 5;
  const auto scenario = make_scenario(s.scenario);
  {
    auto c = real::open_session(test::test_db());
    real::create_schema(*c);
    real::seed_rows(*c, run, scenario->tables(), s.keys);
  }
  real::PartnerHttp partner(test::test_partner(), std::chrono::seconds(1), std::chrono::seconds(5));
  partner.reset(scenario->partner_reset(s));
  partner.configure({{"latency", {{"*", {{"dist", "fixed"}, {"ms", 0}}}}}});

  ServeChild pod({"--scenario", "switch-primary", "--strategy", "advisory-xact:try", "--db", test::test_db(),
                  "--partner", test::test_partner(), "--port", "0", "--run-id", std::to_string(run), "--keys", "5",
                  "--maximum-pool-size", "3", "--pod", "2"});
  ASSERT_FALSE(pod.url().empty()) << "serve printed no 'listening on' line";
  httplib::Client c(pod.url());
  c.set_read_timeout(std::chrono::seconds(10));

  auto ready = c.Get("/health/readiness");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200);

  auto ok = c.Post("/users/1/primary", {{"X-Request-Id", "1"}, {"X-Choice", "7"}}, "", "text/plain");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
  EXPECT_EQ(ok->get_header_value("X-Lockbench-Outcome"), "ok");
  std::istringstream split(ok->get_header_value("X-Lockbench-Split"));
  int fields = 0;
  for (long long v; split >> v;) ++fields;
  EXPECT_EQ(fields, 7);

  auto generic = c.Post("/ops/switch-primary/2", {{"X-Request-Id", "2"}}, "", "text/plain");
  ASSERT_TRUE(generic);
  EXPECT_EQ(generic->status, 200) << generic->body;
  auto no_id = c.Post("/ops/switch-primary/2", "", "text/plain");
  ASSERT_TRUE(no_id);
  EXPECT_EQ(no_id->status, 400);
  auto other = c.Post("/checkout/1", {{"X-Request-Id", "3"}}, "", "text/plain");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 404);

  auto metrics = c.Get("/metrics");
  ASSERT_TRUE(metrics);
  ASSERT_EQ(metrics->status, 200);
  std::map<std::string, double> values;  // "name{labels}" -> value
  std::istringstream lines(metrics->body);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.rfind(' ');
    ASSERT_NE(space, std::string::npos) << line;
    std::size_t used = 0;
    const double v = std::stod(line.substr(space + 1), &used);
    EXPECT_EQ(used, line.size() - space - 1) << line;
    values[line.substr(0, space)] = v;
  }
  const std::string l = "{pool=\"pod2\"}";
  for (const char* name : {"hikaricp_connections_active", "hikaricp_connections_pending", "hikaricp_connections_idle",
                           "hikaricp_connections_timeout_total", "hikaricp_connections_acquire_seconds_count",
                           "hikaricp_connections_acquire_seconds_sum", "hikaricp_connections_usage_seconds_count",
                           "hikaricp_connections_usage_seconds_max"})
    EXPECT_TRUE(values.contains(name + l)) << name;
  EXPECT_EQ(values["hikaricp_connections_max" + l], 3);
  EXPECT_EQ(values["hikaricp_connections_active" + l], 0);
  // Two requests borrowed a connection each (the readiness probe's borrow is
  // counted apart, pool.probe_borrows: issue 43).
  EXPECT_GE(values["hikaricp_connections_usage_seconds_count" + l], 2);
  EXPECT_EQ(values["lockbench_requests_total{pool=\"pod2\",outcome=\"ok\"}"], 2);

  auto info = c.Get("/lockbench/info");
  ASSERT_TRUE(info);
  EXPECT_EQ(json::parse(info->body).at("run"), run);
  EXPECT_EQ(pod.stop(), 0);
  auto c2 = real::open_session(test::test_db());
  real::drop_rows(*c2, run);
}

// The runner's flags for a pod (real/pod_protocol.hpp's pod_args, generated from
// the settings table) reach a real `lockbench serve`: settings the old
// hand-written list left out (email-latency, statements) among them.
TEST(RealPods, APodStartedWithTheRunnersFlagsSeesTheirNonDefaultValues) {
  LOCKBENCH_NEED_PARTNER();
  Settings s;
  s.world = "real";
  s.scenario = "checkout";
  s.strategy = "after-commit";
  s.partner_url = test::test_partner();
  s.keys = 4;
  s.email_latency = std::chrono::milliseconds(75);
  s.statements = "unnamed";
  s.lease_ttl = std::chrono::seconds(7);
  std::vector<std::string> args = real::pod_args(s, test::private_run_id(), 1);
  args.insert(args.end(), {"--db", test::test_db()});  // pod_env's, given as the flag here
  ServeChild pod(args);
  ASSERT_FALSE(pod.url().empty()) << "serve printed no 'listening on' line";
  httplib::Client c(pod.url());
  c.set_read_timeout(std::chrono::seconds(10));
  auto info = c.Get("/lockbench/info");
  ASSERT_TRUE(info);
  const json seen = json::parse(info->body);
  EXPECT_EQ(seen.at("pod"), 2);
  EXPECT_EQ(seen.at("strategy"), "after-commit");
  EXPECT_EQ(seen.at("settings").at("email-latency"), "75ms");
  EXPECT_EQ(seen.at("settings").at("statements"), "unnamed");
  EXPECT_EQ(seen.at("settings").at("lease-ttl"), "7s");
  EXPECT_EQ(seen.at("settings").at("keys"), 4);
  EXPECT_EQ(seen.at("settings").at("world"), "real");
  EXPECT_EQ(pod.stop(), 0);
}

TEST(RealPods, TwoProcessPodsLetOneOfEightOnOneKeyThroughAndLeaveNoChild) {
  LOCKBENCH_NEED_PARTNER();
  const json r = run_json("--pods 2 --pod-mode process --burst 8 --keys 1 --key-dist hot --strategy advisory-xact:try "
                          "--partner-latency fixed:300ms");
  ASSERT_TRUE(r.contains("requests"));
  EXPECT_EQ(r["requests"]["ok"], 1);
  EXPECT_EQ(r["requests"]["conflict"], 7);
  EXPECT_EQ(r["real"]["pod_mode"], "process");
  ASSERT_EQ(r["real"]["pod_pids"].size(), 2u);
  // Both pods answered some of the eight: the lock excluded across processes.
  for (const auto& pod : r["real"]["per_pod"]) EXPECT_EQ(pod["outcomes"]["ok"].get<int>() + pod["outcomes"]["conflict"].get<int>(), 4);
  for (const auto& pid : r["real"]["pod_pids"]) EXPECT_TRUE(process_gone(pid.get<long>())) << "pod " << pid << " is still there";
}

TEST(RealPods, SynchronizedExcludesInOneProcessAndRacesAcrossTwo) {
  LOCKBENCH_NEED_PARTNER();
  // Every payout webhook delivered twice, 5 ms apart: the twins land on the
  // other pod (requests alternate pods), so an in-process lock cannot see them.
  const std::string twice = "--pod-mode process --scenario payout --strategy synchronized --duplicate-share 1 "
                            "--duplicate-gap 5ms --rate 4 --duration 3s --keys 1000 --partner-latency fixed:200ms ";
  const json one = run_json(twice + "--pods 1");
  const json two = run_json(twice + "--pods 2");
  ASSERT_TRUE(one.contains("partner") && two.contains("partner"));
  EXPECT_EQ(one["partner"]["violations"]["overdrawn"], 0) << one["partner"]["violations"].dump();
  EXPECT_GT(two["partner"]["violations"]["overdrawn"].get<int>(), 0) << two["partner"]["violations"].dump();
  EXPECT_EQ(two["real"]["pod_mode"], "process");
}

TEST(RealPods, AKilledPodsXactLockIsFreedAtOnceWhileItsLeaseWaitsForTheTtl) {
  LOCKBENCH_NEED_PARTNER();
  const std::string common = "--pods 2 --pod-mode process --rate 10 --duration 5s --keys 3 --partner-latency fixed:300ms "
                             "--lease-ttl 3s --crash-at 1s:1 --restart-after 500ms ";
  const json xact = run_json(common + "--strategy advisory-xact:wait");
  const json lease = run_json(common + "--strategy row-lease");
  ASSERT_TRUE(xact.contains("faults") && lease.contains("faults"));
  const json& cx = xact["faults"]["crash"];
  const json& cl = lease["faults"]["crash"];
  EXPECT_GE(cx["locks_held_at_crash"].get<int>(), 1) << cx;
  EXPECT_GE(cl["leases_held_at_crash"].get<int>(), 1) << cl;
  // The lease outlives its dead holder for most of its TTL; the xact lock does not.
  EXPECT_GT(cl["key_blocked_ms"].get<double>(), 1000) << cl;
  EXPECT_LT(cx["key_blocked_ms"].get<double>(), cl["key_blocked_ms"].get<double>() / 2) << cx;
  EXPECT_TRUE(cx.contains("restarted_at_s")) << cx;
  for (const auto& pid : xact["real"]["pod_pids"]) EXPECT_TRUE(process_gone(pid.get<long>()));
}

std::set<std::string> keys_of(const json& j) {
  std::set<std::string> out;
  for (const auto& [k, v] : j.items()) out.insert(k);
  return out;
}

// The faults block of process pods is the simulator's (SimFaults.TheFaultBlockIsTheOneBothWorldsWrite
// compares it exactly) plus what the runner measured: the structure and the
// fields that do not depend on timing.
TEST(RealPods, TheFaultBlockHasTheSimulatorsFieldsAndWhatTheRunnerMeasured) {
  LOCKBENCH_NEED_PARTNER();
  const json r = run_json("--pods 2 --pod-mode process --rate 10 --duration 5s --keys 3 --partner-latency fixed:300ms "
                          "--lease-ttl 2s --strategy row-lease --crash-at 1s:1 --restart-after 500ms "
                          "--pause-at 1500ms:2 --pause-for 500ms");
  ASSERT_TRUE(r.contains("faults")) << r.dump().substr(0, 400);
  const json& f = r["faults"];
  EXPECT_EQ(keys_of(f), (std::set<std::string>{"clock_skew_ms", "crash", "crash_at_s", "crashed_requests",
                                               "keys_held_at_crash", "pause", "pause_at_s", "pause_for_s",
                                               "recovery_ms", "skew_pod"}))
      << f;
  EXPECT_EQ(f["crash_at_s"], 1.0);
  EXPECT_EQ(f["pause_at_s"], 1.5);
  EXPECT_EQ(f["pause_for_s"], 0.5);
  EXPECT_EQ(f["clock_skew_ms"], 0.0);
  EXPECT_EQ(f["skew_pod"], 0);
  const json& crash = f["crash"];
  EXPECT_EQ(keys_of(crash), (std::set<std::string>{"at_s", "crashed_requests", "in_partner_at_crash", "key_blocked_ms",
                                                   "lease_left_ms", "leases_held_at_crash", "locks_freed_ms",
                                                   "locks_held_at_crash", "pod", "restarted_at_s", "sessions_closed_ms"}))
      << crash;
  EXPECT_EQ(crash["pod"], 1);
  EXPECT_GE(crash["at_s"].get<double>(), 1.0);
  // The common fields are the measurements', as the simulator's are its own.
  EXPECT_EQ(f["recovery_ms"], crash["key_blocked_ms"]);
  EXPECT_EQ(f["crashed_requests"], crash["crashed_requests"]);
  EXPECT_EQ(f["keys_held_at_crash"].get<std::int64_t>(),
            std::max<std::int64_t>(0, crash["locks_held_at_crash"].get<std::int64_t>()) +
                crash["leases_held_at_crash"].get<std::int64_t>());
  const json& pause = f["pause"];
  EXPECT_EQ(keys_of(pause), (std::set<std::string>{"at_s", "for_s", "freed_during_pause", "in_partner_at_pause",
                                                   "key_blocked_ms", "locks_held_at_pause",
                                                   "ok_on_other_pods_during_pause", "pod", "session_settings"}))
      << pause;
  EXPECT_EQ(pause["pod"], 2);
  EXPECT_GE(pause["at_s"].get<double>(), 1.5);
  EXPECT_TRUE(pause["freed_during_pause"].is_boolean());
  EXPECT_TRUE(pause["ok_on_other_pods_during_pause"].is_number_integer());
}

TEST(RealPods, APausedPodsLeaseIsStolenAndFencedWithAnEnforcingPartnerRefusesTheStaleCall) {
  LOCKBENCH_NEED_PARTNER();
  const std::string common = "--pods 2 --pod-mode process --rate 20 --duration 4s --keys 1 --key-dist hot "
                             "--partner-latency fixed:300ms --lease-ttl 1s --pause-at 500ms:1 --pause-for 2500ms "
                             "--fencing enforce ";
  const json plain = run_json(common + "--strategy row-lease");
  const json fenced = run_json(common + "--strategy row-lease:fenced");
  ASSERT_TRUE(plain.contains("locks") && fenced.contains("locks"));
  // The pause struck while pod 1 was inside a partner call, holding the lease.
  EXPECT_GE(plain["faults"]["pause"]["in_partner_at_pause"].get<int>(), 1);
  EXPECT_GE(fenced["faults"]["pause"]["in_partner_at_pause"].get<int>(), 1);
  EXPECT_GE(plain["locks"]["lease_steals"].get<int>(), 1);
  EXPECT_GE(fenced["locks"]["lease_steals"].get<int>(), 1);
  EXPECT_GE(fenced["partner"]["violations"].value("stale_token_rejected", 0), 1) << fenced["partner"];
  EXPECT_EQ(plain["partner"]["violations"].value("stale_token_rejected", 0), 0);
}

TEST(RealPods, APodWhoseApplicationClockRunsAheadStealsLiveLeasesUnderAppClockOnly) {
  LOCKBENCH_NEED_PARTNER();
  const std::string common = "--pods 2 --pod-mode process --rate 10 --keys 1 --key-dist hot "
                             "--partner-latency fixed:300ms --lease-ttl 2s --strategy row-lease:app-clock ";
  const json same = run_json(common + "--duration 3s");
  // A steal needs pod 1 to hold the lease once while pod 2 asks for it. A lease
  // is held about 600 ms, so 3 s gives only four or five holders; the first few
  // going to pod 2 (it won the race to the row) happened on a slower machine.
  // 8 s gives a dozen: 6 to 8 steals in every run measured there.
  const json skewed = run_json(common + "--duration 8s --clock-skew 5s:2");
  ASSERT_TRUE(same.contains("locks") && skewed.contains("locks"));
  EXPECT_EQ(same["locks"]["lease_steals"], 0);
  EXPECT_EQ(same["partner"]["violations"]["overlap_person"], 0);
  EXPECT_GE(skewed["locks"]["lease_steals"].get<int>(), 1);
  EXPECT_GE(skewed["partner"]["violations"]["overlap_person"].get<int>(), 1);
  EXPECT_EQ(skewed["faults"]["skew_pod"], 2);
}

TEST(RealPods, TargetsDriveAServiceAlreadyRunningAndRefuseOneOfAnotherStrategy) {
  LOCKBENCH_NEED_PARTNER();
  const std::int64_t run = test::private_run_id();
  ServeChild pod({"--scenario", "switch-primary", "--strategy", "advisory-xact:try", "--db", test::test_db(),
                  "--partner", test::test_partner(), "--port", "0", "--run-id", std::to_string(run), "--keys", "1"});
  ASSERT_FALSE(pod.url().empty());
  const json r = run_json("--targets " + pod.url() + " --strategy advisory-xact:try --burst 8 --keys 1 --key-dist hot "
                          "--partner-latency fixed:300ms");
  ASSERT_TRUE(r.contains("requests"));
  EXPECT_EQ(r["requests"]["ok"], 1);
  EXPECT_EQ(r["requests"]["conflict"], 7);
  EXPECT_EQ(r["real"]["pod_mode"], "targets");
  EXPECT_EQ(r["real"]["database_check"], true);
  EXPECT_EQ(r["locks"]["acquired"], 1);  // read from the service's /lockbench/stats
  const auto other = run_command(std::string(LOCKBENCH_BIN) + " run --world real --quiet" + servers() + " --targets " +
                                 pod.url() + " --strategy row-lease --burst 2");
  EXPECT_EQ(other.status, 2);
  EXPECT_NE(other.err.find("runs strategy advisory-xact:try"), std::string::npos) << other.err;
  EXPECT_EQ(pod.stop(), 0);
  auto admin = real::open_session(test::test_db());
  real::drop_rows(*admin, run);  // the service's run: its own to keep, this test's to clean up
}

TEST(RealPods, ClosedLoopUsersDriveProcessPodsWithOneRequestEachAtATime) {
  LOCKBENCH_NEED_PARTNER();
  const json r = run_json("--pods 2 --pod-mode process --users 4 --think-time 50ms --duration 2s --keys 50 "
                          "--strategy held-tx --partner-latency fixed:20ms");
  ASSERT_TRUE(r.contains("requests"));
  const auto total = r["requests"]["total"].get<int>();
  EXPECT_EQ(r["requests"]["ok"].get<int>(), total);
  // 4 users, each at most one request per (call + think) >= 50 ms: at most 4 * 2 s / 50 ms.
  EXPECT_GE(total, 4);
  EXPECT_LE(total, 4 * 2000 / 50 + 4);
}

TEST(RealPods, TheInProcessPodsRefuseAFaultTheyCannotDo) {
  LOCKBENCH_NEED_PARTNER();
  for (const char* fault : {"--crash-at 1s", "--pause-at 1s --pause-for 1s", "--clock-skew 1s"}) {
    const auto r = run_command(std::string(LOCKBENCH_BIN) + " run --world real --quiet" + servers() +
                               " --pod-mode thread --duration 1s " + fault);
    EXPECT_EQ(r.status, 2) << fault;
    EXPECT_NE(r.err.find("--pod-mode process"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace real_pods_test
}  // namespace lockbench

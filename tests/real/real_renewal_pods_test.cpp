// Lease renewal on pods as processes (`lockbench serve`, --pod-mode process):
// row-lease:renew with a TTL shorter than the calls keeps its lease (no steal),
// and a real SIGSTOP longer than the TTL stops its renewals, so another pod
// steals the lease from live work (why fencing still matters). redis-lease on
// process pods: the pods share the run's Redis keys, a lease shorter than the
// calls is stolen across pods, renewal keeps it, a killed pod's lease blocks its
// key until its TTL, and no key outlives the run.
#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "real/redis_store.hpp"
#include "tests/cli/run_command.hpp"
#include "tests/real/test_env.hpp"

namespace lockbench {
namespace real_renewal_pods_test {

using nlohmann::json;
using testing::run_command;

json run_json(const std::string& args) {
  const auto r = run_command(std::string(LOCKBENCH_BIN) + " run --world real --quiet --json --db " + test::test_db() +
                             " --partner " + test::test_partner() + " " + args);
  EXPECT_EQ(r.status, 0) << r.err;
  if (r.status != 0) return json::object();
  return json::parse(r.out).at(0);
}

TEST(RealRenewalPods, ARenewedShortLeaseIsNotStolenBySlowCallsButIsByAPauseLongerThanItsTtl) {
  LOCKBENCH_NEED_PARTNER();
  // Two calls of 300 ms against a 500 ms TTL, renewed every 167 ms.
  const std::string common = "--pods 2 --pod-mode process --rate 10 --keys 1 --key-dist hot "
                             "--partner-latency fixed:300ms --lease-ttl 500ms --strategy row-lease:renew ";
  const json calm = run_json(common + "--duration 3s");
  ASSERT_TRUE(calm.contains("locks"));
  EXPECT_GT(calm["locks"]["acquired"].get<int>(), 0);
  EXPECT_EQ(calm["locks"]["lease_steals"], 0);
  EXPECT_EQ(calm["partner"]["violations"].value("overlap_person", 0), 0);
  EXPECT_GE(calm["locks"]["renewals"].get<int>(), calm["locks"]["acquired"].get<int>());  // read from each pod

  // The pause strikes at pod 1's first partner call from 500 ms on, and lasts 2.5 s from there.
  // With one hot key the lease goes to whichever pod's request finds it free, so that call may come
  // as late as 3.1 s: 8 s of arrivals keep requests coming for pod 0 to steal the lease once the
  // frozen holder's TTL has run out.
  const json paused = run_json(common + "--duration 8s --pause-at 500ms:1 --pause-for 2500ms");
  ASSERT_TRUE(paused.contains("locks"));
  EXPECT_GE(paused["faults"]["pause"]["in_partner_at_pause"].get<int>(), 1);
  EXPECT_GE(paused["locks"]["lease_steals"].get<int>(), 1);
}

TEST(RealRenewalPods, RedisLeaseOnTwoProcessPodsIsStolenAcrossThemBelowTheCallAndKeptByRenewal) {
  LOCKBENCH_NEED_PARTNER();
  const std::string redis = test::env_or_empty("LOCKBENCH_TEST_REDIS");
  if (redis.empty()) GTEST_SKIP() << "LOCKBENCH_TEST_REDIS is unset: scripts/redis start DIR, or run scripts/test";
  const auto lockbench_keys = [&] { return real::RedisStore(redis, "lockbench:", std::chrono::seconds(2)).keys(); };
  const std::int64_t keys_before = lockbench_keys();
  // Two calls of 300 ms on one hot key, round robin over two serve processes.
  const std::string common = "--pods 2 --pod-mode process --rate 10 --duration 3s --keys 1 --key-dist hot "
                             "--partner-latency fixed:300ms --redis " + redis + " ";
  const json short_lease = run_json(common + "--lease-ttl 250ms --strategy redis-lease");
  ASSERT_TRUE(short_lease.contains("locks"));
  EXPECT_EQ(short_lease["real"]["pod_mode"], "process");
  EXPECT_GE(short_lease["locks"]["lease_steals"].get<int>(), 1);
  EXPECT_GE(short_lease["partner"]["violations"].value("overlap_person", 0), 1);

  const json renewed = run_json(common + "--lease-ttl 500ms --strategy redis-lease:renew");
  ASSERT_TRUE(renewed.contains("locks"));
  EXPECT_GT(renewed["locks"]["acquired"].get<int>(), 0);
  EXPECT_EQ(renewed["locks"]["lease_steals"], 0);
  EXPECT_EQ(renewed["locks"]["leaked"], 0);
  EXPECT_EQ(renewed["partner"]["violations"].value("overlap_person", 0), 0);
  EXPECT_GE(renewed["locks"]["renewals"].get<int>(), renewed["locks"]["acquired"].get<int>());
  EXPECT_EQ(lockbench_keys(), keys_before);  // the runner deleted the pods' keys

  // kill -9 of pod 1 inside a partner call: its Redis lease blocks the key for most of its TTL.
  const json crashed = run_json("--pods 2 --pod-mode process --rate 10 --duration 3s --keys 3 --partner-latency fixed:300ms "
                                "--redis " + redis + " --lease-ttl 3s --crash-at 1s:1 --restart-after 500ms --strategy redis-lease");
  ASSERT_TRUE(crashed.contains("faults"));
  const json& c = crashed["faults"]["crash"];
  EXPECT_GE(c["leases_held_at_crash"].get<int>(), 1) << c;
  EXPECT_GT(c["key_blocked_ms"].get<double>(), 1000) << c;
  EXPECT_EQ(lockbench_keys(), keys_before);
}

}  // namespace real_renewal_pods_test
}  // namespace lockbench

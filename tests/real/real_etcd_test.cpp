// etcd-lease against a real etcd (LOCKBENCH_TEST_ETCD, started by scripts/test
// with scripts/etcd), PostgreSQL and the fake partner: the store's txns and
// leases, a run's keys (its own, gone at its end), steals with a TTL below the
// calls, fencing with the key's revision, keep-alive renewal, a bad --etcd in
// one line (exit 2), on process pods (`lockbench serve`) a kill -9 and a
// SIGSTOP of the holder, and a kill -9 of the leader of a three-member etcd
// (scripts/etcd start-cluster, a cluster of the test's own).
#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>

#include <unistd.h>

#include "real/run_real.hpp"
#include "real/etcd_store.hpp"
#include "tests/cli/run_command.hpp"
#include "tests/real/private_partner.hpp"
#include "tests/real/test_env.hpp"
#include "tests/real/partner_arrivals.hpp"

namespace lockbench {
namespace real_etcd_test {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::run_command;

std::string test_etcd() { return test::env_or_empty("LOCKBENCH_TEST_ETCD"); }
#define NEED_ETCD()          \
  LOCKBENCH_NEED_PARTNER();  \
  if (test_etcd().empty()) GTEST_SKIP() << "LOCKBENCH_TEST_ETCD is unset: scripts/etcd start DIR, or run scripts/test"

Settings base(const std::string& strategy) {
  Settings s;
  s.world = "real";
  s.db_url = test::test_db();
  s.partner_url = test::test_partner();
  s.etcd_url = test_etcd();
  s.strategy = strategy;
  s.scenario = "switch-primary";
  s.seed = 11;
  s.max_threads = 32;
  s.probe_interval = 0s;
  s.connection_timeout = 5s;
  s.key_dist = KeyDist::hot;
  s.keys = 1;
  return s;
}

std::int64_t locks(const json& r, const char* what) { return r["locks"][what].get<std::int64_t>(); }
std::int64_t violation(const json& r, const char* kind) { return r["partner"]["violations"].value(kind, 0); }

// Keys under "lockbench/" left in the test server (every run deletes its own).
std::int64_t lockbench_keys() { return real::EtcdStore(test_etcd(), "lockbench/", 2s).keys(); }

// The name of the member a cluster at `url` says is its leader ("" when none answers or none leads).
std::string etcd_leader_name(const std::string& url) {
  const auto r = run_command(
      "python3 -c '\n"
      "import json, sys, urllib.request as u\n"
      "def post(p):\n"
      "    return json.load(u.urlopen(u.Request(sys.argv[1] + p, data=b\"{}\"), timeout=2))\n"
      "try:\n"
      "    st = post(\"/v3/maintenance/status\")\n"
      "    names = {m[\"ID\"]: m[\"name\"] for m in post(\"/v3/cluster/member/list\")[\"members\"]}\n"
      "    print(names.get(st.get(\"leader\"), \"\"))\n"
      "except Exception:\n"
      "    print(\"\")\n"
      "' " + url);
  return r.status == 0 ? r.out.substr(0, r.out.find('\n')) : "";
}

json run_pods(const std::string& args) {
  const auto r = run_command(std::string(LOCKBENCH_BIN) + " run --world real --quiet --json --db " + test::test_db() +
                             " --partner " + test::test_partner() + " --etcd " + test_etcd() + " " + args);
  EXPECT_EQ(r.status, 0) << r.err;
  if (r.status != 0) return json::object();
  return json::parse(r.out).at(0);
}

TEST(RealEtcdStore, TakesRefusesKeepsAliveAndReleasesALeaseWithTxns) {
  NEED_ETCD();
  real::EtcdStore st(test_etcd(), "lockbench-test/" + std::to_string(::getpid()) + "/", 2s);
  st.drop_run_keys();
  const LeaseResult a = st.acquire(5, "req-1", 300ms);  // granted as 1 s
  EXPECT_TRUE(a.acquired);
  EXPECT_GT(a.token, 0u);
  EXPECT_FALSE(a.took_over_expired);
  EXPECT_FALSE(st.acquire(5, "req-2", 300ms).acquired);  // create_revision != 0
  EXPECT_FALSE(st.release(5, "req-2"));                   // value != req-2
  EXPECT_FALSE(st.extend(5, "req-2", 300ms));             // no lease of req-2's
  EXPECT_TRUE(st.extend(5, "req-1", 300ms));
  EXPECT_EQ(st.held(), 1);
  // 1 s TTL, and etcd revokes expired leases every 500 ms: the key goes with its lease.
  EXPECT_TRUE(testing::wait_for([&] { return st.held() == 0; }, 10s)) << st.held();
  EXPECT_FALSE(st.extend(5, "req-1", 300ms));  // keep-alive of an expired lease: no TTL left
  const LeaseResult b = st.acquire(5, "req-2", 10s);
  EXPECT_TRUE(b.acquired);
  EXPECT_TRUE(b.took_over_expired);  // req-1 never released: its holder mark is there
  EXPECT_EQ(b.previous_owner, "req-1");
  EXPECT_GT(b.token, a.token);           // mod_revision: only grows
  EXPECT_FALSE(st.release(5, "req-1"));  // the victim's release finds another owner
  EXPECT_TRUE(st.release(5, "req-2"));
  const LeaseResult c = st.acquire(5, "req-3", 10s);
  EXPECT_TRUE(c.acquired);
  EXPECT_FALSE(c.took_over_expired);  // released, not expired
  EXPECT_GT(c.token, b.token);
  EXPECT_GT(st.drop_run_keys(), 0);
  EXPECT_EQ(st.keys(), 0);
}

TEST(RealEtcdLease, LetsOneOfEightSimultaneousRequestsThroughAndLeavesNoKey) {
  NEED_ETCD();
  Settings s = base("etcd-lease");
  s.arrival = Arrival::burst;
  s.burst = 8;
  s.duration = 1s;
  s.partner_latency = Distribution::fixed(200);
  s.lease_ttl = 30s;
  const json r = run_real(s);
  EXPECT_EQ(r["requests"]["ok"], 1) << r["requests"].dump();
  EXPECT_EQ(r["requests"]["conflict"], 7);
  EXPECT_EQ(locks(r, "lease_steals"), 0);
  EXPECT_EQ(locks(r, "leaked"), 0);
  EXPECT_EQ(violation(r, "overlap_person"), 0);
  EXPECT_EQ(r["real"]["etcd"], test_etcd());
  EXPECT_EQ(lockbench_keys(), 0);
}

TEST(RealEtcdLease, IsStolenWithATtlBelowTheCallAndFencingRefusesTheStaleHolder) {
  NEED_ETCD();
  Settings s = base("etcd-lease");
  s.rate_per_s = 5;
  s.duration = 5s;
  // Two calls of 2 s against a 1 s lease: etcd revokes it between 1 s and 1.5 s
  // (it checks every 500 ms), so the thief's first call (by 1.7 s: one arrives
  // every 200 ms) comes before the victim's second call at 2 s.
  s.partner_latency = Distribution::fixed(2000);
  s.lease_ttl = 1s;
  const json r = run_real(s);
  EXPECT_GT(locks(r, "lease_steals"), 0);
  EXPECT_GT(locks(r, "unlock_failures"), 0);
  EXPECT_GT(violation(r, "overlap_person"), 0);

  s.strategy = "etcd-lease:fenced";
  s.fencing = "enforce";
  const json fenced = run_real(s);
  EXPECT_GT(locks(fenced, "lease_steals"), 0);
  EXPECT_GT(violation(fenced, "stale_token_rejected"), 0);
  EXPECT_EQ(lockbench_keys(), 0);
}

TEST(RealEtcdLease, RenewKeepsAOneSecondLeaseThroughLongerCallsWithoutSteals) {
  NEED_ETCD();
  Settings s = base("etcd-lease:renew");
  s.rate_per_s = 4;
  s.duration = 3s;
  s.partner_latency = Distribution::fixed(1000);  // 2 s of calls, kept alive every 333 ms
  s.lease_ttl = 1s;
  const json r = run_real(s);
  EXPECT_GT(locks(r, "acquired"), 0);
  EXPECT_EQ(locks(r, "lease_steals"), 0);
  EXPECT_EQ(violation(r, "overlap_person"), 0);
  EXPECT_GE(locks(r, "renewals"), 3 * locks(r, "acquired"));  // about 6 each
  EXPECT_EQ(locks(r, "leaked"), 0);
  EXPECT_EQ(lockbench_keys(), 0);
}

TEST(RealEtcdLease, RefusesAMissingMalformedOrUnreachableEtcdInOneLine) {
  NEED_ETCD();
  Settings s = base("etcd-lease");
  s.duration = 1s;
  for (const char* url : {"", "redis://127.0.0.1:2379", "http://127.0.0.1:1", "http://127.0.0.1:2379/v3"}) {
    s.etcd_url = url;
    try {
      run_real(s);
      ADD_FAILURE() << "accepted --etcd '" << url << "'";
    } catch (const SettingError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("--etcd: ", 0), 0u) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
  // The CLI: one line, exit 2. The fake partner answers HTTP, but not as etcd does.
  const auto r = run_command(std::string(LOCKBENCH_BIN) + " run --world real --quiet --strategy etcd-lease --duration 1s --db " +
                             test::test_db() + " --partner " + test::test_partner() + " --etcd " + test::test_partner());
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.err.rfind("lockbench: --etcd: ", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

TEST(RealEtcdPods, AKilledHoldersLeaseBlocksItsKeyUntilItsTtlAndNoKeyOutlivesTheRun) {
  NEED_ETCD();
  const std::int64_t keys_before = lockbench_keys();
  // kill -9 of pod 1 inside a partner call: its etcd lease blocks the key until its TTL.
  const json crashed = run_pods("--pods 2 --pod-mode process --rate 10 --duration 3s --keys 3 --partner-latency fixed:300ms "
                                "--lease-ttl 3s --crash-at 1s:1 --restart-after 500ms --strategy etcd-lease");
  ASSERT_TRUE(crashed.contains("faults"));
  const json& c = crashed["faults"]["crash"];
  EXPECT_GE(c["leases_held_at_crash"].get<int>(), 1) << c;
  EXPECT_GT(c["key_blocked_ms"].get<double>(), 1000) << c;
  EXPECT_EQ(crashed["partner"]["violations"].value("overlap_person", 0), 0);  // the next holder waited for the TTL
  EXPECT_EQ(lockbench_keys(), keys_before);
}

TEST(RealEtcdPods, AHolderStoppedPastItsTtlIsStolenAndOnlyTheFencedVariantIsRefused) {
  NEED_ETCD();
  // SIGSTOP of pod 1 at its first partner call from 500 ms on (with one hot key
  // that may be a few seconds in), for 3 s: its 1 s lease expires, pod 0 takes
  // the key over; pod 1 wakes and calls on.
  const std::string common = "--pods 2 --pod-mode process --rate 10 --keys 1 --key-dist hot --duration 12s "
                             "--partner-latency fixed:300ms --lease-ttl 1s --pause-at 500ms:1 --pause-for 3s "
                             "--fencing enforce ";
  const json plain = run_pods(common + "--strategy etcd-lease");
  ASSERT_TRUE(plain.contains("locks"));
  EXPECT_GE(plain["faults"]["pause"]["in_partner_at_pause"].get<int>(), 1);
  EXPECT_GE(plain["locks"]["lease_steals"].get<int>(), 1);
  EXPECT_EQ(plain["partner"]["violations"].value("stale_token_rejected", 0), 0);  // no token: nothing refused

  // The woken holder's next call carries a revision below the thief's: refused. (Its call in flight
  // when it froze has landed already: fencing cannot undo that half of the promotion.) The pause
  // strikes a request's first call (real/faults.hpp), so the holder always has that next call: one
  // run, no retry.
  const json fenced = run_pods(common + "--strategy etcd-lease:fenced");
  ASSERT_TRUE(fenced.contains("locks"));
  EXPECT_GE(fenced["faults"]["pause"]["in_partner_at_pause"].get<int>(), 1);
  EXPECT_GE(fenced["locks"]["lease_steals"].get<int>(), 1);
  EXPECT_GE(fenced["partner"]["violations"].value("stale_token_rejected", 0), 1) << fenced["partner"].dump();
}

TEST(RealEtcdLeaderChange, AKilledLeaderPausesTheRunButLetsNoSecondHolderInAndHandsNoTokenOutTwice) {
  NEED_ETCD();
  char tmpl[] = "/tmp/lockbench-etcd-cluster.XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl, script = std::string(LOCKBENCH_SOURCE_DIR) + "/scripts/etcd";
  const auto started = run_command(script + " start-cluster " + dir + "/c");
  ASSERT_EQ(started.status, 0) << started.err;
  const std::string url = started.out.substr(0, started.out.find('\n'));
  Settings s = base("etcd-lease:fenced");
  s.etcd_url = url;
  s.fencing = "enforce";
  s.rate_per_s = 8;
  s.duration = 5s;
  s.partner_latency = Distribution::fixed(300);
  s.lease_ttl = 30s;  // no steal from the TTL: only the leader change could let a second holder in
  // A partner of the test's own: its arrivals say when the run holds a lease (a call is made only
  // under one), whatever the host's speed.
  test::PrivatePartner partner;
  ASSERT_FALSE(partner.url().empty()) << "fake_partner did not start";
  s.partner_url = partner.url();
  // The leader (never the member the run talks to) dies once the run's first call arrived, mid-run,
  // while a lease is held; then the test waits for the cluster's new leader and for the run's next
  // call after it: the run paused and went on.
  std::atomic<bool> run_over{false};
  std::string killed_name, leader_after;
  std::int64_t calls_at_kill = -1, calls_after_election = -1;
  bool killed_mid_run = false;
  std::thread killer([&] {
    if (!testing::wait_for([&] { return run_over.load() || test::partner_arrivals(partner.url()) >= 1; }, 30s)) return;
    if (run_over.load()) return;
    calls_at_kill = test::partner_arrivals(partner.url());
    const auto killed = run_command(script + " kill-leader " + dir + "/c");
    EXPECT_EQ(killed.status, 0) << killed.err;
    killed_name = killed.out.substr(0, killed.out.find('\n'));
    killed_mid_run = !run_over.load();
    testing::wait_for([&] {
      leader_after = etcd_leader_name(url);
      return run_over.load() || (!leader_after.empty() && leader_after != killed_name);
    }, 30s);
    testing::wait_for([&] { return run_over.load() || test::partner_arrivals(partner.url()) > calls_at_kill; }, 30s);
    calls_after_election = test::partner_arrivals(partner.url());
  });
  json r;
  try {
    r = run_real(s);
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
  }
  run_over = true;
  killer.join();
  run_command(script + " stop " + dir + "/c");
  std::system(("rm -rf " + dir).c_str());
  // The pause happened: a leader died while the run was in its calls, another member took over,
  // and the run made calls after that (the leader change paused it; it did not end it).
  EXPECT_TRUE(killed_mid_run) << "the run ended before the leader was killed";
  EXPECT_FALSE(killed_name.empty());
  EXPECT_FALSE(leader_after.empty());
  EXPECT_NE(leader_after, killed_name);
  EXPECT_GT(calls_after_election, calls_at_kill) << "no call after the leader change";
  ASSERT_TRUE(r.contains("locks"));
  EXPECT_GT(locks(r, "acquired"), 2);
  EXPECT_EQ(locks(r, "lease_steals"), 0);
  EXPECT_EQ(violation(r, "overlap_person"), 0);
  EXPECT_EQ(violation(r, "person_split"), 0);
  EXPECT_EQ(violation(r, "stale_token_rejected"), 0);  // no token went back: nothing to refuse
  EXPECT_EQ(locks(r, "leaked"), 0);
}

}  // namespace real_etcd_test
}  // namespace lockbench

// Virtual threads in the simulator (--virtual-threads): no Tomcat worker cap
// and no accept queue, so the wait forms at the pool; synchronized below JDK 24
// pins the carriers (Pod::pin); what is refused. Counts and orderings with
// wide margins.
#include <gtest/gtest.h>

#include "sim/run_sim.hpp"

namespace lockbench {
namespace {

using namespace std::chrono_literals;

// held-tx at 20/s on one pod of 10 connections, the partner at p50 1.5 s /
// p99 4 s: past its Little's-law ceiling (10 / ~3.4 s), so requests pile up.
Settings past_the_ceiling(bool virtual_threads) {
  Settings s;
  s.scenario = "switch-primary";
  s.strategy = "held-tx";
  s.rate_per_s = 20;
  s.keys = 200;
  s.duration = 120s;
  s.partner_latency = Distribution::parse("lognormal:p50=1.5s,p99=4s", "test");
  s.trace_requests = 0;
  s.virtual_threads = virtual_threads;
  return s;
}

std::int64_t requests(const nlohmann::json& r, const char* outcome) { return r["requests"][outcome].get<std::int64_t>(); }

TEST(SimVirtualThreads, WithoutAWorkerCapNoRequestIsRejectedAndTheQueueFormsAtThePool) {
  const auto platform = run_sim(past_the_ceiling(false));
  const auto virtual_threads = run_sim(past_the_ceiling(true));
  // Platform threads: 200 workers and 100 queued, then Tomcat refuses.
  EXPECT_GT(requests(platform, "rejected"), 500);
  EXPECT_LE(platform["pool"]["pending_max"].get<int>(), 200);  // at most one waiter a worker
  // Virtual threads: every request gets a thread and waits for a connection.
  EXPECT_EQ(requests(virtual_threads, "rejected"), 0);
  EXPECT_GT(virtual_threads["pool"]["pending_max"].get<int>(), 400);  // ~ 20/s x the 30 s connectionTimeout
  EXPECT_GT(requests(virtual_threads, "pool_timeout"), 2 * requests(platform, "pool_timeout"));
  // The ceiling is the pool's either way.
  EXPECT_NEAR(static_cast<double>(requests(virtual_threads, "ok")), static_cast<double>(requests(platform, "ok")),
              0.2 * static_cast<double>(requests(platform, "ok")));
  EXPECT_EQ(virtual_threads["settings"]["virtual-threads"], true);
  EXPECT_FALSE(platform["settings"].contains("virtual-threads"));  // off: the result keeps its bytes
}

// synchronized around the partner call, on virtual threads: below JDK 24 a
// request holding (or waiting for) the monitor pins its carrier for the whole
// call, so a pod serves at most --carriers such requests at once, whatever
// its pool; on 24 (JEP 491) the threads unmount and the pool is the limit.
Settings synchronized_on_virtual_threads(int jdk, int carriers) {
  Settings s = past_the_ceiling(true);
  s.strategy = "synchronized";
  s.rate_per_s = 10;
  s.keys = 1000;  // hardly a key twice at once: no request waits for another's lock
  s.duration = 60s;
  s.jdk = jdk;
  s.carriers = carriers;
  return s;
}

TEST(SimVirtualThreads, SynchronizedBelowJdk24PinsACarrierPerRequestAndTheCarriersBecomeTheCeiling) {
  const auto jdk21 = run_sim(synchronized_on_virtual_threads(21, 2));
  const auto jdk21_four = run_sim(synchronized_on_virtual_threads(21, 4));
  const auto jdk24 = run_sim(synchronized_on_virtual_threads(24, 2));
  const auto& vt = jdk21["virtual_threads"];
  EXPECT_EQ(vt["pinning"], true);
  EXPECT_EQ(vt["carriers"], 2);
  EXPECT_EQ(vt["pinned_peak"], 2);  // never more pinned than carriers
  EXPECT_GT(vt["stalls"].get<std::int64_t>(), 10);
  EXPECT_GT(vt["stalled_s"].get<double>(), 30.0);  // most of the minute
  EXPECT_GT(vt["starts_waited_for_a_carrier"].get<std::int64_t>(), 100);
  EXPECT_EQ(jdk24["virtual_threads"], nlohmann::json({{"pinning", false}}));
  // On 24 the pod serves the offered 10/s (its pool of 10 is held only for the
  // read and the store); pinned on 2 carriers it serves about 2 per call time
  // (~1.7 s), and the backlog drains long after the minute of arrivals.
  const auto rate = [](const nlohmann::json& r) { return r["throughput_ok_per_s"].get<double>(); };
  EXPECT_GT(rate(jdk24), 9.0);
  EXPECT_LT(rate(jdk21), 2.0);
  EXPECT_GT(jdk21["latency_ok_ms"]["p50"].get<double>(), 60'000);  // waited for a carrier
  // The carriers, not the pool, set the ceiling: twice the carriers, about twice the rate.
  EXPECT_GT(rate(jdk21_four), 1.5 * rate(jdk21));
  EXPECT_LT(rate(jdk21_four), 2.5 * rate(jdk21));
  EXPECT_EQ(jdk21["settings"]["carriers"], 2);
}

TEST(SimVirtualThreads, APodWithEveryCarrierPinnedFailsALivenessProbeThatNeedsNoDatabase) {
  // The probe's handler is a virtual thread too: it waits for a carrier behind
  // the requests that arrived before it, and kubelet's 1 s timeout passes.
  auto probed = [](int jdk) {
    Settings s = synchronized_on_virtual_threads(jdk, 2);
    s.duration = 120s;
    s.liveness.on = true;
    s.liveness.db = false;  // the recommended liveness: no database, nothing a lock could hold
    return run_sim(s);
  };
  const auto jdk21 = probed(21);
  const auto jdk24 = probed(24);
  EXPECT_GT(jdk21["pods"]["restarts"].get<std::int64_t>(), 0);
  EXPECT_EQ(jdk24["pods"]["restarts"], 0);
}

TEST(SimVirtualThreads, ReentrantLockAndJdk24DoNotPinAndAJdkBeforeVirtualThreadsIsRefused) {
  Settings s = synchronized_on_virtual_threads(21, 2);
  s.duration = 10s;
  s.strategy = "synchronized:try";  // ReentrantLock.tryLock(): no monitor held through the call
  EXPECT_EQ(run_sim(s)["virtual_threads"]["pinning"], false);
  s.strategy = "synchronized";
  s.jdk = 0;  // not known: taken as a JDK that pins (every one with virtual threads before 24)
  EXPECT_EQ(run_sim(s)["virtual_threads"]["pinning"], true);
  s.jdk = 17;
  try {
    run_sim(s);
    ADD_FAILURE() << "JDK 17 was accepted with virtual threads";
  } catch (const SettingError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("--jdk: ", 0), 0u) << what;
    EXPECT_NE(what.find("21"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace lockbench

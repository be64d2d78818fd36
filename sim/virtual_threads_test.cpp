// Virtual threads in the simulator (--virtual-threads): no Tomcat worker cap
// and no accept queue, so the wait forms at the pool; and what is refused
// (pinning under synchronized below JDK 24 is not modelled yet). Counts and
// orderings with wide margins.
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

TEST(SimVirtualThreads, SynchronizedBelowJdk24IsRefusedInOneLineAndRunsOn24) {
  Settings s = past_the_ceiling(true);
  s.strategy = "synchronized";
  s.duration = 10s;
  for (int jdk : {0, 21, 23}) {
    s.jdk = jdk;
    try {
      run_sim(s);
      ADD_FAILURE() << "JDK " << jdk << " was accepted";
    } catch (const SettingError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("--virtual-threads: synchronized:wait ", 0), 0u) << what;
      EXPECT_NE(what.find("--jdk 24"), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos);
    }
  }
  s.jdk = 24;  // JEP 491: a virtual thread blocked in synchronized unmounts
  EXPECT_GT(requests(run_sim(s), "total"), 0);
  s.strategy = "synchronized:try";  // a ReentrantLock.tryLock(): no monitor held through the call
  s.jdk = 21;
  EXPECT_GT(requests(run_sim(s), "total"), 0);
}

}  // namespace
}  // namespace lockbench

// lint check 7: virtual threads (spring.threads.virtual.enabled, Spring Boot
// 3.2+ on Java 21+). Two facts change with them:
//  - a virtual thread that blocks inside synchronized (the partner call) or
//    waits to enter it cannot unmount on JDK 21-23: it pins its carrier, and
//    the carriers are as many as the cores (JEP 444; JEP 491 ends it in 24);
//  - Tomcat's threads.max no longer caps the requests in flight, so a dry
//    pool's wait queue grows with the load, bounded only by connectionTimeout.
#include <fmt/format.h>

#include "report/lint.hpp"
#include "report/lint_internal.hpp"
#include "strategies/registry.hpp"

namespace lockbench::report {

namespace threads_detail {

using namespace lint_detail;

// Little's law, per pod: each request holds or waits for the monitor at least
// through its calls, so at least rate x call time of them do at once, each
// pinning a carrier.
double in_section_per_pod(const LintInput& in) {
  const Duration section = in.partner_mean * in.calls_in_critical_section;
  return in.rate_per_s / std::max(1, in.pods) * to_s(section);
}

void check_pinning(const LintInput& in, LintReport& r) {
  if (in.strategy.empty() || !strategy_info(in.strategy).props.monitor_during_call) return;
  if (in.jdk >= 24) {
    r.findings.push_back({Level::ok, "threads",
                          fmt::format("{} holds a monitor (synchronized) through the partner call, on virtual threads: "
                                      "on JDK {} a virtual thread blocked in it unmounts (JEP 491), so no carrier is "
                                      "pinned.",
                                      in.strategy, in.jdk)});
    return;
  }
  const std::string jdk = in.jdk > 0 ? fmt::format("on JDK {}", in.jdk) : "on JDK 21-23 (--jdk not given)";
  r.findings.push_back(
      {in.jdk > 0 ? Level::flag : Level::warn, "threads",
       fmt::format("{} holds a monitor (synchronized) through the partner call, on virtual threads {}: the holder, "
                   "blocked in the call, and every request waiting to enter pin their carrier threads, and the "
                   "carriers are as many as the cores (jdk.virtualThreadScheduler.parallelism). At {:.1f} requests/s "
                   "per pod x {} in the calls, at least {:.1f} requests hold or wait for the monitor at once "
                   "(Little's law); once they outnumber the carriers, every virtual thread of the pod stalls, "
                   "requests that need no lock included (Netflix, 2024). Run on JDK 24+ (JEP 491), or use a "
                   "ReentrantLock, which does not pin, or keep the lock out of the call.",
                   in.strategy, jdk, in.rate_per_s / std::max(1, in.pods),
                   d(in.partner_mean * in.calls_in_critical_section), in_section_per_pod(in))});
}

void check_unbounded_queue(const LintInput& in, LintReport& r) {
  const double waiting_max = in.rate_per_s * to_s(in.pool_connection_timeout);
  const std::string numbers = fmt::format(
      "up to --rate {} x connectionTimeout {} = {:.0f} requests waiting for a connection at once, where platform "
      "threads stopped at threads.max {} per pod (then the accept queue, then refusals)",
      in.rate_per_s, d(in.pool_connection_timeout), waiting_max, in.max_threads);
  if (r.busy_connections >= 0.8 * in.pool_size)
    r.findings.push_back({Level::warn, "threads",
                          fmt::format("virtual threads remove Tomcat's worker cap, and this pool runs near or past "
                                      "its limit (check pool): every request gets a thread and waits in HikariCP's "
                                      "queue, {}; server.tomcat.max-connections (8192 by default) is the only cap "
                                      "left. A short spring.datasource.hikari.connection-timeout fails them fast; a "
                                      "bulkhead (a Semaphore around the call) bounds them.",
                                      numbers)});
  else
    r.findings.push_back({Level::ok, "threads",
                          fmt::format("virtual threads remove Tomcat's worker cap; the pool keeps up here, and if it "
                                      "runs dry its queue is bounded by connectionTimeout: {}.",
                                      numbers)});
}

}  // namespace threads_detail

void check_virtual_threads(const LintInput& in, LintReport& r) {
  using namespace threads_detail;
  if (!in.virtual_threads) return;
  if (in.jdk > 0 && in.jdk < 21) {
    r.findings.push_back({Level::warn, "threads",
                          fmt::format("spring.threads.virtual.enabled=true on JDK {}: Spring Boot uses virtual "
                                      "threads on Java 21 and up only, so Tomcat keeps its {} platform threads.",
                                      in.jdk, in.max_threads)});
    return;
  }
  check_pinning(in, r);
  check_unbounded_queue(in, r);
}

}  // namespace lockbench::report

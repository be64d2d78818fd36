// explain's layout. A strategy's own words live in its registry row, in its
// file under strategies/ beside the code they describe (StrategyWords); the
// texts every strategy shares (probes, virtual threads, the bypass) are here.
#include "report/explain.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "base/units.hpp"
#include "strategies/family.hpp"

namespace lockbench::report {

namespace {

// A code block under a two-space indent, fenced as Markdown does.
std::string code_block(std::string_view code) {
  std::string out = "  ```java\n";
  std::size_t start = 0;
  while (start <= code.size()) {
    const std::size_t end = std::min(code.find('\n', start), code.size());
    out += "  " + std::string(code.substr(start, end - start)) + "\n";
    start = end + 1;
  }
  return out + "  ```\n";
}

// Paragraphs wrapped at 100 columns with a two-space indent: terminals and
// pasted design notes both read better than one 600-character line.
std::string wrap(const std::string& text) {
  constexpr std::size_t width = 100;
  std::string out = "  ", word;
  std::size_t column = 2;
  auto flush = [&] {
    if (word.empty()) return;
    if (column > 2 && column + 1 + word.size() > width) {
      out += "\n  ";
      column = 2;
    } else if (column > 2) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    word.clear();
  };
  for (char c : text) {
    if (c == ' ') flush();
    else word += c;
  }
  flush();
  return out + "\n";
}

std::string yes_no(bool b) { return b ? "yes" : "no"; }

}  // namespace

// Every lock is advisory to a writer that does not take it (--bypass-share).
static std::string bypass_text() {
  return "A writer that ignores the lock (an admin job, a second service, a script; --bypass-share S makes "
         "that share of requests run the scenario's read, partner calls and store with no lock) is not "
         "excluded by any strategy here: measured on switch-primary (docs/explanation/other-writers.md), every "
         "one shows overlap_person, the fenced leases with --fencing enforce included, because the bypass sends "
         "no fencing token and an enforcing partner compares the tokens it is given. Only what the bypass cannot "
         "skip protects against it: a database constraint the write itself meets, or a partner that refuses a "
         "mutation without a current token.";
}

// A lock can hold and two calls still overlap at the partner: the oracle's overlap_abandoned.
static std::string abandoned_call_text() {
  return "When the partner's read timeout (--partner-read-timeout) is shorter than the partner's work, the "
         "client gives up on a call that keeps running at the partner; after its last attempt the request "
         "fails and releases the lock, and the next holder's call arrives while the abandoned one is still "
         "running. The lock held: the oracle counts this as overlap_abandoned (a note, not overlap_person), "
         "told apart by the attempt's timeout the client sends (X-Client-Timeout-Ms). The abandoned call may "
         "still apply its effect later; a person it leaves split or with a lost promotion is counted as "
         "abandoned_effect (an effect the service has no record of), not as person_split. The fix is an idempotency key (the retry and the next holder's call "
         "become one effect) or a fencing token the partner enforces, not another lock; a read timeout above "
         "the partner's worst case also ends it.";
}

// Kubernetes' probes and the restart cascade (sim/kubelet.cpp, docs/how-to/probes-and-recovery.md).
static std::string probes_text() {
  return "probes — Kubernetes' readiness and liveness probes, and the restart cascade\n\n" +
         wrap("Spring Boot's /actuator/health includes the db health indicator: it borrows a connection from the pool "
              "and runs a validation query. A readiness probe on it takes a pod out of the load balancer after "
              "failureThreshold failures in a row (its requests go to the other pods; with none ready the load "
              "balancer answers 503), and brings it back after successThreshold successes. A liveness probe on it "
              "gets the pod killed after failureThreshold failures: its requests in flight are lost, its "
              "connections dropped, its transaction and session locks released with them (leases stay until "
              "their TTL), and kubelet starts it again after its back-off (10 s, 20 s, ... at most 5 minutes), "
              "cold, with an empty pool.") +
         "\n" +
         wrap("The cascade: a strategy that holds a pooled connection through a slow partner call dries the pool "
              "(Little's law: pool / hold). The probe waits for a connection like every request, times out, and "
              "fails; readiness pulls the pod, so its share of the load moves to the others and dries theirs; "
              "liveness kills it, and the restarted pod meets the same queue. A strategy that holds nothing "
              "during the call keeps its pool free for the probe and is never restarted. A liveness probe that "
              "does not check the database (/actuator/health/liveness, the default group when "
              "management.endpoint.health.probes.enabled=true) does not kill a pod for a dry pool; readiness "
              "may still pull it.") +
         "\n" +
         wrap("Mitigations in the client: a circuit breaker (--circuit-breaker, resilience4j's names) that opens "
              "on failed or slow calls fails requests at once, so their transactions end and their connections "
              "go back: the pool stays free for the probe and no pod is killed. It costs what a fail-fast costs, "
              "and in a flow of two calls (unlink, then link) a breaker that opens between them leaves a split "
              "person. A retry budget (--retry-budget, gRPC's retry throttling) stops a pod's retries once half "
              "its tokens are spent, so an outage does not triple the load on the partner.") +
         "\n" +
         wrap("Measure it: lockbench run --preset incident --pods 3 --readiness on --liveness on --strategy all "
              "(--liveness db=off for the recommended setting; a partner outage that ends: a fault with from_ms "
              "and until_ms in --partner-faults, and the result's recovery block). lockbench lint --from "
              "application.yml --from deployment.yaml reads the Deployment's probes with Spring's actuator keys and "
              "flags a liveness probe that checks the database. Figures: docs/how-to/probes-and-recovery.md.");
}

// Virtual threads: where the queue forms, and carrier pinning (sim/pod.cpp, Pod::pin).
static std::string virtual_threads_text() {
  return "virtual-threads — spring.threads.virtual.enabled, and synchronized pinning the carriers\n\n" +
         wrap("With spring.threads.virtual.enabled=true (Spring Boot 3.2+, JDK 21+) every request gets a virtual "
              "thread: there is no Tomcat worker cap (threads.max) and no accept queue (accept-count), so no "
              "request is refused at the socket. Every one waits for a connection instead, up to HikariCP's "
              "connectionTimeout: the queue forms at the pool, and a strategy that holds a connection through the "
              "partner call has the same Little's-law ceiling as before, with a longer queue in front of it.") +
         "\n" +
         wrap("Virtual threads run on carrier threads, as many as the cores (jdk.virtualThreadScheduler."
              "parallelism; --carriers). A virtual thread that blocks gives its carrier back, except inside "
              "synchronized on JDK 21 to 23: the holder of the monitor, blocked in the pool, the database or the "
              "partner call, and every thread waiting to enter the monitor keep their carriers (pinning). Once the "
              "pinned threads are as many as the carriers, no other virtual thread of the pod runs: new requests, "
              "a connection handed back, a statement's answer and the health probe's handler all wait for a "
              "carrier, even those that need no lock. The pod then serves --carriers requests per partner call "
              "time, whatever its pool, and a liveness probe that does not even check the database times out "
              "(Netflix's 2024 report of this stall). JDK 24 (JEP 491) unmounts a thread blocked in synchronized; "
              "a ReentrantLock (synchronized:try here) never pinned.") +
         "\n" +
         wrap("Measure it: lockbench run --strategy synchronized --virtual-threads on --jdk 21 --carriers 2 "
              "--rate 10 --partner-latency lognormal:p50=1.5s,p99=4s, against --jdk 24 (the result's "
              "virtual_threads block: stalls, stalled_s, starts_waited_for_a_carrier); add --liveness db=off to "
              "see the stalled pod killed. lockbench lint flags synchronized on virtual threads below JDK 24 "
              "(lockbench.jdk, spring.threads.virtual.enabled). The real world runs the same on its pods: a "
              "thread per request that runs only on one of the pod's --carriers, and holds it while pinned.");
}

std::string explain(std::string_view spec) {
  if (spec == "probes") return probes_text();
  if (spec == "virtual-threads") return virtual_threads_text();
  for (const auto& sc : scenario_registry())  // a scenario: its summary and its file's story
    if (sc.name == spec)
      return fmt::format("scenario {} — {}\n\n{}", sc.name, sc.summary, wrap(std::string(sc.story)));
  const StrategyInfo& info = strategy_info(spec);  // unknown names: one line listing the accepted ones
  const StrategyFamily& family = strategy_family(info.family);
  const StrategyWords& it = family.words;
  std::string out = fmt::format("{} — {}\n", family.name, it.summary);
  std::vector<const StrategyInfo*> variants;
  for (const auto& row : strategy_registry())
    if (row.family == family.name) variants.push_back(&row);
  if (variants.size() > 1 || variants.front()->spec != family.name) {
    out += "Variants:\n";
    for (const auto* v : variants)
      out += fmt::format("  {}{}: {}\n", v->spec, v == &info ? " (this one)" : "", v->teaches);
  }
  const StrategyProps& p = info.props;
  out += fmt::format(
      "\nProperties of {} (its registry row, at the end of its file in strategies/)\n"
      "  holds a pooled connection during the partner call: {}\n"
      "  excludes two requests for one key: {}\n"
      "  frees the key by itself when its holder crashes: {}\n"
      "  needs the record's row to exist before the first request: {}\n",
      info.spec, yes_no(p.holds_connection_during_call),
      p.exclusion == Exclusion::all_pods  ? "yes, across pods"
      : p.exclusion == Exclusion::one_pod ? "within one pod only"
                                          : "no",
      yes_no(p.crash_safe), yes_no(p.needs_existing_row));
  out += "\nHow it works\n" + wrap(std::string(it.how));
  if (!it.java.empty()) out += "\nIn Spring/Java\n" + code_block(it.java);
  out += "\nHow it fails\n" + wrap(std::string(it.fails));
  if (p.exclusion != Exclusion::none) out += "\nWhen the client gives up first\n" + wrap(abandoned_call_text());
  if (p.exclusion != Exclusion::none) out += "\nWhen another writer ignores the lock\n" + wrap(bypass_text());
  out += "\nUnder Kubernetes probes\n" +
         wrap(p.holds_connection_during_call
                  ? "It holds a pooled connection through the partner call: when the partner is slow the pool runs "
                    "dry, a probe that checks the database (Spring's /actuator/health) fails, readiness pulls the "
                    "pod and a liveness probe on it gets the pod killed and restarted into the same queue: the "
                    "restart cascade (lockbench explain probes). Keep the database out of the liveness probe."
                  : "It holds no pooled connection during the partner call, so a slow partner leaves the pool free "
                    "for the health probe: probes that check the database stay green and no pod is restarted for "
                    "it (lockbench explain probes).");
  if (p.monitor_during_call)
    out += "\nOn virtual threads\n" +
           wrap("It holds a monitor (synchronized) through the partner call: on JDK 21 to 23 each request inside it, "
                "holding or waiting, pins a carrier thread, and once they are as many as the carriers the whole "
                "pod stalls (lockbench explain virtual-threads). JDK 24 does not pin.");
  out += "\nChoose it\n" + wrap(std::string(it.choose));
  out += "\nDo not choose it\n" + wrap(std::string(it.avoid));
  return out;
}

std::string explain_list() {
  std::string out = "Strategies (lockbench explain STRATEGY for how each works and fails):\n";
  for (const StrategyFamily* family : strategy_families()) {
    std::string name(family->name);
    std::string variants;
    for (const auto& row : family->variants)
      if (row.spec != family->name) variants += (variants.empty() ? "[" : "|") + std::string(row.spec.substr(family->name.size()));
    if (!variants.empty()) name += variants + "]";
    out += fmt::format("  {:<44} {}\n", name, family->words.summary);
  }
  out += "\nScenarios (--scenario; lockbench explain SCENARIO for what each reproduces):\n";
  for (const auto& sc : scenario_registry()) out += fmt::format("  {:<44} {}\n", sc.name, sc.summary);
  out += "\nTopics:\n";
  out += fmt::format("  {:<44} {}\n", "probes", "Kubernetes' readiness and liveness probes and the restart cascade");
  out += fmt::format("  {:<44} {}\n", "virtual-threads", "no worker cap, the queue at the pool, synchronized pinning the carriers");
  return out;
}

}  // namespace lockbench::report

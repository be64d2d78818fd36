// Kubernetes in the simulator (--readiness, --liveness): kubelet's probes with
// their consequences, the load balancer over ready pods, and restarts.
//
//   kubelet     per pod and probe kind, a tick every period (from the
//               container's start + initialDelay); a tick while the last probe
//               of its kind still runs is skipped (kubelet probes one at a
//               time). A probe fails at its timeout unless the pod answered
//               (Pod::start_check), at once while the application is still
//               starting (connection refused), and only counts while the
//               container is not running (never: ticks start when it runs).
//   readiness   failureThreshold failures in a row take the pod out of the load
//               balancer, successThreshold successes in a row bring it back.
//   liveness    failureThreshold failures in a row kill the pod (SimWorld::crash:
//               requests lost, backends gone, locks released as each strategy's
//               are); kubelet starts it again after its back-off (0 s for the
//               first restart, then 10 s, 20 s, ... at most 300 s; reset after
//               10 min of running), and its application serves --pod-startup
//               later: a new pool, readiness failing until it passes.
//   balancer    a request goes to its round-robin pod (id % pods) when that one
//               is ready, else to one of the ready pods (spread by id); with none
//               ready it is refused (503, `rejected`, counted in pods.refused).
//               Without a readiness probe a pod is ready while its container
//               runs, so a request may reach an application still starting: refused.
// The pods at the run's start were running before it: ready, serving.
#include <algorithm>
#include <string>

#include "sim/pod_root.hpp"
#include "sim/sim_world.hpp"

namespace lockbench::sim {

namespace {

constexpr Duration kBackoffFirst = std::chrono::seconds(10);
constexpr Duration kBackoffMax = std::chrono::seconds(300);
constexpr Duration kBackoffReset = std::chrono::minutes(10);
constexpr std::size_t kUnavailableListed = 20;

// Event arguments: (incarnation or probe number) << 8 | pod index << 1 | kind.
std::uint64_t pack(std::uint64_t n, int index, int kind) {
  return n << 8 | static_cast<std::uint64_t>(index) << 1 | static_cast<std::uint64_t>(kind);
}
int index_of(std::uint64_t arg) { return static_cast<int>((arg >> 1) & 0x7f); }
int kind_of(std::uint64_t arg) { return static_cast<int>(arg & 1); }
std::uint64_t number_of(std::uint64_t arg) { return arg >> 8; }

// The pod's side of one probe: /actuator/health with the db indicator (a borrow
// within the timeout, SELECT 1) or without (the answer alone, on the pod's clock).
PodRoot run_check(SimWorld& w, Pod& pod, std::uint32_t slot, int kind, std::uint64_t probe, bool db, Duration timeout) {
  bool ok = true;
  if (db) {
    SimConn* c = co_await pod.borrow(timeout);
    if (!c) {
      ok = false;
    } else {
      c->on_borrow(nullptr, w.now());
      co_await Sleep{w.loop(), w.db_latency(), pod.owner()};
      c->release();
    }
  } else {
    co_await Sleep{w.loop(), Duration::zero(), pod.owner()};  // a frozen pod answers late
  }
  pod.forget_root(slot);
  w.probe_answered(pod.index(), static_cast<SimWorld::ProbeKind>(kind), probe, ok);
}

}  // namespace

void Pod::start_check(int kind, std::uint64_t probe, bool db, Duration timeout) {
  const auto slot = take_slot(Running{Request{}, nullptr, {}, true});
  PodRoot root = run_check(w_, *this, slot, kind, probe, db, timeout);
  running_[slot].root = root.handle;
  root.handle.resume();
}

// ---- kubelet

void SimWorld::kube_start() {
  kube_on_ = s_.readiness.on || s_.liveness.on;
  if (!kube_on_) return;
  life_.assign(pods_.size(), PodLife{});
  kube_.by_pod.assign(pods_.size(), 0);
  for (int i = 0; i < static_cast<int>(pods_.size()); ++i) {
    // Running before the run started: the first tick one period in, as the counting probe's.
    if (s_.readiness.on) start_probe_ticks(i, ProbeKind::readiness, s_.readiness.period);
    if (s_.liveness.on) start_probe_ticks(i, ProbeKind::liveness, s_.liveness.period);
  }
}

void SimWorld::start_probe_ticks(int index, ProbeKind kind, Duration first) {
  const auto& life = life_[static_cast<std::size_t>(index)];
  loop_.at(first, kGlobal, &on_probe_tick, this, pack(life.incarnation, index, static_cast<int>(kind)));
}

void SimWorld::on_probe_tick(void* self, std::uint64_t arg) {
  auto& w = *static_cast<SimWorld*>(self);
  const int index = index_of(arg);
  const auto kind = static_cast<ProbeKind>(kind_of(arg));
  auto& life = w.life_[static_cast<std::size_t>(index)];
  if (number_of(arg) != life.incarnation || w.all_done()) return;  // an older incarnation's, or the run is over
  const ProbeSpec& spec = w.probe_spec(kind);
  w.loop_.at(w.now() + spec.period, kGlobal, &on_probe_tick, self, arg);
  std::uint64_t& in_flight = life.probe_in_flight[static_cast<int>(kind)];
  if (in_flight != 0) return;  // the last probe still runs: kubelet skips this tick
  (kind == ProbeKind::readiness ? w.kube_.readiness_total : w.kube_.liveness_total)++;
  if (kind == ProbeKind::readiness) ++w.probe_.total;
  if (w.now() < life.serving_from) {  // the application is not up yet: connection refused
    w.probe_result(index, kind, false);
    return;
  }
  in_flight = ++w.next_probe_;
  w.loop_.at(w.now() + spec.timeout, kGlobal, &on_probe_timeout, self, pack(in_flight, index, static_cast<int>(kind)));
  w.pods_[static_cast<std::size_t>(index)]->start_check(static_cast<int>(kind), in_flight, spec.db, spec.timeout);
}

void SimWorld::on_probe_timeout(void* self, std::uint64_t arg) {
  auto& w = *static_cast<SimWorld*>(self);
  const int index = index_of(arg);
  const auto kind = static_cast<ProbeKind>(kind_of(arg));
  std::uint64_t& in_flight = w.life_[static_cast<std::size_t>(index)].probe_in_flight[static_cast<int>(kind)];
  if (in_flight != number_of(arg)) return;  // answered in time
  in_flight = 0;
  w.probe_result(index, kind, false);
}

void SimWorld::probe_answered(int index, ProbeKind kind, std::uint64_t probe, bool ok) {
  std::uint64_t& in_flight = life_[static_cast<std::size_t>(index)].probe_in_flight[static_cast<int>(kind)];
  if (in_flight != probe) return;  // too late: kubelet counted it failed at its timeout
  in_flight = 0;
  probe_result(index, kind, ok);
}

void SimWorld::probe_result(int index, ProbeKind kind, bool ok) {
  auto& life = life_[static_cast<std::size_t>(index)];
  if (kind == ProbeKind::readiness) {
    if (!ok) {
      ++kube_.readiness_failed;
      ++probe_.failed;
      life.readiness_successes = 0;
      if (++life.readiness_failures >= s_.readiness.failure_threshold && life.ready) set_ready(index, false);
    } else {
      life.readiness_failures = 0;
      if (++life.readiness_successes >= s_.readiness.success_threshold && !life.ready) set_ready(index, true);
    }
    return;
  }
  if (ok) {
    life.liveness_failures = 0;
    return;
  }
  ++kube_.liveness_failed;
  if (++life.liveness_failures >= s_.liveness.failure_threshold) liveness_kill(index);
}

void SimWorld::set_ready(int index, bool ready) {
  auto& life = life_[static_cast<std::size_t>(index)];
  if (life.ready == ready) return;
  life.ready = ready;
  if (s_.readiness.on && ready) ++kube_.returned;
  if (s_.readiness.on && !ready) ++kube_.pulled;
  int unready = 0;
  for (const auto& l : life_) unready += l.ready ? 0 : 1;
  kube_.peak_unready = std::max(kube_.peak_unready, unready);
  const bool none = unready == static_cast<int>(life_.size());
  if (none && !kube_.unavailable_since) kube_.unavailable_since = now();
  if (!none && kube_.unavailable_since) {
    kube_.unavailable.emplace_back(*kube_.unavailable_since, now());
    kube_.unavailable_since.reset();
  }
}

void SimWorld::liveness_kill(int index) {
  auto& life = life_[static_cast<std::size_t>(index)];
  ++kube_.kills;
  // kubelet's restart back-off: the first restart at once, then 10 s, 20 s, ...
  // at most 300 s; forgotten once the container ran for 10 minutes.
  if (now() - life.running_from >= kBackoffReset) life.backoff_step = 0;
  const Duration backoff =
      life.backoff_step == 0 ? Duration::zero() : std::min<Duration>(kBackoffMax, kBackoffFirst * (1LL << std::min(life.backoff_step - 1, 8)));
  ++life.backoff_step;
  set_ready(index, false);
  ++life.incarnation;
  life.readiness_failures = life.readiness_successes = life.liveness_failures = 0;
  life.probe_in_flight[0] = life.probe_in_flight[1] = 0;
  life.running_from = now() + backoff;
  life.serving_from = life.running_from + s_.pod_startup;
  crash(index, true);
  const std::uint64_t arg = pack(life.incarnation, index, 0);
  loop_.at(life.running_from, kGlobal, &on_container_running, this, arg);
  loop_.at(life.serving_from, kGlobal, &on_pod_serving, this, arg);
}

void SimWorld::on_container_running(void* self, std::uint64_t arg) {
  auto& w = *static_cast<SimWorld*>(self);
  const int index = index_of(arg);
  const auto& life = w.life_[static_cast<std::size_t>(index)];
  if (number_of(arg) != life.incarnation) return;
  const Duration t = w.now();
  if (w.s_.readiness.on) w.start_probe_ticks(index, ProbeKind::readiness, t + w.s_.readiness.initial_delay);
  else w.set_ready(index, true);  // no readiness probe: ready while the container runs
  if (w.s_.liveness.on) w.start_probe_ticks(index, ProbeKind::liveness, t + w.s_.liveness.initial_delay);
}

void SimWorld::on_pod_serving(void* self, std::uint64_t arg) {
  auto& w = *static_cast<SimWorld*>(self);
  const int index = index_of(arg);
  if (number_of(arg) != w.life_[static_cast<std::size_t>(index)].incarnation) return;
  Pod& pod = *w.pods_[static_cast<std::size_t>(index)];
  pod.start_probes();  // the counting probe, when --readiness does not replace it
  pod.start_background();
}

// ---- the load balancer

int SimWorld::route(const Request& r) {
  const auto n = static_cast<std::uint64_t>(life_.size());
  const auto home = static_cast<int>(r.id % n);
  if (life_[static_cast<std::size_t>(home)].ready) return home;
  int ready = 0;
  for (const auto& l : life_) ready += l.ready ? 1 : 0;
  if (ready == 0) return -1;
  auto pick = static_cast<int>((r.id / n) % static_cast<std::uint64_t>(ready));
  for (int i = 0; i < static_cast<int>(n); ++i)
    if (life_[static_cast<std::size_t>(i)].ready && pick-- == 0) return i;
  return -1;
}

void SimWorld::refuse(const Request& r, const char* why) {
  ++kube_.refused;
  recorder_.finish(r.id, Outcome::rejected, r.intended, now(), TimeSplit{});
  if (tracing()) recorder_.trace({r.id, "outcome", now(), now(), -1, std::string("rejected: ") + why});
  finished(r);
}

// ---- the result

nlohmann::json SimWorld::pods_block() const {
  Duration unavailable_total{};
  nlohmann::json spans = nlohmann::json::array();
  auto all = kube_.unavailable;
  if (kube_.unavailable_since) all.emplace_back(*kube_.unavailable_since, std::max(loop_.now(), *kube_.unavailable_since));
  for (const auto& [from, until] : all) {
    // What counts is the arrivals' span: after it, nobody asks.
    const Duration a = std::min(from, s_.duration), b = std::min(until, s_.duration);
    unavailable_total += b - a;
    if (spans.size() < kUnavailableListed) spans.push_back({{"from_s", to_s(from)}, {"until_s", to_s(until)}});
  }
  const std::int64_t lost = kube_.refused + kube_.killed_in_flight;
  char verdict[160];
  if (unavailable_total > Duration::zero())
    std::snprintf(verdict, sizeof verdict, "unavailable for %.1f s of the arrivals' %.1f s (no pod ready)",
                  to_s(unavailable_total), to_s(s_.duration));
  else
    std::snprintf(verdict, sizeof verdict, "%s", "available (a pod was ready throughout)");
  return {{"readiness",
           {{"probe", probe_text(s_.readiness)},
            {"total", kube_.readiness_total},
            {"failed", kube_.readiness_failed},
            {"pulled", kube_.pulled},
            {"returned", kube_.returned}}},
          {"liveness",
           {{"probe", probe_text(s_.liveness)},
            {"total", kube_.liveness_total},
            {"failed", kube_.liveness_failed},
            {"kills", kube_.kills}}},
          {"restarts", kube_.kills},
          {"pod_startup_s", to_s(s_.pod_startup)},
          {"peak_unready", kube_.peak_unready},
          {"refused", kube_.refused},
          {"requests_by_pod", kube_.by_pod},
          {"killed_in_flight", kube_.killed_in_flight},
          {"requests_lost", lost},
          {"unavailable_s", to_s(unavailable_total)},
          {"unavailable", spans},
          {"verdict", verdict}};
}

}  // namespace lockbench::sim

// Kubernetes in the simulator (--readiness, --liveness): kubelet's probes with
// their consequences, the load balancer over ready pods, and restarts. The
// rules (thresholds, back-off, the balancer's choice, the pods block) are
// core/kubelet.hpp's, which the real world's runner (real/kubelet.cpp) runs too;
// here they run on the event loop.
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
//   events      the rules note "pulled", "returned", "killed", "started"; the
//               application answering at serving_from is "listening", as the
//               real runner notes a restarted process that listens.
// The pods at the run's start were running before it: ready, serving.
#include <string>

#include "sim/pod_root.hpp"
#include "sim/sim_world.hpp"

namespace lockbench::sim {

namespace {

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
  // On virtual threads the check's handler is a virtual thread: it starts when
  // a carrier is free (never while every one is pinned, Pod::pin).
  if (w.pins_carriers()) co_await Sleep{w.loop(), Duration::zero(), pod.owner()};
  if (db) {
    SimConn* c = co_await pod.borrow(timeout);
    if (!c) {
      ok = false;
    } else {
      ++w.pool_stats().probe_borrows;  // not a request's borrow: no hold_ms, no ceiling
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
  kube_.emplace(s_, static_cast<int>(pods_.size()));
  probe_in_flight_.assign(pods_.size(), {0, 0});
  for (int i = 0; i < static_cast<int>(pods_.size()); ++i) {
    // Running before the run started: the first tick one period in, as the counting probe's.
    if (s_.readiness.on) start_probe_ticks(i, ProbeKind::readiness, s_.readiness.period);
    if (s_.liveness.on) start_probe_ticks(i, ProbeKind::liveness, s_.liveness.period);
  }
}

void SimWorld::start_probe_ticks(int index, ProbeKind kind, Duration first) {
  loop_.at(first, kGlobal, &on_probe_tick, this, pack(kube_->life(index).incarnation, index, static_cast<int>(kind)));
}

void SimWorld::on_probe_tick(void* self, std::uint64_t arg) {
  auto& w = *static_cast<SimWorld*>(self);
  const int index = index_of(arg);
  const auto kind = static_cast<ProbeKind>(kind_of(arg));
  const auto& life = w.kube_->life(index);
  if (number_of(arg) != life.incarnation || w.all_done()) return;  // an older incarnation's, or the run is over
  const ProbeSpec& spec = w.probe_spec(kind);
  w.loop_.at(w.now() + spec.period, kGlobal, &on_probe_tick, self, arg);
  std::uint64_t& in_flight = w.probe_in_flight_[static_cast<std::size_t>(index)][static_cast<std::size_t>(kind)];
  if (in_flight != 0) return;  // the last probe still runs: kubelet skips this tick
  w.kube_->probe_made(kind);
  if (kind == ProbeKind::readiness) ++w.probe_.total;
  if (!w.kube_->serving(index, w.now())) {  // the application is not up yet: connection refused
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
  std::uint64_t& in_flight = w.probe_in_flight_[static_cast<std::size_t>(index)][static_cast<std::size_t>(kind)];
  if (in_flight != number_of(arg)) return;  // answered in time
  in_flight = 0;
  w.probe_result(index, kind, false);
}

void SimWorld::probe_answered(int index, ProbeKind kind, std::uint64_t probe, bool ok) {
  std::uint64_t& in_flight = probe_in_flight_[static_cast<std::size_t>(index)][static_cast<std::size_t>(kind)];
  if (in_flight != probe) return;  // too late: kubelet counted it failed at its timeout
  in_flight = 0;
  probe_result(index, kind, ok);
}

void SimWorld::probe_result(int index, ProbeKind kind, bool ok) {
  if (kind == ProbeKind::readiness && !ok) ++probe_.failed;
  if (kube_->probe_result(index, kind, ok, now())) liveness_kill(index);
}

void SimWorld::liveness_kill(int index) {
  const PodLife& life = kube_->kill(index, now());
  probe_in_flight_[static_cast<std::size_t>(index)] = {0, 0};
  crash(index, true);
  const std::uint64_t arg = pack(life.incarnation, index, 0);
  loop_.at(life.running_from, kGlobal, &on_container_running, this, arg);
  loop_.at(life.serving_from, kGlobal, &on_pod_serving, this, arg);
}

void SimWorld::on_container_running(void* self, std::uint64_t arg) {
  auto& w = *static_cast<SimWorld*>(self);
  const int index = index_of(arg);
  if (number_of(arg) != w.kube_->life(index).incarnation) return;
  const Duration t = w.now();
  w.kube_->container_running(index, t);  // no readiness probe: ready while the container runs
  if (w.s_.readiness.on) w.start_probe_ticks(index, ProbeKind::readiness, t + w.s_.readiness.initial_delay);
  if (w.s_.liveness.on) w.start_probe_ticks(index, ProbeKind::liveness, t + w.s_.liveness.initial_delay);
}

void SimWorld::on_pod_serving(void* self, std::uint64_t arg) {
  auto& w = *static_cast<SimWorld*>(self);
  const int index = index_of(arg);
  if (number_of(arg) != w.kube_->life(index).incarnation) return;
  w.kube_->note(index, "listening", w.now());  // the application answers (the real runner's word)
  Pod& pod = *w.pods_[static_cast<std::size_t>(index)];
  pod.start_probes();  // the counting probe, when --readiness does not replace it
  pod.start_background();
}

// ---- the load balancer (its choice: KubeletRules::route)

void SimWorld::refuse(const Request& r, const char* why) {
  ++kube_->stats().refused;
  recorder_.finish(r.id, Outcome::rejected, r.intended, now(), TimeSplit{});
  if (tracing()) recorder_.trace({r.id, "outcome", now(), now(), -1, std::string("rejected: ") + why});
  finished(r);
}

}  // namespace lockbench::sim

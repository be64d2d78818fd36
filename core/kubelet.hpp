// kubelet's and the load balancer's rules (issue 32), without a clock, a
// thread or a world, so that both worlds act on probes with one code:
// sim/kubelet.cpp runs them on the event loop, real/kubelet.cpp on threads
// with HTTP probes against `lockbench serve` pods.
//
//   thresholds  readiness: failureThreshold failures in a row take the pod out
//               of the load balancer, successThreshold successes in a row bring
//               it back; liveness: failureThreshold failures in a row kill it
//   back-off    kubelet's restart back-off: the first restart at once, then
//               10 s, 20 s, ... at most 300 s, forgotten after 10 minutes of
//               running (all times `scale`: a time-scaled real run scales them
//               as it scales every configured duration)
//   restart     the killed pod's container runs after the back-off, its
//               application serves --pod-startup later (cold: a new pool)
//   balancer    a request goes to its round-robin pod (id % pods) when that one
//               is ready, else to one of the ready pods (spread by id); -1 when
//               none is ready (the 503 a client sees, counted in `refused`).
//               Without a readiness probe a pod is ready while its container runs.
//   pods block  probes, restarts, requests lost (killed in flight + refused),
//               peak pods unready, the spans with no pod ready, a verdict and
//               `events` (docs/result.schema.json "pods")
//   events      [t_s, pod (1-based), what], the first kPodEventsListed, as
//               each pod's life changes: "pulled" and "returned" (with a
//               readiness probe: the pod left the load balancer, by readiness
//               or by a kill, and readiness brought it back; as many as
//               readiness.pulled/returned count), "killed" (liveness),
//               "started" (its container runs again after the back-off:
//               without a readiness probe it is in the load balancer from
//               here), and what a world
//               notes itself: "listening" (the restarted application answers).
//               Both worlds record the same transitions under the same names;
//               the report draws each pod's lane from them.
// The pods at the run's start were running before it: ready, serving.
// Not thread-safe: the real world calls it under its kubelet's lock.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/settings.hpp"

namespace lockbench {

enum class ProbeKind : std::uint8_t { readiness = 0, liveness = 1 };  // Kubernetes' two

// One pod index's life as kubelet and the load balancer see it (a restart is a
// new incarnation at the same index).
struct PodLife {
  bool ready = true;              // in the load balancer
  std::uint32_t incarnation = 0;  // bumped by a kill: an older incarnation's probes are dropped
  Duration running_from{};        // its container runs (after kubelet's back-off)
  Duration serving_from{};        // its application answers (after --pod-startup)
  int readiness_failures = 0, readiness_successes = 0, liveness_failures = 0;
  int backoff_step = 0;  // kills since kubelet last reset its back-off
};

// One change in a pod's life (the `events` of the pods block).
struct PodEvent {
  Duration at{};
  int pod = 0;               // 0-based index (1-based in the result)
  const char* what = "";     // a string literal: "pulled", "returned", "killed", "started", "listening"
};
inline constexpr std::size_t kPodEventsListed = 400;

struct KubeStats {
  std::int64_t readiness_total = 0, readiness_failed = 0, pulled = 0, returned = 0;
  std::int64_t liveness_total = 0, liveness_failed = 0, kills = 0;
  std::int64_t refused = 0, killed_in_flight = 0;
  std::vector<std::int64_t> by_pod;  // requests the load balancer handed to each pod index
  int peak_unready = 0;
  std::vector<std::pair<Duration, Duration>> unavailable;  // spans with no pod ready
  std::optional<Duration> unavailable_since;
  std::vector<PodEvent> events;  // the first kPodEventsListed
};

class KubeletRules {
 public:
  // `s`: the settings the world runs (scaled in the real world; kept by
  // reference); `scale` multiplies kubelet's own back-off times.
  KubeletRules(const Settings& s, int pods, double scale = 1);

  const ProbeSpec& spec(ProbeKind kind) const { return kind == ProbeKind::readiness ? s_.readiness : s_.liveness; }
  // A probe's tick (counted, whether the pod answers or not).
  void probe_made(ProbeKind kind);
  // A probe's result: true when it was liveness's last failure allowed (kill the pod).
  bool probe_result(int pod, ProbeKind kind, bool ok, Duration now);
  // A liveness kill at `now` (event "killed", after "pulled" when the pod was
  // still in the load balancer): out of the load balancer, counters reset, the
  // next incarnation's running_from (after the back-off) and serving_from.
  const PodLife& kill(int pod, Duration now);
  // The pod's container runs again (event "started"): without a readiness probe it is ready.
  void container_running(int pod, Duration now);
  // In or out of the load balancer; with a readiness probe an event ("returned", "pulled").
  void set_ready(int pod, bool ready, Duration now);
  // A world's own event in the pod's life (`what`: a string literal, e.g. "listening").
  void note(int pod, const char* what, Duration now);
  // The load balancer: the pod for request `id`, or -1 when none is ready.
  int route(std::uint64_t id) const;
  bool serving(int pod, Duration now) const { return now >= life(pod).serving_from; }

  const PodLife& life(int pod) const { return life_[static_cast<std::size_t>(pod)]; }
  int pods() const { return static_cast<int>(life_.size()); }
  KubeStats& stats() { return stats_; }
  const KubeStats& stats() const { return stats_; }
  // The result's `pods` block; an open span with no pod ready ends at `now`.
  nlohmann::json pods_json(Duration now) const;

 private:
  const Settings& s_;
  const double scale_;
  std::vector<PodLife> life_;
  KubeStats stats_;
};

}  // namespace lockbench

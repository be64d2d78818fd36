#include "core/kubelet.hpp"

#include <algorithm>
#include <cstdio>

namespace lockbench {

namespace {

constexpr Duration kBackoffFirst = std::chrono::seconds(10);
constexpr Duration kBackoffMax = std::chrono::seconds(300);
constexpr Duration kBackoffReset = std::chrono::minutes(10);
constexpr std::size_t kUnavailableListed = 20;

Duration times(Duration d, double scale) {
  if (scale == 1) return d;
  return Duration(static_cast<Duration::rep>(static_cast<double>(d.count()) * scale));
}

}  // namespace

KubeletRules::KubeletRules(const Settings& s, int pods, double scale)
    : s_(s), scale_(scale), life_(static_cast<std::size_t>(pods)) {
  stats_.by_pod.assign(static_cast<std::size_t>(pods), 0);
}

void KubeletRules::probe_made(ProbeKind kind) {
  (kind == ProbeKind::readiness ? stats_.readiness_total : stats_.liveness_total)++;
}

bool KubeletRules::probe_result(int pod, ProbeKind kind, bool ok, Duration now) {
  auto& life = life_[static_cast<std::size_t>(pod)];
  if (kind == ProbeKind::readiness) {
    if (!ok) {
      ++stats_.readiness_failed;
      life.readiness_successes = 0;
      if (++life.readiness_failures >= s_.readiness.failure_threshold && life.ready) set_ready(pod, false, now);
    } else {
      life.readiness_failures = 0;
      if (++life.readiness_successes >= s_.readiness.success_threshold && !life.ready) set_ready(pod, true, now);
    }
    return false;
  }
  if (ok) {
    life.liveness_failures = 0;
    return false;
  }
  ++stats_.liveness_failed;
  return ++life.liveness_failures >= s_.liveness.failure_threshold;
}

void KubeletRules::note(int pod, const char* what, Duration now) {
  if (stats_.events.size() < kPodEventsListed) stats_.events.push_back({now, pod, what});
}

void KubeletRules::set_ready(int pod, bool ready, Duration now) {
  auto& life = life_[static_cast<std::size_t>(pod)];
  if (life.ready == ready) return;
  life.ready = ready;
  // An event as readiness.returned/pulled count them (a kill of a pod still in the balancer included).
  if (s_.readiness.on) note(pod, ready ? "returned" : "pulled", now);
  if (s_.readiness.on && ready) ++stats_.returned;
  if (s_.readiness.on && !ready) ++stats_.pulled;
  int unready = 0;
  for (const auto& l : life_) unready += l.ready ? 0 : 1;
  stats_.peak_unready = std::max(stats_.peak_unready, unready);
  const bool none = unready == static_cast<int>(life_.size());
  if (none && !stats_.unavailable_since) stats_.unavailable_since = now;
  if (!none && stats_.unavailable_since) {
    stats_.unavailable.emplace_back(*stats_.unavailable_since, now);
    stats_.unavailable_since.reset();
  }
}

const PodLife& KubeletRules::kill(int pod, Duration now) {
  auto& life = life_[static_cast<std::size_t>(pod)];
  ++stats_.kills;
  // kubelet's restart back-off: the first restart at once, then 10 s, 20 s, ...
  // at most 300 s; forgotten once the container ran for 10 minutes.
  if (now - life.running_from >= times(kBackoffReset, scale_)) life.backoff_step = 0;
  const Duration backoff =
      life.backoff_step == 0
          ? Duration::zero()
          : times(std::min<Duration>(kBackoffMax, kBackoffFirst * (1LL << std::min(life.backoff_step - 1, 8))), scale_);
  ++life.backoff_step;
  set_ready(pod, false, now);
  note(pod, "killed", now);
  ++life.incarnation;
  life.readiness_failures = life.readiness_successes = life.liveness_failures = 0;
  life.running_from = now + backoff;
  life.serving_from = life.running_from + s_.pod_startup;
  return life;
}

void KubeletRules::container_running(int pod, Duration now) {
  note(pod, "started", now);
  if (!s_.readiness.on) set_ready(pod, true, now);  // no readiness probe: ready while the container runs
}

int KubeletRules::route(std::uint64_t id) const {
  const auto n = static_cast<std::uint64_t>(life_.size());
  const auto home = static_cast<int>(id % n);
  if (life_[static_cast<std::size_t>(home)].ready) return home;
  int ready = 0;
  for (const auto& l : life_) ready += l.ready ? 1 : 0;
  if (ready == 0) return -1;
  auto pick = static_cast<int>((id / n) % static_cast<std::uint64_t>(ready));
  for (int i = 0; i < static_cast<int>(n); ++i)
    if (life_[static_cast<std::size_t>(i)].ready && pick-- == 0) return i;
  return -1;
}

nlohmann::json KubeletRules::pods_json(Duration now) const {
  Duration unavailable_total{};
  nlohmann::json spans = nlohmann::json::array();
  auto all = stats_.unavailable;
  if (stats_.unavailable_since) all.emplace_back(*stats_.unavailable_since, std::max(now, *stats_.unavailable_since));
  for (const auto& [from, until] : all) {
    // What counts is the arrivals' span: after it, nobody asks.
    const Duration a = std::min(from, s_.duration), b = std::min(until, s_.duration);
    unavailable_total += b - a;
    if (spans.size() < kUnavailableListed) spans.push_back({{"from_s", to_s(from)}, {"until_s", to_s(until)}});
  }
  const std::int64_t lost = stats_.refused + stats_.killed_in_flight;
  nlohmann::json events = nlohmann::json::array();
  for (const auto& e : stats_.events) events.push_back({to_s(e.at), e.pod + 1, e.what});
  char verdict[160];
  if (unavailable_total > Duration::zero())
    std::snprintf(verdict, sizeof verdict, "unavailable for %.1f s of the arrivals' %.1f s (no pod ready)",
                  to_s(unavailable_total), to_s(s_.duration));
  else
    std::snprintf(verdict, sizeof verdict, "%s", "available (a pod was ready throughout)");
  return {{"readiness",
           {{"probe", probe_text(s_.readiness)},
            {"total", stats_.readiness_total},
            {"failed", stats_.readiness_failed},
            {"pulled", stats_.pulled},
            {"returned", stats_.returned}}},
          {"liveness",
           {{"probe", probe_text(s_.liveness)},
            {"total", stats_.liveness_total},
            {"failed", stats_.liveness_failed},
            {"kills", stats_.kills}}},
          {"restarts", stats_.kills},
          {"pod_startup_s", to_s(s_.pod_startup)},
          {"peak_unready", stats_.peak_unready},
          {"refused", stats_.refused},
          {"requests_by_pod", stats_.by_pod},
          {"killed_in_flight", stats_.killed_in_flight},
          {"requests_lost", lost},
          {"unavailable_s", to_s(unavailable_total)},
          {"unavailable", spans},
          {"events", events},
          {"verdict", verdict}};
}

}  // namespace lockbench

#include "real/kubelet.hpp"

#include <algorithm>
#include <cstdio>

#include <httplib.h>

#include "real/pod_protocol.hpp"
#include "real/run_common.hpp"

namespace lockbench::real {

Kubelet::Kubelet(const Settings& s, double scale, PodFleet& fleet, Clock::time_point epoch, std::size_t pods)
    : s_(s),
      fleet_(fleet),
      epoch_(epoch),
      rules_(s, static_cast<int>(pods), scale),
      up_(pods, 1),
      kill_due_(pods, 0) {}

void Kubelet::start() {
  for (int i = 0; i < rules_.pods(); ++i) {
    container_threads_.emplace_back([this, i] { container_loop(i); });
    if (s_.readiness.on) probe_threads_.emplace_back([this, i] { probe_loop(i, ProbeKind::readiness); });
    if (s_.liveness.on) probe_threads_.emplace_back([this, i] { probe_loop(i, ProbeKind::liveness); });
  }
}

// ---- the load balancer

Kubelet::Route Kubelet::route(std::uint64_t request_id) {
  std::lock_guard lock(mu_);
  Route r;
  const int pod = rules_.route(request_id);
  if (pod < 0) {
    ++rules_.stats().refused;
    r.refused = "rejected: no pod ready (503 from the load balancer)";
    return r;
  }
  if (!up_[static_cast<std::size_t>(pod)] || !rules_.serving(pod, now())) {  // ready without a readiness probe
    ++rules_.stats().refused;
    r.refused = "rejected: the pod's application is still starting";
    return r;
  }
  if (!rules_.life(pod).ready) ++sent_to_unready_;
  ++rules_.stats().by_pod[static_cast<std::size_t>(pod)];
  r.pod = pod;
  r.incarnation = rules_.life(pod).incarnation;
  return r;
}

void Kubelet::no_answer(const Route& r) {
  if (r.pod < 0) return;
  std::lock_guard lock(mu_);
  if (rules_.life(r.pod).incarnation != r.incarnation) ++rules_.stats().killed_in_flight;
}

// ---- probes

bool Kubelet::probe_once(const std::string& url, const ProbeSpec& spec) const {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(spec.timeout).count();
  const std::string path = spec.db ? std::string(kPathReadiness) + "?" + kParamTimeoutMs + "=" + std::to_string(ms)
                                   : std::string(kPathLiveness);
  const auto started = Clock::now();
  httplib::Client c(url);
  c.set_keep_alive(false);  // kubelet opens a connection per probe
  c.set_connection_timeout(spec.timeout);
  c.set_read_timeout(spec.timeout);
  c.set_write_timeout(spec.timeout);
  const auto res = c.Get(path);
  return res && res->status == 200 && Clock::now() - started <= spec.timeout;
}

void Kubelet::probe_loop(int pod, ProbeKind kind) {
  const ProbeSpec& spec = rules_.spec(kind);  // the settings: never written
  const Duration period = std::max<Duration>(spec.period, std::chrono::milliseconds(1));  // a tiny --time-scale
  std::unique_lock lock(mu_);
  std::uint32_t incarnation = rules_.life(pod).incarnation;
  Duration next = period;  // running before the run started: the first tick one period in
  for (;;) {
    const bool changed = cv_.wait_until(lock, epoch_ + next, [&] {
      return !probing_ || rules_.life(pod).incarnation != incarnation;
    });
    if (!probing_) return;
    if (changed) {  // killed: the next container's ticks, from its start + initialDelay
      incarnation = rules_.life(pod).incarnation;
      next = rules_.life(pod).running_from + spec.initial_delay;
      continue;
    }
    rules_.probe_made(kind);
    bool ok = false;
    if (up_[static_cast<std::size_t>(pod)] && rules_.serving(pod, now())) {  // else: connection refused, at once
      lock.unlock();
      const std::string url = fleet_.url_of(static_cast<std::size_t>(pod));
      ok = probe_once(url, spec);
      lock.lock();
      if (!probing_) return;
      if (rules_.life(pod).incarnation != incarnation) continue;  // killed meanwhile: its answer is dropped
    }
    const bool kill = rules_.probe_result(pod, kind, ok, now());  // the rules note "pulled", "returned"
    if (kill) {
      rules_.kill(pod, now());  // and "killed"
      kill_due_[static_cast<std::size_t>(pod)] = 1;
      cv_.notify_all();
      continue;
    }
    // The next tick on the period's grid; those that passed while this probe ran are skipped.
    const Duration t = now();
    do next += period;
    while (next <= t);
  }
}

// ---- the container: kill, back-off, start, serve

void Kubelet::container_loop(int pod) {
  const auto i = static_cast<std::size_t>(pod);
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return over_ || kill_due_[i]; });
    if (over_) return;
    kill_due_[i] = 0;
    if (up_[i]) {
      up_[i] = 0;
      lock.unlock();
      fleet_.kill_and_reap(i);
      lock.lock();
    }
    const Duration running_from = rules_.life(pod).running_from;
    cv_.wait_until(lock, epoch_ + running_from, [&] { return over_ || !probing_ || kill_due_[i]; });
    if (over_) return;
    if (kill_due_[i]) continue;
    if (!probing_) {  // the load is over: no restart; alive until end()
      cv_.wait(lock, [&] { return over_; });
      return;
    }
    rules_.container_running(pod, now());  // the rules note "started"
    lock.unlock();
    const auto forked = Clock::now();
    std::string error;
    try {
      fleet_.restart(i);  // the application serves from serving_from (probes and requests wait for it)
    } catch (const std::exception& e) {
      error = one_line(e.what());
    }
    lock.lock();
    if (error.empty()) {
      up_[i] = 1;  // killed meanwhile: kill_due_ is set, the next turn kills it
      start_s_.push_back(to_s(Clock::now() - forked));
      rules_.note(pod, "listening", now());
    } else {
      ++restart_errors_;
      last_restart_error_ = error;
      std::fprintf(stderr, "lockbench: kubelet: pod %d did not start again: %s\n", pod + 1, error.c_str());
    }
  }
}

// ---- the end

void Kubelet::stop_probing() {
  {
    std::lock_guard lock(mu_);
    probing_ = false;
  }
  cv_.notify_all();
  for (auto& t : probe_threads_)
    if (t.joinable()) t.join();
}

void Kubelet::end() {
  stop_probing();
  {
    std::lock_guard lock(mu_);
    over_ = true;
  }
  cv_.notify_all();
  for (auto& t : container_threads_)
    if (t.joinable()) t.join();
}

nlohmann::json Kubelet::block() {
  std::lock_guard lock(mu_);
  nlohmann::json j = rules_.pods_json(now());
  j["sent_to_unready"] = sent_to_unready_;
  // The real application's own start (fork until "listening"), which --pod-startup
  // must exceed for the worlds to agree: a pod serves at the later of the two.
  double sum = 0, max = 0;
  for (double v : start_s_) sum += v, max = std::max(max, v);
  j["process_start_s"] = {{"count", start_s_.size()},
                          {"mean", start_s_.empty() ? 0.0 : sum / static_cast<double>(start_s_.size())},
                          {"max", max}};
  j["restart_errors"] = restart_errors_;
  if (!last_restart_error_.empty()) j["last_restart_error"] = last_restart_error_;
  return j;
}

ProbeStats Kubelet::readiness_counts() {
  std::lock_guard lock(mu_);
  return {rules_.stats().readiness_total, rules_.stats().readiness_failed};
}

}  // namespace lockbench::real

// The runner as kubelet and load balancer for its process pods (--readiness,
// --liveness with --pod-mode process; issue 32). The rules are the simulator's
// (core/kubelet.hpp: thresholds, back-off, the balancer's choice, the pods
// block); here they run on threads, against `lockbench serve` children:
//
//   probes     per pod and probe kind a thread: a tick every period (the pods
//              at the run's start: one period in; a restarted one: from its
//              container's start + initialDelay), a real HTTP GET with the
//              probe's timeout: db=on kPathReadiness?timeout_ms=T (a pool borrow
//              within T, SELECT 1: Spring's db indicator), db=off kPathLiveness
//              (the answer alone). It fails unless 200 came within the timeout,
//              and at once while the pod's application is not up (connection
//              refused). A tick while the last probe still runs is skipped.
//   kill       liveness's last failure allowed: the pod leaves the load
//              balancer, and its container thread sends SIGKILL
//              (PodFleet::kill_and_reap): the requests on the wire to it get no
//              answer (`error`, counted in killed_in_flight), PostgreSQL ends its
//              backends as their sockets close (its transactions' locks go with
//              them; row leases stay until their TTL: as each strategy's do)
//   restart    the same thread starts it again (PodFleet::restart: a new
//              process, a new pool: cold) when kubelet's back-off (scaled by
//              --time-scale) has passed, and lets it serve --pod-startup after
//              that; a thread per pod that lives until end(), since a child
//              dies with the thread that forked it (PR_SET_PDEATHSIG)
//   balancer   route(): a ready, serving pod for each request, or refused
//              (`rejected`, the load balancer's 503, counted in pods.refused)
// stop_probing() when the load is over (no probe, kill or restart after it);
// end() after the pods' figures are read.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/kubelet.hpp"
#include "core/metrics.hpp"
#include "core/settings.hpp"
#include "real/faults.hpp"

namespace lockbench::real {

class Kubelet {
 public:
  using Clock = std::chrono::steady_clock;
  // `s`: the run's scaled settings (kept by reference); `scale`: the run's
  // --time-scale (kubelet's own back-off times); `epoch`: the run's clock.
  Kubelet(const Settings& s, double scale, PodFleet& fleet, Clock::time_point epoch, std::size_t pods);
  ~Kubelet() { end(); }
  Kubelet(const Kubelet&) = delete;
  Kubelet& operator=(const Kubelet&) = delete;

  void start();
  // The load balancer's choice for one request.
  struct Route {
    int pod = -1;                   // -1: refused
    std::uint32_t incarnation = 0;  // of the pod when it was chosen
    const char* refused = nullptr;  // why, when refused
  };
  Route route(std::uint64_t request_id);
  // A routed request got no answer: killed in flight when its pod was killed since.
  void no_answer(const Route& r);
  void stop_probing();  // joins the probe threads; no kill or restart from here on
  void end();           // joins every thread (the restarted pods die with their forking thread)
  // The result's `pods` block (measured times; its `events`, when each pod was
  // pulled, returned, killed, started and listening, are the rules' with this
  // world's "listening"), and the readiness probes' counts.
  nlohmann::json block();
  ProbeStats readiness_counts();

 private:
  Duration now() const { return Clock::now() - epoch_; }
  void probe_loop(int pod, ProbeKind kind);
  void container_loop(int pod);
  bool probe_once(const std::string& url, const ProbeSpec& spec) const;

  const Settings& s_;
  PodFleet& fleet_;
  const Clock::time_point epoch_;
  std::mutex mu_;
  std::condition_variable cv_;
  KubeletRules rules_;         // GUARDED_BY(mu_)
  std::vector<char> up_;       // GUARDED_BY(mu_): a process of the pod's current container listens
  std::vector<char> kill_due_; // GUARDED_BY(mu_): liveness decided, the container thread kills
  bool probing_ = true;        // GUARDED_BY(mu_)
  bool over_ = false;          // GUARDED_BY(mu_)
  std::int64_t sent_to_unready_ = 0;  // GUARDED_BY(mu_): routed to a pod out of the balancer (must stay 0)
  std::int64_t restart_errors_ = 0;   // GUARDED_BY(mu_)
  std::string last_restart_error_;    // GUARDED_BY(mu_)
  std::vector<double> start_s_;       // GUARDED_BY(mu_): each restart's fork until listening, measured
  std::vector<std::thread> probe_threads_, container_threads_;
};

}  // namespace lockbench::real

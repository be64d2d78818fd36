// RealRun: one run of one strategy in the real world, as sim/sim_world.hpp's
// SimWorld is one in the simulator. run() goes through the same steps for
// every kind of pod:
//
//   prepare           settings refused first (one line, SettingError); the
//                     schema, earlier runs' leftovers (reported, never ended),
//                     runs of runners proven gone reclaimed, the run's record
//                     and rows, the partner reset and configured, the pods
//   start_background  the clock starts; pool samples + leak detection and the
//                     progress hook (every ~50-100 ms), the readiness probe
//                     (every --probe-interval), the strategy's background work
//                     (pollers, reconcilers), the faults
//   dispatch          open loop at each intended start, a burst at one instant,
//                     or closed-loop virtual users; latency counts from the
//                     intended start (no coordinated omission)
//   drain             every request answered; on a stop (hooks.should_stop:
//                     SIGINT/SIGTERM) no new request, a grace period for those
//                     in flight, then this run's own sessions ended; the
//                     background work told the requests are over and joined
//   finish            leaked locks and leases, the service's rows, the
//                     partner's checks (or partner_unavailable), one result of
//                     core/result.hpp's contract
//
// Two kinds of pods implement the steps:
//   ThreadPodsRun   (real/thread_pods.cpp) --pod-mode thread: each pod a pool,
//                   workers and a RealWorld inside this process
//   ProcessPodsRun  (real/process_pods.cpp) --pod-mode process: `lockbench
//                   serve` children (real/serve.hpp, real/pod_protocol.hpp),
//                   with real faults (real/faults.hpp); or --targets, services
//                   already running, optionally driven by several runners
//                   (--shard I/N, real/shard_marks.hpp)
// What both share sits here: the latched stop, the run's clock, the tickers,
// rejections, the partner's block and the result's common fields.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/metrics.hpp"
#include "core/result.hpp"
#include "core/run.hpp"
#include "core/scenario.hpp"
#include "core/settings.hpp"
#include "core/strategy.hpp"
#include "real/run_common.hpp"
#include "strategies/registry.hpp"

namespace lockbench::real {

class PartnerHttp;
class RunRecord;

// True when the run's pods are HTTP services (process mode or --targets).
bool pods_over_http(const Settings& s);

class RealRun {
 public:
  virtual ~RealRun();
  RealRun(const RealRun&) = delete;
  RealRun& operator=(const RealRun&) = delete;
  nlohmann::json run();  // prepare, start_background, dispatch, drain, finish

 protected:
  using Clock = std::chrono::steady_clock;
  static constexpr Duration kSampleEvery = std::chrono::milliseconds(50);

  RealRun(const Settings& configured, const RunHooks& hooks);
  virtual void prepare() = 0;
  virtual void start_background() = 0;
  virtual void dispatch() = 0;
  virtual void drain() = 0;
  virtual nlohmann::json finish() = 0;

  // The stop, latched so that every thread sees the same answer.
  bool stop_requested();
  bool stopping() const { return stopping_.load(); }
  // Sleeps until `t` (run time), waking every 50 ms to notice a stop: false when stopping.
  bool sleep_until_or_stop(Duration t);
  void start_clock() { epoch_ = Clock::now(); }
  Clock::time_point epoch() const { return epoch_; }
  Duration now() const { return Clock::now() - epoch_; }
  // A stop's grace period for the requests in flight: connectionTimeout within 2..10 s.
  Duration grace() const;

  // `sample` every `every`, into the recorder; the progress hook every 250 ms.
  void start_sampler(Duration every, std::function<PoolSample()> sample);
  // Every --probe-interval (none when 0), `probe(pod)` for each of `pods`.
  void start_prober(std::size_t pods, std::function<bool(std::size_t)> probe);
  void stop_tickers();
  // The probe{total, failed} of a run whose --readiness replaced the counting probe (real/kubelet.hpp).
  void set_probe_counts(const ProbeStats& counts);

  void reject(const Request& r, const char* why);
  void finished(Outcome o);  // done (and ok) counts for the progress hook
  // The partner's checks against the service's rows, or the block of a partner
  // that cannot be read (its reason on stderr when `say`).
  nlohmann::json partner_result(PartnerHttp& partner, const std::optional<nlohmann::json>& service);
  // The summary's fields every real result has; `pool` and `partner` must outlive it.
  RunSummary summary(const PoolStats& pool, const nlohmann::json& partner);

  // The run's record (real/leftovers.hpp), once made: a record found gone stops the run, and run() throws.
  void watch_record(const RunRecord* record) { record_watch_ = record; }

  const Settings& configured_;
  const RunHooks& hooks_;
  const Settings s_;  // scaled, world "real"
  const StrategyInfo& info_;
  const std::unique_ptr<Strategy> strategy_;
  const std::unique_ptr<Scenario> scenario_;
  Recorder recorder_;

 private:
  Clock::time_point epoch_ = Clock::now();
  std::atomic<bool> stopping_{false};
  std::atomic<const RunRecord*> record_watch_{nullptr};
  std::atomic<bool> record_lost_{false};
  std::atomic<std::int64_t> done_{0}, ok_{0};
  std::mutex probe_mu_;
  ProbeStats probe_;  // GUARDED_BY(probe_mu_)
  Duration last_progress_{};  // the sampler's thread only
  std::optional<Ticker> sampler_;
  std::vector<std::unique_ptr<Ticker>> probers_;  // one a pod
};

std::unique_ptr<RealRun> make_thread_pods_run(const Settings& configured, const RunHooks& hooks);
std::unique_ptr<RealRun> make_process_pods_run(const Settings& configured, const RunHooks& hooks);

}  // namespace lockbench::real

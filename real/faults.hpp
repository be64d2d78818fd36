// The real world's faults on process pods (--pod-mode process), as objects:
//
//   PauseFault  SIGSTOP of pod --pause-at T:POD at its first partner call from
//               T on that is a request's first call (step 1 of a promotion, or
//               a call outside one: the holder then always has a next call),
//               SIGCONT --pause-for later; measures what the frozen pod
//               keeps locked (its sessions' locks, by identity, until freed)
//   CrashFault  kill -9 of pod --crash-at T:POD inside a partner call; measures
//               what the dead pod keeps blocked (its sessions' locks until
//               PostgreSQL notices, its requests' leases until their TTL), then
//               starts it again --restart-after later
//   skew        --clock-skew D[:POD]: the pods after the first (or POD) start
//               with the skewed application clock (pod_settings)
//   PodFaults   the thread that strikes them in time order and lives until the
//               run ends (a restarted pod dies with the thread that forked it:
//               PR_SET_PDEATHSIG), and the result's `faults` block
//
// The `faults` block is the simulator's (sim/sim_world.cpp) in both worlds
// (docs/result.schema.json "faults"): crash_at_s, pause_at_s, pause_for_s,
// clock_skew_ms, recovery_ms, crashed_requests, keys_held_at_crash; the real
// world adds what its runner measured in `crash` and `pause` and the skewed pod.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "core/settings.hpp"

namespace lockbench::real {

class KvLeaseStore;

// What a fault needs of the run's pods (real/process_pods.cpp implements it).
class PodFleet {
 public:
  virtual ~PodFleet() = default;
  virtual std::string url_of(std::size_t pod) = 0;   // a restarted pod has a new address
  virtual std::vector<std::string> owners_in_flight(std::size_t pod) = 0;  // "req-N" of its requests on the wire
  virtual void signal(std::size_t pod, int sig) = 0;
  virtual void kill_and_reap(std::size_t pod) = 0;
  virtual void restart(std::size_t pod) = 0;  // throws with the reason
};

// The in-process pods cannot crash, pause or skew a pod: one line naming the
// setting (SettingError) instead of ignoring it.
void refuse_faults_in_threads(const Settings& s);
// Issue 32's settings that need the runner's own process pods (--pod-mode
// process, not --targets): probes with consequences (--readiness, --liveness:
// the runner plays kubelet and load balancer, real/kubelet.hpp) and partner
// fault windows (from_ms, until_ms: the runner resets the partner as the load
// starts). One line each naming the setting; `run_real` calls it.
void refuse_without_own_pods(const Settings& s);
// --targets are not ours to fault; a fault's :POD must exist (SettingError).
void check_fault_pods(const Settings& s);
// Pod `index` (0-based) runs with the skewed clock: every pod after the first
// (skew_pod 0, as in the simulator) or pod skew_pod.
bool skewed(const Settings& s, int index);
// The settings pod `index` is started with: the run's, its clock skew only if skewed().
Settings pod_settings(const Settings& s, int index);

// The run's end as the faults see it: a fault waits for its moment until then.
class FaultClock {
 public:
  explicit FaultClock(std::chrono::steady_clock::time_point epoch) : epoch_(epoch) {}
  Duration now() const { return std::chrono::steady_clock::now() - epoch_; }
  bool wait_until(Duration t);  // false when the run ended first
  bool ended();
  // A fault waits for its moment until the arrivals end (`arrivals_end`), or 0 once the run ended.
  Duration last_chance(Duration arrivals_end);
  void end();

 private:
  const std::chrono::steady_clock::time_point epoch_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool over_ = false;  // GUARDED_BY(mu_)
};

// What a fault works with.
struct FaultEnv {
  const Settings& s;   // scaled
  PodFleet& fleet;
  FaultClock& clock;
  std::string session_name;  // the runner's application_name for its measuring session
  std::int64_t run_key;
  KvLeaseStore* redis;  // redis-lease's or etcd-lease's store, or null
};

class PauseFault {
 public:
  explicit PauseFault(FaultEnv env) : e_(std::move(env)) {}
  void strike();  // on the fault thread
  // A request of `pod` answered ok at `end`: counted when another pod answered during the pause.
  void answered_ok(std::size_t pod, Duration end);
  nlohmann::json block() const;  // null before it struck; read after the fault thread is joined

 private:
  template <class F>
  void measure(F f);
  void open_session_and_settings();
  void freeze();
  void resume();
  void watch_until_freed();
  FaultEnv e_;
  nlohmann::json pause_ = nullptr;
  std::unique_ptr<pqxx::connection> db_;
  std::string pids_ = "{}", held_at_pause_ = "{}";
  std::int64_t held_locks_ = -1;
  Duration stopped_{}, continued_{};
  bool resumed_ = false;
  std::optional<Duration> freed_;
  std::atomic<std::int64_t> from_ns_{-1}, to_ns_{-1}, ok_elsewhere_{0};
  std::atomic<int> paused_{-1};
};

class CrashFault {
 public:
  explicit CrashFault(FaultEnv env) : e_(std::move(env)) {}
  void strike();  // on the fault thread
  nlohmann::json block() const { return crash_; }  // null before it struck

 private:
  void measure_what_stays_blocked(Duration killed, const std::vector<std::string>& owners);
  void restart_later(Duration killed);
  FaultEnv e_;
  nlohmann::json crash_ = nullptr;
  std::unique_ptr<pqxx::connection> db_;
  std::string pids_ = "{}";
  std::int64_t held_locks_ = -1;
};

// The run's faults: struck in time order on a thread of their own.
class PodFaults {
 public:
  explicit PodFaults(const FaultEnv& env);
  ~PodFaults() { end(); }
  void start();  // no thread when the run has no pause and no crash
  void end();    // the run is over (or stopped): no pod restarted from here on; joins
  void answered_ok(std::size_t pod, Duration end) {
    if (pause_) pause_->answered_ok(pod, end);
  }
  // The result's `faults` block (null when the run had none); after end().
  nlohmann::json block() const;

 private:
  const Settings& s_;
  FaultClock& clock_;
  std::optional<PauseFault> pause_;
  std::optional<CrashFault> crash_;
  std::thread thread_;
};

}  // namespace lockbench::real

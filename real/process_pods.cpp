// ProcessPodsRun: the real world with pods as HTTP services.
//
//   --pod-mode process   starts --pods `lockbench serve` children (real/pod_processes.hpp;
//                        each on a free port, flags from real/pod_protocol.hpp's pod_args)
//                        and waits for their readiness; real faults (real/faults.hpp)
//   --targets URL,...    drives services already running (no child started);
//                        their run number comes from GET /lockbench/info
//
// As the in-process pods: the database's rows for the run and the partner
// prepared once; the load spread round-robin over the pods as a load balancer
// would (open loop and burst: a pool of sender threads, so a late sender
// delays a send, never an intended start; closed loop: a thread per virtual
// user); readiness polled as the probe; the pods' background work told the
// load is over and waited for (POST /lockbench/requests-over, at most
// --outbox-drain-limit + 10 s); each pod's pool figures, lock counters and
// side effects read at the end (GET /lockbench/stats, effects summed).
//
// --shard I/N (with --targets; real/shard_marks.hpp): this runner sends the
// schedule's positions p with p % N == I (closed loop: those users). Shard 0
// alone seeds the rows and resets the partner, announces a wall-clock start
// once every runner has joined, and after every runner's `ended` mark tells the
// pods the requests are over and reads their figures, the rows and the checks;
// the others' results say the checks were read by shard 0 (partner
// unavailable, not an error). Each result has a `shard` block and offers its
// slice's share of the load; all share one run_id.
//
// Kubernetes (--readiness, --liveness; own process pods only): the runner
// plays kubelet and the load balancer (real/kubelet.hpp, the simulator's rules
// from core/kubelet.hpp): requests go to ready pods only, none ready = refused
// (503); a liveness kill is SIGKILL and a cold restart; the result gets the
// simulator's `pods` block. A partner fault window (from_ms, until_ms, scaled
// by --time-scale as every configured duration) starts with the load: the
// partner is reset and configured again just before the clock starts, and the
// result gets the simulator's `recovery` block (core/recovery.hpp), computed in
// configured units.
//
// A stop: no new request, the queued ones rejected, a grace period for those
// in flight, then the pods' figures read, the pods stopped and their sessions
// terminated (process mode), and what is still on the wire cut.
#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <httplib.h>

#include "base/redact.hpp"
#include "core/carriers.hpp"
#include "core/recovery.hpp"
#include "core/workload.hpp"
#include "fake_partner/model/config.hpp"
#include "real/faults.hpp"
#include "real/kubelet.hpp"
#include "real/leftovers.hpp"
#include "real/partner_http.hpp"
#include "real/pg_conn.hpp"
#include "real/pod_processes.hpp"
#include "real/pod_protocol.hpp"
#include "real/real_run.hpp"
#include "real/kv_lease_store.hpp"
#include "real/shard_marks.hpp"

namespace lockbench::real {

namespace {

using nlohmann::json;

// Every session the runner opens carries lockbench's application_name (real/leftovers.hpp).
const std::string& runner_run_id() {
  static const std::string id = new_run_id();
  return id;
}
const std::string& runner_session_name() {
  static const std::string name = application_name(runner_run_id(), "runner");
  return name;
}

// A fixed set of sender threads with an unbounded queue: a late sender delays a
// request's send, never its intended start, so latency stays honest.
class Senders {
 public:
  Senders(int n, std::function<void(const Request&)> send) : send_(std::move(send)) {
    for (int i = 0; i < n; ++i) threads_.emplace_back([this] { loop(); });
  }
  ~Senders() { finish(); }
  void push(const Request& r) {
    {
      std::lock_guard lock(mu_);
      queue_.push_back(r);
    }
    cv_.notify_one();
  }
  // Sends what is queued, then joins.
  void finish() {
    {
      std::lock_guard lock(mu_);
      closing_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }

 private:
  void loop() {
    for (;;) {
      Request r;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return closing_ || !queue_.empty(); });
        if (queue_.empty()) return;
        r = queue_.front();
        queue_.pop_front();
      }
      send_(r);
    }
  }
  std::function<void(const Request&)> send_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Request> queue_;  // GUARDED_BY(mu_)
  bool closing_ = false;       // GUARDED_BY(mu_)
  std::vector<std::thread> threads_;
};

std::vector<std::string> split_targets(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  std::string one;
  while (std::getline(in, one, ','))
    if (!one.empty()) out.push_back(one.back() == '/' ? one.substr(0, one.size() - 1) : one);
  return out;
}

// A queue's lag over several pods: quantiles from the merged histogram (a
// bucket's upper bound, within 1/8 of a power of two), the largest max.
void merge_lag(json& q, const std::map<std::pair<double, double>, std::int64_t>& buckets) {
  std::int64_t count = 0;
  json list = json::array();
  for (const auto& [bounds, c] : buckets) {
    count += c;
    list.push_back({bounds.first, bounds.second, c});
  }
  q["lag_histogram_ms"]["buckets"] = list;
  q["lag_histogram_ms"]["count"] = count;
  const double max = q["lag_ms"].value("max", 0.0);
  const auto quantile = [&](double f) {
    const auto want = static_cast<std::int64_t>(std::ceil(f * static_cast<double>(count)));
    std::int64_t seen = 0;
    for (const auto& [bounds, c] : buckets)
      if ((seen += c) >= want) return std::min(bounds.second, max);
    return max;
  };
  if (count > 0) q["lag_ms"]["p50"] = quantile(0.5), q["lag_ms"]["p99"] = quantile(0.99);
}

// Sums the pods' side effects (core/side_effects.hpp's json(), one per pod):
// counts add; a queue's lag keeps a single pod's exact quantiles, and over
// several pods takes them from the merged histogram (merge_lag).
json merge_effects(const std::vector<json>& pods) {
  json out = json::object();
  std::map<std::string, std::map<std::pair<double, double>, std::int64_t>> buckets;  // queue -> bucket -> count
  std::map<std::string, int> reporting;                                                // queue -> pods with it
  for (const auto& e : pods) {
    if (!e.is_object()) continue;
    for (auto it = e.begin(); it != e.end(); ++it) {
      const json& v = it.value();
      if (!v.is_object()) continue;
      json& into = out[it.key()];
      if (!into.is_object()) into = json::object();
      for (auto f = v.begin(); f != v.end(); ++f)
        if (f.value().is_number_integer()) into[f.key()] = into.value(f.key(), std::int64_t{0}) + f.value().get<std::int64_t>();
      if (!v.contains("lag_ms")) continue;  // db_faults, emails: counts only
      if (++reporting[it.key()] == 1) {
        into["lag_ms"] = v["lag_ms"];
        into["lag_histogram_ms"] = v.value("lag_histogram_ms", json::object());
      } else {
        into["lag_ms"]["max"] = std::max(into["lag_ms"].value("max", 0.0), v["lag_ms"].value("max", 0.0));
      }
      for (const auto& b : v.value("lag_histogram_ms", json::object()).value("buckets", json::array()))
        if (b.is_array() && b.size() == 3) buckets[it.key()][{b[0].get<double>(), b[1].get<double>()}] += b[2].get<std::int64_t>();
    }
  }
  for (const auto& [queue, n] : reporting)
    if (n >= 2) merge_lag(out[queue], buckets[queue]);
  return out;
}

// The requests of this runner's slice of the one schedule: position p with
// p % N == I, every request when unsharded. A stride over the time-ordered
// schedule gives each slice ⌊n/N⌋ or ⌈n/N⌉ requests spread over the whole run
// (as k6's striped execution segments do), and the union is the schedule.
std::vector<Request> slice_of(std::vector<Request> all, const Settings& s) {
  if (s.shard_count <= 1) return all;
  std::vector<Request> mine;
  for (auto p = static_cast<std::size_t>(s.shard_index); p < all.size(); p += static_cast<std::size_t>(s.shard_count))
    mine.push_back(all[p]);
  return mine;
}

// A database failure while the runners meet is a --db line like any other.
template <class F>
auto with_db_line(const Settings& s, F f) {
  try {
    return f();
  } catch (const SettingError&) {
    throw;
  } catch (const std::exception& e) {
    throw SettingError("--db: the runners cannot meet at " + redact_secrets(s.db_url) + ": " + one_line(e.what()));
  }
}

// Every runner at the agreed start (Unix ms): shard 0 announces it once the
// others have joined, the others wait for it; then all sleep until it.
std::int64_t meet_the_other_runners(const ShardMarks& marks, const Settings& s, const RunHooks& hooks) {
  const std::int64_t start = with_db_line(s, [&] {
    return s.shard_index == 0 ? marks.announce(s.shard_wait, hooks.should_stop)
                              : marks.await_start(s.shard_wait, hooks.should_stop);
  });
  sleep_until_unix_ms(start, hooks.should_stop);
  return start;
}

// A runner's load is over: shard k says so; shard 0 waits for them all (the
// shards still running after --shard-wait are named, on stderr and in the result).
std::vector<int> end_of_slice(const ShardMarks& marks, const Settings& s, std::int64_t start, const RunHooks& hooks) {
  return with_db_line(s, [&] {
    if (s.shard_index != 0) {
      marks.ended(start);
      return std::vector<int>{};
    }
    const std::vector<int> missing = marks.await_ended(start, s.shard_wait, hooks.should_stop);
    if (!missing.empty())
      std::fprintf(stderr, "lockbench: --shard 0/%d: %zu shard(s) had not ended after %s; the partner's checks are "
                   "read without them (merge refuses this run)\n", s.shard_count, missing.size(),
                   format_duration(s.shard_wait).c_str());
    return missing;
  });
}

// The result block that says which slice a runner held and how it met the others.
json shard_block(const Settings& s, std::int64_t run, std::int64_t start, const std::vector<int>& not_ended) {
  return {{"index", s.shard_index},  {"count", s.shard_count}, {"slice", std::to_string(s.shard_index) + "/" + std::to_string(s.shard_count)},
          {"run", run},              {"start_unix_ms", start},  {"partner_read", s.shard_index == 0},
          {"not_ended", not_ended}};
}

// The pods' pool figures, summed.
void add_pool(PoolStats& out, const json& p) {
  out.size += p.value("size", 0);
  out.active_max += p.value("active_max", 0);
  out.pending_max += p.value("pending_max", 0);
  out.busy_conn_s += p.value("busy_conn_s", 0.0);
  out.pending_s += p.value("pending_s", 0.0);
  out.probe_borrows += p.value("probe_borrows", std::int64_t{0});
  for (double v : p.value("wait_ms", std::vector<double>{})) out.wait_ms.add(v);
  for (double v : p.value("hold_ms", std::vector<double>{})) out.hold_ms.add(v);
  out.timeouts += p.value("timeouts", std::int64_t{0});
  out.leaks += p.value("leaks", std::int64_t{0});
  for (const auto& step_name : p.value("leak_steps", std::vector<std::string>{}))
    if (out.leak_steps.size() < 20) out.leak_steps.push_back(step_name);
}

// The pods' lock counters, summed.
void add_locks(LockCounters& out, const json& l) {
  out.acquired += l.value("acquired", std::int64_t{0});
  out.denied += l.value("denied", std::int64_t{0});
  out.lease_steals += l.value("lease_steals", std::int64_t{0});
  out.version_conflicts += l.value("version_conflicts", std::int64_t{0});
  out.unlock_failures += l.value("unlock_failures", std::int64_t{0});
  out.nothing_locked += l.value("nothing_locked", std::int64_t{0});
  out.lease_lost += l.value("lease_lost", std::int64_t{0});
  out.renewals += l.value("renewals", std::int64_t{0});
  out.renewal_failures += l.value("renewal_failures", std::int64_t{0});
}

// The partner faults' window in configured units, as the simulator's partner reads it.
std::optional<partner::Config::Window> configured_window(const Settings& s) {
  if (s.partner_faults.is_null() || s.partner_faults.empty()) return std::nullopt;
  return partner::Config::from_json({{"faults", s.partner_faults}}).fault_window();
}

class ProcessPodsRun final : public RealRun, public PodFleet {
 public:
  ProcessPodsRun(const Settings& configured, const RunHooks& hooks)
      : RealRun(configured, hooks),
        external_(!s_.targets.empty()),
        sharded_(s_.shard_count > 1),
        leader_(s_.shard_index == 0) {}
  ~ProcessPodsRun() override;

  // PodFleet: what the faults do to the pods.
  std::string url_of(std::size_t i) override {
    std::lock_guard lock(urls_mu_);
    return urls_[i];
  }
  std::vector<std::string> owners_in_flight(std::size_t i) override;
  void signal(std::size_t i, int sig) override { children_.signal(pid_of(i), sig); }
  void kill_and_reap(std::size_t i) override;
  void restart(std::size_t i) override;

 private:
  void prepare() override;
  void start_background() override;
  void dispatch() override;
  void drain() override;
  json finish() override;

  pid_t pid_of(std::size_t i) {
    std::lock_guard lock(urls_mu_);
    return pod_pids_[i];
  }
  void read_targets();
  void prepare_rows();
  void prepare_partner();
  void start_pods();
  void await_readiness();
  void start_faults();
  void dispatch_users();
  void dispatch_schedule();
  Outcome send(const Request& r);  // the request's outcome (rejected: the user backs off)
  json recovery_block() const;
  Outcome record_answer(const Request& r, std::size_t pod, const httplib::Result& res);
  void watch_for_stop();
  void stop_pods_after_grace();
  std::vector<std::optional<json>> read_stats();
  void end_background_work();
  json absorb_pod_stats(PoolStats& pool, std::vector<int>& backend_pids, std::vector<json>& effects);
  std::vector<StoredRow> read_rows_and_leaks(const std::vector<int>& backend_pids);
  json read_partner(const std::vector<StoredRow>& stored);
  json result(RunSummary& summary);

  const bool external_, sharded_, leader_;
  std::vector<std::string> urls_;  // GUARDED_BY(urls_mu_) once the run starts: a restarted pod gets a new address
  std::vector<pid_t> pod_pids_;    // GUARDED_BY(urls_mu_)
  std::mutex urls_mu_;
  std::size_t n_pods_ = 0;
  std::int64_t run_key_ = 0;
  bool have_rows_ = true;
  std::int64_t start_ms_ = 0;
  // Declared before anything that ends the run: destroyed after its rows are dropped.
  std::optional<RunRecord> record_;
  Reclaimed reclaimed_;
  std::optional<ShardMarks> marks_;
  std::unique_ptr<KvLeaseStore> redis_;
  std::optional<DropRunKeysAtExit> redis_keys_;
  std::optional<PartnerHttp> partner_;
  PodProcesses children_;  // every child killed and reaped on every way out
  std::mutex flight_mu_;
  std::vector<std::set<std::uint64_t>> in_flight_;  // GUARDED_BY(flight_mu_): the crash names what the killed pod held
  std::optional<FaultClock> fault_clock_;
  std::optional<PodFaults> faults_;
  // --readiness, --liveness: declared after children_, so destroyed (its threads joined) first.
  std::optional<Kubelet> kubelet_;
  std::optional<partner::Config::Window> fault_window_;  // configured units: the recovery block
  Duration request_timeout_{};
  // Clients with a request on the wire: a stop past its grace period shuts their sockets.
  std::mutex clients_mu_;
  std::set<httplib::Client*> clients_;  // GUARDED_BY(clients_mu_)
  bool clients_aborted_ = false;        // GUARDED_BY(clients_mu_)
  std::atomic<std::int64_t> sending_{0};
  std::int64_t planned_ = 0, planned_sent_ = 0;  // the open loop's and the burst's schedule, and how much was dispatched
  std::atomic<bool> load_over_{false};
  std::optional<std::vector<std::optional<json>>> stats_at_stop_;  // written by the watch, read after its join
  std::int64_t terminated_ = 0;                                     // likewise
  CarrierStats carriers_;  // --virtual-threads: the pods' carrier figures, read with their stats at the end
  std::thread stop_watch_;
  std::vector<int> not_ended_;
};

ProcessPodsRun::~ProcessPodsRun() {
  load_over_ = true;
  if (stop_watch_.joinable()) stop_watch_.join();
  stop_tickers();
  if (kubelet_) kubelet_->end();
  if (faults_) faults_->end();
}

// ---- prepare: who serves, on which run's rows; the rows, the partner, the pods

void ProcessPodsRun::prepare() {
  if (external_) read_targets();
  else run_key_ = new_run_key();
  // Sharded (--shard I/N, only with --targets): shard 0 alone prepares the run
  // (old marks, rows, partner) and reads its checks at the end; the others only send.
  if (sharded_) marks_.emplace(s_.db_url, runner_session_name(), run_key_, s_.shard_index, s_.shard_count);
  if (sharded_ && leader_) with_db_line(s_, [&] { marks_->clear(); });
  if (have_rows_ && leader_) prepare_rows();
  // redis-lease: the pods share the run's keys in Redis ("lockbench:<run>:…"); the
  // runner counts those still held at the end and deletes them, whatever the way
  // out, unless the services are --targets (their run stays theirs).
  if (info_.props.needs_lease_store && !external_)
    redis_ = open_kv_lease_store(s_, info_.props, std::to_string(run_key_), std::chrono::seconds(2));
  redis_keys_.emplace(redis_.get());
  prepare_partner();
  if (!external_) fault_window_ = configured_window(configured_);
  if (fault_window_) recorder_.keep_requests();  // the recovery block reads them
  if (!external_) start_pods();
  await_readiness();
  n_pods_ = urls_.size();
  in_flight_.resize(n_pods_);
  if (sharded_) start_ms_ = meet_the_other_runners(*marks_, s_, hooks_);
}

// The targets must serve this scenario and strategy, on one run's rows (a
// service of the user's own, without GET /lockbench/info, has none).
void ProcessPodsRun::read_targets() {
  const Duration wait = std::chrono::seconds(2);
  urls_ = split_targets(s_.targets);
  std::optional<std::int64_t> agreed;
  for (const auto& u : urls_) {
    const auto info = get_json(u, kPathInfo, wait);
    if (!info) {
      if (!ready(u, wait)) throw SettingError("--targets: " + u + " does not answer GET /health/readiness with 200");
      continue;
    }
    if (info->value("scenario", s_.scenario) != s_.scenario)
      throw SettingError("--targets: " + u + " serves scenario " + info->value("scenario", std::string()) +
                         ", not --scenario " + s_.scenario);
    if (info->value("strategy", std::string(info_.spec)) != info_.spec)
      throw SettingError("--targets: " + u + " runs strategy " + info->value("strategy", std::string()) +
                         ", not --strategy " + std::string(info_.spec));
    const auto r = info->value("run", std::int64_t{0});
    if (agreed && *agreed != r)
      throw SettingError("--targets: the services use different runs (--run-id); start them with the same one");
    agreed = r;
  }
  have_rows_ = agreed.has_value();
  run_key_ = agreed.value_or(0);
}

// Seeds this run's rows. Unlike the in-process runner it terminates no session:
// the pods' connections are the only ones using the run, and its advisory keys
// are salted with the run number. Runs of runners proven gone are reclaimed
// first; the record (process mode) is made before the rows exist, so a killed
// runner's rows are always reclaimable.
void ProcessPodsRun::prepare_rows() {
  try {
    auto c = open_session(s_.db_url, runner_session_name());
    try {
      create_schema(*c);
    } catch (const SchemaNotOurs& e) {
      throw SettingError("--db: " + std::string(e.what()));
    }
    reclaimed_ = reclaim_dead_runs(*c);
    report_reclaimed(reclaimed_, redact_secrets(s_.db_url));
    if (!external_) {
      record_.emplace(s_.db_url, run_key_, runner_run_id());
      watch_record(&*record_);
    }
    seed_rows(*c, run_key_, scenario_->tables(), s_.keys);
  } catch (const SettingError&) {
    throw;
  } catch (const std::exception& e) {
    throw SettingError("--db: cannot prepare lockbench's rows at " + redact_secrets(s_.db_url) + ": " + one_line(e.what()));
  }
}

void ProcessPodsRun::prepare_partner() {
  partner_.emplace(s_.partner_url, s_.partner_connect_timeout, s_.partner_read_timeout);
  if (!leader_) return;
  partner_->set_run(partner_run_name(runner_run_id()), s_.force_partner_reset);  // another live run's partner: refused
  try {
    partner_->reset(scenario_->partner_reset(s_));
    partner_->configure(partner_config(s_));
  } catch (const std::exception& e) {
    throw SettingError("--partner: cannot use " + redact_secrets(s_.partner_url) + ": " + one_line(e.what()));
  }
}

void ProcessPodsRun::start_pods() {
  for (int p = 0; p < s_.pods; ++p) {
    const Child c = children_.start(pod_args(pod_settings(s_, p), run_key_, p), pod_env(s_), std::chrono::seconds(15));
    urls_.push_back(c.url);
    pod_pids_.push_back(c.pid);
  }
}

// Readiness: every pod answers 200 before the load starts.
void ProcessPodsRun::await_readiness() {
  const auto deadline = Clock::now() + std::chrono::seconds(15);
  for (const auto& u : urls_)
    while (!ready(u, std::chrono::seconds(2))) {
      if (Clock::now() >= deadline) throw SettingError("--pods: " + u + " never became ready (/health/readiness)");
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

// ---- PodFleet

std::vector<std::string> ProcessPodsRun::owners_in_flight(std::size_t i) {
  std::vector<std::string> owners;
  std::lock_guard lock(flight_mu_);
  for (auto id : in_flight_[i]) owners.push_back("req-" + std::to_string(id));
  return owners;
}

void ProcessPodsRun::kill_and_reap(std::size_t i) {
  const pid_t pid = pid_of(i);
  children_.signal(pid, SIGKILL);
  children_.reap(pid);
}

void ProcessPodsRun::restart(std::size_t i) {
  const int index = static_cast<int>(i);
  const Child c = children_.start(pod_args(pod_settings(s_, index), run_key_, index), pod_env(s_), std::chrono::seconds(15));
  std::lock_guard lock(urls_mu_);
  urls_[i] = c.url;
  pod_pids_[i] = c.pid;
}

// ---- background: pool samples from every pod, the readiness probe, the faults, the stop

void ProcessPodsRun::start_background() {
  if (fault_window_) {  // the partner measures its windows from its reset: reset it as the load starts
    try {
      partner_->reset(scenario_->partner_reset(s_));
      partner_->configure(partner_config(s_));
    } catch (const std::exception& e) {
      throw SettingError("--partner: cannot use " + redact_secrets(s_.partner_url) + ": " + one_line(e.what()));
    }
  }
  start_clock();
  start_sampler(std::chrono::milliseconds(100), [this] {
    PoolSample total{now(), 0, 0, 0};
    for (std::size_t i = 0; i < n_pods_; ++i)
      if (const auto j = get_json(url_of(i), kPathPool, std::chrono::milliseconds(300))) {
        total.active += j->value("active", 0);
        total.pending += j->value("pending", 0);
        total.idle += j->value("idle", 0);
      }
    return total;
  });
  if (!s_.readiness.on)  // else kubelet's readiness probes are the run's probe{total, failed}
    start_prober(n_pods_, [this](std::size_t i) { return ready(url_of(i), s_.probe_timeout + std::chrono::milliseconds(500)); });
  start_faults();
  if (s_.readiness.on || s_.liveness.on) {
    kubelet_.emplace(s_, configured_.time_scale, *this, epoch(), n_pods_);
    kubelet_->start();
  }
  request_timeout_ = std::chrono::seconds(60) + s_.connection_timeout + s_.lock_timeout + s_.lease_ttl +
                     s_.partner_max_attempts * (s_.partner_read_timeout + s_.partner_connect_timeout + s_.retry_backoff_cap);
  stop_watch_ = std::thread([this] { watch_for_stop(); });
}

// The thread that forked a restarted pod lives until the run ends (PodFaults).
void ProcessPodsRun::start_faults() {
  fault_clock_.emplace(epoch());
  faults_.emplace(FaultEnv{s_, *this, *fault_clock_, runner_session_name(), run_key_, redis_.get()});
  faults_->start();
}

// A stop: no new request; those in flight get a grace period, then (process
// mode) the pods are stopped and the run's sessions ended, and what is still on
// the wire is cut. The pods' figures are read before they go.
void ProcessPodsRun::watch_for_stop() {
  while (!load_over_.load() && !stop_requested()) std::this_thread::sleep_for(kSampleEvery);
  if (!stopping()) return;
  std::fprintf(stderr, "lockbench: interrupted: no new requests; letting %lld in flight finish\n",
               static_cast<long long>(sending_.load()));
  for (const auto until = Clock::now() + grace(); sending_.load() > 0 && Clock::now() < until;)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (sending_.load() == 0) return;
  stop_pods_after_grace();
}

void ProcessPodsRun::stop_pods_after_grace() {
  faults_->end();  // no pod restarted from here on
  if (kubelet_) kubelet_->stop_probing();
  stats_at_stop_ = read_stats();
  if (!external_) {
    children_.kill_all();  // SIGCONT + SIGTERM, then SIGKILL after 3 s: their sockets close
    try {
      auto c = open_session(s_.db_url, runner_session_name());
      terminated_ = terminate_run_backends(*c, "serve-" + std::to_string(run_key_));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "lockbench: could not end this run's sessions: %s\n", one_line(e.what()).c_str());
    }
  }
  std::lock_guard lock(clients_mu_);
  clients_aborted_ = true;
  for (auto* c : clients_) c->stop();
}

// ---- dispatch: open loop at each intended start, a burst at t = 0, or
// closed-loop virtual users (one thread each: send, wait for the answer, think)

void ProcessPodsRun::dispatch() {
  if (s_.arrival == Arrival::closed) dispatch_users();
  else dispatch_schedule();
}

void ProcessPodsRun::dispatch_users() {
  Workload workload(s_, scenario_->fresh_key_per_request());
  std::mutex workload_mu;  // guards workload: the users share it
  std::vector<std::thread> users;
  for (int u = s_.shard_index; u < s_.users; u += s_.shard_count)  // this runner's virtual users
    users.emplace_back([&, u] {
      Duration at = Duration::zero();
      while (at < s_.duration) {
        if (!sleep_until_or_stop(at)) break;
        Request r;
        {
          std::lock_guard lock(workload_mu);
          r = workload.next_for_user(u, at);
        }
        const bool rejected = send(r) == Outcome::rejected;
        std::lock_guard lock(workload_mu);
        at = now() + workload.think_after(u, rejected);
      }
    });
  for (auto& t : users) t.join();
}

void ProcessPodsRun::dispatch_schedule() {
  Workload workload(s_, scenario_->fresh_key_per_request());
  const std::vector<Request> schedule = slice_of(workload.schedule(), s_);
  planned_ = static_cast<std::int64_t>(schedule.size());
  const std::int64_t per_pod_capacity = static_cast<std::int64_t>(s_.max_threads) + s_.accept_count + 8;
  const int n_senders = static_cast<int>(std::clamp<std::int64_t>(
      std::min<std::int64_t>(per_pod_capacity * static_cast<std::int64_t>(n_pods_), planned_), 1, 1024));
  Senders senders(n_senders, [this](const Request& r) { send(r); });
  for (const Request& r : schedule) {
    if (s_.arrival == Arrival::open ? !sleep_until_or_stop(r.intended) : stop_requested()) break;
    senders.push(r);
    ++planned_sent_;
  }
  senders.finish();
}

// One request over HTTP to its pod (round-robin by id).
Outcome ProcessPodsRun::send(const Request& r) {
  if (stopping()) {  // a stop: what is still queued is not sent (a draining load balancer answers 503)
    reject(r, "rejected: interrupted before it started");
    return Outcome::rejected;
  }
  std::size_t pod = r.id % n_pods_;
  Kubelet::Route routed;
  if (kubelet_) {  // the load balancer over ready pods
    routed = kubelet_->route(r.id);
    if (routed.pod < 0) {
      reject(r, routed.refused);
      return Outcome::rejected;
    }
    pod = static_cast<std::size_t>(routed.pod);
  }
  {
    std::lock_guard lock(flight_mu_);
    in_flight_[pod].insert(r.id);
  }
  httplib::Client c(url_of(pod));
  c.set_connection_timeout(std::chrono::seconds(2));
  c.set_read_timeout(request_timeout_);
  c.set_write_timeout(request_timeout_);
  const httplib::Headers headers = {{kHeaderRequestId, std::to_string(r.id)}, {kHeaderChoice, std::to_string(r.choice)}};
  httplib::Result res{nullptr, httplib::Error::Canceled};
  bool on_wire = false;
  {
    std::lock_guard lock(clients_mu_);
    if (!clients_aborted_) on_wire = clients_.insert(&c).second;
  }
  if (on_wire) {
    ++sending_;
    res = c.Post(op_path(s_.scenario, r.key), headers, "", "text/plain");
    std::lock_guard lock(clients_mu_);
    clients_.erase(&c);
    --sending_;
  }
  {
    std::lock_guard lock(flight_mu_);
    in_flight_[pod].erase(r.id);
  }
  if (kubelet_ && !res) kubelet_->no_answer(routed);
  return record_answer(r, pod, res);
}

Outcome ProcessPodsRun::record_answer(const Request& r, std::size_t pod, const httplib::Result& res) {
  const Duration end = now();
  const Duration total = end - r.intended;
  Outcome o = Outcome::error;
  TimeSplit split{total};
  if (res) {
    o = outcome_of_status(res->status);
    if (res->has_header(kHeaderSplit)) split = parse_split(res->get_header_value(kHeaderSplit), total);
  }
  const std::string who = "pod " + std::to_string(pod + 1) + " ";
  recorder_.trace({r.id, "http", r.intended, end, -1, res ? who + std::to_string(res->status) : who + httplib::to_string(res.error())});
  recorder_.finish(r.id, o, r.intended, end, split);
  finished(o);
  if (o == Outcome::ok) faults_->answered_ok(pod, end);
  return o;
}

// ---- drain: the load's end; the strategy's background work told that the
// requests are over, then waited for (each ends by itself once nothing is due,
// or at its drain limit)

void ProcessPodsRun::drain() {
  // Every request answered: no probe, kill or restart from here on (the simulator's kubelet stops there too).
  if (kubelet_) kubelet_->stop_probing();
  load_over_ = true;
  if (stop_watch_.joinable()) stop_watch_.join();
  stop_tickers();
  if (sharded_) not_ended_ = end_of_slice(*marks_, s_, start_ms_, hooks_);
  if (!stopping() && leader_ && strategy_->background_workers(s_) > 0) end_background_work();
}

void ProcessPodsRun::end_background_work() {
  httplib::Headers control;  // the pods' --control-token, when they were given one (serve.hpp)
  if (const char* token = std::getenv(kControlTokenEnv); token != nullptr && *token != '\0')
    control.emplace("Authorization", std::string("Bearer ") + token);
  std::vector<std::string> refused;
  for (std::size_t i = 0; i < n_pods_; ++i) {
    httplib::Client c(url_of(i));
    c.set_connection_timeout(std::chrono::seconds(2));
    c.set_read_timeout(std::chrono::seconds(10));
    c.set_write_timeout(std::chrono::seconds(10));
    const auto res = c.Post(kPathRequestsOver, control, "", "text/plain");
    // A pod that refuses (403: another token, or not a loopback peer) would keep its pollers until its drain
    // limit, and the run would wait for them: an error, not a silent wait. A pod gone (killed) is not asked.
    if (res && res->status != 200)
      refused.push_back(url_of(i) + " answered " + std::to_string(res->status) + " (" + one_line(res->body) + ")");
  }
  if (!refused.empty()) {
    std::string all;
    for (const auto& r : refused) all += (all.empty() ? "" : "; ") + r;
    throw SettingError("--targets: POST " + std::string(kPathRequestsOver) + " refused: " + all +
                       ". Give the runner the pods' control token in " + kControlTokenEnv +
                       " (or run it on their host)");
  }
  const auto until = Clock::now() + s_.outbox_drain_limit + std::chrono::seconds(10);
  for (std::size_t i = 0; i < n_pods_; ++i)
    while (Clock::now() < until && !stop_requested()) {
      const auto st = get_json(url_of(i), kPathStats, std::chrono::seconds(2));
      if (!st || st->value("background_running", 0) == 0) break;
      std::this_thread::sleep_for(kSampleEvery);
    }
}

// ---- finish: each pod's figures, leaked locks, the service's rows, the oracle

std::vector<std::optional<json>> ProcessPodsRun::read_stats() {
  std::vector<std::optional<json>> out;
  for (std::size_t i = 0; i < n_pods_; ++i) out.push_back(get_json(url_of(i), kPathStats, std::chrono::seconds(10)));
  return out;
}

// The pods' figures into the run's: pools, lock counters, backends, side effects; per pod its outcomes.
json ProcessPodsRun::absorb_pod_stats(PoolStats& pool, std::vector<int>& backend_pids, std::vector<json>& effects) {
  json per_pod = json::array();
  std::int64_t replaced = 0;
  const std::vector<std::optional<json>> stats = stats_at_stop_ ? *stats_at_stop_ : read_stats();
  for (std::size_t i = 0; i < n_pods_; ++i) {
    const auto& st = stats[i];
    if (!st) {
      if (kubelet_) pool.size += s_.maximum_pool_size;  // killed by its liveness probe, not started again: its pool as set
      per_pod.push_back({{"url", url_of(i)}, {"stats", nullptr}});
      continue;
    }
    if (st->contains("pool")) add_pool(pool, (*st)["pool"]);
    if (st->contains("locks")) add_locks(recorder_.locks, (*st)["locks"]);
    for (int pid : st->value("backend_pids", std::vector<int>{})) backend_pids.push_back(pid);
    replaced += st->value("connections_replaced", std::int64_t{0});
    if (st->contains("effects")) effects.push_back((*st)["effects"]);
    if (const auto vt = st->find("virtual_threads"); vt != st->end() && vt->is_object()) carriers_.add(carrier_stats_of(*vt));
    per_pod.push_back({{"url", url_of(i)}, {"outcomes", st->value("outcomes", json::object())}});
  }
  return {{"per_pod", per_pod}, {"connections_replaced", replaced}};
}

// One session: the advisory locks the pods' backends still hold, then the
// service's rows (shard 0), dropped unless the targets' run stays theirs.
std::vector<StoredRow> ProcessPodsRun::read_rows_and_leaks(const std::vector<int>& backend_pids) {
  std::vector<StoredRow> stored;
  std::unique_ptr<pqxx::connection> c;
  try {
    c = open_session(s_.db_url, runner_session_name());
    recorder_.locks.leaked = advisory_locks_held_by(*c, backend_pids);
    if (redis_) recorder_.locks.leaked += redis_->held();  // Redis leases never released (their TTL not passed yet)
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lockbench: could not count leaked advisory locks: %s\n", one_line(e.what()).c_str());
  }
  if (!have_rows_ || !leader_) return stored;
  try {
    if (!c) c = open_session(s_.db_url, runner_session_name());
    stored = stored_rows(*c, run_key_, scenario_->tables());
    if (!external_) drop_rows(*c, run_key_);  // the targets' run stays theirs
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lockbench: could not read the service's rows: %s\n", one_line(e.what()).c_str());
  }
  return stored;
}

json ProcessPodsRun::read_partner(const std::vector<StoredRow>& stored) {
  if (!leader_)
    return partner_unavailable("read once, by shard 0 of " + std::to_string(s_.shard_count) +
                               ", after every runner ended (lockbench merge takes them from its result)");
  return partner_result(*partner_, have_rows_ ? std::optional<json>(scenario_->service_view(stored)) : std::nullopt);
}

json ProcessPodsRun::finish() {
  PoolStats pool;
  std::vector<int> backend_pids;
  std::vector<json> effects;
  const json pods = absorb_pod_stats(pool, backend_pids, effects);
  const std::vector<StoredRow> stored = read_rows_and_leaks(backend_pids);
  faults_->end();
  json pods_block = nullptr;
  if (kubelet_) {
    pods_block = kubelet_->block();
    if (s_.readiness.on) set_probe_counts(kubelet_->readiness_counts());
    kubelet_->end();  // the pods it restarted die with its threads
  }
  children_.kill_all();
  const json partner = read_partner(stored);
  if (sharded_ && leader_) with_db_line(s_, [&] { marks_->clear(); });
  RunSummary summary = RealRun::summary(pool, partner);
  summary.postgresql_version = postgresql_version(s_.db_url, runner_session_name());
  json pids = json::array();
  for (pid_t p : pod_pids_) pids.push_back(static_cast<long>(p));
  summary.extra["real"] = {{"pods", n_pods_},
                           {"pod_mode", external_ ? "targets" : "process"},
                           {"connections_replaced", pods["connections_replaced"]},
                           {"pod_pids", pids},
                           {"per_pod", pods["per_pod"]},
                           {"database_check", have_rows_},
                           {"requests_not_sent", planned_ - planned_sent_},
                           {"backends_terminated", terminated_}};
  if (!effects.empty()) {
    // The pods' side effects (outbox, reconcile, emails, db_faults), summed: make_result's come from the runner's recorder, which has none.
    const json merged = merge_effects(effects);
    for (auto it = merged.begin(); it != merged.end(); ++it) summary.extra[it.key()] = it.value();
  }
  if (const json f = faults_->block(); !f.is_null()) summary.extra["faults"] = f;
  if (!pods_block.is_null()) summary.extra["pods"] = pods_block;
  if (s_.virtual_threads) {
    json vt = carriers_block(pins_carriers(s_, info_.props), s_.carriers, carriers_);
    // A pod killed by its liveness probe took its figures with it: these are the pods alive at the end.
    if (const auto restarts = pods_block.is_null() ? 0 : pods_block.value("restarts", std::int64_t{0}); restarts > 0 && vt["pinning"] == true)
      vt["killed_pods_not_counted"] = restarts;
    summary.extra["virtual_threads"] = vt;
  }
  if (fault_window_) summary.extra["recovery"] = recovery_block();
  if (!external_) summary.extra["reclaimed_at_start"] = reclaimed_json(reclaimed_);
  return result(summary);
}

// Recovery in configured units: the requests' times divided by --time-scale, so
// that its 30 s windows are the simulator's (core/recovery.hpp).
json ProcessPodsRun::recovery_block() const {
  const double f = configured_.time_scale;
  const auto unscale = [f](Duration d) { return Duration(static_cast<Duration::rep>(static_cast<double>(d.count()) / f)); };
  std::vector<Recorder::Finished> requests = recorder_.finished_requests();
  for (auto& r : requests) {
    r.intended = unscale(r.intended);
    r.latency = unscale(r.latency);
  }
  json j = recovery_json(requests, fault_window_->from, fault_window_->until, configured_.duration);
  j["units"] = "configured (measured times divided by --time-scale)";
  return j;
}

json ProcessPodsRun::result(RunSummary& summary) {
  if (!sharded_) return make_result(summary);
  // The N runners share one run id; each result offers its slice's share of the load.
  summary.run_id = "targets-" + std::to_string(run_key_) + "-" + std::to_string(start_ms_);
  summary.extra["shard"] = shard_block(s_, run_key_, start_ms_, not_ended_);
  json out = make_result(summary);
  out["offered_per_s"] = out["offered_per_s"].get<double>() / s_.shard_count;
  return out;
}

}  // namespace

std::unique_ptr<RealRun> make_process_pods_run(const Settings& configured, const RunHooks& hooks) {
  return std::make_unique<ProcessPodsRun>(configured, hooks);
}

}  // namespace lockbench::real

// ThreadPodsRun: the real world with its pods inside this process (--pod-mode
// thread): per pod a HikariCP-style pool, Tomcat-style workers and a RealWorld.
//
//   prepare   schema; leftovers of earlier runs counted and reported (advisory
//             locks held by other lockbench sessions, leases left set); runs of
//             runners proven gone reclaimed; PostgreSQL's connection budget;
//             the partner reset and configured; --pgbouncer MODE starts a
//             PgBouncer child in front of --db for the pools (lockbench's own
//             sessions keep going to --db), or --db is found to be a pooler
//             (then statements go unnamed and leaked session locks are counted
//             by their keys); the run's record, then its rows. Every session is
//             named lockbench/<run-id>/<part>: nothing outside this run is ever
//             terminated.
//   run       a dispatcher releases each request at its intended start, all at
//             one instant (burst: per pod, as many as it has workers wait on
//             one latch), or per virtual user (closed loop)
//   stop      no new requests; queued ones rejected; in-flight ones get a grace
//             period, then the pools close and this run's own backends are
//             terminated; what is left is bounded by the partner's timeouts
//   finish    leaked = session advisory locks still held by the pools' backends
//             + leases never released (then cleared); the rows, the partner's
//             checks; the rows and the record removed on every way out.
#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <latch>
#include <queue>
#include <thread>

#include "core/context.hpp"
#include "base/redact.hpp"
#include "core/workload.hpp"
#include "real/leftovers.hpp"
#include "real/partner_http.hpp"
#include "real/pg_limits.hpp"
#include "real/pgbouncer.hpp"
#include "real/pool.hpp"
#include "real/real_run.hpp"
#include "real/real_world.hpp"
#include "real/kv_lease_store.hpp"
#include "real/carriers.hpp"
#include "real/workers.hpp"

namespace lockbench::real {

namespace {

// Deletes the run's rows from lockbench.rows when the run ends, also when it
// ends by an exception: a real run leaves nothing behind in the database.
struct RunRows {
  RunRows(std::string u, std::int64_t r, std::string name) : url(std::move(u)), run(r), application_name(std::move(name)) {}
  RunRows(const RunRows&) = delete;
  RunRows& operator=(const RunRows&) = delete;
  std::string url;
  std::int64_t run;
  std::string application_name;
  ~RunRows() {
    try {
      auto c = open_session(url, application_name);
      drop_rows(*c, run);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "lockbench: could not remove this run's rows (run %lld) from lockbench.rows: %s\n",
                   static_cast<long long>(run), one_line(e.what()).c_str());
    }
  }
};

// Counts requests finished, for the drain.
class Completion {
 public:
  void submitted() {
    std::lock_guard lock(mu_);
    ++submitted_;
  }
  void finished() {
    {
      std::lock_guard lock(mu_);
      ++finished_;
    }
    cv_.notify_all();
  }
  // true when every submitted request finished by `deadline`.
  bool wait_until(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(mu_);
    return cv_.wait_until(lock, deadline, [&] { return finished_ >= submitted_; });
  }
  std::int64_t submitted_count() {
    std::lock_guard lock(mu_);
    return submitted_;
  }
  std::int64_t in_flight() {
    std::lock_guard lock(mu_);
    return submitted_ - finished_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::int64_t submitted_ = 0;  // GUARDED_BY(mu_)
  std::int64_t finished_ = 0;   // GUARDED_BY(mu_)
};

PoolStats merge(const std::vector<std::unique_ptr<Pool>>& pools) {
  PoolStats out;
  for (const auto& p : pools) {
    const PoolStats s = p->stats();
    out.size += s.size;
    out.active_max += s.active_max;
    out.pending_max += s.pending_max;
    out.busy_conn_s += s.busy_conn_s;
    out.pending_s += s.pending_s;
    out.probe_borrows += s.probe_borrows;
    out.wait_ms.merge(s.wait_ms);
    out.hold_ms.merge(s.hold_ms);
    out.timeouts += s.timeouts;
    out.leaks += s.leaks;
    for (const auto& step : s.leak_steps)
      if (out.leak_steps.size() < 20) out.leak_steps.push_back(step);
  }
  return out;
}

class ThreadPodsRun final : public RealRun {
 public:
  ThreadPodsRun(const Settings& configured, const RunHooks& hooks)
      : RealRun(configured, hooks), run_id_(new_run_id()), run_key_(new_run_key()) {}
  ~ThreadPodsRun() override;

 private:
  void prepare() override;
  void start_background() override;
  void dispatch() override;
  void drain() override;
  nlohmann::json finish() override;

  std::string session(const char* part) const { return application_name(run_id_, part); }
  std::string db_line(const std::string& what, const std::exception& e) const {
    return "--db: " + what + " " + redact_secrets(s_.db_url) + ": " + one_line(e.what());
  }
  void prepare_database(pqxx::connection& c);
  void prepare_partner();
  void find_pooler(pqxx::connection& c);
  void record_and_seed(pqxx::connection& c);
  void open_pods();
  void start_strategy_background();
  void dispatch_open();
  void dispatch_burst();
  void dispatch_closed();
  void submit(const Request& r, std::latch* gate, std::function<void(bool rejected)> done);
  void serve_one(const Request& r, Duration submitted, std::latch* gate);
  void end_own_sessions();
  std::int64_t count_leaked(pqxx::connection& c);
  nlohmann::json real_block(const PoolStats& pools);

  const std::string run_id_;    // names the run's sessions
  const std::int64_t run_key_;  // names its rows and salts its advisory keys
  // Declared in the order they must outlive each other (destroyed bottom-up):
  // the Redis keys and the record outlive the rows, the rows the pools.
  std::unique_ptr<KvLeaseStore> redis_;
  std::optional<DropRunKeysAtExit> redis_keys_;
  Reclaimed reclaimed_;
  Leftovers leftovers_;
  std::optional<PartnerHttp> partner_;
  std::optional<PgBouncerChild> bouncer_;
  bool pooler_found_ = false, unnamed_ = false;
  std::optional<RunRecord> record_;
  std::optional<RunRows> rows_guard_;
  std::vector<std::unique_ptr<Pool>> pools_;
  std::vector<std::unique_ptr<RealWorld>> worlds_;
  std::vector<std::unique_ptr<Carriers>> carriers_;  // --virtual-threads: each pod's, outlives workers_
  std::vector<std::unique_ptr<WorkerPool>> workers_;
  Completion completion_;
  std::optional<Workload> workload_;
  std::vector<Request> schedule_;
  std::vector<std::jthread> background_;
  std::vector<std::unique_ptr<std::latch>> gates_;  // burst: must outlive their waiters
  // Closed loop: requests still in flight after a stop call back into it while the run drains.
  std::mutex closed_mu_;
  std::condition_variable closed_cv_;
  std::int64_t closed_in_flight_ = 0;  // GUARDED_BY(closed_mu_)
  std::vector<std::pair<int, bool>> finished_users_;  // GUARDED_BY(closed_mu_): users whose request just ended, rejected?
  std::int64_t terminated_ = 0;
};

ThreadPodsRun::~ThreadPodsRun() {
  stop_tickers();
  for (auto& w : worlds_) w->end_requests();  // the background work ends, then its threads are joined
  background_.clear();
  workers_.clear();
}

// ---- prepare: any failure here is a setting error, before any output

void ThreadPodsRun::prepare() {
  // redis-lease: the run's keys in Redis, deleted whatever the way out.
  if (info_.props.needs_lease_store) redis_ = open_kv_lease_store(s_, info_.props, run_id_, std::chrono::seconds(2));
  redis_keys_.emplace(redis_.get());
  std::unique_ptr<pqxx::connection> c;  // one session for the whole preparation
  try {
    c = open_session(s_.db_url, session("prepare"));
  } catch (const DbError& e) {
    throw SettingError(db_line("cannot connect to", e));
  }
  prepare_database(*c);
  // PostgreSQL's limit: every pod's pool opens at start; refuse what the server cannot take (one line).
  check_connection_budget(s_, read_pg_limits(s_.db_url, session("prepare")), 1);
  prepare_partner();
  // PgBouncer for the pools: ours (stopped on every way out), or the one --db already points through.
  if (s_.pgbouncer != "none") bouncer_.emplace(s_.db_url, s_.pgbouncer, s_.pgbouncer_pool_size);
  if (!bouncer_) find_pooler(*c);
  unnamed_ = unnamed_statements(s_.statements, s_.pgbouncer, pooler_found_);
  record_and_seed(*c);
  c.reset();
  open_pods();
}

// Earlier runs' leftovers are reported, not erased unseen. Nothing is
// terminated: a session holding an advisory lock is someone's (another
// lockbench run's included) and only its owner ends it; other runs' rows in
// lockbench.rows are theirs. Runs of runners proven gone are reclaimed first.
void ThreadPodsRun::prepare_database(pqxx::connection& c) {
  const std::string shown = redact_secrets(s_.db_url);
  try {
    try {
      create_schema(c);
    } catch (const SchemaNotOurs& e) {
      throw SettingError("--db: " + std::string(e.what()));
    }
    reclaimed_ = reclaim_dead_runs(c);
    report_reclaimed(reclaimed_, shown);
    leftovers_ = leftovers_at_start(c, run_id_);
  } catch (const SettingError&) {
    throw;
  } catch (const std::exception& e) {
    throw SettingError(db_line("cannot prepare lockbench's tables at", e));
  }
  if (leftovers_.advisory_locks > 0 || leftovers_.leases > 0)
    std::fprintf(stderr,
                 "lockbench: leftovers of earlier lockbench runs in %s: %lld advisory locks held by other lockbench "
                 "sessions, %lld leases still set in their rows of lockbench.rows (both left to them)\n",
                 shown.c_str(), static_cast<long long>(leftovers_.advisory_locks),
                 static_cast<long long>(leftovers_.leases));
}

void ThreadPodsRun::prepare_partner() {
  partner_.emplace(s_.partner_url, s_.partner_connect_timeout, s_.partner_read_timeout);
  partner_->set_run(partner_run_name(run_id_), s_.force_partner_reset);  // another live run's partner: refused
  try {
    partner_->reset(scenario_->partner_reset(s_));
    partner_->configure(partner_config(s_));
  } catch (const std::exception& e) {
    throw SettingError("--partner: cannot use " + redact_secrets(s_.partner_url) + ": " + one_line(e.what()));
  }
}

void ThreadPodsRun::find_pooler(pqxx::connection& c) {
  try {
    pooler_found_ = behind_pooler(c);
  } catch (const std::exception&) {
  }
}

// The run's record before its rows: a runner killed from here on leaves rows the next run can reclaim.
void ThreadPodsRun::record_and_seed(pqxx::connection& c) {
  try {
    record_.emplace(s_.db_url, run_key_, run_id_);
    watch_record(&*record_);
  } catch (const std::exception& e) {
    throw SettingError(db_line("cannot record this run in lockbench.runs at", e));
  }
  try {
    seed_rows(c, run_key_, scenario_->tables(), s_.keys);
  } catch (const std::exception& e) {
    throw SettingError(db_line("cannot seed this run's rows at", e));
  }
  rows_guard_.emplace(s_.db_url, run_key_, session("finish"));
}

void ThreadPodsRun::open_pods() {
  const std::string pool_url = bouncer_ ? bouncer_->url() : s_.db_url;
  try {
    for (int p = 0; p < s_.pods; ++p) {
      const std::string pod = "pod" + std::to_string(p + 1);
      PoolConfig cfg{pool_url,          s_.maximum_pool_size,      s_.connection_timeout, s_.leak_detection_threshold,
                     s_.max_lifetime,   p * s_.maximum_pool_size,  pod,                   run_key_,
                     session(pod.c_str()), unnamed_};
      pools_.push_back(std::make_unique<Pool>(cfg, Clock::now()));
    }
  } catch (const DbError& e) {
    throw SettingError(db_line("cannot connect to", e));
  }
  for (auto& p : pools_) {
    worlds_.push_back(std::make_unique<RealWorld>(*p, *partner_));
    worlds_.back()->set_lease_store(redis_.get());
    worlds_.back()->set_pins_carriers(pins_carriers(s_, info_.props));
    if (s_.virtual_threads) {  // a thread per request on the pod's carriers (real/carriers.hpp)
      workers_.push_back(std::make_unique<WorkerPool>(WorkerPool::Unbounded{}));
      carriers_.push_back(std::make_unique<Carriers>(s_.carriers));
    } else {
      workers_.push_back(std::make_unique<WorkerPool>(s_.max_threads, s_.accept_count));
    }
  }
}

// ---- background: the clock, pool samples + leak detection, probe, the strategy's work

void ThreadPodsRun::start_background() {
  // The run starts now: opening connections and threads is not the requests' time.
  start_clock();
  for (auto& p : pools_) p->restart_clock(epoch());
  workload_.emplace(s_, scenario_->fresh_key_per_request());
  if (s_.arrival != Arrival::closed) schedule_ = workload_->schedule();
  start_sampler(kSampleEvery, [this] {
    PoolSample total{now(), 0, 0, 0};
    for (auto& p : pools_) {
      const PoolSample ps = p->sample();
      total.active += ps.active;
      total.pending += ps.pending;
      total.idle += ps.idle;
      p->check_leaks();
    }
    return total;
  });
  start_prober(pools_.size(), [this](std::size_t i) {
    try {
      if (PgConn* c = pools_[i]->borrow(s_.probe_timeout, Pool::Borrower::probe)) {
        ConnHandle h(c);
        c->select_one();
        return true;
      }
    } catch (const std::exception&) {
    }
    return false;
  });
  start_strategy_background();
}

// One thread per background worker of the strategy (the outbox's pollers) per pod.
void ThreadPodsRun::start_strategy_background() {
  for (std::size_t p = 0; p < worlds_.size(); ++p)
    for (int i = 0; i < strategy_->background_workers(s_); ++i)
      background_.emplace_back([this, p, i] {
        RequestCtx cx(*worlds_[p], recorder_, s_, background_request(static_cast<int>(p), s_.pods, i));
        try {
          run_sync(strategy_->background(cx, *scenario_));
        } catch (const std::exception& e) {
          std::fprintf(stderr, "lockbench: background worker %d of pod %zu stopped: %s\n", i, p + 1, e.what());
        }
      });
}

// ---- dispatch

void ThreadPodsRun::dispatch() {
  if (s_.arrival == Arrival::open) dispatch_open();
  else if (s_.arrival == Arrival::burst) dispatch_burst();
  else dispatch_closed();
}

void ThreadPodsRun::dispatch_open() {
  for (const Request& r : schedule_) {
    if (!sleep_until_or_stop(r.intended)) break;
    submit(r, nullptr, nullptr);
  }
}

// Per pod, as many requests as it has workers wait on one latch and start together.
void ThreadPodsRun::dispatch_burst() {
  const std::size_t pods = workers_.size();
  std::vector<std::int64_t> per_pod(pods, 0), gated(pods, 0);
  for (const Request& r : schedule_) per_pod[r.id % pods]++;
  for (std::size_t p = 0; p < pods; ++p)
    gates_.push_back(std::make_unique<std::latch>(std::min<std::int64_t>(per_pod[p], s_.max_threads)));
  for (const Request& r : schedule_) {
    const std::size_t p = r.id % pods;
    submit(r, gated[p]++ < s_.max_threads ? gates_[p].get() : nullptr, nullptr);
  }
}

// Closed loop: each virtual user sends, waits for the answer, thinks, sends again.
void ThreadPodsRun::dispatch_closed() {
  using Next = std::pair<Duration, int>;  // (when, user)
  std::priority_queue<Next, std::vector<Next>, std::greater<>> ready;
  for (int u = 0; u < s_.users; ++u) ready.push({Duration::zero(), u});
  std::unique_lock lock(closed_mu_);
  while (!stop_requested()) {
    for (const auto& [u, rejected] : finished_users_) ready.push({now() + workload_->think_after(u, rejected), u});
    finished_users_.clear();
    if (ready.empty()) {
      if (closed_in_flight_ == 0) break;
      closed_cv_.wait_for(lock, kSampleEvery, [&] { return !finished_users_.empty() || closed_in_flight_ == 0; });
      continue;
    }
    const auto [at, user] = ready.top();
    if (at >= s_.duration) {  // this user is done
      ready.pop();
      continue;
    }
    if (at > now()) {
      closed_cv_.wait_for(lock, std::min<Duration>(at - now(), kSampleEvery), [&] { return !finished_users_.empty(); });
      continue;
    }
    ready.pop();
    const Request r = workload_->next_for_user(user, at);
    ++closed_in_flight_;
    lock.unlock();
    submit(r, nullptr, [this, user](bool rejected) {
      std::lock_guard l(closed_mu_);
      finished_users_.emplace_back(user, rejected);
      --closed_in_flight_;
      closed_cv_.notify_all();
    });
    lock.lock();
  }
}

// Submits to the request's pod; `done` runs after the request finished (or was rejected).
void ThreadPodsRun::submit(const Request& r, std::latch* gate, std::function<void(bool rejected)> done) {
  completion_.submitted();
  const Duration submitted = now();
  const bool accepted = workers_[r.id % workers_.size()]->submit([this, r, submitted, gate, done] {
    if (stopping()) {
      // Shutting down: a request still queued is not started (a container
      // draining its queue answers 503). A burst gate still counts it.
      if (gate) gate->count_down();
      reject(r, "rejected: interrupted before it started");
      if (done) done(true);
    } else {
      serve_one(r, submitted, gate);
      if (done) done(false);
    }
    completion_.finished();
  });
  if (!accepted) {
    reject(r, "rejected");
    if (done) done(true);
    completion_.finished();
  }
}

void ThreadPodsRun::serve_one(const Request& r, Duration submitted, std::latch* gate) {
  auto& world = *worlds_[r.id % worlds_.size()];
  if (gate) gate->arrive_and_wait();  // burst: every worker starts at the same instant
  VirtualThread vt(carriers_.empty() ? nullptr : carriers_[r.id % carriers_.size()].get(), true);
  StepNote note;
  current_step_note() = &note;
  RequestCtx cx(world, recorder_, s_, r);
  const Duration started = now();
  cx.split().queue = started - std::max(submitted, r.intended);
  cx.trace("queue", r.intended, started);
  const Outcome o = run_sync(serve(cx, *strategy_, *scenario_));
  current_step_note() = nullptr;
  recorder_.finish(r.id, o, r.intended, now(), cx.split());
  finished(o);
}

// ---- drain; on a stop: a grace period, then close and end this run's own sessions

void ThreadPodsRun::drain() {
  while (!completion_.wait_until(Clock::now() + kSampleEvery))
    if (stop_requested()) break;
  if (stop_requested()) {
    std::fprintf(stderr, "lockbench: interrupted: no new requests; letting %lld in flight finish\n",
                 static_cast<long long>(completion_.in_flight()));
    if (!completion_.wait_until(Clock::now() + grace())) end_own_sessions();
  }
  for (auto& w : workers_) w->wait_idle();
  for (auto& w : worlds_) w->end_requests();
  background_.clear();  // joins: bounded by the strategy's own drain limit
}

void ThreadPodsRun::end_own_sessions() {
  for (auto& p : pools_) p->close();
  try {
    auto c = open_session(s_.db_url, session("stop"));
    terminated_ = terminate_run_backends(*c, run_id_);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lockbench: could not end this run's sessions: %s\n", one_line(e.what()).c_str());
  }
  // What is left waits on the partner at most: its timeouts bound each attempt
  // (per call, every call of the request's scenario).
  const Duration partner_bound = (s_.partner_connect_timeout + s_.partner_read_timeout + s_.retry_backoff_cap) *
                                     s_.partner_max_attempts * (scenario_->partner_calls() + 1) +
                                 std::chrono::seconds(5);
  if (!completion_.wait_until(Clock::now() + partner_bound)) {
    std::fprintf(stderr, "lockbench: requests still running %s after the interrupt; exiting without a result\n",
                 format_duration(grace() + partner_bound).c_str());
    std::_Exit(1);
  }
}

// ---- finish

// Leaked, as in the simulator: session locks still held + leases never released
// (then released). Behind a pooler the pools' pids are PgBouncer's inventions:
// our session locks are found by their keys, on whichever backend holds them.
std::int64_t ThreadPodsRun::count_leaked(pqxx::connection& c) {
  std::vector<int> pids;
  for (auto& p : pools_)
    for (int pid : p->backend_pids()) pids.push_back(pid);
  const bool pooled = bouncer_.has_value() || pooler_found_;
  recorder_.locks.leaked =
      (pooled ? advisory_locks_of_run(c, run_key_) : advisory_locks_held_by(c, pids)) + leases_held(c, run_key_);
  const std::int64_t released = release_leases(c, run_key_);
  if (redis_) recorder_.locks.leaked += redis_->held();  // Redis leases never released (their TTL not passed yet)
  return released;
}

nlohmann::json ThreadPodsRun::finish() {
  stop_tickers();
  std::int64_t leases_released = 0;
  std::vector<StoredRow> stored;
  std::string version;
  std::unique_ptr<pqxx::connection> c;  // one session for the whole finish
  try {
    c = open_session(s_.db_url, session("finish"));
    leases_released = count_leaked(*c);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lockbench: could not count leaked locks and leases: %s\n", one_line(e.what()).c_str());
  }
  try {
    if (c) stored = stored_rows(*c, run_key_, scenario_->tables());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lockbench: could not read the service's rows: %s\n", one_line(e.what()).c_str());
  }
  version = c ? server_version(*c) : postgresql_version(s_.db_url, session("finish"));
  c.reset();
  const nlohmann::json partner = partner_result(*partner_, scenario_->service_view(stored));
  workers_.clear();  // joins the worker threads
  const PoolStats pool_stats = merge(pools_);
  RunSummary run = summary(pool_stats, partner);
  run.run_id = run_id_;
  run.postgresql_version = version;
  run.extra["real"] = real_block(pool_stats);
  if (s_.virtual_threads) {
    CarrierStats carriers;
    for (auto& c : carriers_) carriers.add(c->stats());
    run.extra["virtual_threads"] = carriers_block(pins_carriers(s_, info_.props), s_.carriers, carriers);
  }
  run.extra["real"]["leases_released_at_end"] = leases_released;
  run.extra["leftovers_at_start"] = {{"advisory_locks", leftovers_.advisory_locks}, {"leases", leftovers_.leases}};
  run.extra["reclaimed_at_start"] = reclaimed_json(reclaimed_);
  nlohmann::json result = make_result(run);
  pools_.clear();
  return result;
}

nlohmann::json ThreadPodsRun::real_block(const PoolStats&) {
  std::int64_t replaced = 0;
  for (auto& p : pools_) replaced += p->replaced();
  const std::int64_t planned =
      s_.arrival == Arrival::closed ? completion_.submitted_count() : static_cast<std::int64_t>(schedule_.size());
  nlohmann::json real = {{"pods", s_.pods},
                         {"connections_replaced", replaced},
                         {"requests_not_sent", planned - completion_.submitted_count()},
                         {"backends_terminated", terminated_},
                         {"pgbouncer", bouncer_ ? s_.pgbouncer : pooler_found_ ? "found behind --db" : "none"},
                         {"statements", unnamed_ ? "unnamed" : "prepared"}};
  if (redis_) real[std::string(redis_->name())] = redact_secrets(redis_->name() == "etcd" ? s_.etcd_url : s_.redis_url);
  return real;
}

}  // namespace

std::unique_ptr<RealRun> make_thread_pods_run(const Settings& configured, const RunHooks& hooks) {
  return std::make_unique<ThreadPodsRun>(configured, hooks);
}

}  // namespace lockbench::real

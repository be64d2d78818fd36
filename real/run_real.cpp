// run_real: one run of one strategy in the real world.
//
//   prepare   settings the partner cannot take refused first; schema;
//             leftovers of earlier runs counted and reported (advisory locks
//             held by other lockbench sessions, leases left set); a fresh users
//             table; the partner reset and configured (latency, faults, fencing).
//             Every session is named lockbench/<run-id>/<part>: nothing outside
//             this run is ever terminated.
//   run       pods x (pool + workers); a dispatcher releases each request at
//             its intended start (open loop), all at one instant (burst), or
//             per virtual user (closed loop); a sampler records the pool every
//             ~50 ms and runs leak detection; a probe borrows a connection every
//             probe_interval like a readiness check
//   stop      hooks.should_stop() (SIGINT/SIGTERM): no new requests; queued ones
//             are rejected; in-flight ones get a grace period, then the pools
//             close and this run's own backends are terminated (bounded)
//   pgbouncer --pgbouncer MODE starts a PgBouncer child in front of --db for the
//             pools (lockbench's own sessions keep going to --db directly) and
//             stops it when the run returns; --db may also be a pooler itself
//             (found by behind_pooler). Behind one, statements go unnamed
//             (--statements auto) and leaked session locks are counted by
//             their keys (the pools' pids are PgBouncer's inventions).
//   finish    leaked = session advisory locks still held by the pools' backends
//             + leases never released (then cleared); the partner's checks read,
//             or the verdict marked unavailable with the reason when the
//             partner is gone. An interrupted run is still a result.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <latch>
#include <map>
#include <mutex>
#include <optional>
#include <queue>
#include <thread>

#include <unistd.h>

#include "core/context.hpp"
#include "core/redact.hpp"
#include "core/result.hpp"
#include "real/run_real.hpp"
#include "core/workload.hpp"
#include "fake_partner/model/call.hpp"
#include "real/leftovers.hpp"
#include "real/partner_http.hpp"
#include "real/pgbouncer.hpp"
#include "real/pg_limits.hpp"
#include "real/pool.hpp"
#include "real/real_world.hpp"
#include "real/redis_store.hpp"
#include "real/run_common.hpp"
#include "real/run_pods.hpp"
#include "real/workers.hpp"
#include "strategies/registry.hpp"

namespace lockbench {

namespace {

using real::Leftovers;
using real::Pool;
using Clock = std::chrono::steady_clock;
constexpr Duration kSampleEvery = std::chrono::milliseconds(50);

// SettingError is one line; driver messages may carry several (DETAIL:, HINT:).
// Never a password: URLs and libpq messages are redacted here.
std::string driver_line(std::string text) {
  for (char& ch : text)
    if (ch == '\n' || ch == '\r') ch = ' ';
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return redact_secrets(text);
}

// A number naming this run's rows in lockbench.rows and salting its advisory
// keys: distinct for runs started at the same time on one machine or another.
std::int64_t new_run_key() {
  static std::atomic<std::uint64_t> counter{0};
  const auto t = static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  Rng rng(t ^ (static_cast<std::uint64_t>(::getpid()) << 32) ^ counter.fetch_add(1), "run");
  return static_cast<std::int64_t>(rng.next() >> 1);  // positive
}

// Runs of runners proven gone are reclaimed first (`reclaimed`), then the rest
// is counted.
Leftovers prepare_database(const Settings& s, const std::string& run_id, real::Reclaimed& reclaimed) {
  const std::string shown = redact_secrets(s.db_url);
  std::unique_ptr<pqxx::connection> c;
  try {
    c = real::open_session(s.db_url, real::application_name(run_id, "prepare"));
  } catch (const DbError& e) {
    throw SettingError("--db: cannot connect to " + shown + ": " + driver_line(e.what()));
  }
  try {
    try {
      real::create_schema(*c);
    } catch (const real::SchemaNotOurs& e) {
      throw SettingError("--db: " + std::string(e.what()));
    }
    // Earlier runs' leftovers are reported, not erased unseen. Nothing is
    // terminated: a session holding an advisory lock is someone's (another
    // lockbench run's included) and only its owner ends it; other runs' rows
    // in lockbench.rows are theirs.
    reclaimed = real::reclaim_dead_runs(*c);
    real::report_reclaimed(reclaimed, shown);
    const Leftovers found = real::leftovers_at_start(*c, run_id);
    if (found.advisory_locks > 0 || found.leases > 0)
      std::fprintf(stderr,
                   "lockbench: leftovers of earlier lockbench runs in %s: %lld advisory locks held by other lockbench "
                   "sessions, %lld leases still set in their rows of lockbench.rows (both left to them)\n",
                   shown.c_str(), static_cast<long long>(found.advisory_locks), static_cast<long long>(found.leases));
    return found;
  } catch (const SettingError&) {
    throw;
  } catch (const std::exception& e) {
    throw SettingError("--db: cannot prepare lockbench's tables at " + shown + ": " + driver_line(e.what()));
  }
}

void seed_run_rows(const Settings& s, const Scenario& scenario, std::int64_t run, const std::string& run_id) {
  const std::string shown = redact_secrets(s.db_url);
  try {
    auto c = real::open_session(s.db_url, real::application_name(run_id, "prepare"));
    real::seed_rows(*c, run, scenario.tables(), s.keys);
  } catch (const std::exception& e) {
    throw SettingError("--db: cannot seed this run's rows at " + shown + ": " + driver_line(e.what()));
  }
}

// Deletes the run's rows from lockbench.rows when the run ends, also when it
// ends by an exception: a real run leaves nothing behind in the database.
struct RunRows {
  std::string url;
  std::int64_t run;
  std::string application_name;
  ~RunRows() {
    try {
      auto c = real::open_session(url, application_name);
      real::drop_rows(*c, run);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "lockbench: could not remove this run's rows (run %lld) from lockbench.rows: %s\n",
                   static_cast<long long>(run), driver_line(e.what()).c_str());
    }
  }
};

PoolStats merge(const std::vector<std::unique_ptr<Pool>>& pools) {
  PoolStats out;
  for (const auto& p : pools) {
    const PoolStats s = p->stats();
    out.size += s.size;
    out.active_max += s.active_max;
    out.pending_max += s.pending_max;
    out.busy_conn_s += s.busy_conn_s;
    out.wait_ms.merge(s.wait_ms);
    out.hold_ms.merge(s.hold_ms);
    out.timeouts += s.timeouts;
    out.leaks += s.leaks;
    for (const auto& step : s.leak_steps)
      if (out.leak_steps.size() < 20) out.leak_steps.push_back(step);
  }
  return out;
}

// Runs a function every `every` on its own thread until stop(); wakes at once on stop.
class Ticker {
 public:
  Ticker(Duration every, std::function<void()> f) : thread_([this, every, f = std::move(f)] {
    std::unique_lock lock(mu_);
    while (!stop_) {
      lock.unlock();
      f();
      lock.lock();
      cv_.wait_for(lock, every, [&] { return stop_; });
    }
  }) {}
  ~Ticker() { stop(); }
  void stop() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // GUARDED_BY(mu_)
  std::thread thread_;  // last: starts after the fields above exist
};

// Counts requests finished, for the drain and the progress hook.
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
  void wait_all() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return finished_ >= submitted_; });
  }
  // true when every submitted request finished by `deadline`.
  bool wait_until(Clock::time_point deadline) {
    std::unique_lock lock(mu_);
    return cv_.wait_until(lock, deadline, [&] { return finished_ >= submitted_; });
  }
  std::int64_t submitted_count() {
    std::lock_guard lock(mu_);
    return submitted_;
  }
  std::int64_t done() {
    std::lock_guard lock(mu_);
    return finished_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::int64_t submitted_ = 0;  // GUARDED_BY(mu_)
  std::int64_t finished_ = 0;   // GUARDED_BY(mu_)
};

// One background worker of the strategy on its pod's world, on its own thread.
void run_background(real::RealWorld& world, Recorder& recorder, const Settings& s, Strategy& strategy,
                    Scenario& scenario, int pod, int worker) {
  RequestCtx cx(world, recorder, s, background_request(pod, s.pods, worker));
  try {
    run_sync(strategy.background(cx, scenario));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lockbench: background worker %d of pod %d stopped: %s\n", worker, pod + 1, e.what());
  }
}

}  // namespace

nlohmann::json run_real(const Settings& configured, const RunHooks& hooks) {
  configured.validate();
  if (configured.pgbouncer != "none" && real::pods_over_http(configured))
    throw SettingError("--pgbouncer: starts a PgBouncer for --pod-mode thread runs only (for process pods or --targets, "
                       "run PgBouncer yourself and point the pods' --db at it)");
  if (configured.shard_count > 1 && configured.targets.empty())
    throw SettingError("--shard: a real run's shards need --targets (the runners share the services under test)");
  // --- hook: pods as HTTP services (real/run_pods.cpp); faults only there ---
  if (real::pods_over_http(configured)) return real::run_pods(configured, hooks);
  real::refuse_faults_in_threads(configured);
  // --- end of hook ---
  if (configured.db_url.empty())
    throw SettingError("--db: the real world needs a PostgreSQL URL (e.g. postgresql://postgres@127.0.0.1:5432/postgres)");
  if (configured.partner_url.empty())
    throw SettingError("--partner: the real world needs the fake partner's URL (e.g. http://127.0.0.1:8080)");
  Settings s = configured.scaled();
  s.world = "real";
  const StrategyInfo& info = strategy_info(s.strategy);
  check_applies(info, s.scenario);
  const auto strategy = info.make();
  const auto scenario = make_scenario(s.scenario);
  const std::string run_id = new_run_id();    // names the run's sessions
  const std::int64_t run_key = new_run_key();  // names its rows and salts its advisory keys
  const std::string shown_db = redact_secrets(s.db_url), shown_partner = redact_secrets(s.partner_url);

  // Stop: the CLI's signal flag, latched so every thread sees the same answer.
  std::atomic<bool> stopping{false};
  const auto stop_requested = [&] {
    if (!stopping.load() && hooks.should_stop && hooks.should_stop()) stopping = true;
    return stopping.load();
  };

  // --- prepare: any failure here is a setting error, before any output ---
  // redis-lease: the run's keys in Redis, deleted when run_real returns, whatever the way out.
  std::unique_ptr<real::RedisStore> redis;
  if (info.props.needs_lease_store) redis = real::open_lease_store(s.redis_url, run_id, std::chrono::seconds(2));
  const real::DropRunKeysAtExit redis_keys(redis.get());
  real::Reclaimed reclaimed;
  const Leftovers leftovers = prepare_database(s, run_id, reclaimed);
  // PostgreSQL's limit: every pod's pool opens at start; refuse what the server cannot take (one line).
  real::check_connection_budget(s, real::read_pg_limits(s.db_url, real::application_name(run_id, "prepare")), 1);
  real::PartnerHttp partner(s.partner_url, s.partner_connect_timeout, s.partner_read_timeout);
  try {
    partner.reset(scenario->partner_reset(s));
    partner.configure(real::partner_config(s));
  } catch (const std::exception& e) {
    throw SettingError("--partner: cannot use " + shown_partner + ": " + driver_line(e.what()));
  }
  // PgBouncer for the pools: ours (stopped when run_real returns, whatever the
  // way out), or the one --db already points through.
  std::optional<real::PgBouncerChild> bouncer;
  if (s.pgbouncer != "none") bouncer.emplace(s.db_url, s.pgbouncer, s.pgbouncer_pool_size);
  const std::string pool_url = bouncer ? bouncer->url() : s.db_url;
  bool pooler_found = false;
  if (!bouncer) {
    try {
      auto c = real::open_session(s.db_url, real::application_name(run_id, "prepare"));
      pooler_found = real::behind_pooler(*c);
    } catch (const std::exception&) {
    }
  }
  const bool pooled = bouncer.has_value() || pooler_found;
  const bool unnamed = real::unnamed_statements(s.statements, s.pgbouncer, pooler_found);
  // This run's rows, removed when run_real returns, whatever the way out.
  // The run's record before its rows: a runner killed from here on leaves rows the next run can reclaim.
  std::optional<real::RunRecord> record;
  try {
    record.emplace(s.db_url, run_key, run_id);
  } catch (const std::exception& e) {
    throw SettingError("--db: cannot record this run in lockbench.runs at " + redact_secrets(s.db_url) + ": " +
                       driver_line(e.what()));
  }
  seed_run_rows(s, *scenario, run_key, run_id);
  const RunRows rows_guard{s.db_url, run_key, real::application_name(run_id, "finish")};

  auto epoch = Clock::now();  // moved to the run's start once everything is up
  const Duration step = std::clamp<Duration>(s.duration / 40, kSampleEvery, std::chrono::seconds(1));
  Recorder recorder(step);
  std::vector<std::unique_ptr<Pool>> pools;
  try {
    for (int p = 0; p < s.pods; ++p) {
      const std::string pod = "pod" + std::to_string(p + 1);
      real::PoolConfig cfg{pool_url,       s.maximum_pool_size,     s.connection_timeout,
                           s.leak_detection_threshold, s.max_lifetime, p * s.maximum_pool_size,
                           pod,            run_key,                 real::application_name(run_id, pod),
                           unnamed};
      pools.push_back(std::make_unique<Pool>(cfg, epoch));
    }
  } catch (const DbError& e) {
    throw SettingError("--db: cannot connect to " + shown_db + ": " + driver_line(e.what()));
  }
  std::vector<std::unique_ptr<real::RealWorld>> worlds;
  std::vector<std::unique_ptr<real::WorkerPool>> workers;
  for (auto& p : pools) {
    worlds.push_back(std::make_unique<real::RealWorld>(*p, partner));
    worlds.back()->set_lease_store(redis.get());
    workers.push_back(std::make_unique<real::WorkerPool>(s.max_threads, s.accept_count));
  }
  // The run starts now: opening connections and threads is not the requests' time.
  epoch = Clock::now();
  for (auto& p : pools) p->restart_clock(epoch);
  const auto now = [&] { return Duration(Clock::now() - epoch); };

  Completion completion;
  Workload workload(s, scenario->fresh_key_per_request());
  std::vector<Request> schedule;
  if (s.arrival != Arrival::closed) schedule = workload.schedule();
  std::atomic<std::int64_t> ok_count{0};  // for the progress hook

  // --- background: pool samples + leak detection, progress, health probe ---
  Duration last_progress{};
  Ticker sampler(kSampleEvery, [&] {
    PoolSample total{now(), 0, 0, 0};
    for (auto& p : pools) {
      const PoolSample ps = p->sample();
      total.active += ps.active;
      total.pending += ps.pending;
      total.idle += ps.idle;
      p->check_leaks();
    }
    recorder.pool_sample(total);
    if (hooks.progress && total.t - last_progress >= std::chrono::milliseconds(250)) {
      last_progress = total.t;
      hooks.progress(completion.done(), ok_count.load(), total.t);
    }
  });
  ProbeStats probe;
  std::mutex probe_mu;  // guards probe: written by the probe thread, read at the end
  std::optional<Ticker> prober;
  if (s.probe_interval > Duration::zero()) {
    prober.emplace(s.probe_interval, [&] {
      for (auto& p : pools) {
        bool ok = false;
        try {
          if (real::PgConn* c = p->borrow(s.probe_timeout)) {
            ConnHandle h(c);
            c->select_one();
            ok = true;
          }
        } catch (const std::exception&) {
        }
        std::lock_guard lock(probe_mu);
        ++probe.total;
        if (!ok) ++probe.failed;
      }
    });
  }

  // --- the strategy's background work (the outbox's pollers): threads per pod ---
  std::vector<std::jthread> background;  // joined below, or on the way out of an exception
  for (std::size_t p = 0; p < worlds.size(); ++p)
    for (int i = 0; i < strategy->background_workers(s); ++i)
      background.emplace_back([&, p, i] { run_background(*worlds[p], recorder, s, *strategy, *scenario, static_cast<int>(p), i); });

  // --- one request on a worker ---
  const auto run_request = [&](const Request& r, Duration submitted, std::latch* gate) {
    auto& world = *worlds[r.id % worlds.size()];
    if (gate) gate->arrive_and_wait();  // burst: every worker starts at the same instant
    real::StepNote note;
    real::current_step_note() = &note;
    RequestCtx cx(world, recorder, s, r);
    const Duration started = now();
    cx.split().queue = started - std::max(submitted, r.intended);
    cx.trace("queue", r.intended, started);
    const Outcome o = run_sync(serve(cx, *strategy, *scenario));
    real::current_step_note() = nullptr;
    recorder.finish(r.id, o, r.intended, now(), cx.split());
    if (o == Outcome::ok) ok_count++;
  };
  const auto reject = [&](const Request& r, const char* why) {
    const Duration t = now();
    recorder.trace({r.id, "outcome", t, t, -1, why});
    recorder.finish(r.id, Outcome::rejected, r.intended, t, TimeSplit{});
  };
  // Submits to the request's pod; `done` runs after the request finished (or was rejected).
  const auto submit = [&](const Request& r, std::latch* gate, std::function<void()> done) {
    completion.submitted();
    const Duration submitted = now();
    auto& pod = *workers[r.id % workers.size()];
    const bool accepted = pod.submit([&, r, submitted, gate, done] {
      if (stopping.load()) {
        // Shutting down: a request still queued is not started (a container
        // draining its queue answers 503). A burst gate still counts it.
        if (gate) gate->count_down();
        reject(r, "rejected: interrupted before it started");
      } else {
        run_request(r, submitted, gate);
      }
      if (done) done();
      completion.finished();
    });
    if (!accepted) {
      reject(r, "rejected");
      if (done) done();
      completion.finished();
    }
  };
  // Sleeps until `t` (since the epoch), waking early to notice a stop: false when stopping.
  const auto sleep_until_or_stop = [&](Duration t) {
    for (;;) {
      if (stop_requested()) return false;
      const auto deadline = epoch + t;
      const auto now_tp = Clock::now();
      if (now_tp >= deadline) return true;
      std::this_thread::sleep_until(std::min(deadline, now_tp + kSampleEvery));
    }
  };

  // --- dispatch ---
  // Closed-loop state lives at this scope: requests still in flight after a
  // stop call back into it while the run drains.
  std::mutex closed_mu;
  std::condition_variable closed_cv;
  std::int64_t closed_in_flight = 0;   // GUARDED_BY(closed_mu)
  std::vector<int> finished_users;      // GUARDED_BY(closed_mu): users whose request just ended
  std::vector<std::unique_ptr<std::latch>> gates;  // burst: must outlive their waiters
  if (s.arrival == Arrival::open) {
    for (const Request& r : schedule) {
      if (!sleep_until_or_stop(r.intended)) break;
      submit(r, nullptr, nullptr);
    }
  } else if (s.arrival == Arrival::burst) {
    // Per pod, as many requests as it has workers wait on one latch and start together.
    std::vector<std::int64_t> per_pod(workers.size(), 0);
    for (const Request& r : schedule) per_pod[r.id % workers.size()]++;
    for (std::size_t p = 0; p < workers.size(); ++p)
      gates.push_back(std::make_unique<std::latch>(std::min<std::int64_t>(per_pod[p], s.max_threads)));
    std::vector<std::int64_t> gated(workers.size(), 0);
    for (const Request& r : schedule) {
      const std::size_t p = r.id % workers.size();
      std::latch* gate = gated[p]++ < s.max_threads ? gates[p].get() : nullptr;
      submit(r, gate, nullptr);
    }
  } else {
    // Closed loop: each virtual user sends, waits for the answer, thinks, sends again.
    using Next = std::pair<Duration, int>;  // (when, user)
    std::priority_queue<Next, std::vector<Next>, std::greater<>> ready;  // GUARDED_BY(closed_mu)
    for (int u = 0; u < s.users; ++u) ready.push({Duration::zero(), u});
    std::unique_lock lock(closed_mu);
    while (!stop_requested()) {
      for (int u : finished_users) ready.push({now() + workload.think(u), u});
      finished_users.clear();
      if (ready.empty()) {
        if (closed_in_flight == 0) break;
        closed_cv.wait_for(lock, kSampleEvery, [&] { return !finished_users.empty() || closed_in_flight == 0; });
        continue;
      }
      const auto [at, user] = ready.top();
      if (at >= s.duration) {  // this user is done
        ready.pop();
        continue;
      }
      if (at > now()) {
        closed_cv.wait_until(lock, std::min(epoch + at, Clock::now() + kSampleEvery),
                             [&] { return !finished_users.empty(); });
        continue;
      }
      ready.pop();
      const Request r = workload.next_for_user(user, at);
      ++closed_in_flight;
      lock.unlock();
      submit(r, nullptr, [&, user] {
        std::lock_guard l(closed_mu);
        finished_users.push_back(user);
        --closed_in_flight;
        closed_cv.notify_all();
      });
      lock.lock();
    }
  }

  // --- drain; on a stop: a grace period, then close and end this run's own sessions ---
  while (!completion.wait_until(Clock::now() + kSampleEvery))
    if (stop_requested()) break;
  const bool interrupted = stop_requested();
  std::int64_t terminated = 0;
  if (interrupted) {
    std::fprintf(stderr, "lockbench: interrupted: no new requests; letting %lld in flight finish\n",
                 static_cast<long long>(completion.submitted_count() - completion.done()));
    const Duration grace = std::clamp<Duration>(s.connection_timeout, std::chrono::seconds(2), std::chrono::seconds(10));
    if (!completion.wait_until(Clock::now() + grace)) {
      for (auto& p : pools) p->close();
      try {
        auto c = real::open_session(s.db_url, real::application_name(run_id, "stop"));
        terminated = real::terminate_run_backends(*c, run_id);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "lockbench: could not end this run's sessions: %s\n", driver_line(e.what()).c_str());
      }
      // What is left waits on the partner at most: its timeouts bound each attempt.
      // (per call, every call of the request's scenario).
      const Duration partner_bound =
          (s.partner_connect_timeout + s.partner_read_timeout + s.retry_backoff_cap) * s.partner_max_attempts *
              (scenario->partner_calls() + 1) +
          std::chrono::seconds(5);
      if (!completion.wait_until(Clock::now() + partner_bound)) {
        std::fprintf(stderr, "lockbench: requests still running %s after the interrupt; exiting without a result\n",
                     format_duration(grace + partner_bound).c_str());
        std::_Exit(1);
      }
    }
  }
  for (auto& w : workers) w->wait_idle();
  for (auto& w : worlds) w->end_requests();
  for (auto& t : background) t.join();  // bounded: the strategy's own drain limit

  // --- finish ---
  if (prober) prober->stop();
  sampler.stop();
  std::vector<int> pids;
  for (auto& p : pools)
    for (int pid : p->backend_pids()) pids.push_back(pid);
  std::int64_t leases_released = 0;
  try {
    auto c = real::open_session(s.db_url, real::application_name(run_id, "finish"));
    // Leaked, as in the simulator: session locks still held + leases never released.
    // Behind a pooler the pools' pids are PgBouncer's inventions: our session
    // locks are found by their keys, on whichever backend holds them.
    recorder.locks.leaked = (pooled ? real::advisory_locks_of_run(*c, run_key) : real::advisory_locks_held_by(*c, pids)) +
                            real::leases_held(*c, run_key);
    leases_released = real::release_leases(*c, run_key);
    if (redis) recorder.locks.leaked += redis->held();  // Redis leases never released (their TTL not passed yet)
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lockbench: could not count leaked locks and leases: %s\n", driver_line(e.what()).c_str());
  }
  std::vector<StoredRow> stored;
  try {
    auto c = real::open_session(s.db_url, real::application_name(run_id, "finish"));
    stored = real::stored_rows(*c, run_key, scenario->tables());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lockbench: could not read the service's rows: %s\n", e.what());
  }
  nlohmann::json partner_json;
  try {
    partner_json = real::partner_block(partner, scenario->service_view(stored));
  } catch (const std::exception& e) {
    const std::string reason = "cannot read the checks from " + shown_partner + ": " + driver_line(e.what());
    std::fprintf(stderr, "lockbench: --partner: %s; the oracle's verdict is unavailable\n", reason.c_str());
    partner_json = real::partner_unavailable(reason);
  }
  workers.clear();  // joins the worker threads

  const PoolStats pool_stats = merge(pools);
  std::int64_t replaced = 0;
  for (auto& p : pools) replaced += p->replaced();
  RunSummary run;
  run.settings = &configured;
  run.world = "real";
  run.strategy = std::string(info.spec);
  run.run_id = run_id;
  run.interrupted = interrupted;
  run.holds_connection = info.props.holds_connection_during_call;
  run.partner_calls = scenario->partner_calls();
  run.recorder = &recorder;
  run.pool = &pool_stats;
  {
    std::lock_guard lock(probe_mu);
    run.probe = &probe;
  }
  run.partner = partner_json;
  run.postgresql_version = real::postgresql_version(s.db_url, real::application_name(run_id, "finish"));
  const std::int64_t planned = s.arrival == Arrival::closed ? completion.submitted_count() : static_cast<std::int64_t>(schedule.size());
  run.extra["real"] = {{"pods", s.pods},
                       {"connections_replaced", replaced},
                       {"requests_not_sent", planned - completion.submitted_count()},
                       {"backends_terminated", terminated},
                       {"leases_released_at_end", leases_released},
                       {"pgbouncer", bouncer ? s.pgbouncer : pooler_found ? "found behind --db" : "none"},
                       {"statements", unnamed ? "unnamed" : "prepared"}};
  run.extra["leftovers_at_start"] = {{"advisory_locks", leftovers.advisory_locks}, {"leases", leftovers.leases}};
  run.extra["reclaimed_at_start"] = real::reclaimed_json(reclaimed);
  run.extra["strategy_info"] = strategy_info_json(info);
  if (redis) run.extra["real"]["redis"] = redact_secrets(s.redis_url);
  nlohmann::json result = make_result(run);
  pools.clear();
  return result;
}

}  // namespace lockbench

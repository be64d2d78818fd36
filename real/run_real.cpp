// run_real: one run of one strategy in the real world.
//
//   prepare   schema, a fresh users table, stray advisory-lock holders ended,
//             the partner reset and configured (its latency, faults, fencing)
//   run       pods x (pool + workers); a dispatcher releases each request at
//             its intended start (open loop), all at one instant (burst), or
//             per virtual user (closed loop); a sampler records the pool every
//             ~50 ms and runs leak detection; a probe borrows a connection every
//             probe_interval like a readiness check
//   finish    leaked session advisory locks counted, the partner's checks read
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <latch>
#include <map>
#include <mutex>
#include <queue>
#include <thread>

#include <unistd.h>

#include "core/context.hpp"
#include "core/result.hpp"
#include "core/run.hpp"
#include "core/workload.hpp"
#include "fake_partner/model/call.hpp"
#include "real/partner_http.hpp"
#include "real/pool.hpp"
#include "real/real_world.hpp"
#include "real/run_pods.hpp"
#include "real/workers.hpp"
#include "strategies/registry.hpp"

namespace lockbench {

namespace {

using real::Pool;
using Clock = std::chrono::steady_clock;
constexpr Duration kSampleEvery = std::chrono::milliseconds(50);

// SettingError is one line; driver messages may carry several (DETAIL:, HINT:).
std::string one_line(std::string text) {
  for (char& ch : text)
    if (ch == '\n' || ch == '\r') ch = ' ';
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

// A number naming this run's rows in lockbench.rows and salting its advisory
// keys: distinct for runs started at the same time on one machine or another.
std::int64_t new_run_key() {
  static std::atomic<std::uint64_t> counter{0};
  const auto t = static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  Rng rng(t ^ (static_cast<std::uint64_t>(::getpid()) << 32) ^ counter.fetch_add(1), "run");
  return static_cast<std::int64_t>(rng.next() >> 1);  // positive
}

void prepare_database(const Settings& s, const Scenario& scenario, std::int64_t run) {
  std::unique_ptr<pqxx::connection> c;
  try {
    c = real::open_session(s.db_url);
  } catch (const DbError& e) {
    throw SettingError("--db: cannot connect to " + s.db_url + ": " + one_line(e.what()));
  }
  try {
    try {
      real::create_schema(*c);
    } catch (const real::SchemaNotOurs& e) {
      throw SettingError("--db: " + std::string(e.what()));
    }
    // A fresh pool per run: sessions of an earlier run that still hold advisory
    // locks (a leaked pool, a killed run) must not deny this one.
    {
      pqxx::nontransaction tx(*c);
      tx.exec("SELECT pg_terminate_backend(pid) FROM pg_locks "
              "WHERE locktype = 'advisory' AND pid <> pg_backend_pid()");
    }
    real::seed_rows(*c, run, scenario.tables(), s.keys);
  } catch (const SettingError&) {
    throw;
  } catch (const std::exception& e) {
    throw SettingError("--db: cannot prepare lockbench's tables at " + s.db_url + ": " + one_line(e.what()));
  }
}

// Session advisory locks still granted to the pool's backends after the run.
std::int64_t count_leaked_advisory_locks(const std::string& url, const std::vector<int>& pids) {
  if (pids.empty()) return 0;
  std::string array = "{";
  for (std::size_t i = 0; i < pids.size(); ++i) array += (i ? "," : "") + std::to_string(pids[i]);
  array += "}";
  auto c = real::open_session(url);
  pqxx::nontransaction tx(*c);
  return tx.exec_params1("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = ANY($1::int[])",
                         array)[0]
      .as<std::int64_t>();
}

// The server's version for the result's provenance; "" when it cannot be read.
std::string postgresql_version(const std::string& url) {
  try {
    auto c = real::open_session(url);
    pqxx::nontransaction tx(*c);
    return tx.exec1("SHOW server_version")[0].as<std::string>();
  } catch (const std::exception&) {
    return "";
  }
}

nlohmann::json partner_config(const Settings& s) {
  nlohmann::json latency = s.partner_latency.to_json();
  latency["apply_at"] = s.apply_at;
  // A merge patch: endpoints without faults this run get null (removed).
  nlohmann::json faults = nlohmann::json::object();
  faults["*"] = s.partner_faults.contains("*") ? s.partner_faults["*"] : nlohmann::json(nullptr);
  for (const auto endpoint : partner::kEndpoints) {
    const std::string e(partner::endpoint_name(endpoint));
    faults[e] = s.partner_faults.contains(e) ? s.partner_faults[e] : nlohmann::json(nullptr);
  }
  for (auto it = s.partner_faults.begin(); it != s.partner_faults.end(); ++it) faults[it.key()] = it.value();
  return {{"seed", s.seed}, {"latency", {{"*", latency}}}, {"faults", faults}, {"fencing", s.fencing}};
}

nlohmann::json partner_block(real::PartnerHttp& partner, const nlohmann::json& service) {
  const nlohmann::json check = partner.check(service);
  const nlohmann::json metrics = partner.metrics();
  std::int64_t calls = 0;
  if (metrics.contains("arrivals"))
    for (const auto& [endpoint, n] : metrics["arrivals"].items())
      if (n.is_number()) calls += n.get<std::int64_t>();
  nlohmann::json violations = nlohmann::json::object();
  if (check.contains("counts")) violations = check["counts"];
  const std::int64_t inflight = std::max(check.value("max_inflight_per_person", std::int64_t{0}),
                                         metrics.value("max_inflight_per_person", std::int64_t{0}));
  nlohmann::json details = nlohmann::json::array();
  if (check.contains("violations"))
    for (const auto& v : check["violations"]) {
      if (details.size() >= 200) break;
      details.push_back(v);
    }
  nlohmann::json out = {{"calls", calls}, {"violations", violations}, {"max_inflight_per_person", inflight},
                        {"details", details}};
  for (const char* k : {"episodes", "corrupted_ms_max", "corrupted_ms_total", "notes"})
    if (check.contains(k)) out[k] = check[k];
  return out;
}

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

}  // namespace

nlohmann::json run_real(const Settings& configured, const RunHooks& hooks) {
  configured.validate();
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
  const std::int64_t run_key = new_run_key();

  // --- prepare: any failure here is a setting error, before any output ---
  prepare_database(s, *scenario, run_key);
  real::PartnerHttp partner(s.partner_url, s.partner_connect_timeout, s.partner_read_timeout);
  try {
    partner.reset(scenario->partner_reset(s));
    partner.configure(partner_config(s));
  } catch (const std::exception& e) {
    throw SettingError("--partner: cannot use " + s.partner_url + ": " + one_line(e.what()));
  }

  auto epoch = Clock::now();  // moved to the run's start once everything is up
  const Duration step = std::clamp<Duration>(s.duration / 40, kSampleEvery, std::chrono::seconds(1));
  Recorder recorder(step);
  std::vector<std::unique_ptr<Pool>> pools;
  try {
    for (int p = 0; p < s.pods; ++p) {
      real::PoolConfig cfg{s.db_url,        s.maximum_pool_size, s.connection_timeout, s.leak_detection_threshold,
                           s.max_lifetime,  p * s.maximum_pool_size, "pod" + std::to_string(p + 1), run_key};
      pools.push_back(std::make_unique<Pool>(cfg, epoch));
    }
  } catch (const DbError& e) {
    throw SettingError("--db: cannot connect to " + s.db_url + ": " + one_line(e.what()));
  }
  std::vector<std::unique_ptr<real::RealWorld>> worlds;
  std::vector<std::unique_ptr<real::WorkerPool>> workers;
  for (auto& p : pools) {
    worlds.push_back(std::make_unique<real::RealWorld>(*p, partner));
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
      hooks.progress(completion.done(), ok_count.load());
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
  const auto reject = [&](const Request& r) {
    const Duration t = now();
    recorder.trace({r.id, "outcome", t, t, -1, "rejected"});
    recorder.finish(r.id, Outcome::rejected, r.intended, t, TimeSplit{});
  };
  // Submits to the request's pod; `done` runs after the request finished (or was rejected).
  const auto submit = [&](const Request& r, std::latch* gate, std::function<void()> done) {
    completion.submitted();
    const Duration submitted = now();
    auto& pod = *workers[r.id % workers.size()];
    const bool accepted = pod.submit([&, r, submitted, gate, done] {
      run_request(r, submitted, gate);
      if (done) done();
      completion.finished();
    });
    if (!accepted) {
      reject(r);
      if (done) done();
      completion.finished();
    }
  };

  // --- dispatch ---
  if (s.arrival == Arrival::open) {
    for (const Request& r : schedule) {
      std::this_thread::sleep_until(epoch + r.intended);
      submit(r, nullptr, nullptr);
    }
  } else if (s.arrival == Arrival::burst) {
    // Per pod, as many requests as it has workers wait on one latch and start together.
    std::vector<std::unique_ptr<std::latch>> gates;
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
    completion.wait_all();  // the gates must outlive their waiters
  } else {
    // Closed loop: each virtual user sends, waits for the answer, thinks, sends again.
    std::mutex mu;
    std::condition_variable cv;
    using Next = std::pair<Duration, int>;  // (when, user)
    std::priority_queue<Next, std::vector<Next>, std::greater<>> ready;  // GUARDED_BY(mu)
    std::int64_t in_flight = 0;                                        // GUARDED_BY(mu)
    for (int u = 0; u < s.users; ++u) ready.push({Duration::zero(), u});
    std::vector<int> finished_users;  // GUARDED_BY(mu): users whose request just ended
    std::unique_lock lock(mu);
    for (;;) {
      for (int u : finished_users) ready.push({now() + workload.think(u), u});
      finished_users.clear();
      if (ready.empty()) {
        if (in_flight == 0) break;
        cv.wait(lock, [&] { return !finished_users.empty() || in_flight == 0; });
        continue;
      }
      const auto [at, user] = ready.top();
      if (at >= s.duration) {  // this user is done
        ready.pop();
        continue;
      }
      if (at > now()) {
        cv.wait_until(lock, epoch + at, [&] { return !finished_users.empty(); });
        continue;
      }
      ready.pop();
      const Request r = workload.next_for_user(user, at);
      ++in_flight;
      lock.unlock();
      submit(r, nullptr, [&, user] {
        std::lock_guard l(mu);
        finished_users.push_back(user);
        --in_flight;
        cv.notify_all();
      });
      lock.lock();
    }
  }
  completion.wait_all();
  for (auto& w : workers) w->wait_idle();

  // --- finish ---
  if (prober) prober->stop();
  sampler.stop();
  std::vector<int> pids;
  for (auto& p : pools)
    for (int pid : p->backend_pids()) pids.push_back(pid);
  try {
    recorder.locks.leaked = count_leaked_advisory_locks(s.db_url, pids);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lockbench: could not count leaked advisory locks: %s\n", e.what());
  }
  std::vector<StoredRow> stored;
  try {
    auto c = real::open_session(s.db_url);
    stored = real::stored_rows(*c, run_key, scenario->tables());
    real::drop_rows(*c, run_key);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lockbench: could not read the service's rows: %s\n", e.what());
  }
  nlohmann::json partner_json;
  try {
    partner_json = partner_block(partner, scenario->service_view(stored));
  } catch (const std::exception& e) {
    throw SettingError("--partner: cannot read the checks from " + s.partner_url + ": " + one_line(e.what()));
  }
  workers.clear();  // joins the worker threads

  const PoolStats pool_stats = merge(pools);
  std::int64_t replaced = 0;
  for (auto& p : pools) replaced += p->replaced();
  RunSummary run;
  run.settings = &configured;
  run.world = "real";
  run.strategy = std::string(info.spec);
  run.holds_connection = info.props.holds_connection_during_call;
  run.partner_calls = scenario->partner_calls();
  run.recorder = &recorder;
  run.pool = &pool_stats;
  {
    std::lock_guard lock(probe_mu);
    run.probe = &probe;
  }
  run.partner = partner_json;
  run.postgresql_version = postgresql_version(s.db_url);
  run.extra["real"] = {{"pods", s.pods}, {"connections_replaced", replaced}};
  run.extra["strategy_info"] = strategy_info_json(info);
  nlohmann::json result = make_result(run);
  pools.clear();
  return result;
}

}  // namespace lockbench

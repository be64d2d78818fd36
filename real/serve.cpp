// serve: one pod over HTTP (contract in serve.hpp). Errors become HTTP statuses
// here, at the edge: the strategy's Outcome maps to 200/409/503/429/500.
#include "real/serve.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <future>
#include <sstream>
#include <thread>

#include <httplib.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/context.hpp"
#include "core/prometheus.hpp"
#include "core/random.hpp"
#include "core/redact.hpp"
#include "real/http_guard.hpp"
#include "real/leftovers.hpp"
#include "real/partner_http.hpp"
#include "real/pool.hpp"
#include "real/real_world.hpp"
#include "real/kv_lease_store.hpp"
#include "real/workers.hpp"
#include "strategies/registry.hpp"

namespace lockbench::real {

namespace {

using Clock = std::chrono::steady_clock;

std::string one_line(std::string text) {
  for (char& ch : text)
    if (ch == '\n' || ch == '\r') ch = ' ';
  return text;
}

// RealWorld plus a count of requests inside a partner call: the runner's crash
// fault waits for one, so that the pod dies holding its lock or lease.
class PodWorld final : public World {
 public:
  explicit PodWorld(RealWorld& inner) : inner_(inner) {}
  Duration now() override { return inner_.now(); }
  Task<void> sleep(RequestCtx& cx, Duration d) override { return inner_.sleep(cx, d); }
  Task<ConnHandle> acquire(RequestCtx& cx) override { return inner_.acquire(cx); }
  Task<PartnerReply> partner_attempt(RequestCtx& cx, const PartnerCall& call) override {
    in_partner_.fetch_add(1);
    struct Done {
      std::atomic<int>& n;
      ~Done() { n.fetch_sub(1); }
    } done{in_partner_};
    co_return co_await inner_.partner_attempt(cx, call);
  }
  bool requests_over() override { return inner_.requests_over(); }
  Task<LockResult> local_lock(RequestCtx& cx, Key key, LockMode mode) override { return inner_.local_lock(cx, key, mode); }
  void local_unlock(RequestCtx& cx, Key key) override { inner_.local_unlock(cx, key); }
  std::unique_ptr<Renewal> keep_renewing(RequestCtx& cx, Duration period, RenewFn renew) override {
    return inner_.keep_renewing(cx, period, std::move(renew));
  }
  Task<LeaseResult> kv_lease_acquire(RequestCtx& cx, Key key, std::string_view owner, Duration ttl) override {
    return inner_.kv_lease_acquire(cx, key, owner, ttl);
  }
  Task<bool> kv_lease_release(RequestCtx& cx, Key key, std::string_view owner) override {
    return inner_.kv_lease_release(cx, key, owner);
  }
  Task<bool> kv_lease_extend(RequestCtx& cx, Key key, std::string_view owner, Duration ttl) override {
    return inner_.kv_lease_extend(cx, key, owner, ttl);
  }
  int in_partner() const { return in_partner_.load(); }

 private:
  RealWorld& inner_;
  std::atomic<int> in_partner_{0};
};

int status_of(Outcome o) {
  switch (o) {
    case Outcome::ok: return 200;
    case Outcome::conflict: return 409;
    case Outcome::pool_timeout: return 503;
    case Outcome::rejected: return 429;
    case Outcome::error: return 500;
  }
  return 500;
}

std::int64_t us(Duration d) { return std::chrono::duration_cast<std::chrono::microseconds>(d).count(); }

// A positive decimal header, or nullopt.
std::optional<std::uint64_t> header_number(const httplib::Request& req, const char* name) {
  if (!req.has_header(name)) return std::nullopt;
  const std::string v = req.get_header_value(name);
  if (v.empty() || v.size() > 20) return std::nullopt;
  std::uint64_t out = 0;
  for (char ch : v) {
    if (ch < '0' || ch > '9') return std::nullopt;
    out = out * 10 + static_cast<std::uint64_t>(ch - '0');
  }
  return out;
}

// Equal without a timing that tells how much of the token matched.
bool same_secret(const std::string& given, const std::string& expected) {
  unsigned char diff = given.size() == expected.size() ? 0 : 1;
  for (std::size_t i = 0; i < expected.size(); ++i)
    diff |= static_cast<unsigned char>(expected[i] ^ (i < given.size() ? given[i] : 0));
  return diff == 0;
}

// The control endpoints: the token when there is one, else loopback peers only.
bool control_allowed(const httplib::Request& req, const std::string& token) {
  if (!token.empty()) return same_secret(req.get_header_value("Authorization"), "Bearer " + token);
  return loopback_peer(req.remote_addr);
}

std::int64_t new_run_key() {
  const auto t = static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  Rng rng(t ^ (static_cast<std::uint64_t>(::getpid()) << 32), "run");
  return static_cast<std::int64_t>(rng.next() >> 1);
}

}  // namespace

std::string op_path(std::string_view scenario, std::int64_t key) {
  return "/ops/" + std::string(scenario) + "/" + std::to_string(key);
}

int serve_pod(const Settings& configured, const ServeOptions& o) {
  configured.validate();
  if (configured.db_url.empty()) throw SettingError("--db: serve needs a PostgreSQL URL (postgresql://user@host:port/db)");
  if (configured.partner_url.empty()) throw SettingError("--partner: serve needs the partner's URL (http://127.0.0.1:PORT)");
  if (o.port < 0 || o.port > 65535) throw SettingError("--port: must be a whole number from 0 to 65535");
  if (o.pod < 1 || o.pod > 64) throw SettingError("--pod: must be a whole number from 1 to 64");
  const Settings s = configured.scaled();
  const StrategyInfo& info = strategy_info(s.strategy);
  check_applies(info, s.scenario);
  const auto strategy = info.make();
  const auto scenario = make_scenario(s.scenario);
  const std::int64_t run = o.run ? *o.run : new_run_key();
  const std::string pool_name = "pod" + std::to_string(o.pod);
  const std::string session_name = application_name("serve-" + std::to_string(run), pool_name);

  // Block the stop signals in every thread (the ones started below inherit the
  // mask); one thread takes them with sigwait and stops the server.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  // The schema may not exist yet (pods started before their runner): create it
  // so that the pool's prepared statements find lockbench.rows.
  bool pooler_found = false;  // --db through PgBouncer: unnamed statements (--statements auto)
  for (int attempt = 0;; ++attempt) {
    try {
      auto c = open_session(s.db_url, session_name);
      create_schema(*c);
      pooler_found = behind_pooler(*c);
      break;
    } catch (const SchemaNotOurs& e) {
      throw SettingError("--db: " + std::string(e.what()));
    } catch (const std::exception& e) {
      if (attempt >= 2) throw SettingError("--db: cannot prepare lockbench's schema at " + redact_secrets(s.db_url) + ": " + one_line(e.what()));
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // two pods creating it at once
    }
  }
  std::unique_ptr<Pool> pool;
  try {
    PoolConfig cfg{s.db_url,       s.maximum_pool_size, s.connection_timeout, s.leak_detection_threshold,
                   s.max_lifetime, (o.pod - 1) * s.maximum_pool_size, pool_name, run, session_name,
                   unnamed_statements(s.statements, s.pgbouncer, pooler_found)};
    pool = std::make_unique<Pool>(cfg, Clock::now());
  } catch (const std::exception& e) {
    throw SettingError("--db: cannot connect to " + redact_secrets(s.db_url) + ": " + one_line(e.what()));
  }
  PartnerHttp partner(s.partner_url, s.partner_connect_timeout, s.partner_read_timeout);
  // redis-lease, etcd-lease: the run's store, shared by every pod of the run (keys "lockbench:<run>:…";
  // the runner that started the pods deletes them at the end). Made before the
  // world that uses it, so that it outlives the world's renewals.
  std::unique_ptr<KvLeaseStore> redis;
  if (info.props.needs_lease_store) redis = open_kv_lease_store(s, info.props, std::to_string(run), std::chrono::seconds(2));
  RealWorld real_world(*pool, partner);
  real_world.set_lease_store(redis.get());
  PodWorld world(real_world);
  Recorder recorder(std::chrono::seconds(1), 0);  // lock counters only: the runner measures requests
  std::array<std::atomic<std::int64_t>, 5> outcomes{};
  WorkerPool workers(s.max_threads, s.accept_count);

  // The strategy's background work (the outbox's pollers, split-tx's and
  // after-commit's reconcilers): one thread each, as run_real starts per pod.
  // Each ends by itself (requests over and nothing due, or its drain limit).
  std::atomic<int> background_running{0};
  std::vector<std::thread> background;
  const int n_background = strategy->background_workers(s);
  background_running = n_background;
  for (int i = 0; i < n_background; ++i)
    background.emplace_back([&, i] {
      RequestCtx cx(world, recorder, s, background_request(o.pod - 1, s.pods, i));
      try {
        run_sync(strategy->background(cx, *scenario));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "lockbench serve %s: background worker %d stopped: %s\n", pool_name.c_str(), i,
                     one_line(e.what()).c_str());
      }
      background_running.fetch_sub(1);
    });
  // Joined on every way out (a SettingError below included).
  struct JoinBackground {
    RealWorld& w;
    std::vector<std::thread>& threads;
    ~JoinBackground() {
      w.end_requests();
      for (auto& t : threads)
        if (t.joinable()) t.join();
    }
  } join_background{real_world, background};

  const HttpLimits limits;
  GuardedServer svr(limits);
  // Connection threads only carry requests to the workers (Tomcat's acceptor and
  // poller): enough of them that the workers and the accept queue decide.
  const int http_threads = std::min(4096, s.max_threads + s.accept_count + 16);
  svr.new_task_queue = [http_threads] { return new httplib::ThreadPool(static_cast<std::size_t>(http_threads)); };
  svr.set_keep_alive_max_count(1000);
  svr.set_write_timeout(std::chrono::seconds(30));
  // Framing first: a POST without a length is refused now, not read until the client closes.
  svr.set_pre_routing_handler([&limits](const httplib::Request& req, httplib::Response& res) {
    const auto refused = framing_refusal(req, limits.body_bytes_max);
    if (!refused) return httplib::Server::HandlerResponse::Unhandled;
    res.status = refused->status;
    res.set_content("refused: " + refused->reason + "\n", "text/plain");
    close_after_this_response();
    return httplib::Server::HandlerResponse::Handled;
  });

  const auto handle_op = [&](const httplib::Request& req, httplib::Response& res, std::string_view sc,
                             const std::string& key_text) {
    if (sc != s.scenario) {
      res.status = 404;
      res.set_content("this pod serves scenario " + s.scenario + ", not " + std::string(sc) + "\n", "text/plain");
      return;
    }
    const auto id = header_number(req, "X-Request-Id");
    const auto choice = req.has_header("X-Choice") ? header_number(req, "X-Choice") : std::optional<std::uint64_t>(0);
    Key key = 0;
    try {
      key = std::stoll(key_text);
    } catch (const std::exception&) {
    }
    if (!id || *id == 0 || !choice || key < 1) {
      res.status = 400;
      res.set_content("need a key >= 1 in the path, X-Request-Id: N (N >= 1) and optionally X-Choice: N\n", "text/plain");
      return;
    }
    if (key > s.keys) {  // no row was seeded for it: never inserted by a request
      res.status = 404;
      res.set_content("key " + std::to_string(key) + " is outside this run's keys 1.." + std::to_string(s.keys) + "\n",
                      "text/plain");
      return;
    }
    Request r;
    r.id = *id;
    r.key = key;
    r.choice = *choice;
    const Duration arrived = pool->now();
    r.intended = arrived;
    auto done = std::make_shared<std::promise<std::pair<Outcome, TimeSplit>>>();
    auto answer = done->get_future();
    const bool accepted = workers.submit([&, r, arrived, done] {
      StepNote note;
      current_step_note() = &note;
      RequestCtx cx(world, recorder, s, r);
      cx.split().queue = pool->now() - arrived;
      Outcome out = Outcome::error;
      try {
        out = run_sync(serve(cx, *strategy, *scenario));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "lockbench serve %s: request %llu: %s\n", pool_name.c_str(),
                     static_cast<unsigned long long>(r.id), one_line(e.what()).c_str());
      }
      current_step_note() = nullptr;
      done->set_value({out, cx.split()});
    });
    Outcome out = Outcome::rejected;
    TimeSplit split;
    if (accepted) std::tie(out, split) = answer.get();
    outcomes[static_cast<std::size_t>(out)]++;
    const Duration service = pool->now() - arrived;
    std::ostringstream hdr;
    hdr << us(split.queue) << ' ' << us(split.pool_wait) << ' ' << us(split.lock_wait) << ' ' << us(split.partner)
        << ' ' << us(split.db) << ' ' << us(split.held) << ' ' << us(service);
    res.status = status_of(out);
    res.set_header("X-Lockbench-Split", hdr.str());
    res.set_header("X-Lockbench-Outcome", std::string(outcome_name(out)));
    res.set_content(std::string(outcome_name(out)) + "\n", "text/plain");
  };
  svr.Post(R"(/ops/([a-z0-9-]+)/(-?\d+))", [&](const httplib::Request& req, httplib::Response& res) {
    handle_op(req, res, req.matches[1].str(), req.matches[2].str());
  });
  svr.Post(R"(/users/(-?\d+)/primary)", [&](const httplib::Request& req, httplib::Response& res) {
    handle_op(req, res, "switch-primary", req.matches[1].str());
  });
  svr.Post(R"(/checkout/(-?\d+))", [&](const httplib::Request& req, httplib::Response& res) {
    handle_op(req, res, "checkout", req.matches[1].str());
  });
  svr.Post(R"(/calls/(-?\d+))", [&](const httplib::Request& req, httplib::Response& res) {
    handle_op(req, res, "single-call", req.matches[1].str());
  });

  // Spring Boot's readiness: the DataSource health indicator borrows a connection.
  const auto readiness = [&](const httplib::Request&, httplib::Response& res) {
    bool up = false;
    try {
      if (PgConn* c = pool->borrow(s.probe_timeout)) {
        ConnHandle h(c);
        c->select_one();
        up = true;
      }
    } catch (const std::exception&) {
    }
    res.status = up ? 200 : 503;
    res.set_content(up ? R"({"status":"UP"})" : R"({"status":"DOWN"})", "application/json");
  };
  const auto liveness = [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"status":"UP"})", "application/json");
  };
  const auto metrics = [&](const httplib::Request&, httplib::Response& res) {
    const PoolSample now = pool->sample();
    const PoolStats st = pool->stats();
    const std::string l = "{pool=\"" + pool_name + "\"}";
    std::ostringstream m;
    m.precision(9);
    m << hikaricp_exposition({hikari_metrics(pool_name, now, st, pool->size())});
    m << "# HELP lockbench_requests_total Requests answered, by outcome\n# TYPE lockbench_requests_total counter\n";
    for (Outcome oc : kOutcomes)
      m << "lockbench_requests_total{pool=\"" << pool_name << "\",outcome=\"" << outcome_name(oc) << "\"} "
        << outcomes[static_cast<std::size_t>(oc)].load() << '\n';
    m << "# HELP lockbench_partner_calls_in_flight Requests inside a partner call\n"
      << "# TYPE lockbench_partner_calls_in_flight gauge\n"
      << "lockbench_partner_calls_in_flight" << l << ' ' << world.in_partner() << '\n';
    res.set_content(m.str(), "text/plain; version=0.0.4");
  };
  svr.Get("/health/readiness", readiness);
  svr.Get("/health/liveness", liveness);
  svr.Get("/metrics", metrics);

  svr.Get("/lockbench/info", [&](const httplib::Request&, httplib::Response& res) {
    const nlohmann::json j = {{"run", run},
                              {"scenario", s.scenario},
                              {"strategy", std::string(info.spec)},
                              {"pod", o.pod},
                              {"pid", static_cast<long>(::getpid())}};
    res.set_content(j.dump(), "application/json");
  });
  svr.Get("/lockbench/pool", [&](const httplib::Request&, httplib::Response& res) {
    const PoolSample now = pool->sample();
    const nlohmann::json j = {
        {"active", now.active}, {"pending", now.pending}, {"idle", now.idle}, {"in_partner", world.in_partner()}};
    res.set_content(j.dump(), "application/json");
  });
  // The runner's load is over: the background work may end once nothing is due.
  svr.Post("/lockbench/requests-over", [&](const httplib::Request& req, httplib::Response& res) {
    if (!control_allowed(req, o.control_token)) {
      res.status = 403;
      res.set_content(o.control_token.empty() ? "control endpoints answer loopback peers only (or set --control-token)\n"
                                              : "control endpoints need Authorization: Bearer <--control-token>\n",
                      "text/plain");
      return;
    }
    real_world.end_requests();
    res.set_content(nlohmann::json{{"background_running", background_running.load()}}.dump(), "application/json");
  });
  svr.Get("/lockbench/stats", [&](const httplib::Request&, httplib::Response& res) {
    const PoolStats st = pool->stats();
    const LockCounters& lc = recorder.locks;
    nlohmann::json outs = nlohmann::json::object();
    for (Outcome oc : kOutcomes) outs[std::string(outcome_name(oc))] = outcomes[static_cast<std::size_t>(oc)].load();
    const nlohmann::json j = {
        {"pool",
         {{"name", pool_name},
          {"size", st.size},
          {"active_max", st.active_max},
          {"pending_max", st.pending_max},
          {"busy_conn_s", st.busy_conn_s},
          {"wait_ms", st.wait_ms.values()},
          {"hold_ms", st.hold_ms.values()},
          {"timeouts", st.timeouts},
          {"leaks", st.leaks},
          {"leak_steps", st.leak_steps}}},
        {"locks",
         {{"acquired", lc.acquired.load()},
          {"denied", lc.denied.load()},
          {"lease_steals", lc.lease_steals.load()},
          {"version_conflicts", lc.version_conflicts.load()},
          {"unlock_failures", lc.unlock_failures.load()},
          {"nothing_locked", lc.nothing_locked.load()},
          {"lease_lost", lc.lease_lost.load()},
          {"renewals", lc.renewals.load()},
          {"renewal_failures", lc.renewal_failures.load()}}},
        {"outcomes", outs},
        {"backend_pids", pool->backend_pids()},
        {"connections_replaced", pool->replaced()},
        {"in_partner", world.in_partner()},
        {"background_running", background_running.load()},
        {"effects", recorder.effects.json()}};
    res.set_content(j.dump(), "application/json");
  });

  // The listen backlog is Tomcat's acceptCount plus its threads, as a servlet
  // container's connector queues connections. cpp-httplib 0.11 listens with a
  // backlog of 5: a burst of 8 connections then loses SYNs, whose client
  // retries a second later, and a one-winner burst shows two winners. The
  // socket is caught as it is made and listened on again with the real backlog.
  socket_t listen_fd = INVALID_SOCKET;
  svr.set_socket_options([&listen_fd](socket_t sock) {
    httplib::default_socket_options(sock);
    listen_fd = sock;
  });
  const int port = o.port == 0 ? svr.bind_to_any_port(o.host) : (svr.bind_to_port(o.host, o.port) ? o.port : -1);
  if (port <= 0) throw SettingError("--port: cannot listen on " + o.host + ":" + std::to_string(o.port));
  const int backlog = static_cast<int>(std::clamp<std::int64_t>(std::int64_t{s.accept_count} + s.max_threads, 16, 65535));
  if (listen_fd == INVALID_SOCKET || ::listen(listen_fd, backlog) != 0)
    throw SettingError("--accept-count: cannot set the listen backlog to " + std::to_string(backlog) + " on " + o.host + ":" +
                       std::to_string(port));

  // The management port: health and metrics on threads of their own, so that
  // probes answer while every request thread is taken (a flood, a slow client).
  std::unique_ptr<GuardedServer> management;
  int management_port = -1;
  if (o.management_port >= 0) {
    if (o.management_port > 65535) throw SettingError("--management-port: must be a whole number from 0 to 65535");
    management = std::make_unique<GuardedServer>(limits);
    management->new_task_queue = [] { return new httplib::ThreadPool(8); };
    management->set_keep_alive_max_count(100);
    management->Get("/health/readiness", readiness);
    management->Get("/health/liveness", liveness);
    management->Get("/metrics", metrics);
    management_port = o.management_port == 0 ? management->bind_to_any_port(o.host)
                                              : (management->bind_to_port(o.host, o.management_port) ? o.management_port : -1);
    if (management_port <= 0)
      throw SettingError("--management-port: cannot listen on " + o.host + ":" + std::to_string(o.management_port));
  }
  std::thread management_thread;
  if (management) {
    management_thread = std::thread([&] { management->listen_after_bind(); });
    // Running before anything may stop it (stop() before listen would be lost).
    for (int i = 0; i < 2000 && !management->is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }

  // Leak detection, as the in-process pods' sampler does.
  std::atomic<bool> stopping{false};
  std::thread leak_checker([&] {
    while (!stopping.load()) {
      pool->check_leaks();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  std::atomic<bool> signalled{false};
  std::thread stopper([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    signalled = true;
    svr.stop();
    if (management) management->stop();
  });
  std::printf("listening on %s:%d\n", o.host.c_str(), port);
  std::printf("lockbench serve: pod %d, %s under %s, run %lld\n", o.pod, s.scenario.c_str(),
              std::string(info.spec).c_str(), static_cast<long long>(run));
  if (management) std::printf("management on %s:%d\n", o.host.c_str(), management_port);
  std::fflush(stdout);
  svr.listen_after_bind();
  // Wake the stopper if the server ended by itself.
  if (svr.is_running()) svr.stop();
  if (management) {
    management->stop();
    management_thread.join();
  }
  if (!signalled.load()) pthread_kill(stopper.native_handle(), SIGTERM);
  stopper.join();
  workers.wait_idle();
  stopping = true;
  leak_checker.join();
  return 0;
}

}  // namespace lockbench::real

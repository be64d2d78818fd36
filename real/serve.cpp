// serve: one pod over HTTP (contract in serve.hpp), as a ServePod with the
// steps of a RealRun (real/real_run.hpp): prepare (schema, pool, partner,
// store), start_background (the strategy's work, leak detection), listen (the
// routes; requests go to the workers), drain (in-flight requests finish, the
// background work is told the requests are over and joined). Errors become
// HTTP statuses here, at the edge (real/pod_protocol.hpp's status_of).
#include "real/serve.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include <httplib.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/context.hpp"
#include "core/prometheus.hpp"
#include "base/redact.hpp"
#include "real/faults.hpp"
#include "real/http_guard.hpp"
#include "real/management_server.hpp"
#include "real/leftovers.hpp"
#include "real/partner_http.hpp"
#include "real/pool.hpp"
#include "real/real_world.hpp"
#include "real/kv_lease_store.hpp"
#include "real/run_common.hpp"
#include "real/carriers.hpp"
#include "real/workers.hpp"
#include "strategies/registry.hpp"
#include "scenarios/registry.hpp"
#include "settings/table.hpp"

namespace lockbench::real {

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;

// RealWorld plus a count of requests inside a partner call: the runner's crash
// fault waits for one, so that the pod dies holding its lock or lease.
class PodWorld final : public World {
 public:
  explicit PodWorld(RealWorld& inner) : inner_(inner) {}
  Duration now() override { return inner_.now(); }
  Task<void> sleep(RequestCtx& cx, Duration d) override { return inner_.sleep(cx, d); }
  Task<ConnHandle> acquire(RequestCtx& cx) override { return inner_.acquire(cx); }
  Task<PartnerReply> partner_attempt(RequestCtx& cx, const PartnerCall& call) override {
    // A request's first call: step 1 of a promotion, or a call outside one. The
    // pause fault strikes there, so that the frozen holder always has a next call.
    const bool first = call.op_step <= 1;
    in_partner_.fetch_add(1);
    if (first) in_first_call_.fetch_add(1);
    struct Done {
      std::atomic<int>& n;
      std::atomic<int>* first;
      ~Done() {
        n.fetch_sub(1);
        if (first) first->fetch_sub(1);
      }
    } done{in_partner_, first ? &in_first_call_ : nullptr};
    co_return co_await inner_.partner_attempt(cx, call);
  }
  bool requests_over() override { return inner_.requests_over(); }
  PartnerGuard* partner_guard(RequestCtx& cx) override { return inner_.partner_guard(cx); }
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
  int in_first_call() const { return in_first_call_.load(); }

 private:
  RealWorld& inner_;
  std::atomic<int> in_partner_{0};
  std::atomic<int> in_first_call_{0};  // of in_partner_, those in a request's first call
};

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

const Settings& checked(const Settings& configured, const ServeOptions& o) {
  validate_settings(configured);  // --readiness, --liveness: the runner's (real/kubelet.hpp); a pod only answers its probes
  if (configured.db_url.empty()) throw SettingError("--db: serve needs a PostgreSQL URL (postgresql://user@host:port/db)");
  if (configured.partner_url.empty()) throw SettingError("--partner: serve needs the partner's URL (http://127.0.0.1:PORT)");
  if (o.port < 0 || o.port > 65535) throw SettingError("--port: must be a whole number from 0 to 65535");
  if (o.pod < 1 || o.pod > 64) throw SettingError("--pod: must be a whole number from 1 to 64");
  if (o.management_port > 65535) throw SettingError("--management-port: must be a whole number from 0 to 65535");
  return configured;
}

class ServePod {
 public:
  ServePod(const Settings& configured, const ServeOptions& o);
  ~ServePod();
  int run();

 private:
  void block_stop_signals();
  void prepare();
  void prepare_schema();
  void open_pool();
  void start_background();
  void background_worker(int i);
  void resume_background();
  void route();
  void route_ops();
  void route_health(httplib::Server& server);
  void route_lockbench();
  void handle_op(const httplib::Request& req, httplib::Response& res, std::string_view sc, const std::string& key_text);
  std::optional<Request> parse_op(const httplib::Request& req, httplib::Response& res, std::string_view sc,
                                  const std::string& key_text);
  std::pair<Outcome, TimeSplit> serve_on_a_worker(const Request& r, Duration arrived);
  void readiness(const httplib::Request& req, httplib::Response& res);
  Duration readiness_cap() const;
  ManagementAnswer readiness_answer(const std::optional<std::string>& timeout_ms);
  std::string metrics_text();
  void metrics(httplib::Response& res);
  void requests_over(const httplib::Request& req, httplib::Response& res);
  json stats();
  int listen_port();
  void start_management();
  void serve_until_stopped(int port);
  void drain();

  const Settings s_;
  const ServeOptions o_;
  const StrategyInfo& info_;
  const std::unique_ptr<Strategy> strategy_;
  const std::unique_ptr<Scenario> scenario_;
  const std::int64_t run_;
  const std::string pool_name_, session_name_;
  sigset_t stop_signals_{};
  bool pooler_found_ = false;  // --db through PgBouncer: unnamed statements (--statements auto)
  std::unique_ptr<Pool> pool_;
  std::optional<PartnerHttp> partner_;
  // redis-lease: the run's store, shared by every pod of the run (keys "lockbench:<run>:…";
  // the runner that started the pods deletes them at the end). Made before the
  // world that uses it, so that it outlives the world's renewals.
  std::unique_ptr<KvLeaseStore> redis_;
  std::optional<RealWorld> real_world_;
  std::optional<PodWorld> world_;
  Recorder recorder_{std::chrono::seconds(1), 0};  // lock counters only: the runner measures requests
  std::array<std::atomic<std::int64_t>, 5> outcomes_{};
  std::unique_ptr<Carriers> carriers_;  // --virtual-threads: the pod's carrier threads (real/carriers.hpp), outlives workers_
  std::optional<WorkerPool> workers_;
  std::atomic<int> background_running_{0};
  std::mutex background_mu_;  // a worker's end for good, and its start again
  std::vector<std::thread> background_;
  std::vector<std::unique_ptr<std::atomic<bool>>> background_done_;
  const HttpLimits limits_;
  GuardedServer svr_{limits_};
  std::unique_ptr<ManagementServer> management_;
  int management_port_ = -1;
  std::atomic<bool> stopping_{false}, signalled_{false};
  std::thread leak_checker_, stopper_;
};

ServePod::ServePod(const Settings& configured, const ServeOptions& o)
    : s_(checked(configured, o).scaled()),
      o_(o),
      info_(applying_strategy(s_.strategy, s_.scenario)),
      strategy_(make_strategy(info_.spec)),  // with the traffic beside its lock
      scenario_(make_scenario(s_.scenario)),
      run_(o.run ? *o.run : new_run_key()),
      pool_name_("pod" + std::to_string(o.pod)),
      session_name_(application_name("serve-" + std::to_string(run_), pool_name_)) {}

// The background work joined on every way out (a SettingError included).
ServePod::~ServePod() {
  {
    std::lock_guard lock(background_mu_);  // no resume_background() after this
    stopping_ = true;
  }
  if (leak_checker_.joinable()) leak_checker_.join();
  if (real_world_) real_world_->end_requests();
  for (auto& t : background_)
    if (t.joinable()) t.join();
}

int ServePod::run() {
  block_stop_signals();
  prepare();
  start_background();
  route();
  const int port = listen_port();
  start_management();
  serve_until_stopped(port);
  drain();
  return 0;
}

// Block the stop signals in every thread (the ones started later inherit the
// mask); one thread takes them with sigwait and stops the server.
void ServePod::block_stop_signals() {
  sigemptyset(&stop_signals_);
  sigaddset(&stop_signals_, SIGTERM);
  sigaddset(&stop_signals_, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals_, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

void ServePod::prepare() {
  prepare_schema();
  open_pool();
  partner_.emplace(s_.partner_url, s_.partner_connect_timeout, s_.partner_read_timeout);
  if (info_.props.needs_lease_store) redis_ = open_kv_lease_store(s_, info_.props, std::to_string(run_), std::chrono::seconds(2));
  real_world_.emplace(*pool_, *partner_);
  real_world_->set_lease_store(redis_.get());
  world_.emplace(*real_world_);
  real_world_->set_pins_carriers(pins_carriers(s_, info_.props));
  if (s_.virtual_threads) {  // a thread per request, on the pod's carriers
    workers_.emplace(WorkerPool::Unbounded{});
    carriers_ = std::make_unique<Carriers>(s_.carriers);
  } else {
    workers_.emplace(s_.max_threads, s_.accept_count);
  }
}

// The schema may not exist yet (pods started before their runner): create it
// so that the pool's prepared statements find lockbench.rows.
void ServePod::prepare_schema() {
  for (int attempt = 0;; ++attempt) {
    try {
      auto c = open_session(s_.db_url, session_name_);
      create_schema(*c);
      pooler_found_ = behind_pooler(*c);
      return;
    } catch (const SchemaNotOurs& e) {
      throw SettingError("--db: " + std::string(e.what()));
    } catch (const std::exception& e) {
      if (attempt >= 2)
        throw SettingError("--db: cannot prepare lockbench's schema at " + redact_secrets(s_.db_url) + ": " + one_line(e.what()));
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // two pods creating it at once
    }
  }
}

void ServePod::open_pool() {
  try {
    PoolConfig cfg{s_.db_url,       s_.maximum_pool_size, s_.connection_timeout, s_.leak_detection_threshold,
                   s_.max_lifetime, (o_.pod - 1) * s_.maximum_pool_size, pool_name_, run_, session_name_,
                   unnamed_statements(s_.statements, s_.pgbouncer, pooler_found_)};
    pool_ = std::make_unique<Pool>(cfg, Clock::now());
  } catch (const std::exception& e) {
    throw SettingError("--db: cannot connect to " + redact_secrets(s_.db_url) + ": " + one_line(e.what()));
  }
}

// The strategy's background work (the outbox's pollers, split-tx's and
// after-commit's reconcilers): one thread each, as the in-process pods start
// per pod; each ends by itself (requests over and nothing due, or its drain
// limit). Leak detection, as the in-process pods' sampler does.
void ServePod::start_background() {
  const int n = strategy_->background_workers(s_);
  background_running_ = n;
  for (int i = 0; i < n; ++i) {
    background_done_.push_back(std::make_unique<std::atomic<bool>>(false));
    background_.emplace_back([this, i] { background_worker(i); });
  }
  leak_checker_ = std::thread([this] {
    while (!stopping_.load()) {
      pool_->check_leaks();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
}

// One background worker: the strategy's background work until it ends by
// itself. It ends for good only when the requests are still over, decided
// under background_mu_, where resume_background() decides what to start.
void ServePod::background_worker(int i) {
  for (;;) {
    RequestCtx cx(*world_, recorder_, s_, background_request(o_.pod - 1, s_.pods, i));
    try {
      run_sync(strategy_->background(cx, *scenario_));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "lockbench serve %s: background worker %d stopped: %s\n", pool_name_.c_str(), i,
                   one_line(e.what()).c_str());
    }
    {
      std::lock_guard lock(background_mu_);
      if (real_world_->requests_over() || stopping_.load()) {
        background_done_[static_cast<std::size_t>(i)]->store(true);
        background_running_.fetch_sub(1);
        return;
      }
    }
    // Requests go on (a new run's came while this one was ending, or the work failed): again, not in a tight loop.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// A long-lived pod (--targets) serves run after run: the first request after
// a requests-over starts the background work again (issue #42: runs 2 and 3
// delivered half of their outbox, their pollers gone since run 1).
void ServePod::resume_background() {
  std::lock_guard lock(background_mu_);
  if (!real_world_->requests_over() || stopping_.load()) return;
  real_world_->begin_requests();
  for (std::size_t i = 0; i < background_.size(); ++i) {
    if (!background_done_[i]->load()) continue;  // still draining: it sees the new run and goes on
    background_[i].join();
    background_done_[i]->store(false);
    background_running_.fetch_add(1);
    background_[i] = std::thread([this, i] { background_worker(static_cast<int>(i)); });
  }
}

// ---- routes

void ServePod::route() {
  // Connection threads only carry requests to the workers (Tomcat's acceptor and
  // poller): enough of them that the workers and the accept queue decide.
  // On virtual threads (no worker cap) they are what bounds a pod's requests in flight: 1024.
  const int http_threads = s_.virtual_threads ? 1024 : std::min(4096, s_.max_threads + s_.accept_count + 16);
  svr_.new_task_queue = [http_threads] { return new httplib::ThreadPool(static_cast<std::size_t>(http_threads)); };
  svr_.set_keep_alive_max_count(1000);
  svr_.set_write_timeout(std::chrono::seconds(30));
  // Framing first: a POST without a length is refused now, not read until the client closes.
  svr_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    const auto refused = framing_refusal(req, limits_.body_bytes_max);
    if (!refused) return httplib::Server::HandlerResponse::Unhandled;
    res.status = refused->status;
    res.set_content("refused: " + refused->reason + "\n", "text/plain");
    close_after_this_response();
    return httplib::Server::HandlerResponse::Handled;
  });
  route_ops();
  route_health(svr_);
  route_lockbench();
}

void ServePod::route_ops() {
  svr_.Post(R"(/ops/([a-z0-9-]+)/(-?\d+))", [this](const httplib::Request& req, httplib::Response& res) {
    handle_op(req, res, req.matches[1].str(), req.matches[2].str());
  });
  // Each scenario's own path, as its registry row names it (/users/{key}/primary, ...).
  for (const ScenarioInfo& sc : scenario_registry()) {
    if (sc.route.empty()) continue;
    std::string pattern(sc.route);
    pattern.replace(pattern.find("{key}"), 5, R"((-?\d+))");
    svr_.Post(pattern, [this, name = std::string(sc.name)](const httplib::Request& req, httplib::Response& res) {
      handle_op(req, res, name, req.matches[1].str());
    });
  }
}

void ServePod::route_health(httplib::Server& server) {
  // On virtual threads the health handlers are virtual threads too: they wait
  // for a carrier like every request (and time out while all are pinned).
  server.Get(kPathReadiness, [this](const httplib::Request& req, httplib::Response& res) {
    VirtualThread vt(carriers_.get(), false);
    readiness(req, res);
  });
  server.Get(kPathLiveness, [this](const httplib::Request&, httplib::Response& res) {
    VirtualThread vt(carriers_.get(), false);
    res.set_content(R"({"status":"UP"})", "application/json");
  });
  server.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) { metrics(res); });
}

void ServePod::route_lockbench() {
  svr_.Get(kPathInfo, [this](const httplib::Request&, httplib::Response& res) {
    const json j = {{"run", run_}, {"scenario", s_.scenario}, {"strategy", std::string(info_.spec)}, {"pod", o_.pod},
                    {"pid", static_cast<long>(::getpid())}, {"settings", settings_json(s_)}};
    res.set_content(j.dump(), "application/json");
  });
  svr_.Get(kPathPool, [this](const httplib::Request&, httplib::Response& res) {
    const PoolSample now = pool_->sample();
    const json j = {{"active", now.active}, {"pending", now.pending}, {"idle", now.idle}, {"in_partner", world_->in_partner()},
                    {"in_first_call", world_->in_first_call()}};
    res.set_content(j.dump(), "application/json");
  });
  svr_.Post(kPathRequestsOver, [this](const httplib::Request& req, httplib::Response& res) { requests_over(req, res); });
  svr_.Get(kPathStats, [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(stats().dump(), "application/json");
  });
}

// A request's path and headers; nullopt after answering 404 or 400.
std::optional<Request> ServePod::parse_op(const httplib::Request& req, httplib::Response& res, std::string_view sc,
                                          const std::string& key_text) {
  if (sc != s_.scenario) {
    res.status = 404;
    res.set_content("this pod serves scenario " + s_.scenario + ", not " + std::string(sc) + "\n", "text/plain");
    return std::nullopt;
  }
  const auto id = header_number(req, kHeaderRequestId);
  const auto choice = req.has_header(kHeaderChoice) ? header_number(req, kHeaderChoice) : std::optional<std::uint64_t>(0);
  Key key = 0;
  try {
    key = std::stoll(key_text);
  } catch (const std::exception&) {
  }
  if (!id || *id == 0 || !choice || key < 1) {
    res.status = 400;
    res.set_content("need a key >= 1 in the path, X-Request-Id: N (N >= 1) and optionally X-Choice: N\n", "text/plain");
    return std::nullopt;
  }
  if (key > s_.keys) {  // no row was seeded for it: never inserted by a request
    res.status = 404;
    res.set_content("key " + std::to_string(key) + " is outside this run's keys 1.." + std::to_string(s_.keys) + "\n",
                    "text/plain");
    return std::nullopt;
  }
  Request r;
  r.id = *id;
  r.key = key;
  r.choice = *choice;
  return r;
}

void ServePod::handle_op(const httplib::Request& req, httplib::Response& res, std::string_view sc,
                         const std::string& key_text) {
  std::optional<Request> r = parse_op(req, res, sc, key_text);
  if (!r) return;
  if (real_world_->requests_over()) resume_background();
  const Duration arrived = pool_->now();
  r->intended = arrived;
  const auto [out, split] = serve_on_a_worker(*r, arrived);
  outcomes_[static_cast<std::size_t>(out)]++;
  res.status = status_of(out);
  res.set_header(kHeaderSplit, split_header(split, pool_->now() - arrived));
  res.set_header(kHeaderOutcome, std::string(outcome_name(out)));
  res.set_content(std::string(outcome_name(out)) + "\n", "text/plain");
}

// Rejected at once when every worker is busy and the accept queue is full.
std::pair<Outcome, TimeSplit> ServePod::serve_on_a_worker(const Request& r, Duration arrived) {
  auto done = std::make_shared<std::promise<std::pair<Outcome, TimeSplit>>>();
  auto answer = done->get_future();
  const bool accepted = workers_->submit([this, r, arrived, done] {
    VirtualThread vt(carriers_.get(), true);
    StepNote note;
    current_step_note() = &note;
    RequestCtx cx(*world_, recorder_, s_, r);
    cx.split().queue = pool_->now() - arrived;
    Outcome out = Outcome::error;
    try {
      out = run_sync(serve(cx, *strategy_, *scenario_));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "lockbench serve %s: request %llu: %s\n", pool_name_.c_str(),
                   static_cast<unsigned long long>(r.id), one_line(e.what()).c_str());
    }
    current_step_note() = nullptr;
    done->set_value({out, cx.split()});
  });
  if (!accepted) return {Outcome::rejected, TimeSplit{}};
  return answer.get();
}

// Spring Boot's readiness: the DataSource health indicator borrows a connection,
// within --probe-timeout or the probe's own timeout (kPathReadiness's
// kParamTimeoutMs: the runner's kubelet sends its probe's, so a borrow gives up
// when kubelet does, as in the simulator). Never longer than the pod's own
// configured bound (`readiness_cap`), whatever timeout_ms asks: 8 probes of
// timeout_ms=999999 held 8 threads for 16 minutes (#42).
Duration ServePod::readiness_cap() const {
  return std::max(s_.probe_timeout, s_.readiness.on ? s_.readiness.timeout : Duration{0});
}

ManagementAnswer ServePod::readiness_answer(const std::optional<std::string>& timeout_ms) {
  Duration wait = s_.probe_timeout;
  if (timeout_ms) {
    const std::string& v = *timeout_ms;
    if (v.empty() || v.size() > 6 || v.find_first_not_of("0123456789") != std::string::npos)
      return {400, "text/plain", std::string(kParamTimeoutMs) + ": a whole number of milliseconds from 0 to 999999\n"};
    wait = std::chrono::milliseconds(std::stoll(v));
  }
  wait = std::min(wait, readiness_cap());
  bool up = false;
  try {
    if (PgConn* c = pool_->borrow(wait, Pool::Borrower::probe)) {
      ConnHandle h(c);
      c->select_one();
      up = true;
    }
  } catch (const std::exception&) {
  }
  return {up ? 200 : 503, "application/json", up ? R"({"status":"UP"})" : R"({"status":"DOWN"})"};
}

void ServePod::readiness(const httplib::Request& req, httplib::Response& res) {
  const auto a = readiness_answer(req.has_param(kParamTimeoutMs) ? std::optional(req.get_param_value(kParamTimeoutMs))
                                                                 : std::nullopt);
  res.status = a.status;
  res.set_content(a.body, a.content_type);
}

void ServePod::metrics(httplib::Response& res) { res.set_content(metrics_text(), "text/plain; version=0.0.4"); }

std::string ServePod::metrics_text() {
  const PoolSample now = pool_->sample();
  const PoolStats st = pool_->stats();
  std::ostringstream m;
  m.precision(9);
  m << hikaricp_exposition({hikari_metrics(pool_name_, now, st, pool_->size())});
  m << "# HELP lockbench_requests_total Requests answered, by outcome\n# TYPE lockbench_requests_total counter\n";
  for (Outcome oc : kOutcomes)
    m << "lockbench_requests_total{pool=\"" << pool_name_ << "\",outcome=\"" << outcome_name(oc) << "\"} "
      << outcomes_[static_cast<std::size_t>(oc)].load() << '\n';
  m << "# HELP lockbench_partner_calls_in_flight Requests inside a partner call\n"
    << "# TYPE lockbench_partner_calls_in_flight gauge\n"
    << "lockbench_partner_calls_in_flight{pool=\"" << pool_name_ << "\"} " << world_->in_partner() << '\n';
  return m.str();
}

// The runner's load is over: the background work may end once nothing is due.
void ServePod::requests_over(const httplib::Request& req, httplib::Response& res) {
  if (!control_allowed(req, o_.control_token)) {
    res.status = 403;
    res.set_content(o_.control_token.empty() ? "control endpoints answer loopback peers only (or set --control-token)\n"
                                             : "control endpoints need Authorization: Bearer <--control-token>\n",
                    "text/plain");
    return;
  }
  real_world_->end_requests();
  res.set_content(json{{"background_running", background_running_.load()}}.dump(), "application/json");
}

json ServePod::stats() {
  const PoolStats st = pool_->stats();
  const LockCounters& lc = recorder_.locks;
  json outs = json::object();
  for (Outcome oc : kOutcomes) outs[std::string(outcome_name(oc))] = outcomes_[static_cast<std::size_t>(oc)].load();
  return {{"pool",
           {{"name", pool_name_}, {"size", st.size}, {"active_max", st.active_max}, {"pending_max", st.pending_max},
            {"busy_conn_s", st.busy_conn_s}, {"pending_s", st.pending_s}, {"probe_borrows", st.probe_borrows},
            {"wait_ms", st.wait_ms.values()}, {"hold_ms", st.hold_ms.values()},
            {"timeouts", st.timeouts}, {"leaks", st.leaks}, {"leak_steps", st.leak_steps}}},
          {"locks",
           {{"acquired", lc.acquired.load()}, {"denied", lc.denied.load()}, {"lease_steals", lc.lease_steals.load()},
            {"version_conflicts", lc.version_conflicts.load()}, {"unlock_failures", lc.unlock_failures.load()},
            {"nothing_locked", lc.nothing_locked.load()}, {"lease_lost", lc.lease_lost.load()},
            {"renewals", lc.renewals.load()}, {"renewal_failures", lc.renewal_failures.load()}}},
          {"outcomes", outs},
          {"backend_pids", pool_->backend_pids()},
          {"connections_replaced", pool_->replaced()},
          {"in_partner", world_->in_partner()},
          {"background_running", background_running_.load()},
          {"effects", recorder_.effects.json()},
          {"virtual_threads", carriers_ ? carriers_block(pins_carriers(s_, info_.props), s_.carriers, carriers_->stats())
                                        : json(nullptr)}};
}

// ---- listening

// The listen backlog is Tomcat's acceptCount plus its threads, as a servlet
// container's connector queues connections. cpp-httplib 0.11 listens with a
// backlog of 5: a burst of 8 connections then loses SYNs, whose client
// retries a second later, and a one-winner burst shows two winners. The
// socket is caught as it is made and listened on again with the real backlog.
int ServePod::listen_port() {
  socket_t listen_fd = INVALID_SOCKET;
  svr_.set_socket_options([&listen_fd](socket_t sock) {
    httplib::default_socket_options(sock);
    listen_fd = sock;
  });
  const int port = o_.port == 0 ? svr_.bind_to_any_port(o_.host) : (svr_.bind_to_port(o_.host, o_.port) ? o_.port : -1);
  svr_.set_socket_options(httplib::default_socket_options);
  if (port <= 0) throw SettingError("--port: cannot listen on " + o_.host + ":" + std::to_string(o_.port));
  const int backlog = static_cast<int>(std::clamp<std::int64_t>(std::int64_t{s_.accept_count} + s_.max_threads, 16, 65535));
  if (listen_fd == INVALID_SOCKET || ::listen(listen_fd, backlog) != 0)
    throw SettingError("--accept-count: cannot set the listen backlog to " + std::to_string(backlog) + " on " + o_.host +
                       ":" + std::to_string(port));
  return port;
}

// The management port: health and metrics on a listener of their own, so that
// probes answer while every request thread is taken (a flood, a slow client)
// and no client of the management port itself can starve it
// (real/management_server.hpp: one polling thread reads every request head;
// liveness is answered there, readiness and metrics on 4 workers).
void ServePod::start_management() {
  if (o_.management_port < 0) return;
  // timeout_ms from the query string, as httplib would give it.
  const auto timeout_ms = [](std::string_view query) -> std::optional<std::string> {
    const std::string key = std::string(kParamTimeoutMs) + "=";
    for (std::size_t pos = 0; pos <= query.size();) {
      const std::size_t amp = std::min(query.find('&', pos), query.size());
      const std::string_view pair = query.substr(pos, amp - pos);
      if (pair.rfind(key, 0) == 0) return std::string(pair.substr(key.size()));
      if (pair == kParamTimeoutMs) return std::string();
      pos = amp + 1;
    }
    return std::nullopt;
  };
  std::map<std::string, ManagementRoute> routes;
  routes[kPathReadiness] = {[this, timeout_ms](std::string_view q) {
                              VirtualThread vt(carriers_.get(), false);
                              return readiness_answer(timeout_ms(q));
                            },
                            false};
  // On virtual threads liveness waits for a carrier like every request (and
  // times out while all are pinned, as in the JVM): a worker's, not the poller's.
  routes[kPathLiveness] = {[this](std::string_view) {
                             VirtualThread vt(carriers_.get(), false);
                             return ManagementAnswer{200, "application/json", R"({"status":"UP"})"};
                           },
                           carriers_ == nullptr};
  routes["/metrics"] = {[this](std::string_view) { return ManagementAnswer{200, "text/plain; version=0.0.4", metrics_text()}; },
                        false};
  try {
    management_ = std::make_unique<ManagementServer>(o_.host, o_.management_port, std::move(routes));
  } catch (const std::exception& e) {
    throw SettingError("--management-port: cannot listen on " + o_.host + ":" + std::to_string(o_.management_port) +
                       ": " + e.what());
  }
  management_port_ = management_->port();
  management_->start();
}

void ServePod::serve_until_stopped(int port) {
  stopper_ = std::thread([this] {
    int sig = 0;
    sigwait(&stop_signals_, &sig);
    signalled_ = true;
    svr_.stop();
    if (management_) management_->stop();
  });
  std::printf("%s%s:%d\n", std::string(kListeningPrefix).c_str(), o_.host.c_str(), port);
  std::printf("lockbench serve: pod %d, %s under %s, run %lld\n", o_.pod, s_.scenario.c_str(),
              std::string(info_.spec).c_str(), static_cast<long long>(run_));
  if (management_) std::printf("management on %s:%d\n", o_.host.c_str(), management_port_);
  std::fflush(stdout);
  svr_.listen_after_bind();
  if (svr_.is_running()) svr_.stop();  // wake the stopper if the server ended by itself
  if (management_) management_->stop();
  if (!signalled_.load()) pthread_kill(stopper_.native_handle(), SIGTERM);
  stopper_.join();
}

// In-flight requests finish first; the destructor then tells the background
// work the requests are over and joins it.
void ServePod::drain() {
  workers_->wait_idle();
  stopping_ = true;
  leak_checker_.join();
}

}  // namespace

int serve_pod(const Settings& configured, const ServeOptions& o) { return ServePod(configured, o).run(); }

}  // namespace lockbench::real

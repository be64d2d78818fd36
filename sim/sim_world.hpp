// The simulated world: core's World and Conn over virtual time.
//
//   SimWorld   the run: event loop, database (LockManager), partner front,
//              pods, arrivals, faults; implements World for the strategies
//   Pod        one service instance: a HikariCP-like pool, Tomcat-like workers
//              (max_threads + accept_count) and a health probe
//   SimConn    one pooled connection = one database backend; each statement
//              takes a db_latency sample and is applied when it ends
//
// Strategies run unchanged: every await here suspends on the event loop and is
// resumed by it. Single-threaded: nothing in sim/ needs a lock of its own.
#pragma once

#include <algorithm>
#include <array>
#include <coroutine>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/carriers.hpp"
#include "core/context.hpp"
#include "core/kubelet.hpp"
#include "core/metrics.hpp"
#include "core/run.hpp"
#include "core/scenario.hpp"
#include "core/settings.hpp"
#include "core/strategy.hpp"
#include "strategies/registry.hpp"
#include "core/world.hpp"
#include "sim/bouncer.hpp"
#include "sim/event_loop.hpp"
#include "sim/etcd_store.hpp"
#include "sim/lease_store.hpp"
#include "sim/local_locks.hpp"
#include "sim/lock_manager.hpp"
#include "sim/partner_front.hpp"
#include "sim/run_sim.hpp"

namespace lockbench::sim {

class SimWorld;
class Pod;

class SimConn final : public Conn {
 public:
  SimConn(SimWorld& w, Pod& pod, int id, Backend backend);
  int id() const override { return id_; }

  Task<void> begin() override;
  Task<void> commit() override;
  Task<void> rollback() override;
  Task<LockResult> lock_row(Table t, Key key, LockMode mode) override;
  Task<LockResult> advisory_xact_lock(Key key, LockMode mode) override;
  Task<LockResult> advisory_lock(Key key, LockMode mode) override;
  Task<bool> advisory_unlock(Key key) override;
  Task<LeaseResult> lease_acquire(Table t, Key key, std::string_view owner, Duration ttl, LeaseClock clock,
                                  LeaseSql sql) override;
  Task<bool> lease_release(Table t, Key key, std::string_view owner, LeaseSql sql) override;
  Task<bool> lease_extend(Table t, Key key, std::string_view owner, Duration ttl) override;
  Task<Row> read(Table t, Key key) override;
  Task<std::int64_t> count(Table t, Key key) override;
  Task<bool> insert(Table t, Key key, const Row& values) override;
  Task<bool> update(Table t, Key key, const Row& values, const Guard& guard) override;
  Task<Claim> claim_due(Table t, std::int64_t due_at_most, int limit) override;
  Task<Entity> load_entity(Table t, Key key) override;
  Task<EntitySave> save_entity(Table t, Key key, const Entity& e, bool lock_mapped) override;
  void release() override;

  // Pool bookkeeping.
  SimWorld& world() const { return w_; }
  Backend backend() const { return backend_; }
  bool borrowed() const { return borrowed_; }
  void on_borrow(RequestCtx* cx, Duration at, std::size_t record = kNoRecord);
  static constexpr std::size_t kNoRecord = ~std::size_t{0};
  std::uint64_t borrow_gen() const { return borrow_gen_; }
  Duration created_at() const { return created_at_; }
  std::string_view last_step() const { return last_step_; }
  // The backend is gone (crash, shutdown, max lifetime): release() does nothing.
  void kill() { dead_ = true; }
  // The fault conn_lost ended this connection's backend: its pool replaces it on return.
  bool lost() const { return lost_; }
  // The client connection closes (crash, maxLifetime, lost): its backend ends
  // with it; behind a Bouncer, only a backend it holds right now.
  void close();

 private:
  friend class Bouncer;
  // One statement's start: a backend from the Bouncer when there is one (the
  // wait for it included), then one db_latency sample on the event loop.
  struct StatementStart {
    SimConn& c;
    Duration latency;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h);
    void await_resume();
  };
  StatementStart statement();
  void statement_resumed();  // StatementStart::await_resume: throws when the Bouncer closed this client
  // A statement that suspends only for its latency, as an awaiter (no coroutine
  // frame of its own): `apply(t0)` runs when the latency has passed, t0 being
  // the statement's start, and gives the statement's answer.
  template <class Apply>
  struct OneStatement {
    SimConn* c;
    Apply apply;
    Duration t0{};
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) {
      t0 = c->w_now();
      c->statement().await_suspend(h);
    }
    auto await_resume() {
      c->statement_resumed();
      return apply(t0);
    }
  };
  template <class Apply>
  Task<std::invoke_result_t<Apply&, Duration>> one_statement(Apply apply) {
    return Task<std::invoke_result_t<Apply&, Duration>>::from_awaiter(OneStatement<Apply>{this, apply});
  }
  Duration w_now() const;  // w_.now(), for OneStatement (SimWorld is not complete here)
  // The event-loop owner of this connection's wake-ups: its borrower's (Pod::owner_for).
  int owner() const;
  // The session advisory locks of backend b leave the requests' ledger (the backend ends).
  void forget_session_locks(Backend b);
  bool tracing() const;  // a request holds the connection and the trace has room
  void check_usable(std::string_view what) const;
  // Named fault sites (--db-faults): a statement inside a transaction may find
  // its backend gone (conn_lost); a COMMIT may fail (commit_fail). Throw DbError.
  void maybe_lose_connection(std::string_view what);
  void lose_connection(std::string_view what);
  // Time and trace of one statement, attributed to the borrowing request.
  void account(const char* step, Duration start, bool lock_statement, std::string detail = {});
  Task<LockResult> lock(Space sp, Scope sc, Key key, LockMode mode, const char* what);
  Task<LockResult> lock_waiting(Space sp, Scope sc, Key key, LockMode mode, const char* what);
  LockResult lock_try(Space sp, Scope sc, Key key, const char* what);  // after the statement's latency
  LockResult lock_answer(Space sp, Scope sc, Key key, LockWait wait, const char* what, LockResult r, bool waited,
                         Duration t0);  // the lock's effects on the transaction, accounting and trace
  // An UPDATE: waits while another transaction holds the row lock, so its WHERE
  // is evaluated on the row as that transaction committed it.
  LockManager::WaitAwaiter lock_for_update(Key row_key);
  void update_done(Key row_key);
  const char* table_name(Table t) const;
  bool unique_table(Table t) const;  // TableSpec::unique (false: several rows per key)

  SimWorld& w_;
  Pod& pod_;
  const int id_;
  Backend backend_;  // behind a Bouncer: the backend held now, -1 = none
  const Duration created_at_;
  bool in_tx_ = false;
  bool aborted_ = false;  // an error inside the transaction: only ROLLBACK is accepted
  bool borrowed_ = false;
  bool dead_ = false;
  bool lost_ = false;
  bool server_wait_failed_ = false;  // the Bouncer's query_wait_timeout hit this client's wait
  std::uint64_t borrow_gen_ = 0;
  Duration borrowed_at_{};
  RequestCtx* cx_ = nullptr;  // the request holding this connection (null for the probe)
  std::size_t record_ = kNoRecord;  // SimWorld::borrows() entry, when kept
  std::string_view last_step_ = "borrowed";
};

// One service instance. Its pool follows HikariCP: FIFO waiters (or, with
// --pool-order hikari, ConcurrentBag's hand-off, in which a newcomer may take
// a connection offered to a waiter that has not woken yet), an empty handle
// after connectionTimeout, idle connections handed out least recently
// returned first, open transactions rolled back on return, leak warnings.
class Pod {
 public:
  Pod(SimWorld& w, int index, int owner);
  int index() const { return index_; }
  int owner() const { return owner_; }  // event-loop owner (this incarnation)
  SimWorld& world() const { return w_; }
  Duration app_skew() const { return app_skew_; }

  struct Borrow {
    Pod& pod;
    Duration timeout;
    int owner;  // whose wake-up: the pod's, or its pinned twin's (owner_for)
    SimConn* got = nullptr;
    bool await_ready();
    void await_suspend(std::coroutine_handle<> h);
    SimConn* await_resume() const noexcept { return got; }
  };
  // co_await: a connection, or null after `timeout`.
  Borrow borrow(Duration timeout, int owner) { return Borrow{*this, timeout, owner}; }
  Borrow borrow(Duration timeout) { return Borrow{*this, timeout, owner_}; }

  // Virtual threads on JDK 21 to 23 (--virtual-threads, --jdk, --carriers): a
  // request inside synchronized, waiting to enter the monitor or holding it,
  // pins its carrier thread: it blocks (pool, database, partner) without
  // giving the carrier back. The pod has --carriers carriers. While every one
  // is pinned, no other virtual thread of the pod can run: whatever comes due
  // for them (a request's start, a statement's answer, a probe's check, a
  // connection handed over) waits for a carrier, even for requests that need
  // no lock. The event loop holds the pod's owner; the pinned requests' events
  // go to its twin, which is never held (they keep their carriers).
  int owner_for(std::uint64_t request) const {
    if (pinned_.empty()) [[likely]] return owner_;
    return std::find(pinned_.begin(), pinned_.end(), request) != pinned_.end() ? pinned_owner_ : owner_;
  }
  void pin(std::uint64_t request);
  void unpin(std::uint64_t request);
  void give_back(SimConn* c);

  // Workers: starts, queues or rejects a request.
  void accept(const Request& r);
  void request_done(std::uint32_t slot);
  void start_probes();
  // A Kubernetes probe's check in this pod (sim/kubelet.cpp): with `db`, a borrow
  // within `timeout` and SELECT 1; without, only the pod's answer (deferred while
  // it is paused). Tells SimWorld::probe_answered; a crash ends it unanswered.
  void start_check(int kind, std::uint64_t probe, bool db, Duration timeout);
  // The strategy's background work (Strategy::background), killed with the pod.
  void start_background();

  // Crash: every connection's backend dies; returns the requests in flight
  // (running and queued), in id order, and forgets them.
  struct Lost {
    Request request;
    RequestCtx* cx = nullptr;  // null when it was still queued
    std::coroutine_handle<> root;
    bool probe = false;  // a readiness probe, not a request
  };
  std::vector<Lost> crash();
  // Leak detection: a warning when `c` is still borrowed after leakDetectionThreshold.
  void watch_for_leak(SimConn* c);
  std::vector<Backend> backends() const;
  void forget_root(std::uint32_t slot);

  int active() const { return active_; }
  // Threads in getConnection (HikariPoolMXBean's threads awaiting a
  // connection): those parked, and those woken for a connection, not yet back.
  int pending() const { return static_cast<int>(waiters_.size() + offers_.size()); }
  int idle() const { return static_cast<int>(idle_.size()); }
  int in_flight() const { return busy_workers_ + static_cast<int>(queue_.size()); }
  // World::local_lock's table: this incarnation's in-process locks (gone with it).
  LocalLocks local_locks;
  // World::partner_guard: this incarnation's circuit breaker and retry budget
  // (a restarted pod starts closed, with a full budget).
  PartnerGuard partner_guard;

 private:
  struct Waiter {
    std::uint64_t ticket;
    Borrow* borrow;
    std::coroutine_handle<> handle;
    int owner;
    Duration deadline;  // its connectionTimeout's end
  };
  // --pool-order hikari: a returned connection offered to a parked waiter,
  // who takes it when it has woken unless a newcomer took it first (conn null).
  struct Offer {
    SimConn* conn;
    Waiter waiter;
  };
  struct Running {
    Request request;
    RequestCtx* cx = nullptr;
    std::coroutine_handle<> root;  // null: a free slot
    bool probe = false;
  };
  std::uint32_t take_slot(const Running& r);
  bool may_start() const;
  void end_stall();
  static void on_borrow_timeout(void* pod, std::uint64_t ticket);
  void park(Waiter w);
  void offer_idle();
  SimConn* take_idle();
  static void on_offer_woken(void* pod, std::uint64_t ticket);
  static void on_start_next(void* pod, std::uint64_t);
  static void on_probe(void* pod, std::uint64_t);
  static void on_leak_check(void* conn, std::uint64_t gen);
  void start(const Request& r);
  SimConn* replace_if_old(SimConn* c);
  friend class SimWorld;  // and its keep_renewing (sim/renewal.cpp) takes a slot like a probe

  SimWorld& w_;
  const int index_;
  const int owner_;
  const int pinned_owner_;  // owner_'s twin: the events of the pinned requests
  const Duration app_skew_;
  std::vector<std::uint64_t> pinned_;  // requests pinning a carrier, at most --carriers
  Duration stalled_since_{-1};         // every carrier pinned since (-1: not stalled)
  std::vector<std::unique_ptr<SimConn>> conns_;  // every connection ever opened (retired ones stay, dead)
  std::deque<SimConn*> idle_;                    // front = least recently returned
  std::deque<Waiter> waiters_;                   // FIFO, tickets increasing
  std::vector<Offer> offers_;                    // hikari: waiters woken for a connection
  const bool hikari_;                            // --pool-order hikari
  std::uint64_t next_ticket_ = 1;
  int active_ = 0;
  int busy_workers_ = 0;
  std::deque<Request> queue_;  // accepted, waiting for a worker (bounded by accept_count) or a carrier
  std::vector<Running> running_;  // slots of the coroutines in flight, reused through free_slots_
  std::vector<std::uint32_t> free_slots_;
};

class SimWorld final : public World {
 public:
  using ProbeKind = lockbench::ProbeKind;  // Kubernetes' two (core/kubelet.hpp, sim/kubelet.cpp)
  SimWorld(const Settings& s, Strategy& strategy, Scenario& scenario);
  ~SimWorld() override;

  // World
  Duration now() override { return loop_.now(); }
  Task<void> sleep(RequestCtx& cx, Duration d) override;
  Task<ConnHandle> acquire(RequestCtx& cx) override;
  Task<PartnerReply> partner_attempt(RequestCtx& cx, const PartnerCall& call) override;
  PartnerGuard* partner_guard(RequestCtx& cx) override { return &pod_for(cx.request().id).partner_guard; }
  bool requests_over() override { return all_done(); }
  Task<LockResult> local_lock(RequestCtx& cx, Key key, LockMode mode) override;  // sim/local_locks.cpp
  void local_unlock(RequestCtx& cx, Key key) override;
  // The lease store (sim/lease_store.hpp), one --redis-latency round trip each; sim/renewal.cpp.
  Task<LeaseResult> kv_lease_acquire(RequestCtx& cx, Key key, std::string_view owner, Duration ttl) override;
  Task<bool> kv_lease_release(RequestCtx& cx, Key key, std::string_view owner) override;
  Task<bool> kv_lease_extend(RequestCtx& cx, Key key, std::string_view owner, Duration ttl) override;
  // A coroutine of the request's pod (killed with it, frozen while it is paused); sim/renewal.cpp.
  std::unique_ptr<Renewal> keep_renewing(RequestCtx& cx, Duration period, RenewFn renew) override;

  // Runs the whole workload to the end (arrivals stop at `duration`, then the
  // run drains); progress is called every few ten thousand events. `settled`
  // is asked as often: true stops the run there (stopped_early() says when).
  void run(const RunHooks& hooks = {}, const SettledFn& settled = {});
  std::optional<Duration> stopped_early() const { return stopped_early_; }
  nlohmann::json result();

  // Shared with Pod and SimConn.
  EventLoop& loop() { return loop_; }
  LockManager& db() { return db_; }
  Recorder& recorder() { return recorder_; }
  const Settings& settings() const { return s_; }
  PoolStats& pool_stats() { return pool_; }
  ProbeStats& probe_stats() { return probe_; }
  // Carrier pinning (Pod::pin): whether this run has it (--virtual-threads
  // below JDK 24, a strategy holding a monitor through the call), and what it did.
  bool pins_carriers() const { return pins_carriers_; }
  CarrierStats& carrier_stats() { return carriers_; }
  Duration db_latency();
  // Draws for the database's named fault sites (sub-seed "sim.db_faults").
  bool db_fault(double p) { return p > 0 && db_fault_rng_.uniform(0, 1) < p; }
  // Expected false: a run traces its first few thousand requests, then none, so
  // the compiler moves the string building behind it out of the hot code.
  bool tracing() const { return __builtin_expect(recorder_.events().size() < kTraceCap, 0); }
  int next_conn_id() { return next_conn_id_++; }
  Backend next_backend() { return next_backend_++; }
  void pool_changed(int active_delta, int pending_delta, int idle_delta);
  void start_request(Pod& pod, const Request& r);
  void reject(const Request& r);
  void finished(const Request& r, bool rejected = false);  // rejected: the user backs off (Workload::think_after)
  // A lease was taken over from `previous_owner`: a steal from live work when that request still runs.
  void lease_taken_over(std::string_view previous_owner);
  bool all_done() const { return arrivals_left_ == 0 && in_flight_ == 0; }
  const std::string& strategy_spec() const { return strategy_spec_; }
  Strategy& strategy() { return strategy_; }
  Scenario& scenario() { return scenario_; }
  Bouncer* bouncer() { return bouncer_.get(); }  // null without --pgbouncer

  // Tests: every request's borrows (asked, got, given back), in borrow order.
  struct BorrowRecord {
    std::uint64_t request_id = 0;
    Duration asked{}, got{}, released{};
  };
  void keep_borrows() { keep_borrows_ = true; }
  const std::vector<BorrowRecord>& borrows() const { return borrows_; }
  void borrow_returned(std::size_t record) { borrows_[record].released = now(); }

  // Figures for tests and the result.
  std::uint64_t events() const { return loop_.events_run(); }
  std::int64_t steals_from_live() const { return steals_from_live_; }
  double recovery_ms() const { return recovery_ms_; }

  // Trace events kept: the first minutes of a run, where the result picks its sample
  // (the first requests, the first pool timeouts, the first race). Beyond this
  // the world stops building trace strings, which is most of the cost of a long run.
  static constexpr std::size_t kTraceCap = 20000;

 private:
  // SimWorld::acquire's awaiter: the pool borrow, then the request's accounting.
  struct Acquire {  // Task's inline awaiter: small (the world is borrow.pod's)
    RequestCtx& cx;
    Pod::Borrow borrow;
    Duration asked{};
    bool await_ready();
    void await_suspend(std::coroutine_handle<> h) { borrow.await_suspend(h); }
    ConnHandle await_resume();
  };
  // ---- Kubernetes (sim/kubelet.cpp): --readiness, --liveness, the load balancer,
  // restarts; the rules (thresholds, back-off, balancer, pods block) are core/kubelet.hpp's.
  void kube_start();
  void start_probe_ticks(int index, ProbeKind kind, Duration first);
  static void on_probe_tick(void* self, std::uint64_t arg);
  static void on_probe_timeout(void* self, std::uint64_t arg);
  static void on_container_running(void* self, std::uint64_t arg);
  static void on_pod_serving(void* self, std::uint64_t arg);
  void probe_result(int index, ProbeKind kind, bool ok);
  void liveness_kill(int index);
  void refuse(const Request& r, const char* why);
 public:
  // A probe's pod-side check ended (run_kube_probe in sim/kubelet.cpp); late answers are dropped.
  void probe_answered(int index, ProbeKind kind, std::uint64_t probe, bool ok);
  const ProbeSpec& probe_spec(ProbeKind kind) const { return kind == ProbeKind::readiness ? s_.readiness : s_.liveness; }
  // Tests: the load balancer's view.
  bool pod_ready(int index) const { return kube_->life(index).ready; }
  const KubeStats& kube_stats() const { return kube_->stats(); }

 private:
  Task<PartnerReply> attempt_after_overhead(const PartnerCall& call, int owner);
  static void on_arrival(void* self, std::uint64_t index);
  static void on_deliver(void* self, std::uint64_t index);
  static void on_user_request(void* self, std::uint64_t user);
  static void on_crash(void* self, std::uint64_t);
  static void on_pause(void* self, std::uint64_t);
  static void on_redis_failover(void* self, std::uint64_t);
  static void on_etcd_leader_lost(void* self, std::uint64_t);
  static void on_etcd_leader_elected(void* self, std::uint64_t);
  // etcd-lease: one request to etcd from the request's pod: its round trip,
  // and while etcd has no leader a wait for the new one, then the round trip again.
  Task<void> etcd_round_trip(RequestCtx& cx);
  Task<LeaseResult> etcd_acquire(RequestCtx& cx, Key key, std::string_view owner, Duration ttl);
  Task<bool> etcd_release(RequestCtx& cx, Key key, std::string_view owner);
  Task<bool> etcd_extend(RequestCtx& cx, Key key, std::string_view owner);
  void deliver(std::size_t index);
  // The pod at `pod_index` dies (--crash-at, or its liveness probe): its requests
  // are lost, its backends end; a replacement starts at once (crash) or after
  // kubelet's back-off and --pod-startup (liveness).
  void crash(int pod_index, bool liveness = false);
  void shutdown();  // ends whatever still runs at the time bound; destroys vanished coroutines
  Pod& pod_for(std::uint64_t request_id);  // where the request was routed (round-robin id % pods without probes)
  void flush_timeline(bool final);
  // The scenario's rows the run changed or inserted: the service's side of the oracle.
  std::vector<StoredRow> stored_rows() const;
  SimCounts counts() const;  // what run()'s `settled` reads

  const Settings& s_;
  Strategy& strategy_;
  Scenario& scenario_;
  const StrategyInfo& info_;
  std::string strategy_spec_;
  EventLoop loop_;
  int arrivals_ = -1;  // the event loop stream of the open loop's arrivals
  LockManager db_;
  Recorder recorder_;
  PartnerFront partner_;
  Rng db_rng_;
  Rng db_fault_rng_;
  Workload workload_;
  PoolStats pool_;
  ProbeStats probe_;
  std::unique_ptr<Bouncer> bouncer_;  // --pgbouncer transaction|session

  std::vector<std::unique_ptr<Pod>> pods_;     // the live incarnation of each pod index
  std::vector<std::unique_ptr<Pod>> crashed_;  // kept until the end: vanished coroutines point into them
  std::vector<std::coroutine_handle<>> vanished_;
  std::vector<Request> requests_;  // every request made, in id order (index = id - 1)
  std::vector<std::uint8_t> live_;  // by request id: 1 while it runs or waits for a worker
  std::int64_t arrivals_left_ = 0;
  std::int64_t in_flight_ = 0;
  std::int64_t done_ = 0;
  int next_conn_id_ = 0;
  Backend next_backend_ = 0;

  // Pool gauges summed over pods, and the timeline bucket being filled.
  int active_ = 0, pending_ = 0, idle_ = 0;
  Duration last_change_{};
  std::int64_t bucket_ = -1;
  Duration bucket_end_{};  // where bucket_ ends: before it, no division finds the bucket again
  PoolSample bucket_peak_;
  double bucket_pending_s_ = 0;  // waiter-seconds inside bucket_ up to last_change_

  // The lease store (redis-lease) and its failover.
  LeaseStore leases_;
  Rng redis_rng_;
  std::int64_t failover_leases_lost_ = 0;
  std::int64_t failover_leases_resurrected_ = 0;
  // The etcd store (etcd-lease, sim/etcd_store.hpp) and its leader change: no
  // leader in [etcd_leaderless_from_, etcd_leaderless_until_).
  bool uses_etcd_ = false;
  bool pins_carriers_ = false;
  CarrierStats carriers_;
  EtcdStore etcd_;
  Rng etcd_rng_;
  Duration etcd_leaderless_from_{};
  Duration etcd_leaderless_until_{};
  std::int64_t etcd_requests_paused_ = 0;
  std::int64_t etcd_leases_refreshed_ = 0;

  // Faults.
  std::int64_t steals_from_live_ = 0;
  double recovery_ms_ = 0;
  std::int64_t crashed_requests_ = 0;
  std::int64_t keys_held_at_crash_ = 0;
  bool has_crashed_ = false;
  // Kubernetes: on with --readiness or --liveness (sim/kubelet.cpp).
  bool kube_on_ = false;
  std::optional<KubeletRules> kube_;
  std::vector<std::array<std::uint64_t, 2>> probe_in_flight_;  // by pod, by ProbeKind: the probe's number, 0 = none
  std::vector<std::uint8_t> routed_;  // by request id: the pod the load balancer chose
  std::uint64_t next_probe_ = 0;
  std::optional<partner::Config::Window> fault_window_;  // --partner-faults' window: the recovery block
  bool keep_borrows_ = false;
  std::vector<BorrowRecord> borrows_;
  std::int64_t unfinished_ = 0;
  std::optional<Duration> stopped_early_;
};

}  // namespace lockbench::sim

// RealWorld: core's World over PostgreSQL (Pool), the partner over HTTP
// (PartnerHttp), OS threads and the steady clock. One per pod (each pod has its
// own pool, and its own table of in-process locks for World::local_lock). Every
// Task it returns completes without suspending, so a worker runs a whole
// request with run_sync(serve(...)); a local-lock wait blocks the worker thread,
// as a Java thread blocks in a synchronized block.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "core/client_policy.hpp"
#include "core/context.hpp"
#include "core/world.hpp"
#include "real/partner_http.hpp"
#include "real/pool.hpp"
#include "real/kv_lease_store.hpp"

namespace lockbench::real {

// One pod's renewal thread (World::keep_renewing): a timer queue of the
// renewals of the pod's requests, run one at a time on this thread (a
// ScheduledExecutorService of one thread, as ShedLock's KeepAliveLockProvider
// has). A renewal that waits for a pool connection delays the others. Started
// at the first renewal, joined when the world ends.
class Renewer {
 public:
  struct Entry;
  ~Renewer();
  std::shared_ptr<Entry> add(RequestCtx& cx, Duration period, RenewFn fn);
  // Stops the entry; waits while its renewal runs.
  void stop(Entry& e);

 private:
  void loop();
  using Clock = std::chrono::steady_clock;
  std::mutex mu_;
  std::condition_variable cv_;  // the queue changed, a renewal ended, or the thread must stop
  std::multimap<Clock::time_point, std::shared_ptr<Entry>> due_;  // GUARDED_BY(mu_)
  bool quit_ = false;                                              // GUARDED_BY(mu_)
  std::thread thread_;  // started by the first add()
};

class RealWorld final : public World {
 public:
  RealWorld(Pool& pool, PartnerHttp& partner) : pool_(pool), partner_(partner) {}

  Duration now() override { return pool_.now(); }
  Task<void> sleep(RequestCtx& cx, Duration d) override;
  Task<ConnHandle> acquire(RequestCtx& cx) override;
  Task<PartnerReply> partner_attempt(RequestCtx& cx, const PartnerCall& call) override;
  bool requests_over() override { return requests_over_.load(); }
  // run_real: every request has finished (the strategy's background may end).
  void end_requests() { requests_over_.store(true); }
  void begin_requests() { requests_over_.store(false); }  // a long-lived pod's next run (lockbench serve)
  // std::mutex + condition_variable over a map key -> holding request: a
  // ReentrantLock per key (unfair: a woken waiter may lose to a newcomer).
  Task<LockResult> local_lock(RequestCtx& cx, Key key, LockMode mode) override;
  void local_unlock(RequestCtx& cx, Key key) override;
  // redis-lease, etcd-lease: the run's store (set_lease_store; real/kv_lease_store.hpp).
  Task<LeaseResult> kv_lease_acquire(RequestCtx& cx, Key key, std::string_view owner, Duration ttl) override;
  Task<bool> kv_lease_release(RequestCtx& cx, Key key, std::string_view owner) override;
  Task<bool> kv_lease_extend(RequestCtx& cx, Key key, std::string_view owner, Duration ttl) override;
  // On this pod's renewal thread (Renewer).
  std::unique_ptr<Renewal> keep_renewing(RequestCtx& cx, Duration period, RenewFn renew) override;
  void set_lease_store(KvLeaseStore* store) { store_ = store; }
  // Virtual threads below JDK 24 with a monitor strategy (pins_carriers): a
  // local lock pins the request thread's carrier (real/carriers.hpp).
  void set_pins_carriers(bool pins) { pins_carriers_ = pins; }
  // This pod's circuit breaker and retry budget, made from the run's settings
  // at the first guarded call.
  PartnerGuard* partner_guard(RequestCtx& cx) override {
    std::call_once(guard_once_, [&] {
      guard_ = std::make_unique<PartnerGuard>(cx.settings().circuit_breaker, cx.settings().retry_budget);
    });
    return guard_.get();
  }

  Pool& pool() { return pool_; }

 private:
  Pool& pool_;
  PartnerHttp& partner_;
  std::atomic<bool> requests_over_{false};
  std::mutex local_mu_;
  std::condition_variable local_cv_;  // notified whenever a key is given back
  std::unordered_map<Key, std::uint64_t> local_held_;  // GUARDED_BY(local_mu_): key -> the holding request's id
  KvLeaseStore* store_ = nullptr;  // set before the first request; thread-safe itself
  bool pins_carriers_ = false;  // set before the first request
  std::once_flag guard_once_;
  std::unique_ptr<PartnerGuard> guard_;  // written once under guard_once_; thread-safe itself
  Renewer renewer_;
};

}  // namespace lockbench::real

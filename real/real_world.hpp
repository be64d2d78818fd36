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
#include <mutex>
#include <unordered_map>

#include "core/world.hpp"
#include "real/partner_http.hpp"
#include "real/pool.hpp"

namespace lockbench::real {

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
  // std::mutex + condition_variable over a map key -> holding request: a
  // ReentrantLock per key (unfair: a woken waiter may lose to a newcomer).
  Task<LockResult> local_lock(RequestCtx& cx, Key key, LockMode mode) override;
  void local_unlock(RequestCtx& cx, Key key) override;

  Pool& pool() { return pool_; }

 private:
  Pool& pool_;
  PartnerHttp& partner_;
  std::atomic<bool> requests_over_{false};
  std::mutex local_mu_;
  std::condition_variable local_cv_;  // notified whenever a key is given back
  std::unordered_map<Key, std::uint64_t> local_held_;  // GUARDED_BY(local_mu_): key -> the holding request's id
};

}  // namespace lockbench::real

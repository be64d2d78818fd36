// RealWorld: core's World over PostgreSQL (Pool), the partner over HTTP
// (PartnerHttp), OS threads and the steady clock. One per pod (each pod has its
// own pool). Every Task it returns completes without suspending, so a worker
// runs a whole request with run_sync(serve(...)).
#pragma once

#include <atomic>

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

  Pool& pool() { return pool_; }

 private:
  Pool& pool_;
  PartnerHttp& partner_;
  std::atomic<bool> requests_over_{false};
};

}  // namespace lockbench::real

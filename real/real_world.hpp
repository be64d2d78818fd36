// RealWorld: core's World over PostgreSQL (Pool), the partner over HTTP
// (PartnerHttp), OS threads and the steady clock. One per pod (each pod has its
// own pool). Every Task it returns completes without suspending, so a worker
// runs a whole request with run_sync(serve(...)).
#pragma once

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

  Pool& pool() { return pool_; }

 private:
  Pool& pool_;
  PartnerHttp& partner_;
};

}  // namespace lockbench::real

#include "real/real_world.hpp"

#include <thread>

#include "core/context.hpp"

namespace lockbench::real {

Task<void> RealWorld::sleep(RequestCtx&, Duration d) {
  note_step("sleep");
  std::this_thread::sleep_for(d);
  co_return;
}

Task<ConnHandle> RealWorld::acquire(RequestCtx& cx) {
  note_step("pool.acquire");
  const Duration start = now();
  PgConn* c = pool_.borrow(cx.settings().connection_timeout);
  const Duration end = now();
  cx.split().pool_wait += end - start;
  cx.trace("pool.acquire", start, end, c ? c->id() : -1, c ? "" : "timeout");
  if (!c) co_return ConnHandle();
  c->attach(&cx);
  co_return ConnHandle(c);
}

Task<PartnerReply> RealWorld::partner_attempt(RequestCtx&, const PartnerCall& call) {
  note_step(partner_call_name(call.kind).data());  // names are string literals
  co_return partner_.attempt(call);
}

}  // namespace lockbench::real

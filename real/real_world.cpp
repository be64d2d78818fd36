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

namespace lockbench::real {

Task<LockResult> RealWorld::local_lock(RequestCtx& cx, Key key, LockMode mode) {
  note_step("lock.local");
  const Duration start = now();
  const std::uint64_t me = cx.request().id;
  LockResult r = LockResult::acquired;
  {
    std::unique_lock lock(local_mu_);
    const auto free = [&] { return !local_held_.contains(key); };
    if (!free()) {
      if (mode.wait != LockWait::wait) {
        r = LockResult::busy;
      } else if (mode.timeout > Duration::zero()) {
        if (!local_cv_.wait_for(lock, mode.timeout, free)) r = LockResult::timed_out;
      } else {
        local_cv_.wait(lock, free);
      }
    }
    if (r == LockResult::acquired) local_held_.emplace(key, me);
  }
  const Duration end = now();
  cx.split().lock_wait += end - start;
  cx.trace(r == LockResult::acquired ? "lock.acquire" : "lock.denied", start, end, -1,
           "local lock " + std::to_string(key) +
               (r == LockResult::timed_out ? ": timed out" : r == LockResult::busy ? ": busy" : ""));
  co_return r;
}

void RealWorld::local_unlock(RequestCtx& cx, Key key) {
  {
    std::lock_guard lock(local_mu_);
    const auto it = local_held_.find(key);
    if (it == local_held_.end() || it->second != cx.request().id) return;
    local_held_.erase(it);
  }
  local_cv_.notify_all();
  cx.trace("lock.release", now(), now(), -1, "local lock " + std::to_string(key));
}

}  // namespace lockbench::real

// LocalLocks, and SimWorld's World::local_lock / local_unlock over the
// request's pod's table.
#include "sim/local_locks.hpp"

#include <algorithm>
#include <string>

#include "sim/sim_world.hpp"

namespace lockbench::sim {

LockResult LocalLocks::try_lock(Key key, std::uint64_t request) {
  auto it = held_.find(key);
  if (it == held_.end()) {
    held_.emplace(key, Entry{request, {}});
    return LockResult::acquired;
  }
  return LockResult::busy;  // held (by another request: a synchronized block is not re-entered across requests)
}

void LocalLocks::enqueue(EventLoop& loop, Key key, Waiter* w, Duration timeout) {
  w->ticket = next_ticket_++;
  held_[key].waiters.push_back(w);
  if (timeout > Duration::zero()) {
    by_ticket_.emplace(w->ticket, Timed{key, w, &loop});
    // The pod's own clock: a paused pod (a GC pause) does not time out either.
    loop.at(loop.now() + timeout, w->owner, &LocalLocks::on_timeout, this, w->ticket);
  }
}

void LocalLocks::on_timeout(void* self, std::uint64_t ticket) {
  auto& ll = *static_cast<LocalLocks*>(self);
  auto it = ll.by_ticket_.find(ticket);
  if (it == ll.by_ticket_.end()) return;  // granted before the timeout
  const Timed t = it->second;
  ll.by_ticket_.erase(it);
  auto& ws = ll.held_[t.key].waiters;
  ws.erase(std::find(ws.begin(), ws.end(), t.w));
  t.w->result = LockResult::timed_out;
  t.loop->resume_at(t.loop->now(), t.w->owner, t.w->handle);
}

void LocalLocks::unlock(EventLoop& loop, Key key, std::uint64_t request) {
  auto it = held_.find(key);
  if (it == held_.end() || it->second.holder != request) return;
  Entry& e = it->second;
  if (e.waiters.empty()) {
    held_.erase(it);
    return;
  }
  Waiter* w = e.waiters.front();
  e.waiters.pop_front();
  by_ticket_.erase(w->ticket);
  e.holder = w->request;
  w->result = LockResult::acquired;
  loop.resume_at(loop.now(), w->owner, w->handle);
}

// ---- SimWorld: the request's pod's table

Task<LockResult> SimWorld::local_lock(RequestCtx& cx, Key key, LockMode mode) {
  Pod& pod = pod_for(cx.request().id);
  const Duration t0 = now();
  // A virtual thread entering synchronized pins its carrier from here, waiting
  // or not, until it leaves the monitor (local_unlock) or gives up.
  if (pins_carriers_) pod.pin(cx.request().id);
  LockResult r = pod.local_locks.try_lock(key, cx.request().id);
  if (r == LockResult::busy && mode.wait == LockWait::wait)
    r = co_await pod.local_locks.wait(loop_, pod.owner_for(cx.request().id), key, cx.request().id, mode.timeout);
  if (r != LockResult::acquired && pins_carriers_) pod.unpin(cx.request().id);
  const Duration t1 = now();
  cx.split().lock_wait += t1 - t0;
  if (tracing())
    cx.trace(r == LockResult::acquired ? "lock.acquire" : "lock.denied", t0, t1, -1,
             "local lock " + std::to_string(key) + " in pod " + std::to_string(pod.index() + 1) +
                 (r == LockResult::timed_out ? ": timed out" : r == LockResult::busy ? ": busy" : ""));
  co_return r;
}

void SimWorld::local_unlock(RequestCtx& cx, Key key) {
  Pod& pod = pod_for(cx.request().id);
  pod.local_locks.unlock(loop_, key, cx.request().id);
  if (pins_carriers_) pod.unpin(cx.request().id);
  if (tracing()) cx.trace("lock.release", now(), now(), -1, "local lock " + std::to_string(key));
}

}  // namespace lockbench::sim

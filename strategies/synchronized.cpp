// synchronized: an in-process lock per key, the "useless synchronized keyword"
// of the advisory-lock article. In Java:
//   private final ConcurrentHashMap<String, ReentrantLock> locks = ...;
//   ReentrantLock l = locks.computeIfAbsent(key, k -> new ReentrantLock());
//   l.lock();  // or l.tryLock() (variant try), or synchronized (key.intern()) { ... }
//   try { read; call the partner; store } finally { l.unlock(); }
// It lives in the pod's memory (World::local_lock): it excludes two requests of
// one pod and nothing across pods, and holds no database connection during the
// partner calls. With one pod it is correct; with two, two requests for one
// key that land on different pods run their critical sections at once, exactly
// as with none. A crashed pod's locks vanish with it (nothing to clean up).
//   synchronized      waits for the lock (bounded by --lock-timeout, as
//                     ReentrantLock.tryLock(timeout) would; 0 = no bound)
//   synchronized:try  ReentrantLock.tryLock(): busy answers 409 at once
#include <exception>

#include "strategies/strategies.hpp"

namespace lockbench {

Task<Outcome> Synchronized::run(RequestCtx& cx, Scenario& sc) {
  const Key key = sc.lock_key(cx);
  const LockMode mode{wait_ ? LockWait::wait : LockWait::try_lock, cx.settings().lock_timeout};
  if (co_await cx.world().local_lock(cx, key, mode) != LockResult::acquired) {
    cx.locks().denied++;
    co_return Outcome::conflict;
  }
  cx.locks().acquired++;
  // The `finally`: the lock is given back on every path (co_await cannot stand
  // in a catch block, hence `failure`).
  std::exception_ptr failure;
  Outcome outcome = Outcome::ok;
  try {
    Plan plan;
    bool borrowed = true;
    {
      ConnHandle c = co_await cx.world().acquire(cx);
      if (!c) {
        borrowed = false;
      } else {
        co_await sc.read(cx, *c, plan);
      }
    }  // the connection goes back to the pool: only the pod's memory holds the lock
    if (!borrowed) {
      outcome = Outcome::pool_timeout;
    } else if (!plan.noop) {
      const Effect effect = co_await sc.external(cx, plan, CallOptions{});
      if (effect != Effect::done) {
        outcome = Outcome::error;
      } else {
        ConnHandle c = co_await cx.world().acquire(cx);
        if (!c) outcome = Outcome::pool_timeout;
        else co_await sc.store(cx, *c, plan, Guard::any());
      }
    }
  } catch (...) {
    failure = std::current_exception();
  }
  cx.world().local_unlock(cx, key);
  if (failure) std::rethrow_exception(failure);
  co_return outcome;
}

}  // namespace lockbench

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

#include "strategies/family.hpp"

namespace lockbench {

class Synchronized final : public Strategy {
 public:
  explicit Synchronized(bool wait) : wait_(wait) {}
  Task<Outcome> run(RequestCtx& cx, Scenario& sc) override;

 private:
  bool wait_;
};

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

// The registry row (strategies/family.hpp): its variants, their properties, and the
// words `lockbench explain synchronized` prints.
// An in-process lock: nothing held in the database, gone with its pod.
constexpr StrategyProps kSynchronized{.holds_connection_during_call = false,
                                      .exclusion = Exclusion::one_pod,
                                      .crash_safe = true};
// Waiting for the lock is Java's synchronized (key.intern()) { ... }: a monitor.
constexpr StrategyProps kSynchronizedWait{.holds_connection_during_call = false,
                                          .exclusion = Exclusion::one_pod,
                                          .crash_safe = true,
                                          .monitor_during_call = true};
constexpr StrategyInfo kSynchronizedVariants[] = {
    {.spec = "synchronized:wait",
     .family = "synchronized",
     .family_default = true,
     .props = kSynchronizedWait,
     .teaches = "an in-process lock per key: excludes within one pod, nothing across pods",
     .make = strategy_maker<Synchronized, true>},
    {.spec = "synchronized:try",
     .family = "synchronized",
     .props = kSynchronized,
     .teaches = "ReentrantLock.tryLock(): a busy key answers 409 at once, within one pod only",
     .make = strategy_maker<Synchronized, false>},
};
constexpr StrategyFamily kSynchronizedFamily{
    .name = "synchronized",
    .order = 120,
    .words =
        {
            .summary = "an in-process lock per key (Java's synchronized): excludes within one pod, nothing across pods",
            .how = "In Java: synchronized (key.intern()) { ... }, or a ConcurrentHashMap<String, ReentrantLock> with "
                   "lock.lock() (variant wait, bounded here by --lock-timeout as tryLock(timeout, MILLISECONDS) would be) or "
                   "lock.tryLock() (variant try: busy answers 409), and unlock() in finally. The lock table lives in the "
                   "pod's memory: no SQL, no connection held during the partner calls, and a crashed pod's locks vanish "
                   "with it. The key is the scenario's lock key (the hashed business string for reward-claim).",
            .fails = "Each pod has its own lock table, so two requests for one key that a load balancer sends to different "
                     "pods never see each other's lock: with --pods 2 they run their critical sections at once, exactly as "
                     "with none (a payout webhook delivered twice pays out twice: overdrawn; two reward claims credit twice: "
                     "duplicate_reward). With --pods 1 it is correct, which is why it passes every single-instance test and "
                     "fails in production behind a second replica.",
            .choose = "A single-instance service, or to spare the database work inside one pod in front of a lock that spans "
                      "pods (advisory-xact, row-lease).",
            .avoid = "As the only protection in any service that runs more than one instance (Kubernetes replicas, blue/green "
                     "deploys, autoscaling).",
            .java = R"java(private final ConcurrentHashMap<Long, ReentrantLock> locks = new ConcurrentHashMap<>();

public void payout(long accountId) throws InterruptedException {
  ReentrantLock lock = locks.computeIfAbsent(accountId, k -> new ReentrantLock());
  if (!lock.tryLock(5, TimeUnit.SECONDS))            // :try is lock.tryLock()
    throw new ResponseStatusException(HttpStatus.CONFLICT);
  try {
    payoutOnce(accountId);                           // read, partner call, write
  } finally {
    lock.unlock();                                   // this JVM's map: pod 2 has its own
  }
})java",
        },
    .variants = kSynchronizedVariants};
LOCKBENCH_STRATEGY(kSynchronizedFamily);

}  // namespace lockbench

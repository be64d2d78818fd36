// redis-lease and etcd-lease: one strategy, two stores. The lock lives in a
// key-value store beside the database, reached through World::kv_lease_*;
// which store each world opens is the registry row's (StrategyProps::lease_store).
// No connection and no transaction is held during the partner calls. The TTL
// is the crash net, as with row-lease: a lease whose TTL passed is free again,
// even when its owner is only slow (a steal). Unlike row-lease, the store
// cannot check the lease: the lock and the data live in two systems, so a
// holder whose lease expired stores over its successor's work (only the
// release notices: unlock_failures). Only fencing at the resource protects it.
//   Redis: SET lease owner NX PX ttl takes it (with an INCR on the key's
//   counter for a fencing token, in one Lua script); the owner-checked release
//   is one Lua script too (GET == owner ? DEL). After a failover the counter
//   can go back, so a token is handed out twice.
//   etcd: ONE txn bound to a fresh lease (lease/grant first): IF
//   create_revision(lock key) == 0 THEN put lock key = owner with the lease;
//   the key's mod_revision is the fencing token. Release is one txn too (IF
//   value == owner THEN delete), then the lease is revoked. A write is
//   acknowledged by a quorum, so a leader change pauses the store and loses
//   nothing, and the revision only grows: a token is never handed out twice.
//   :fenced  sends the token with every partner call (X-Fencing-Token)
//   :renew   extends the lease every TTL/3 while the partner call runs
//            (Redis: owner-checked PEXPIRE, Redisson's watchdog; etcd:
//            lease/keepalive, the keep-alive of clientv3's concurrency.Session)
#include <exception>
#include <string>

#include "strategies/strategies.hpp"

namespace lockbench {

namespace {

// One renewal: the owner-checked PEXPIRE. Runs beside the request, on its own context.
Task<bool> extend_lease(RequestCtx& rc, Key key, const std::string& owner_ref, Duration ttl) {
  const std::string owner = owner_ref;
  const bool ok = co_await rc.world().kv_lease_extend(rc, key, owner, ttl);
  (ok ? rc.locks().renewals : rc.locks().renewal_failures)++;
  co_return ok;  // lost: renewal stops
}

}  // namespace

Task<Outcome> KvLease::run(RequestCtx& cx, Scenario& sc) {
  World& w = cx.world();
  const Duration ttl = cx.settings().lease_ttl;
  const Key key = cx.key();
  const LeaseResult lease = co_await w.kv_lease_acquire(cx, key, cx.owner(), ttl);
  if (!lease.acquired) {
    cx.locks().denied++;
    co_return Outcome::conflict;  // the 409 "another operation is in progress"
  }
  cx.locks().acquired++;
  if (lease.took_over_expired) cx.locks().lease_steals++;
  CallOptions opt;
  if (v_ == Variant::fenced) opt.fencing_token = lease.token;

  Plan plan;
  std::exception_ptr failure;
  {
    ConnHandle c = co_await w.acquire(cx);
    if (!c) {
      co_await w.kv_lease_release(cx, key, cx.owner());
      co_return Outcome::pool_timeout;
    }
    try {
      co_await sc.read(cx, *c, plan);
    } catch (...) {
      failure = std::current_exception();
    }
  }  // connection back to the pool: only the store says we hold the lock
  if (failure || plan.noop) {
    co_await w.kv_lease_release(cx, key, cx.owner());
    if (failure) std::rethrow_exception(failure);
    co_return Outcome::ok;
  }

  std::unique_ptr<Renewal> renewal;
  if (v_ == Variant::renew) {
    const std::string owner = cx.owner();
    renewal = w.keep_renewing(cx, ttl / 3, [key, owner, ttl](RequestCtx& rc) { return extend_lease(rc, key, owner, ttl); });
  }
  Effect effect = Effect::unknown;
  try {
    effect = co_await sc.external(cx, plan, opt);
  } catch (...) {
    failure = std::current_exception();
  }
  if (renewal) co_await renewal->stop();  // before the lease is given back
  if (failure) {
    co_await w.kv_lease_release(cx, key, cx.owner());
    std::rethrow_exception(failure);
  }

  bool stored = false;
  {
    ConnHandle c = co_await w.acquire(cx);
    if (!c) {
      co_await w.kv_lease_release(cx, key, cx.owner());
      co_return Outcome::pool_timeout;
    }
    try {
      // Unguarded: the database knows nothing of the store's lease. A holder whose
      // lease expired writes over the work of the one that took it over.
      if (effect == Effect::done) stored = co_await sc.store(cx, *c, plan, Guard::any());
    } catch (...) {
      failure = std::current_exception();
    }
  }
  // The owner-checked release: another owner (or none) means ours expired
  // while we worked and may have been taken over (the victim's side of a steal).
  if (!co_await w.kv_lease_release(cx, key, cx.owner())) cx.locks().unlock_failures++;
  if (failure) std::rethrow_exception(failure);
  co_return stored ? Outcome::ok : Outcome::error;
}

}  // namespace lockbench

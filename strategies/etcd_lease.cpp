// etcd-lease: the lock lives in etcd, a consensus store (Raft), not in the
// database. Acquire is ONE txn bound to a fresh lease (lease/grant first):
// IF create_revision(lock key) == 0 THEN put lock key = owner with the lease,
// and the holder mark; the key's mod_revision (the txn's revision) is the
// fencing token. Release is one txn too (IF value == owner THEN delete), then
// the lease is revoked. No connection and no transaction is held during the
// partner calls. What etcd changes against redis-lease is the store, not the
// strategy: a write is acknowledged by a quorum, so a leader change pauses the
// store (requests wait for the new leader) and loses nothing, and the revision
// only grows: a token is never handed out twice. What it does not change: the
// TTL is still the crash net (a holder paused past it loses the lease to the
// next one, a steal), and the data still lives in another system, so a holder
// whose lease expired stores over its successor's work. Only fencing at the
// resource protects it.
//   etcd-lease         txn create-if-absent with a lease, unguarded store, owner-checked release
//   etcd-lease:fenced  sends the key's mod_revision with every partner call (X-Fencing-Token)
//   etcd-lease:renew   keeps the lease alive (lease/keepalive) every TTL/3 while the
//                      partner call runs: the keep-alive of etcd's clientv3 concurrency.Session
// The worlds route World::kv_lease_* to etcd because this strategy's registry
// row says so (StrategyProps::lease_store): the world interface is redis-lease's.
#include <exception>
#include <string>

#include "strategies/strategies.hpp"

namespace lockbench {

namespace {

// One renewal: a keep-alive of the request's lease. Runs beside the request, on its own context.
Task<bool> keep_etcd_lease_alive(RequestCtx& rc, Key key, const std::string& owner_ref, Duration ttl) {
  const std::string owner = owner_ref;
  const bool ok = co_await rc.world().kv_lease_extend(rc, key, owner, ttl);
  (ok ? rc.locks().renewals : rc.locks().renewal_failures)++;
  co_return ok;  // the lease expired (its TTL passed unrenewed): renewal stops
}

}  // namespace

Task<Outcome> EtcdLease::run(RequestCtx& cx, Scenario& sc) {
  World& w = cx.world();
  const Duration ttl = cx.settings().lease_ttl;
  const Key key = cx.key();
  const LeaseResult lease = co_await w.kv_lease_acquire(cx, key, cx.owner(), ttl);
  if (!lease.acquired) {
    cx.locks().denied++;
    co_return Outcome::conflict;  // the txn's compare failed: another holder's key exists
  }
  cx.locks().acquired++;
  // The previous holder's lease expired under it (kill -9, SIGSTOP past the TTL, a slow call).
  if (lease.took_over_expired) cx.locks().lease_steals++;
  CallOptions opt;
  if (v_ == Variant::fenced) opt.fencing_token = lease.token;  // the key's mod_revision

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
  }  // connection back to the pool: only etcd says we hold the lock
  if (failure || plan.noop) {
    co_await w.kv_lease_release(cx, key, cx.owner());
    if (failure) std::rethrow_exception(failure);
    co_return Outcome::ok;
  }

  std::unique_ptr<Renewal> renewal;
  if (v_ == Variant::renew) {
    const std::string owner = cx.owner();
    renewal = w.keep_renewing(cx, ttl / 3,
                              [key, owner, ttl](RequestCtx& rc) { return keep_etcd_lease_alive(rc, key, owner, ttl); });
  }
  Effect effect = Effect::unknown;
  try {
    effect = co_await sc.external(cx, plan, opt);
  } catch (...) {
    failure = std::current_exception();
  }
  if (renewal) co_await renewal->stop();  // before the lease is revoked
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
      // Unguarded: consensus in etcd does not reach PostgreSQL. A holder whose
      // lease expired writes over the work of the one that took it over.
      if (effect == Effect::done) stored = co_await sc.store(cx, *c, plan, Guard::any());
    } catch (...) {
      failure = std::current_exception();
    }
  }
  // The owner-checked release (txn: value == me ? delete), then the revoke: a
  // false means our lease expired while we worked (the victim's side of a steal).
  if (!co_await w.kv_lease_release(cx, key, cx.owner())) cx.locks().unlock_failures++;
  if (failure) std::rethrow_exception(failure);
  co_return stored ? Outcome::ok : Outcome::error;
}

}  // namespace lockbench

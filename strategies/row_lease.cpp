// row-lease: the lock is data. One autocommitted UPDATE ... WHERE (locked_at IS
// NULL OR locked_at < now() - ttl) takes the lease; 1 row = held. No connection
// and no transaction is held during the partner calls. The result is stored
// only while the lease is still ours (WHERE lock_owner = $me: 0 rows = the
// lease was lost, nothing stored), and a second UPDATE gives it back, checking
// the owner. The TTL is the crash net: a lease older than the TTL is free
// again, even when its owner is only slow (a steal).
//   row-lease           lease times from the database's now()
//   row-lease:app-clock lease times from the application's clock (skew matters)
//   row-lease:fenced    sends the lease's fencing token with every partner call:
//                       a partner that enforces tokens refuses a stale holder
//   row-lease:renew     extends its lease (owner-checked UPDATE, ShedLock's
//                       extend) every TTL/3 while the partner call runs, each
//                       time on a connection borrowed from the pool
//   row-lease:article   the first article's exact SQL: locked_at = now() (the
//                       database's clock) compared with :staleBefore from the
//                       application's clock, an unconditional store, and a
//                       release without an owner check, so a slow holder's
//                       release frees the lease of the request that stole it
//   row-lease:orm-mapped the same SQL, but the lock columns are fields of the
//                       ORM entity (the article's "not mapped as an entity
//                       field", ignored): another code path's save() of the
//                       entity (--orm-writer-rate) writes back the locked_at and
//                       lock_owner it loaded earlier, NULL or old, and a third
//                       request takes the lease while we still call the partner
#include <exception>
#include <string>

#include "strategies/strategies.hpp"

namespace lockbench {

namespace {

// One renewal: borrow a connection (it competes with requests for the pool),
// the owner-checked UPDATE, give it back. Runs beside the request, on its own context.
Task<bool> extend_row_lease(RequestCtx& rc, Table table, Key key, const std::string& owner_ref, Duration ttl) {
  const std::string owner = owner_ref;
  ConnHandle c = co_await rc.world().acquire(rc);
  if (!c) {
    rc.locks().renewal_failures++;
    co_return true;  // no connection in time: the lease may still be ours, try again next period
  }
  const bool ok = co_await c->lease_extend(table, key, owner, ttl);
  (ok ? rc.locks().renewals : rc.locks().renewal_failures)++;
  co_return ok;  // lost: renewal stops
}

}  // namespace

Task<Outcome> RowLease::run(RequestCtx& cx, Scenario& sc) {
  const Duration ttl = cx.settings().lease_ttl;
  const LeaseClock clock = v_ == Variant::app_clock ? LeaseClock::app : LeaseClock::database;
  const LeaseSql sql = v_ == Variant::article ? LeaseSql::article : LeaseSql::owned;
  const Table table = sc.lock_table();
  Plan plan;
  CallOptions opt;
  {
    ConnHandle c = co_await cx.world().acquire(cx);
    if (!c) co_return Outcome::pool_timeout;
    const LeaseResult lease = co_await c->lease_acquire(table, cx.key(), cx.owner(), ttl, clock, sql);
    if (!lease.acquired) {
      cx.locks().denied++;
      co_return Outcome::conflict;  // the 409 "another operation is in progress"
    }
    cx.locks().acquired++;
    if (lease.took_over_expired) cx.locks().lease_steals++;
    if (v_ == Variant::fenced) opt.fencing_token = lease.token;
    std::exception_ptr failure;
    try {
      co_await sc.read(cx, *c, plan);
    } catch (...) {
      failure = std::current_exception();
    }
    if (failure || plan.noop) {  // give the lease back rather than leave it to its TTL
      co_await c->lease_release(table, cx.key(), cx.owner(), sql);
      if (failure) std::rethrow_exception(failure);
      co_return Outcome::ok;
    }
  }  // connection back to the pool: only the lease row says we hold the lock

  std::unique_ptr<Renewal> renewal;
  if (v_ == Variant::renew) {
    const std::string owner = cx.owner();
    const Key key = cx.key();
    renewal = cx.world().keep_renewing(
        cx, ttl / 3, [table, key, owner, ttl](RequestCtx& rc) { return extend_row_lease(rc, table, key, owner, ttl); });
  }
  Effect effect = Effect::unknown;
  std::exception_ptr call_failure;
  try {
    effect = co_await sc.external(cx, plan, opt);
  } catch (...) {
    call_failure = std::current_exception();
  }
  if (renewal) co_await renewal->stop();  // before the lease is given back
  if (call_failure) std::rethrow_exception(call_failure);

  ConnHandle c = co_await cx.world().acquire(cx);
  if (!c) co_return Outcome::pool_timeout;  // the lease stays until its TTL
  std::exception_ptr failure;
  bool stored = false;
  try {
    if (effect == Effect::done) {
      const Guard guard = sql == LeaseSql::article ? Guard::any() : Guard::if_lease_owner(cx.owner());
      stored = co_await sc.store(cx, *c, plan, guard);
      // 0 rows: our lease expired and was taken over while we worked. The
      // partner's effect happened, but a newer holder owns the record now.
      if (!stored) cx.locks().lease_lost++;
    }
  } catch (...) {
    failure = std::current_exception();
  }
  // The owned release checks the owner: when it finds another owner, ours
  // expired and was taken over (the victim's side of a steal). The article's
  // release does not look, and frees whoever holds the lease now.
  if (!co_await c->lease_release(table, cx.key(), cx.owner(), sql)) cx.locks().unlock_failures++;
  if (failure) std::rethrow_exception(failure);
  co_return stored ? Outcome::ok : Outcome::error;
}

}  // namespace lockbench

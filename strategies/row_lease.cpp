// row-lease: the lock is data. One autocommitted UPDATE ... WHERE (locked_at IS
// NULL OR locked_at < now() - ttl) takes the lease; 1 row = held. No connection
// and no transaction is held during the partner calls; a second UPDATE gives it
// back, checking that we still own it. The TTL is the crash net: a lease older
// than the TTL is free again, even when its owner is only slow (a steal).
//   row-lease           lease times from the database's now()
//   row-lease:app-clock lease times from the application's clock (skew matters)
//   row-lease:fenced    sends the lease's fencing token with every partner call:
//                       a partner that enforces tokens refuses a stale holder
#include <exception>

#include "strategies/strategies.hpp"

namespace lockbench {

Task<Outcome> RowLease::run(RequestCtx& cx, Scenario& sc) {
  const Duration ttl = cx.settings().lease_ttl;
  const LeaseClock clock = app_clock_ ? LeaseClock::app : LeaseClock::database;
  Plan plan;
  std::optional<std::uint64_t> token;
  {
    ConnHandle c = co_await cx.world().acquire(cx);
    if (!c) co_return Outcome::pool_timeout;
    const LeaseResult lease = co_await c->lease_acquire(cx.key(), cx.owner(), ttl, clock);
    if (!lease.acquired) {
      cx.locks().denied++;
      co_return Outcome::conflict;  // the 409 "another operation is in progress"
    }
    cx.locks().acquired++;
    if (lease.took_over_expired) cx.locks().lease_steals++;
    if (fenced_) token = lease.token;
    std::exception_ptr failure;
    try {
      plan = co_await sc.read(cx, *c);
    } catch (...) {
      failure = std::current_exception();
    }
    if (failure) {  // give the lease back rather than leave it to its TTL
      co_await c->lease_release(cx.key(), cx.owner());
      std::rethrow_exception(failure);
    }
  }  // connection back to the pool: only the lease row says we hold the lock

  const bool done = co_await sc.external(cx, plan, token);

  ConnHandle c = co_await cx.world().acquire(cx);
  if (!c) co_return Outcome::pool_timeout;  // the lease stays until its TTL
  std::exception_ptr failure;
  try {
    if (done) co_await sc.store(cx, *c, plan);
  } catch (...) {
    failure = std::current_exception();
  }
  // The release checks the owner: when it finds another owner, ours expired and
  // was taken over while we worked (the victim's side of a steal).
  if (!co_await c->lease_release(cx.key(), cx.owner())) cx.locks().unlock_failures++;
  if (failure) std::rethrow_exception(failure);
  co_return done ? Outcome::ok : Outcome::error;
}

}  // namespace lockbench

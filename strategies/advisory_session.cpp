// advisory-session: pg_[try_]advisory_lock(k), held by the database session
// (the connection), not by a transaction.
//   pinned: keep the same connection from lock to unlock. Correct, but the
//           connection is pinned through the partner calls, like held-tx.
//   pooled: give the connection back during the calls, as a request-scoped ORM
//           session would, and unlock on whatever connection the pool hands out
//           next. The unlock fails ("you don't own a lock") and the lock stays
//           with the first connection, leaked into the pool: later requests on
//           that connection re-enter it (session locks stack), others are denied.
#include <exception>

#include "strategies/family.hpp"
#include "strategies/strategies.hpp"

namespace lockbench {

class AdvisorySession final : public Strategy {
 public:
  AdvisorySession(bool pinned, bool wait) : pinned_(pinned), wait_(wait) {}
  Task<Outcome> run(RequestCtx& cx, Scenario& sc) override;

 private:
  bool pinned_;
  bool wait_;
};

Task<Outcome> AdvisorySession::run(RequestCtx& cx, Scenario& sc) {
  ConnHandle c = co_await cx.world().acquire(cx);
  if (!c) co_return Outcome::pool_timeout;
  const Key key = sc.hashed_lock_key(cx);  // --key-hash: two keys may share one lock number
  const LockMode mode{wait_ ? LockWait::wait : LockWait::try_lock, cx.settings().lock_timeout};
  AdvisoryHolding holding(cx, key);
  if (co_await c->advisory_lock(key, mode) != LockResult::acquired) {
    cx.locks().denied++;
    holding.denied();  // a false conflict when only other keys hold the number
    co_return Outcome::conflict;
  }
  cx.locks().acquired++;
  holding.held();

  // A session lock survives rollback and the return to the pool, so the unlock
  // must run on every path, the failing ones included (the `finally` of the
  // Java version; co_await cannot stand in a catch block, hence `failure`).
  std::exception_ptr failure;
  Effect effect = Effect::done;
  try {
    Plan plan;
    co_await sc.read(cx, *c, plan);
    if (!plan.noop) {
      if (!pinned_) c.reset();  // the trap: the lock stays on the connection we just gave back
      effect = co_await sc.external(cx, plan, CallOptions{});
      if (!pinned_) {
        c = co_await cx.world().acquire(cx);  // whichever connection is free now
        if (!c) {
          holding.keep();  // the lock stays with the first connection
          co_return Outcome::pool_timeout;
        }
      }
      if (effect == Effect::done) co_await sc.store(cx, *c, plan, Guard::any());
    }
  } catch (...) {
    failure = std::current_exception();
  }
  if (c && !co_await c->advisory_unlock(key)) {
    cx.locks().unlock_failures++;
    holding.keep();  // still held, by the connection that took it
  }
  if (failure) std::rethrow_exception(failure);
  co_return effect == Effect::done ? Outcome::ok : Outcome::error;
}

// The registry row (strategies/family.hpp): its variants, their properties, and the
// words `lockbench explain advisory-session` prints.
constexpr StrategyProps kSessionPinned{.holds_connection_during_call = true,
                                       .exclusion = Exclusion::all_pods,
                                       .crash_safe = true,
                                       .lock_table = LockTableUse::per_connection};
// Its failed unlocks leave session locks on pooled connections: up to one per key.
constexpr StrategyProps kSessionPooled{.holds_connection_during_call = false,
                                       .exclusion = Exclusion::none,
                                       .crash_safe = false,
                                       .lock_table = LockTableUse::per_key};
constexpr StrategyInfo kAdvisorySessionVariants[] = {
    {.spec = "advisory-session:pinned",
     .family = "advisory-session",
     .family_default = true,
     .props = kSessionPinned,
     .teaches = "correct while the connection stays pinned",
     .make = strategy_maker<AdvisorySession, true, false>},
    {.spec = "advisory-session:pooled",
     .family = "advisory-session",
     .in_all = true,
     .props = kSessionPooled,
     .teaches = "the pooled-connection trap: failed unlocks, locks leaked into the pool",
     .make = strategy_maker<AdvisorySession, false, false>},
    {.spec = "advisory-session:pinned-wait",
     .family = "advisory-session",
     .props = kSessionPinned,
     .teaches = "pinned, waiting for the lock",
     .make = strategy_maker<AdvisorySession, true, true>},
    {.spec = "advisory-session:pooled-wait",
     .family = "advisory-session",
     .props = kSessionPooled,
     .teaches = "pooled, waiting for the lock",
     .make = strategy_maker<AdvisorySession, false, true>},
};
constexpr StrategyFamily kAdvisorySessionFamily{
    .name = "advisory-session",
    .order = 40,
    .words =
        {
            .summary = "session-scoped advisory lock: the pooled-connection trap",
            .how = "SELECT pg_advisory_lock(k) or pg_try_advisory_lock(k) outside a transaction, the partner calls, then "
                   "SELECT pg_advisory_unlock(k). The lock belongs to the database session (the physical connection), "
                   "not to a transaction. Variant pinned: the request keeps the same connection from lock to unlock "
                   "(not idle in transaction, but still checked out). Variant pooled: the connection goes back to the pool "
                   "during the partner call and the unlock runs on whatever connection the pool hands out next. Without "
                   "-wait the lock is tried once (pg_try_advisory_lock: busy means 409); the -wait forms wait for it under "
                   "lock_timeout.",
            .fails = "Pinned: the same pool ceiling as held-tx, without the long transaction. Pooled: the unlock usually runs "
                     "on another session, so pg_advisory_unlock returns false with the warning 'you don't own a lock of type "
                     "ExclusiveLock' (counted as unlock_failures); the lock stays on the first connection, which sits in the "
                     "pool holding it (leaked) until that connection is closed (maxLifetime). Session locks are re-entrant: "
                     "any later request that borrows that connection acquires the key again without waiting, so exclusion "
                     "breaks for it while every other connection is denied. PgBouncer in transaction mode breaks session "
                     "locks the same way. A crashed service frees its locks only when its sessions end. "
                     "Behind PgBouncer with pool_mode = transaction (lockbench run --pgbouncer transaction), even pinned "
                     "breaks: the pool's connection is only a client of PgBouncer, which lends a server backend per "
                     "transaction or autocommitted statement. The lock taken by client A stays on backend X; the next client "
                     "handed X acquires it again at once (counted as handed_to_stranger), A's unlock runs on another backend "
                     "and fails, and the lock outlives both clients, in PgBouncer's pool. A lock wait keeps its backend, so "
                     "under load waiters can hold every backend and everything else queues in PgBouncer until lock_timeout. "
                     "Measured with 10 pooled connections on 4 backends (results/pgbouncer-real, 5 s at 20 requests/s): "
                     "pinned and pooled let 37 and 33 promotions overlap and leaked 15 and 12 locks, while advisory-xact and "
                     "row-lease stayed at 0 violations; the simulator models the same (sim/bouncer.hpp).",
            .choose = "Pinned: a dedicated connection outside the pool (a leader-election or a batch job). Never pooled.",
            .avoid = "With any connection pool or transaction-mode PgBouncer between the code and the database.",
            .java = R"java(// :pooled: every JdbcTemplate call borrows a HikariCP connection and gives it back
public void switchPrimary(long userId, String identityId) {
  Boolean got = jdbc.queryForObject("SELECT pg_try_advisory_lock(?)", Boolean.class, userId); // conn A
  if (!got) throw new ResponseStatusException(HttpStatus.CONFLICT);
  try {
    idp.unlink(identityId);
    idp.link(primaryOf(userId), identityId);
    users.updatePrimary(userId, identityId);
  } finally {
    jdbc.queryForObject("SELECT pg_advisory_unlock(?)", Boolean.class, userId); // conn B: false,
  }                                                 // the lock stays on A, idle in the pool
}
// :pinned: try (Connection c = dataSource.getConnection()) { lock, calls, unlock, all on c })java",
        },
    .variants = kAdvisorySessionVariants};
LOCKBENCH_STRATEGY(kAdvisorySessionFamily);

}  // namespace lockbench

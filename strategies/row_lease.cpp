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

#include "strategies/family.hpp"

namespace lockbench {

class RowLease final : public Strategy {
 public:
  enum class Variant { db_clock, app_clock, fenced, article, renew, orm_mapped };
  explicit RowLease(Variant v) : v_(v) {}
  Task<Outcome> run(RequestCtx& cx, Scenario& sc) override;

 private:
  Variant v_;
};

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

// The registry row (strategies/family.hpp): its variants, their properties, and the
// words `lockbench explain row-lease` prints.
constexpr StrategyProps kRowLease{.holds_connection_during_call = false,
                                  .exclusion = Exclusion::all_pods,
                                  .crash_safe = true,
                                  .needs_existing_row = true,
                                  .refuses_missing_row = true,
                                  .lease_ttl = true};
// The article's lease: the expiry compares the database's clock with the
// application's, and the release clears whoever holds the lease.
constexpr StrategyProps kRowLeaseArticle{.holds_connection_during_call = false,
                                         .exclusion = Exclusion::none,
                                         .crash_safe = true,
                                         .needs_existing_row = true,
                                         .refuses_missing_row = true,
                                         .lease_ttl = true};
constexpr StrategyProps kRowLeaseRenew{.holds_connection_during_call = false,
                                       .exclusion = Exclusion::all_pods,
                                       .crash_safe = true,
                                       .needs_existing_row = true,
                                       .refuses_missing_row = true,
                                       .lease_ttl = true,
                                       .renews_lease = true};
// The lease, with its columns mapped into the ORM entity: an unrelated save()
// from stale state stomps the lock, so it does not exclude once that path runs.
constexpr StrategyProps kRowLeaseOrmMapped{.holds_connection_during_call = false,
                                           .exclusion = Exclusion::none,
                                           .crash_safe = true,
                                           .needs_existing_row = true,
                                           .refuses_missing_row = true,
                                           .lease_ttl = true,
                                           .lock_in_entity = true};
constexpr StrategyInfo kRowLeaseVariants[] = {
    {.spec = "row-lease",
     .family = "row-lease",
     .in_all = true,
     .family_default = true,
     .props = kRowLease,
     .teaches = "a lease row: no connection held; stolen when the TTL is shorter than the call",
     .make = strategy_maker<RowLease, RowLease::Variant::db_clock>},
    {.spec = "row-lease:app-clock",
     .family = "row-lease",
     .props = kRowLease,
     .teaches = "lease times from the application's clock",
     .make = strategy_maker<RowLease, RowLease::Variant::app_clock>},
    {.spec = "row-lease:fenced",
     .family = "row-lease",
     .props = kRowLease,
     .teaches = "sends a fencing token that an enforcing partner checks",
     .make = strategy_maker<RowLease, RowLease::Variant::fenced>},
    {.spec = "row-lease:article",
     .family = "row-lease",
     .props = kRowLeaseArticle,
     .teaches = "the first article's SQL: mixed clocks and an unowned release",
     .make = strategy_maker<RowLease, RowLease::Variant::article>},
    {.spec = "row-lease:renew",
     .family = "row-lease",
     .props = kRowLeaseRenew,
     .teaches = "extends its lease every TTL/3 during the call (ShedLock's extend): short TTL, no steals",
     .make = strategy_maker<RowLease, RowLease::Variant::renew>},
    {.spec = "row-lease:orm-mapped",
     .family = "row-lease",
     .props = kRowLeaseOrmMapped,
     .teaches = "lock columns mapped in the ORM entity: another save() writes back a stale lock",
     .make = strategy_maker<RowLease, RowLease::Variant::orm_mapped>},
};
constexpr StrategyFamily kRowLeaseFamily{
    .name = "row-lease",
    .order = 50,
    .words =
        {
            .summary = "a lease in a row (locked_at, lock_owner) with a TTL: the first article's pattern, done carefully",
            .how = "UPDATE users SET locked_at = now(), lock_owner = $me WHERE id = $k AND (locked_at IS NULL OR locked_at "
                   "< now() - $ttl), in autocommit: one affected row means the lease is held, zero means someone else holds "
                   "it (409). Concurrent UPDATEs on one row serialize on the row lock; the second re-checks the WHERE "
                   "against the committed row and matches nothing. The connection goes back to the pool before the partner "
                   "calls. Release: UPDATE ... SET locked_at = NULL WHERE id = $k AND lock_owner = $me. Times come from the "
                   "database's clock, so service clocks do not matter; row-lease:app-clock computes them with the service's "
                   "own clock instead, and then clock skew between services moves the expiry. row-lease:fenced also bumps "
                   "a lease_token column on every acquisition and sends it with each partner call (X-Fencing-Token), so a "
                   "partner that remembers the highest token seen can refuse the calls of a holder whose lease was taken "
                   "over. The result is stored only while the lease is still ours (UPDATE ... WHERE id = $k AND lock_owner = "
                   "$me: 0 rows = the lease was lost, counted as lease_lost, nothing stored). row-lease:article is the first "
                   "article's exact SQL: locked_at = NOW() from the database's clock, compared with :staleBefore computed "
                   "from the application's clock, an unconditional store and a release WHERE id = $k with no owner check. "
                   "The same idea as ShedLock's JDBC provider (lockAtMostFor is the TTL; usingDbTime() is the database-clock "
                   "form). Renewal: row-lease:renew keeps the TTL short and extends the lease while the partner calls run, "
                   "every TTL/3, with UPDATE ... SET locked_at = now() WHERE id = $k AND lock_owner = $me AND locked_at >= "
                   "now() - $ttl on a connection borrowed from the pool each time (ShedLock's extendable locks, "
                   "KeepAliveLockProvider; Spring Integration's RenewableLockRegistry.renewLock on a JdbcLockRegistry). A "
                   "crashed holder then frees the key about one TTL after its last renewal, and a merely slow call is never "
                   "stolen; but a holder that cannot renew (a GC pause, a frozen pod, a renewal stuck waiting for the pool) "
                   "still loses its lease after one TTL while it keeps working, so fencing still matters. Each renewal is "
                   "one statement and one pool borrow: holders x 3 / TTL statements per second (locks.renewals). "
                   "row-lease:orm-mapped runs the same SQL, but the lock columns are also fields of the ORM entity, which "
                   "the article warns against: another code path (a profile edit, a last-login stamp; --orm-writer-rate, "
                   "--orm-writer-gap) loads the entity, does its own work, and save()s it, and the ORM writes back every "
                   "mapped field, the locked_at and lock_owner it loaded included.",
            .fails = "The TTL is a guess: when a live request's partner calls (retries and backoff included) outlast it, the "
                     "next request steals the lease and the two race exactly as with none (counted as lease_steals). A "
                     "crashed service leaves the key locked until the TTL passes. A failed release leaves it locked until the "
                     "TTL too, after the effect happened. row-lease:article makes it worse: a holder that outlived its TTL "
                     "releases the lease of the request that stole it (no owner check), so a third request enters while the "
                     "second still works, and its store overwrites the thief's. It needs the row to exist (it cannot protect "
                     "a first claim or a new order), needs columns the ORM must never write, and is advisory: any code path "
                     "that ignores it is not excluded. row-lease:orm-mapped shows the columns written: a save() that lands "
                     "inside a lease writes back the stale lock (NULL, or an old owner), a third request takes the lease and "
                     "enters while the holder still calls the partner (overlap_person; side_traffic.lock_stomps counts the "
                     "saves that changed the lock), and the holder's owner-checked store then finds the lease gone "
                     "(lease_lost). The same second code path against row-lease, whose entity does not map the lock, writes "
                     "its own column only and leaves the lease alone.",
            .choose = "Slow external calls on a bounded pool, with one PostgreSQL as the source of truth: size the TTL above "
                      "the worst-case call window (lockbench lint computes it).",
            .avoid = "When the worst case of the external calls is unbounded, or a stolen lease is unacceptable: then add "
                     "fencing tokens the partner enforces (row-lease:fenced; note that a two-call promotion can still be cut "
                     "in half when its second call is refused), or an idempotent partner operation.",
            .java = R"java(// ShedLock's JDBC provider keeps the same lease in a row (lock_until, locked_by):
@Bean
LockProvider lockProvider(DataSource dataSource) {
  return new JdbcTemplateLockProvider(JdbcTemplateLockProvider.Configuration.builder()
      .withJdbcTemplate(new JdbcTemplate(dataSource))
      .usingDbTime()     // the database's clock, as row-lease; without it the app's (:app-clock)
      .build());
}
public void switchPrimary(long userId, String identityId) {
  TaskResult<Void> r = executor.executeWithLock(() -> { promote(userId, identityId); return null; },
      new LockConfiguration(Instant.now(), "user-" + userId,
          Duration.ofSeconds(30),   // lockAtMostFor: the TTL, after which another holder may enter
          Duration.ZERO));          // lockAtLeastFor
  if (!r.wasExecuted()) throw new ResponseStatusException(HttpStatus.CONFLICT);
}
// The lock columns stay out of the entity. row-lease:orm-mapped maps them,
//   @Column Instant lockedAt; @Column String lockOwner;   // on @Entity User
// and then an unrelated users.save(user) (a profile edit, a last-login stamp)
// writes back the lockedAt/lockOwner it loaded: Hibernate's UPDATE sets every
// mapped column (without @DynamicUpdate), and a third request takes the lease.)java",
        },
    .variants = kRowLeaseVariants};
LOCKBENCH_STRATEGY(kRowLeaseFamily);

}  // namespace lockbench

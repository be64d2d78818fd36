// advisory-xact: BEGIN; pg_try_advisory_xact_lock(k) (fail fast) or
// pg_advisory_xact_lock(k) under SET LOCAL lock_timeout (bounded wait).
// COMMIT or ROLLBACK releases it, and so does a dead backend: crash-safe.
// The key is a number, so it protects a record that does not exist yet;
// --key-hash says how the business key becomes that number (hashtext-32's 32
// bits make unrelated keys share a lock: false conflicts).
// Like held-tx, it pins a pooled connection through the partner calls.
#include "strategies/family.hpp"
#include "strategies/strategies.hpp"

namespace lockbench {

class AdvisoryXact final : public Strategy {
 public:
  explicit AdvisoryXact(bool wait) : wait_(wait) {}
  Task<Outcome> run(RequestCtx& cx, Scenario& sc) override;

 private:
  bool wait_;
};

Task<Outcome> AdvisoryXact::run(RequestCtx& cx, Scenario& sc) {
  ConnHandle c = co_await cx.world().acquire(cx);
  if (!c) co_return Outcome::pool_timeout;
  co_await c->begin();
  const LockMode mode{wait_ ? LockWait::wait : LockWait::try_lock, cx.settings().lock_timeout};
  const Key key = sc.hashed_lock_key(cx);  // --key-hash: two keys may share one lock number
  AdvisoryHolding holding(cx, key);        // COMMIT/ROLLBACK frees it: so does leaving this scope
  if (co_await c->advisory_xact_lock(key, mode) != LockResult::acquired) {
    cx.locks().denied++;
    holding.denied();  // a false conflict when only other keys hold the number
    co_await c->rollback();
    co_return Outcome::conflict;
  }
  cx.locks().acquired++;
  holding.held();
  Plan plan;
  co_await sc.read(cx, *c, plan);
  if (plan.noop) {
    co_await c->commit();
    co_return Outcome::ok;
  }
  const Effect effect = co_await sc.external(cx, plan, CallOptions{});  // lock and connection held
  if (effect != Effect::done) {
    co_await c->rollback();
    co_return Outcome::error;
  }
  co_await sc.store(cx, *c, plan, Guard::any());
  co_await c->commit();  // releases the advisory lock
  co_return Outcome::ok;
}

// The registry row (strategies/family.hpp): its variants, their properties, and the
// words `lockbench explain advisory-xact` prints.
constexpr StrategyProps kAdvisoryXact{.holds_connection_during_call = true,
                                      .exclusion = Exclusion::all_pods,
                                      .crash_safe = true,
                                      .lock_table = LockTableUse::per_connection};
constexpr StrategyInfo kAdvisoryXactVariants[] = {
    {.spec = "advisory-xact:try",
     .family = "advisory-xact",
     .in_all = true,
     .family_default = true,
     .props = kAdvisoryXact,
     .teaches = "correct exclusion, crash-safe, still pins the pool",
     .make = strategy_maker<AdvisoryXact, false>},
    {.spec = "advisory-xact:wait",
     .family = "advisory-xact",
     .props = kAdvisoryXact,
     .teaches = "correct exclusion with a bounded wait (lock_timeout)",
     .make = strategy_maker<AdvisoryXact, true>},
};
constexpr StrategyFamily kAdvisoryXactFamily{
    .name = "advisory-xact",
    .order = 30,
    .words =
        {
            .summary = "transaction-scoped advisory lock: correct and crash-safe, still pins the pool",
            .how = "BEGIN; SELECT pg_try_advisory_xact_lock(k) (variant try: returns false at once when another "
                   "transaction holds k, answered as 409) or SET LOCAL lock_timeout via set_config('lock_timeout', ..., "
                   "true) and SELECT pg_advisory_xact_lock(k) (variant wait: blocks, up to lock_timeout, then SQLSTATE "
                   "55P03). The lock lives until COMMIT or ROLLBACK; pg_advisory_unlock cannot release it early. The key k "
                   "is any 64-bit number (or two 32-bit ones), so it can protect a record that does not exist yet.",
            .fails = "The transaction, and so the pooled connection, stays open for the whole partner call: the same "
                     "Little's-law ceiling and pool exhaustion as held-tx. Keys share one namespace per database, so two "
                     "features hashing to the same number block each other, and so do two keys of one feature when the hash "
                     "is narrow: with --key-hash hashtext-32 (pg_advisory_xact_lock(hashtext(key)), 32 bits) the ids 70606 and "
                     "156495 share one lock, and a request of one is refused while the other holds it (locks.false_conflicts); "
                     "sha256-64 (the article's first 8 bytes of SHA-256) and int-id keep them apart. Over uniform traffic a "
                     "request meets a false conflict with probability about (locks held at once) / 2^32, whatever the key "
                     "count once it passes about 10^5 (docs/explanation/key-hashing.md). Locks live in the shared lock table sized by "
                     "max_locks_per_transaction x max_connections. It works through PgBouncer in transaction pooling mode, "
                     "because the transaction pins the server connection. Crash-safe: a dead session's transaction is "
                     "rolled back and its locks are freed.",
            .choose = "DB-only critical sections, or short external calls with pool headroom; when the key has no row.",
            .avoid = "When the critical section contains a slow or retried HTTP call and the pool cannot absorb it.",
            .java = R"java(@Transactional
public void switchPrimary(long userId, String identityId) {
  Boolean got = jdbc.queryForObject("SELECT pg_try_advisory_xact_lock(?)", Boolean.class, userId);
  if (!got) throw new ResponseStatusException(HttpStatus.CONFLICT);          // :try
  // :wait: jdbc.queryForObject("SELECT set_config('lock_timeout', '5s', true)", String.class);
  //        jdbc.queryForList("SELECT pg_advisory_xact_lock(?)", userId);
  idp.unlink(identityId);                           // the transaction and its connection stay open
  idp.link(primaryOf(userId), identityId);
  users.updatePrimary(userId, identityId);
}                                                   // COMMIT (or ROLLBACK) releases the key)java",
        },
    .variants = kAdvisoryXactVariants};
LOCKBENCH_STRATEGY(kAdvisoryXactFamily);

}  // namespace lockbench

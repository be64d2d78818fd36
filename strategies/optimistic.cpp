// optimistic: read the version, do the work, write only if the version is
// unchanged (@Version). It detects a conflict, it does not prevent one: by the
// time the write fails, both requests have already called the partner.
#include "strategies/family.hpp"

namespace lockbench {

class Optimistic final : public Strategy {
 public:
  Task<Outcome> run(RequestCtx& cx, Scenario& sc) override;
};

Task<Outcome> Optimistic::run(RequestCtx& cx, Scenario& sc) {
  ConnHandle c = co_await cx.world().acquire(cx);
  if (!c) co_return Outcome::pool_timeout;
  Plan plan;  // filled in place by read(): no Plan moved through a coroutine's return
  co_await sc.read(cx, *c, plan);
  c.reset();  // connection back to the pool
  if (plan.noop) co_return Outcome::ok;
  const Effect effect = co_await sc.external(cx, plan, CallOptions{});  // nothing stops a second request here
  if (effect != Effect::done) co_return Outcome::error;
  c = co_await cx.world().acquire(cx);
  if (!c) co_return Outcome::pool_timeout;
  if (!co_await sc.store(cx, *c, plan, Guard::if_version(plan.before.version))) {
    cx.locks().version_conflicts++;
    co_return Outcome::conflict;  // OptimisticLockException, after the side effect
  }
  co_return Outcome::ok;
}

// The registry row (strategies/family.hpp): its variants, their properties, and the
// words `lockbench explain optimistic` prints.
constexpr StrategyProps kOptimistic{.holds_connection_during_call = false,
                                    .exclusion = Exclusion::none,
                                    .crash_safe = false,
                                    .needs_existing_row = true};
constexpr StrategyInfo kOptimisticVariants[] = {
    {.spec = "optimistic",
     .family = "optimistic",
     .in_all = true,
     .family_default = true,
     .props = kOptimistic,
     .teaches = "detects the conflict only after the side effect",
     .make = strategy_maker<Optimistic>},
};
constexpr StrategyFamily kOptimisticFamily{
    .name = "optimistic",
    .order = 80,
    .words =
        {
            .summary = "version check at the end: detects the conflict after the side effect",
            .how = "Read the row's version, do the partner calls, then UPDATE ... SET version = version + 1 WHERE id = $k "
                   "AND version = $v. Zero rows updated means another request wrote first (version_conflicts). No lock and "
                   "no connection is held during the partner calls.",
            .fails = "It detects, it does not prevent: both requests have already called the partner when the second one "
                     "learns of the conflict, so the external state is corrupted exactly as with none; only the local write "
                     "is refused. Compensating the partner afterwards is the caller's problem.",
            .choose = "Local edits where losing the race only costs a retry; as a second line of defence next to a lease.",
            .avoid = "As the only protection around a non-idempotent external side effect.",
            .java = R"java(@Entity
class User {
  @Id Long id;
  @Version long version;                            // Hibernate adds AND version = ? to the UPDATE
  String primaryIdentity;
}
public void switchPrimary(long userId, String identityId) {
  User u = users.findById(userId).orElseThrow();    // a short transaction reads version v
  idp.unlink(identityId);                           // no lock, no connection: the effects happen
  idp.link(u.getPrimaryIdentity(), identityId);
  u.setPrimaryIdentity(identityId);
  users.save(u);   // UPDATE ... SET version = v + 1 WHERE id = ? AND version = v; 0 rows:
}                  // ObjectOptimisticLockingFailureException (409), after the partner calls)java",
        },
    .variants = kOptimisticVariants};
LOCKBENCH_STRATEGY(kOptimisticFamily);

}  // namespace lockbench

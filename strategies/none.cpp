// none: no exclusion at all. Two requests for one key run their partner calls
// at the same time (two promotions interleave their unlink/link, a double
// click charges twice): the race itself.
#include "strategies/family.hpp"
#include "strategies/strategies.hpp"

namespace lockbench {

Task<Outcome> None::run(RequestCtx& cx, Scenario& sc) {
  ConnHandle c = co_await cx.world().acquire(cx);
  if (!c) co_return Outcome::pool_timeout;
  Plan plan;  // filled in place by read(): no Plan moved through a coroutine's return
  co_await sc.read(cx, *c, plan);
  c.reset();  // connection back to the pool: nothing is held during the partner calls
  if (plan.noop) co_return Outcome::ok;
  const Effect effect = co_await sc.external(cx, plan, CallOptions{});
  if (effect != Effect::done) co_return Outcome::error;
  c = co_await cx.world().acquire(cx);
  if (!c) co_return Outcome::pool_timeout;
  co_await sc.store(cx, *c, plan, Guard::any());
  co_return Outcome::ok;
}

// The registry row (strategies/family.hpp): its variants, their properties, and the
// words `lockbench explain none` prints.
// Each strategy's properties (core/strategy.hpp's StrategyProps), by field
// name: what a row leaves out is false / none.
constexpr StrategyProps kNone{.holds_connection_during_call = false, .exclusion = Exclusion::none, .crash_safe = false};
constexpr StrategyInfo kNoneVariants[] = {
    {.spec = "none",
     .family = "none",
     .in_all = true,
     .family_default = true,
     .props = kNone,
     .teaches = "the race itself",
     .make = strategy_maker<None>},
};
constexpr StrategyFamily kNoneFamily{
    .name = "none",
    .order = 10,
    .words =
        {
            .summary = "no exclusion: the baseline that shows the double-link race itself",
            .how = "Nothing is locked. Each request reads the user's current primary identity, calls the partner to unlink "
                   "the target identity and to link the old primary under it, then stores the new primary. A pooled "
                   "connection is borrowed only for the short reads and writes, never during the partner calls.",
            .fails = "Two requests for the same person (a double click, a client retry, two tabs) run their unlink/link calls "
                     "at the same time. The partner applies both, in whatever order they arrive: the person can end up split "
                     "over two users, with the wrong primary, or with an identity lost. Nothing fails loudly; the local "
                     "database cannot see it. The partner's oracle counts it as overlap_person, flow_interleaving, "
                     "person_split and lost_promotion.",
            .choose = "Only as the measurement baseline, or when the partner operation is itself atomic and idempotent.",
            .avoid = "Whenever two requests for one key can overlap and the external operation has more than one step.",
            .java = R"java(public void switchPrimary(long userId, String identityId) {
  User u = users.findById(userId).orElseThrow();    // a short read; the connection goes back
  idp.unlink(identityId);                           // the partner calls: nothing held,
  idp.link(u.getPrimaryIdentity(), identityId);     // nothing excluded
  users.updatePrimary(userId, identityId);          // a short write
})java",
        },
    .variants = kNoneVariants};
LOCKBENCH_STRATEGY(kNoneFamily);

}  // namespace lockbench

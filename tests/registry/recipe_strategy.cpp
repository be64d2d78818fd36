// recipe-example: a throw-away strategy written as ARCHITECTURE.md's recipe
// says, in one file: its class, its run(), and its registry row. Nothing else
// names it; recipe_test links this file beside the libraries and checks that
// the registry, explain, lint and the simulator take it from here. Copy it to
// strategies/NAME.cpp to start a new strategy (and rename what it defines:
// unity builds compile up to eight files of the folder as one).
//
// What it does: none's code (no exclusion), counting each request that reached
// its partner calls as a lock acquired (so a run shows this run() ran); the
// :held variant keeps its pooled connection through the calls.
#include "strategies/family.hpp"

namespace lockbench {

class RecipeExample final : public Strategy {
 public:
  explicit RecipeExample(bool held) : held_(held) {}
  Task<Outcome> run(RequestCtx& cx, Scenario& sc) override;

 private:
  bool held_;
};

Task<Outcome> RecipeExample::run(RequestCtx& cx, Scenario& sc) {
  ConnHandle c = co_await cx.world().acquire(cx);
  if (!c) co_return Outcome::pool_timeout;
  Plan plan;
  co_await sc.read(cx, *c, plan);
  if (!held_) c.reset();  // the connection back to the pool before the partner calls
  if (plan.noop) co_return Outcome::ok;
  cx.locks().acquired++;
  const Effect effect = co_await sc.external(cx, plan, CallOptions{});
  if (effect != Effect::done) co_return Outcome::error;
  if (!c) {
    c = co_await cx.world().acquire(cx);
    if (!c) co_return Outcome::pool_timeout;
  }
  co_await sc.store(cx, *c, plan, Guard::any());
  co_return Outcome::ok;
}

// The registry row (strategies/family.hpp): its variants, their properties, and the
// words `lockbench explain recipe-example` prints.
constexpr StrategyProps kRecipeExample{.holds_connection_during_call = false,
                                       .exclusion = Exclusion::none,
                                       .crash_safe = false};
constexpr StrategyProps kRecipeExampleHeld{.holds_connection_during_call = true,
                                           .exclusion = Exclusion::none,
                                           .crash_safe = false};
constexpr StrategyInfo kRecipeExampleVariants[] = {
    {.spec = "recipe-example",
     .family = "recipe-example",
     .in_all = true,
     .family_default = true,
     .props = kRecipeExample,
     .teaches = "the recipe's throw-away strategy: none, counted",
     .make = strategy_maker<RecipeExample, false>},
    {.spec = "recipe-example:held",
     .family = "recipe-example",
     .props = kRecipeExampleHeld,
     .teaches = "the same, holding its connection through the calls",
     .make = strategy_maker<RecipeExample, true>},
};
constexpr StrategyFamily kRecipeExampleFamily{
    .name = "recipe-example",
    .order = 1000,  // after every family of strategies/
    .words =
        {
            .summary = "a throw-away strategy in one file: the recipe's check",
            .how = "It reads, calls the partner and stores, as none does, and counts each request that reached "
                   "its partner calls (locks.acquired).",
            .fails = "It excludes nothing: two requests for one key overlap at the partner.",
            .choose = "Never: it exists to show that a strategy is its file.",
            .avoid = "Always.",
            .java = R"java(public void switchPrimary(long userId, String identityId) {
  idp.unlink(identityId);                           // recipe-example: nothing held
})java",
        },
    .lint = {.holds_pre_sql_work = true},
    .variants = kRecipeExampleVariants};
LOCKBENCH_STRATEGY(kRecipeExampleFamily);

}  // namespace lockbench

// Traffic beside the strategy's lock: the row-lease article's two warnings about
// other code paths, as settings that apply to every strategy.
//   --bypass-share S     "it's advisory, not enforced by the database": that
//                        share of requests ignores the lock (an admin job, a
//                        second service) and runs the scenario's read, partner
//                        calls and store with no lock at all (none's code)
//   --orm-writer-rate R  "not mapped as an entity field": a second code path (a
//   --orm-writer-gap G   profile edit, a last-login stamp) loads the lock row's
//                        entity, waits G, and saves it. Where the strategy maps
//                        the lock columns into the entity (row-lease:orm-mapped,
//                        StrategyProps::lock_in_entity) the save writes every
//                        field back, the stale locked_at/lock_owner included;
//                        elsewhere it writes its own column only
// make_strategy (registry.cpp) wraps every strategy in SideTraffic, so both
// worlds, and process pods, run the same code: the bypass is decided per
// request from the seed and the request id (a pod decides as the runner
// would), and the writer is one background worker per pod
// (Strategy::background) at R / pods per second. Counted in the result's
// side_traffic{bypassed, entity_saves, lock_stomps}.
#pragma once

#include <memory>

#include "core/strategy.hpp"
#include "strategies/strategies.hpp"

namespace lockbench {

class SideTraffic final : public Strategy {
 public:
  SideTraffic(std::unique_ptr<Strategy> inner, bool lock_in_entity)
      : inner_(std::move(inner)), lock_in_entity_(lock_in_entity) {}
  // The inner strategy's Task itself unless the request bypasses the lock:
  // no coroutine frame of its own on the common path.
  Task<Outcome> run(RequestCtx& cx, Scenario& sc) override;
  int background_workers(const Settings& s) const override;
  Task<void> background(RequestCtx& cx, Scenario& sc) override;

  // True when this request ignores the lock (--bypass-share): reproducible
  // from the seed and the request id alone.
  static bool bypasses(const Settings& s, std::uint64_t request_id);

 private:
  Task<Outcome> bypass(RequestCtx& cx, Scenario& sc);
  Task<void> orm_writer(RequestCtx& cx, Scenario& sc);
  std::unique_ptr<Strategy> inner_;
  None none_;
  bool lock_in_entity_;
};

}  // namespace lockbench

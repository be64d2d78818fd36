// What several strategies' files share. Each strategy's class, run() and
// registry row live in its own file (strategies/family.hpp): read them side by side.
#pragma once

#include "core/strategy.hpp"

namespace lockbench {

// The false-conflict ledger's view of one advisory lock a request holds
// (LockCounters::advisory_*; only with a --key-hash, so the default run does no
// bookkeeping). held() when granted; the destructor lets it go, unless
// keep() says the lock outlives the request (a failed session unlock).
class AdvisoryHolding {
 public:
  AdvisoryHolding(RequestCtx& cx, Key lock) : cx_(cx), lock_(lock), on_(cx.settings().key_hash != KeyHash::scenario) {}
  AdvisoryHolding(const AdvisoryHolding&) = delete;
  AdvisoryHolding& operator=(const AdvisoryHolding&) = delete;
  ~AdvisoryHolding() {
    if (held_) cx_.locks().advisory_freed(lock_, cx_.key());
  }
  void denied() {
    if (on_) cx_.locks().advisory_denied(lock_, cx_.key());
  }
  void held() {
    if (on_) cx_.locks().advisory_held(lock_, cx_.key());
    held_ = on_;
  }
  void keep() { held_ = false; }

 private:
  RequestCtx& cx_;
  const Key lock_;
  const bool on_;
  bool held_ = false;
};

// none's strategy: also what a request that bypasses the lock runs (side_traffic.hpp).
class None final : public Strategy {
 public:
  Task<Outcome> run(RequestCtx& cx, Scenario& sc) override;
};








// split-tx's two transactions around the idempotent call (split_tx.cpp), shared
// with after-commit; `reconcile` writes and settles the reconciliation row.
// *paid_committed (when given) is set once this request's PAID commit
// returned: the moment AFTER_COMMIT listeners run.
Task<Outcome> split_transactions(RequestCtx& cx, Scenario& sc, bool reconcile, bool* paid_committed);



}  // namespace lockbench

// The strategies. Each run() lives in its own file: read them side by side.
// Their names and properties are in registry.cpp.
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

class None final : public Strategy {
 public:
  Task<Outcome> run(RequestCtx& cx, Scenario& sc) override;
};

class HeldTx final : public Strategy {
 public:
  explicit HeldTx(bool nowait) : nowait_(nowait) {}
  Task<Outcome> run(RequestCtx& cx, Scenario& sc) override;

 private:
  bool nowait_;
};

class AdvisoryXact final : public Strategy {
 public:
  explicit AdvisoryXact(bool wait) : wait_(wait) {}
  Task<Outcome> run(RequestCtx& cx, Scenario& sc) override;

 private:
  bool wait_;
};

class AdvisorySession final : public Strategy {
 public:
  AdvisorySession(bool pinned, bool wait) : pinned_(pinned), wait_(wait) {}
  Task<Outcome> run(RequestCtx& cx, Scenario& sc) override;

 private:
  bool pinned_;
  bool wait_;
};

class RowLease final : public Strategy {
 public:
  enum class Variant { db_clock, app_clock, fenced, article, renew, orm_mapped };
  explicit RowLease(Variant v) : v_(v) {}
  Task<Outcome> run(RequestCtx& cx, Scenario& sc) override;

 private:
  Variant v_;
};

// redis-lease and etcd-lease (kv_lease.cpp): the same code on the store the registry row names.
class KvLease final : public Strategy {
 public:
  enum class Variant { plain, fenced, renew };
  explicit KvLease(Variant v) : v_(v) {}
  Task<Outcome> run(RequestCtx& cx, Scenario& sc) override;

 private:
  Variant v_;
};

class Optimistic final : public Strategy {
 public:
  Task<Outcome> run(RequestCtx& cx, Scenario& sc) override;
};

class Synchronized final : public Strategy {
 public:
  explicit Synchronized(bool wait) : wait_(wait) {}
  Task<Outcome> run(RequestCtx& cx, Scenario& sc) override;

 private:
  bool wait_;
};

class SplitTx final : public Strategy {
 public:
  explicit SplitTx(bool reconcile) : reconcile_(reconcile) {}
  Task<Outcome> run(RequestCtx& cx, Scenario& sc) override;
  int background_workers(const Settings& s) const override;
  Task<void> background(RequestCtx& cx, Scenario& sc) override;

 private:
  bool reconcile_;
};
// split-tx's two transactions around the idempotent call (split_tx.cpp), shared
// with after-commit; `reconcile` writes and settles the reconciliation row.
// *paid_committed (when given) is set once this request's PAID commit
// returned: the moment AFTER_COMMIT listeners run.
Task<Outcome> split_transactions(RequestCtx& cx, Scenario& sc, bool reconcile, bool* paid_committed);

class AfterCommit final : public Strategy {
 public:
  Task<Outcome> run(RequestCtx& cx, Scenario& sc) override;
  int background_workers(const Settings& s) const override { return s.outbox_pollers; }
  Task<void> background(RequestCtx& cx, Scenario& sc) override;
};

class Outbox final : public Strategy {
 public:
  Task<Outcome> run(RequestCtx& cx, Scenario& sc) override;
  int background_workers(const Settings& s) const override { return s.outbox_pollers; }
  Task<void> background(RequestCtx& cx, Scenario& sc) override;
};

}  // namespace lockbench

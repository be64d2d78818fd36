#include "real/real_world.hpp"

#include <thread>

#include "core/context.hpp"
#include "real/carriers.hpp"

namespace lockbench::real {

Task<void> RealWorld::sleep(RequestCtx&, Duration d) {
  note_step("sleep");
  VirtualThread::Blocking unmounted;
  std::this_thread::sleep_for(d);
  co_return;
}

Task<ConnHandle> RealWorld::acquire(RequestCtx& cx) {
  note_step("pool.acquire");
  const Duration start = now();
  PgConn* c = nullptr;
  {
    VirtualThread::Blocking unmounted;
    c = pool_.borrow(cx.settings().connection_timeout);
  }
  const Duration end = now();
  cx.split().pool_wait += end - start;
  cx.trace("pool.acquire", start, end, c ? c->id() : -1, c ? "" : "timeout");
  if (!c) co_return ConnHandle();
  c->attach(&cx);
  co_return ConnHandle(c);
}

Task<PartnerReply> RealWorld::partner_attempt(RequestCtx&, const PartnerCall& call) {
  note_step(partner_call_name(call.kind).data());  // names are string literals
  VirtualThread::Blocking unmounted;
  co_return partner_.attempt(call);
}

}  // namespace lockbench::real

namespace lockbench::real {

Task<LockResult> RealWorld::local_lock(RequestCtx& cx, Key key, LockMode mode) {
  note_step("lock.local");
  const Duration start = now();
  const std::uint64_t me = cx.request().id;
  LockResult r = LockResult::acquired;
  // A virtual thread entering synchronized below JDK 24 pins its carrier,
  // waiting or holding, until local_unlock (or it gives up).
  if (pins_carriers_) VirtualThread::pin();
  {
    std::unique_lock lock(local_mu_);
    const auto free = [&] { return !local_held_.contains(key); };
    if (!free()) {
      if (mode.wait != LockWait::wait) {
        r = LockResult::busy;
      } else if (mode.timeout > Duration::zero()) {
        if (!local_cv_.wait_for(lock, mode.timeout, free)) r = LockResult::timed_out;
      } else {
        local_cv_.wait(lock, free);
      }
    }
    if (r == LockResult::acquired) local_held_.emplace(key, me);
  }
  if (r != LockResult::acquired && pins_carriers_) VirtualThread::unpin();
  const Duration end = now();
  cx.split().lock_wait += end - start;
  cx.trace(r == LockResult::acquired ? "lock.acquire" : "lock.denied", start, end, -1,
           "local lock " + std::to_string(key) +
               (r == LockResult::timed_out ? ": timed out" : r == LockResult::busy ? ": busy" : ""));
  co_return r;
}

void RealWorld::local_unlock(RequestCtx& cx, Key key) {
  {
    std::lock_guard lock(local_mu_);
    const auto it = local_held_.find(key);
    if (it == local_held_.end() || it->second != cx.request().id) return;
    local_held_.erase(it);
  }
  if (pins_carriers_) VirtualThread::unpin();
  local_cv_.notify_all();
  cx.trace("lock.release", now(), now(), -1, "local lock " + std::to_string(key));
}

}  // namespace lockbench::real

// ---- the lease store (redis-lease, etcd-lease)
namespace lockbench::real {

namespace {
KvLeaseStore& store_or_throw(KvLeaseStore* s) {
  if (!s) throw DbError("this world has no lease store (redis-lease needs --redis, etcd-lease --etcd)");
  return *s;
}
}  // namespace

Task<LeaseResult> RealWorld::kv_lease_acquire(RequestCtx& cx, Key key, std::string_view owner, Duration ttl) {
  note_step("lock.acquire");
  const Duration start = now();
  LeaseResult r;
  {
    VirtualThread::Blocking unmounted;
    r = store_or_throw(store_).acquire(key, owner, ttl);
  }
  const Duration end = now();
  cx.split().lock_wait += end - start;
  cx.trace(r.acquired ? "lock.acquire" : "lock.denied", start, end, -1,
           std::string(store_->name()) + " lease " + std::to_string(key) + (r.took_over_expired ? " taken over from " + r.previous_owner : ""));
  co_return r;
}

Task<bool> RealWorld::kv_lease_release(RequestCtx& cx, Key key, std::string_view owner) {
  note_step("lock.release");
  const Duration start = now();
  bool ok;
  {
    VirtualThread::Blocking unmounted;
    ok = store_or_throw(store_).release(key, owner);
  }
  const Duration end = now();
  cx.split().lock_wait += end - start;
  cx.trace("lock.release", start, end, -1, std::string(store_->name()) + " lease " + std::to_string(key) + (ok ? "" : ": no longer ours"));
  co_return ok;
}

Task<bool> RealWorld::kv_lease_extend(RequestCtx& cx, Key key, std::string_view owner, Duration ttl) {
  const Duration start = now();
  bool ok;
  {
    VirtualThread::Blocking unmounted;
    ok = store_or_throw(store_).extend(key, owner, ttl);
  }
  cx.trace("lock.extend", start, now(), -1, std::string(store_->name()) + " lease " + std::to_string(key) + (ok ? "" : ": lost"));
  co_return ok;
}

// ---- renewal

struct Renewer::Entry {
  Entry(RequestCtx& cx, Duration p, RenewFn f)
      : ctx(cx.world(), cx.recorder(), cx.settings(), cx.request()), period(p), fn(std::move(f)) {}
  RequestCtx ctx;  // the renewal's own: the request's id and owner, its own split (another thread)
  const Duration period;
  RenewFn fn;
  bool stopped = false;    // GUARDED_BY(Renewer::mu_)
  bool in_flight = false;  // GUARDED_BY(Renewer::mu_)
};

Renewer::~Renewer() {
  {
    std::lock_guard lock(mu_);
    quit_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::shared_ptr<Renewer::Entry> Renewer::add(RequestCtx& cx, Duration period, RenewFn fn) {
  auto e = std::make_shared<Entry>(cx, period, std::move(fn));
  {
    std::lock_guard lock(mu_);
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
    due_.emplace(Clock::now() + period, e);
  }
  cv_.notify_all();
  return e;
}

void Renewer::stop(Entry& e) {
  std::unique_lock lock(mu_);
  e.stopped = true;
  cv_.wait(lock, [&] { return !e.in_flight; });
}

void Renewer::loop() {
  std::unique_lock lock(mu_);
  while (!quit_) {
    // Stopped entries leave the queue without running.
    while (!due_.empty() && due_.begin()->second->stopped) due_.erase(due_.begin());
    if (due_.empty()) {
      cv_.wait(lock);
      continue;
    }
    const auto at = due_.begin()->first;
    if (Clock::now() < at) {
      cv_.wait_until(lock, at);
      continue;
    }
    std::shared_ptr<Entry> e = due_.begin()->second;
    due_.erase(due_.begin());
    e->in_flight = true;
    lock.unlock();
    bool go_on = false;
    try {
      go_on = run_sync(e->fn(e->ctx));
    } catch (const std::exception&) {
      go_on = false;  // a renewal that fails with an error stops renewing: the TTL decides
    }
    lock.lock();
    e->in_flight = false;
    if (go_on && !e->stopped) due_.emplace(at + e->period, e);
    cv_.notify_all();
  }
}

namespace {
class RealRenewal final : public Renewal {
 public:
  RealRenewal(Renewer& r, std::shared_ptr<Renewer::Entry> e) : renewer_(r), entry_(std::move(e)) {}
  ~RealRenewal() override { renewer_.stop(*entry_); }
  Task<void> stop() override {
    renewer_.stop(*entry_);
    co_return;
  }

 private:
  Renewer& renewer_;
  std::shared_ptr<Renewer::Entry> entry_;
};
}  // namespace

std::unique_ptr<Renewal> RealWorld::keep_renewing(RequestCtx& cx, Duration period, RenewFn renew) {
  return std::make_unique<RealRenewal>(renewer_, renewer_.add(cx, period, std::move(renew)));
}

}  // namespace lockbench::real

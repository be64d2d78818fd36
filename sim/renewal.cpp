// SimWorld's lease-store operations (redis-lease, etcd-lease) and World::keep_renewing in
// virtual time: a renewal is a coroutine of the request's pod, so a crashed pod
// renews nothing (its coroutines are never resumed) and a paused pod renews
// nothing while paused (its events wait), and its leases expire meanwhile.
#include <memory>
#include <string>

#include "sim/pod_root.hpp"
#include "sim/sim_world.hpp"

namespace lockbench::sim {

namespace {

// Shared by the request's handle and the renewal coroutine.
struct RenewState {
  bool stopped = false;
  bool in_flight = false;
  std::coroutine_handle<> waiter;  // a stop() waiting for the renewal in flight
};

class SimRenewal final : public Renewal {
 public:
  explicit SimRenewal(std::shared_ptr<RenewState> st) : st_(std::move(st)) {}
  ~SimRenewal() override { st_->stopped = true; }
  Task<void> stop() override {
    st_->stopped = true;
    if (st_->in_flight) co_await WaitDone{*st_};
  }

 private:
  struct WaitDone {
    RenewState& st;
    bool await_ready() const noexcept { return !st.in_flight; }
    void await_suspend(std::coroutine_handle<> h) { st.waiter = h; }
    void await_resume() const noexcept {}
  };
  std::shared_ptr<RenewState> st_;
};

PodRoot renew_loop(SimWorld& w, Pod& pod, std::uint32_t slot, Request r, Duration period, RenewFn fn,
                     std::shared_ptr<RenewState> st) {
  RequestCtx cx(w, w.recorder(), w.settings(), r);  // its own split: it runs beside the request
  for (;;) {
    co_await Sleep{w.loop(), period, pod.owner()};
    if (st->stopped) break;
    st->in_flight = true;
    bool go_on = false;
    try {
      go_on = co_await fn(cx);
    } catch (const std::exception&) {
      go_on = false;  // a renewal that fails with an error stops renewing: the TTL decides
    }
    st->in_flight = false;
    if (st->waiter) w.loop().resume_at(w.now(), pod.owner(), std::exchange(st->waiter, {}));
    if (!go_on || st->stopped) break;
  }
  pod.forget_root(slot);
}

}  // namespace

std::unique_ptr<Renewal> SimWorld::keep_renewing(RequestCtx& cx, Duration period, RenewFn renew) {
  Pod& pod = pod_for(cx.request().id);
  auto st = std::make_shared<RenewState>();
  const auto slot = pod.take_slot(Pod::Running{Request{}, nullptr, {}, true});  // like a probe: not a request
  PodRoot root = renew_loop(*this, pod, slot, cx.request(), period, std::move(renew), st);
  pod.running_[slot].root = root.handle;
  root.handle.resume();  // runs to its first sleep
  return std::make_unique<SimRenewal>(st);
}

// ---- the lease store: one round trip on the pod's clock, applied at its end

Task<LeaseResult> SimWorld::kv_lease_acquire(RequestCtx& cx, Key key, std::string_view owner, Duration ttl) {
  if (uses_etcd_) co_return co_await etcd_acquire(cx, key, owner, ttl);
  const std::string me(owner);
  const Duration t0 = now();
  co_await Sleep{loop_, s_.redis_latency.sample(redis_rng_), pod_for(cx.request().id).owner()};
  LeaseResult r = leases_.acquire(now(), key, me, ttl);
  if (r.took_over_expired) lease_taken_over(r.previous_owner);
  cx.split().lock_wait += now() - t0;
  if (tracing()) {
    std::string detail = "redis lease " + std::to_string(key);
    if (r.acquired) detail += " token " + std::to_string(r.token);  // the fencing token INCR handed out
    if (r.took_over_expired) detail += " took over the expired lease of " + r.previous_owner;
    if (!r.acquired) detail += " held by " + leases_.owner_of(now(), key);
    cx.trace(r.acquired ? "lock.acquire" : "lock.denied", t0, now(), -1, std::move(detail));
  }
  co_return r;
}

Task<bool> SimWorld::kv_lease_release(RequestCtx& cx, Key key, std::string_view owner) {
  if (uses_etcd_) co_return co_await etcd_release(cx, key, owner);
  const std::string me(owner);
  const Duration t0 = now();
  co_await Sleep{loop_, s_.redis_latency.sample(redis_rng_), pod_for(cx.request().id).owner()};
  const bool ok = leases_.release(now(), key, me);
  cx.split().lock_wait += now() - t0;
  if (tracing())
    cx.trace("lock.release", t0, now(), -1,
             "redis lease " + std::to_string(key) + (ok ? "" : ": 0, owner is now " +
                                                                   (leases_.owner_of(now(), key).empty()
                                                                        ? std::string("nobody")
                                                                        : leases_.owner_of(now(), key))));
  co_return ok;
}

Task<bool> SimWorld::kv_lease_extend(RequestCtx& cx, Key key, std::string_view owner, Duration ttl) {
  if (uses_etcd_) co_return co_await etcd_extend(cx, key, owner);
  const std::string me(owner);
  const Duration t0 = now();
  co_await Sleep{loop_, s_.redis_latency.sample(redis_rng_), pod_for(cx.request().id).owner()};
  const bool ok = leases_.extend(now(), key, me, ttl);
  if (tracing())
    cx.trace("lock.extend", t0, now(), -1, "redis lease " + std::to_string(key) + (ok ? "" : ": lost"));
  co_return ok;
}

void SimWorld::on_redis_failover(void* self, std::uint64_t) {
  auto& w = *static_cast<SimWorld*>(self);
  const LeaseStore::Failover f = w.leases_.failover(w.now());
  w.failover_leases_lost_ += f.lost;
  w.failover_leases_resurrected_ += f.resurrected;
}

// ---- the etcd store: a round trip each; no answer while there is no leader

Task<void> SimWorld::etcd_round_trip(RequestCtx& cx) {
  const int owner = pod_for(cx.request().id).owner();
  co_await Sleep{loop_, s_.etcd_latency.sample(etcd_rng_), owner};
  if (now() >= etcd_leaderless_from_ && now() < etcd_leaderless_until_) {
    // The request reached a member without a leader: it waits for the new one
    // (clientv3 retries), then goes through. Nothing it wrote before is lost.
    ++etcd_requests_paused_;
    co_await Sleep{loop_, etcd_leaderless_until_ - now() + s_.etcd_latency.sample(etcd_rng_), owner};
  }
}

Task<LeaseResult> SimWorld::etcd_acquire(RequestCtx& cx, Key key, std::string_view owner, Duration ttl) {
  const std::string me(owner);
  const Duration t0 = now();
  co_await etcd_round_trip(cx);  // lease/grant
  co_await etcd_round_trip(cx);  // txn: create_revision == 0 ? put lock (with the lease), put holder
  LeaseResult r = etcd_.acquire(now(), key, me, ttl);
  if (r.took_over_expired) lease_taken_over(r.previous_owner);
  if (!r.acquired) co_await etcd_round_trip(cx);  // lease/revoke of the lease the txn did not use
  cx.split().lock_wait += now() - t0;
  if (tracing()) {
    std::string detail = "etcd lease " + std::to_string(key) + " revision " + std::to_string(r.token);
    if (r.took_over_expired) detail += " took over the expired lease of " + r.previous_owner;
    if (!r.acquired) detail = "etcd lease " + std::to_string(key) + " held by " + etcd_.owner_of(now(), key);
    cx.trace(r.acquired ? "lock.acquire" : "lock.denied", t0, now(), -1, std::move(detail));
  }
  co_return r;
}

Task<bool> SimWorld::etcd_release(RequestCtx& cx, Key key, std::string_view owner) {
  const std::string me(owner);
  const Duration t0 = now();
  co_await etcd_round_trip(cx);  // txn: value == me ? delete lock, delete holder
  const bool ok = etcd_.release(now(), key, me);
  co_await etcd_round_trip(cx);  // lease/revoke
  cx.split().lock_wait += now() - t0;
  if (tracing()) {
    const std::string now_owner = etcd_.owner_of(now(), key);
    cx.trace("lock.release", t0, now(), -1,
             "etcd lease " + std::to_string(key) + (ok ? "" : ": not ours, owner is now " + (now_owner.empty() ? std::string("nobody") : now_owner)));
  }
  co_return ok;
}

Task<bool> SimWorld::etcd_extend(RequestCtx& cx, Key key, std::string_view owner) {
  const std::string me(owner);
  const Duration t0 = now();
  co_await etcd_round_trip(cx);  // lease/keepalive
  const bool ok = etcd_.extend(now(), key, me);
  if (tracing()) cx.trace("lock.extend", t0, now(), -1, "etcd lease " + std::to_string(key) + (ok ? "" : ": expired"));
  co_return ok;
}

void SimWorld::on_etcd_leader_lost(void* self, std::uint64_t) {
  auto& w = *static_cast<SimWorld*>(self);
  w.etcd_leaderless_from_ = w.now();
  w.etcd_leaderless_until_ = w.now() + w.s_.etcd_election;
  w.loop_.at(w.etcd_leaderless_until_, kGlobal, &on_etcd_leader_elected, self);
}

void SimWorld::on_etcd_leader_elected(void* self, std::uint64_t) {
  auto& w = *static_cast<SimWorld*>(self);
  w.etcd_leases_refreshed_ += w.etcd_.promote(w.etcd_leaderless_from_, w.now());
}

}  // namespace lockbench::sim

// Pod: the pool (HikariCP semantics), the workers (Tomcat's maxThreads and
// acceptCount) and the readiness probe of one service instance.
#include <algorithm>
#include <exception>
#include <string>

#include "base/assert.hpp"
#include "sim/pod_root.hpp"
#include "sim/sim_world.hpp"

namespace lockbench::sim {

namespace {

PodRoot run_request(SimWorld& w, Strategy& st, Scenario& sc, Pod& pod, Request r, std::uint32_t slot, RequestCtx** cx_out) {
  RequestCtx cx(w, w.recorder(), w.settings(), r);
  *cx_out = &cx;
  // The calibrated cost of handing a request to a worker thread (a wake-up).
  if (const Duration handoff = w.settings().worker_handoff; handoff > Duration::zero())
    co_await Sleep{w.loop(), handoff, pod.owner()};
  const Duration started = w.now();
  cx.split().queue = started - r.intended;
  if (w.tracing()) cx.trace("queue", r.intended, started);
  // serve()'s work, done here rather than in a coroutine of its own (one frame fewer per request).
  Outcome o = Outcome::error;
  std::string error;
  try {
    o = co_await st.run(cx, sc);
  } catch (const std::exception& e) {
    error = e.what();  // DbError and driver errors that escaped the world: the 500 a service returns
  }
  trace_outcome(cx, started, o, error);
  w.recorder().finish(r.id, o, r.intended, w.now(), cx.split());
  pod.request_done(slot);
  w.finished(r);
}

// The readiness check: borrow with a short timeout, SELECT 1, give back.
PodRoot run_probe(SimWorld& w, Pod& pod, std::uint32_t slot) {
  w.probe_stats().total++;
  SimConn* c = co_await pod.borrow(w.settings().probe_timeout);
  if (!c) {
    w.probe_stats().failed++;
  } else {
    ++w.pool_stats().probe_borrows;  // not a request's borrow: no hold_ms, no ceiling
    c->on_borrow(nullptr, w.now());
    co_await Sleep{w.loop(), w.db_latency(), pod.owner()};
    c->release();
  }
  pod.forget_root(slot);
}

// One background worker of the strategy (the outbox's poller), as its pod's coroutine.
PodRoot run_background(SimWorld& w, Pod& pod, int worker, std::uint32_t slot) {
  RequestCtx cx(w, w.recorder(), w.settings(), background_request(pod.index(), w.settings().pods, worker));
  try {
    co_await w.strategy().background(cx, w.scenario());
  } catch (const std::exception&) {
    // a strategy's background must handle its own errors; one that escapes ends this worker only
  }
  pod.forget_root(slot);
}

}  // namespace

Pod::Pod(SimWorld& w, int index, int owner)
    : partner_guard(w.settings().circuit_breaker, w.settings().retry_budget),
      w_(w),
      index_(index),
      owner_(owner),
      pinned_owner_(w.pins_carriers() ? w.loop().new_twin(owner) : owner),
      app_skew_(index >= 1 ? w.settings().clock_skew : Duration::zero()),
      hikari_(w.settings().pool_order == "hikari") {
  const int n = w.settings().maximum_pool_size;
  for (int i = 0; i < n; ++i) {
    conns_.push_back(std::make_unique<SimConn>(w, *this, w.next_conn_id(), w.next_backend()));
    idle_.push_back(conns_.back().get());
  }
  w_.pool_changed(0, 0, n);
}

bool Pod::Borrow::await_ready() {
  // FIFO: not ahead of those already waiting. HikariCP's bag: a newcomer scans
  // the connections not in use, those offered to a waiter still waking among them.
  if (pod.idle_.empty() || (!pod.hikari_ && !pod.waiters_.empty())) return false;
  got = pod.take_idle();
  ++pod.active_;
  pod.w_.pool_changed(+1, 0, -1);
  return true;
}

void Pod::Borrow::await_suspend(std::coroutine_handle<> h) {
  pod.w_.pool_changed(0, +1, 0);
  pod.park({0, this, h, owner, pod.w_.now() + timeout});
}

// A waiter joins the queue's end with a new ticket (tickets stay increasing).
void Pod::park(Waiter w) {
  w.ticket = next_ticket_++;
  waiters_.push_back(w);
  // connectionTimeout is the client's own timer: frozen with the pod in a pause.
  w_.loop().at(w.deadline, w.owner, &Pod::on_borrow_timeout, this, w.ticket);
}

SimConn* Pod::take_idle() {
  SimConn* c = idle_.front();  // least recently returned first
  idle_.pop_front();
  for (auto& o : offers_)
    if (o.conn == c) o.conn = nullptr;  // its waiter, still waking, finds it taken
  return c;
}

// hikari: each connection not in use and not yet offered goes to the
// longest-parked waiter (HikariCP's requite, handoffQueue.offer to a fair
// SynchronousQueue), who wakes after --pool-handoff.
void Pod::offer_idle() {
  for (SimConn* c : idle_) {
    if (waiters_.empty()) return;
    if (std::any_of(offers_.begin(), offers_.end(), [c](const Offer& o) { return o.conn == c; })) continue;
    offers_.push_back({c, waiters_.front()});
    waiters_.pop_front();
    const Offer& o = offers_.back();
    w_.loop().at(w_.now() + w_.settings().pool_handoff, o.waiter.owner, &Pod::on_offer_woken, this, o.waiter.ticket);
  }
}

void Pod::on_offer_woken(void* self, std::uint64_t ticket) {
  auto& pod = *static_cast<Pod*>(self);
  auto it = std::find_if(pod.offers_.begin(), pod.offers_.end(),
                         [ticket](const Offer& o) { return o.waiter.ticket == ticket; });
  if (it == pod.offers_.end()) return;
  const Offer o = *it;
  pod.offers_.erase(it);
  const Duration now = pod.w_.now();
  if (o.conn) {  // still free: the woken thread's compareAndSet wins
    pod.idle_.erase(std::find(pod.idle_.begin(), pod.idle_.end(), o.conn));
    ++pod.active_;
    pod.w_.pool_changed(+1, -1, -1);
    o.waiter.borrow->got = o.conn;
    pod.w_.loop().resume_at(now, o.waiter.owner, o.waiter.handle);
    return;
  }
  // Taken by a newcomer: the thread polls again, at the queue's end, with
  // what is left of its timeout (HikariCP gives up below 10 us).
  if (o.waiter.deadline - now <= std::chrono::microseconds(10)) {
    pod.w_.pool_changed(0, -1, 0);
    o.waiter.borrow->got = nullptr;
    pod.w_.loop().resume_at(now, o.waiter.owner, o.waiter.handle);
    return;
  }
  pod.park(o.waiter);
  pod.offer_idle();
}

void Pod::on_borrow_timeout(void* self, std::uint64_t ticket) {
  auto& pod = *static_cast<Pod*>(self);
  auto it = std::lower_bound(pod.waiters_.begin(), pod.waiters_.end(), ticket,
                             [](const Waiter& w, std::uint64_t t) { return w.ticket < t; });
  if (it == pod.waiters_.end() || it->ticket != ticket) return;  // served before its timeout
  const Waiter w = *it;
  pod.waiters_.erase(it);
  pod.w_.pool_changed(0, -1, 0);
  w.borrow->got = nullptr;
  pod.w_.loop().resume_at(pod.w_.now(), w.owner, w.handle);
}

SimConn* Pod::replace_if_old(SimConn* c) {
  const Duration max_life = w_.settings().max_lifetime;
  if (!c->lost() && (max_life <= Duration::zero() || w_.now() - c->created_at() < max_life)) return c;
  // maxLifetime: HikariCP closes the connection; its backend ends, and with it
  // any session lock left on it.
  c->kill();
  c->close();
  conns_.push_back(std::make_unique<SimConn>(w_, *this, w_.next_conn_id(), w_.next_backend()));
  return conns_.back().get();
}

void Pod::give_back(SimConn* c) {
  LOCKBENCH_ASSERT(active_ > 0, "a connection returned to a pool that has none lent");
  LOCKBENCH_ASSERT(std::find(idle_.begin(), idle_.end(), c) == idle_.end(), "a connection returned twice to the pool");
  c = replace_if_old(c);
  if (hikari_) {  // back in the bag, not in use; offered to a parked waiter if one is
    --active_;
    idle_.push_back(c);
    w_.pool_changed(-1, 0, +1);
    offer_idle();
    return;
  }
  if (!waiters_.empty()) {
    const Waiter w = waiters_.front();
    waiters_.pop_front();
    w_.pool_changed(0, -1, 0);
    w.borrow->got = c;  // stays active: handed straight to the first waiter
    // ... who wakes up after the calibrated hand-off time (a thread wake-up in the real pool).
    w_.loop().resume_at(w_.now() + w_.settings().pool_handoff, w.owner, w.handle);
    return;
  }
  --active_;
  idle_.push_back(c);
  w_.pool_changed(-1, 0, +1);
}

void Pod::watch_for_leak(SimConn* c) {
  const Duration threshold = w_.settings().leak_detection_threshold;
  if (threshold > Duration::zero()) w_.loop().at(w_.now() + threshold, owner_, &Pod::on_leak_check, c, c->borrow_gen());
}

void Pod::on_leak_check(void* conn, std::uint64_t gen) {
  auto* c = static_cast<SimConn*>(conn);
  if (!c->borrowed() || c->borrow_gen() != gen) return;  // given back in time
  // HikariCP logs "Connection leak detection triggered ... stack trace follows":
  // the step that still holds it is our stack trace.
  PoolStats& stats = c->world().pool_stats();
  ++stats.leaks;
  if (stats.leak_steps.size() < 10)
    stats.leak_steps.push_back(c->world().strategy_spec() + ": conn " + std::to_string(c->id()) + " held after " +
                               std::string(c->last_step()));
}

void Pod::accept(const Request& r) {
  // Virtual threads (spring.threads.virtual.enabled): a thread per request, no
  // worker cap and no accept queue; the wait forms at the pool instead. A new
  // thread needs a carrier to start: while every one is pinned, it waits.
  if (w_.settings().virtual_threads) {
    if (w_.loop().held(owner_) || !queue_.empty()) {  // after those already waiting for a carrier
      ++w_.carrier_stats().starts_waited;
      queue_.push_back(r);
      w_.loop().at(w_.now(), owner_, &Pod::on_start_next, this);  // parked until a carrier is free
      return;
    }
    start(r);
    return;
  }
  if (busy_workers_ < w_.settings().max_threads && queue_.empty()) {  // queued requests go first
    start(r);
  } else if (static_cast<int>(queue_.size()) < w_.settings().accept_count) {
    queue_.push_back(r);
  } else {
    w_.reject(r);
  }
}

std::uint32_t Pod::take_slot(const Running& r) {
  if (free_slots_.empty()) {
    running_.push_back(r);
    return static_cast<std::uint32_t>(running_.size() - 1);
  }
  const auto slot = free_slots_.back();
  free_slots_.pop_back();
  running_[slot] = r;
  return slot;
}

void Pod::forget_root(std::uint32_t slot) {
  running_[slot] = Running{};
  free_slots_.push_back(slot);
}

void Pod::start(const Request& r) {
  ++busy_workers_;
  RequestCtx* cx = nullptr;
  const auto slot = take_slot(Running{r, nullptr, {}, false});
  PodRoot root = run_request(w_, w_.strategy(), w_.scenario(), *this, r, slot, &cx);
  running_[slot].root = root.handle;
  w_.start_request(*this, r);
  root.handle.resume();  // runs to its first await; the slot is still ours
  running_[slot].cx = cx;
}

void Pod::request_done(std::uint32_t slot) {
  forget_root(slot);
  --busy_workers_;
  // The freed worker takes the next queued request, as its own next event.
  if (!queue_.empty()) w_.loop().at(w_.now(), owner_, &Pod::on_start_next, this);
}

bool Pod::may_start() const {
  if (w_.settings().virtual_threads) return !w_.loop().held(owner_);  // a carrier to start on
  return busy_workers_ < w_.settings().max_threads;
}

void Pod::on_start_next(void* self, std::uint64_t) {
  auto& pod = *static_cast<Pod*>(self);
  while (!pod.queue_.empty() && pod.may_start()) {
    const Request r = pod.queue_.front();
    pod.queue_.pop_front();
    pod.start(r);
  }
}

void Pod::start_probes() {
  if (w_.settings().readiness.on) return;  // --readiness replaces the counting probe (sim/kubelet.cpp)
  const Duration every = w_.settings().probe_interval;
  if (every > Duration::zero()) w_.loop().at(w_.now() + every, owner_, &Pod::on_probe, this);
}

void Pod::on_probe(void* self, std::uint64_t) {
  auto& pod = *static_cast<Pod*>(self);
  if (pod.w_.all_done()) return;  // the run is over: the probe stops with it
  const auto slot = pod.take_slot(Running{Request{}, nullptr, {}, true});
  PodRoot root = run_probe(pod.w_, pod, slot);
  pod.running_[slot].root = root.handle;
  root.handle.resume();
  pod.start_probes();
}

void Pod::start_background() {
  const int n = w_.strategy().background_workers(w_.settings());
  for (int i = 0; i < n; ++i) {
    const auto slot = take_slot(Running{Request{}, nullptr, {}, true});  // like a probe: not a request
    PodRoot root = run_background(w_, *this, i, slot);
    running_[slot].root = root.handle;
    root.handle.resume();
  }
}

void Pod::pin(std::uint64_t request) {
  pinned_.push_back(request);
  auto& stats = w_.carrier_stats();
  stats.pinned_peak = std::max(stats.pinned_peak, static_cast<int>(pinned_.size()));
  // A thread pins only while it runs, on a free carrier: the last one pinned stalls the pod.
  if (static_cast<int>(pinned_.size()) < w_.settings().carriers) return;
  ++stats.stalls;
  stalled_since_ = w_.now();
  w_.loop().hold(owner_);
}

void Pod::unpin(std::uint64_t request) {
  const auto it = std::find(pinned_.begin(), pinned_.end(), request);
  if (it == pinned_.end()) return;
  pinned_.erase(it);
  if (stalled_since_ < Duration::zero()) return;
  end_stall();
  w_.loop().release(owner_);
}

void Pod::end_stall() {
  if (stalled_since_ < Duration::zero()) return;
  w_.carrier_stats().stall_ended(w_.now() - stalled_since_);
  stalled_since_ = Duration(-1);
}

std::vector<Pod::Lost> Pod::crash() {
  end_stall();  // a stall ends with its pod (or with the run)
  std::vector<Lost> lost;
  for (const auto& run : running_)
    if (run.root) lost.push_back({run.request, run.cx, run.root, run.probe});
  for (const auto& r : queue_) lost.push_back({r, nullptr, {}, false});
  std::sort(lost.begin(), lost.end(), [](const Lost& a, const Lost& b) {
    return a.probe != b.probe ? b.probe : a.request.id < b.request.id;
  });
  running_.clear();
  free_slots_.clear();
  queue_.clear();
  for (auto& c : conns_) c->kill();
  return lost;
}

std::vector<Backend> Pod::backends() const {
  std::vector<Backend> out;
  for (const auto& c : conns_)
    if (c->backend() >= 0) out.push_back(c->backend());  // behind a Bouncer: only backends held now
  return out;
}

}  // namespace lockbench::sim

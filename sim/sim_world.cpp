// SimWorld: arrivals, pods, faults and the result of one simulated run.
#include "sim/sim_world.hpp"

#include <algorithm>
#include <charconv>

#include "core/partner_client.hpp"
#include "core/recovery.hpp"
#include "core/result.hpp"
#include "settings/table.hpp"

namespace lockbench::sim {

namespace {

// The seeded rows of the scenario's tables, made when first touched.
std::optional<RowState> initial_row(const Settings& s, const Scenario& sc, Key rk) {
  const Key k = key_of_row(rk);
  const auto t = static_cast<std::size_t>(table_of(rk));
  const auto& tables = sc.tables();
  if (k < 1 || k > s.keys || t >= tables.size() || !tables[t].seed) return std::nullopt;
  RowState r;
  r.text = tables[t].seed->text_prefix + std::to_string(k);
  r.num = tables[t].seed->num;
  return r;
}

// "req-42" -> 42 (0 when the owner is not a request name).
std::uint64_t request_of_owner(std::string_view owner) {
  std::uint64_t id = 0;
  if (owner.size() > 4 && owner.substr(0, 4) == "req-") std::from_chars(owner.data() + 4, owner.data() + owner.size(), id);
  return id;
}

}  // namespace

SimWorld::SimWorld(const Settings& s, Strategy& strategy, Scenario& scenario)
    : s_(s),
      strategy_(strategy),
      scenario_(scenario),
      info_(strategy_info(s.strategy)),
      strategy_spec_(info_.spec),
      db_(loop_, [&s, &scenario](Key rk) { return initial_row(s, scenario, rk); }),
      recorder_(std::chrono::seconds(1), kTraceCap, Recorder::Writers::one),
      partner_(loop_, s, scenario.partner_reset(s)),
      db_rng_(s.seed, "sim.db_latency"),
      db_fault_rng_(s.seed, "sim.db_faults"),
      workload_(s, scenario.fresh_key_per_request()),
      leases_(s.redis_replication_lag),
      redis_rng_(s.seed, "sim.redis_latency"),
      uses_etcd_(info_.props.needs_lease_store && info_.props.lease_store == LeaseStoreKind::etcd),
      etcd_rng_(s.seed, "sim.etcd_latency") {
  pool_.size = s.maximum_pool_size * s.pods;
  if (s.pgbouncer != "none") bouncer_ = std::make_unique<Bouncer>(*this, s.pgbouncer == "transaction", s.pgbouncer_pool_size);
  fault_window_ = partner_.fault_window();
  if (fault_window_) recorder_.keep_requests();  // the recovery block reads them
  pins_carriers_ = lockbench::pins_carriers(s, info_.props);
}

SimWorld::~SimWorld() {
  // Coroutines that will never resume (a crashed pod's requests, or whatever
  // ran when the time bound hit): destroying them frees their frames; their
  // connections are dead, so nothing is given back to any pool.
  for (auto h : vanished_) h.destroy();
}

Duration SimWorld::db_latency() { return s_.db_latency.sample(db_rng_); }

Pod& SimWorld::pod_for(std::uint64_t request_id) {
  // The load balancer's choice (--readiness, --liveness); a background worker's id is its pod's.
  if (request_id < routed_.size()) return *pods_[routed_[request_id]];
  return *pods_[static_cast<std::size_t>(request_id % pods_.size())];  // round-robin, as the real world
}

// ---- World

Task<void> SimWorld::sleep(RequestCtx& cx, Duration d) {
  const std::uint64_t id = cx.request().id;
  co_await Sleep{loop_, d, pod_for(id).owner_for(id)};
}

// A borrow suspends at most once (on the pod's pool): an awaiter, not a coroutine of its own.
Task<ConnHandle> SimWorld::acquire(RequestCtx& cx) {
  Pod& pod = pod_for(cx.request().id);
  return Task<ConnHandle>::from_awaiter(Acquire{cx, pod.borrow(s_.connection_timeout, pod.owner_for(cx.request().id))});
}

bool SimWorld::Acquire::await_ready() {
  asked = borrow.pod.world().now();
  return borrow.await_ready();
}

ConnHandle SimWorld::Acquire::await_resume() {
  SimWorld& w = borrow.pod.world();
  SimConn* c = borrow.await_resume();
  const Duration t0 = asked;
  const Duration t1 = w.now();
  cx.split().pool_wait += t1 - t0;
  if (!c) {
    ++w.pool_.timeouts;
    if (w.tracing()) cx.trace("pool.acquire", t0, t1, -1, "timeout after " + format_duration(w.s_.connection_timeout));
    return ConnHandle{};
  }
  w.pool_.wait_ms.add(to_ms(t1 - t0));
  std::size_t record = SimConn::kNoRecord;
  if (w.keep_borrows_) {
    record = w.borrows_.size();
    w.borrows_.push_back({cx.request().id, t0, t1, t1});
  }
  c->on_borrow(&cx, t1, record);
  borrow.pod.watch_for_leak(c);
  if (w.tracing()) cx.trace("pool.acquire", t0, t1, c->id());
  return ConnHandle(c);
}

// Without a calibrated overhead an attempt is the partner front's one suspension: no frame of its own.
Task<PartnerReply> SimWorld::partner_attempt(RequestCtx& cx, const PartnerCall& call) {
  const int owner = pod_for(cx.request().id).owner_for(cx.request().id);
  if (s_.partner_overhead > Duration::zero()) return attempt_after_overhead(call, owner);
  return Task<PartnerReply>::from_awaiter(partner_.attempt(call, owner));
}

Task<PartnerReply> SimWorld::attempt_after_overhead(const PartnerCall& call, int owner) {
  // The calibrated cost of one call over HTTP on top of the partner's own delay
  // (the client's request and answer, loopback): paid before the call arrives.
  co_await Sleep{loop_, s_.partner_overhead, owner};
  co_return co_await partner_.attempt(call, owner);
}

// ---- pool gauges and timeline

void SimWorld::pool_changed(int active_delta, int pending_delta, int idle_delta) {
  const Duration t = now();
  const Duration step = recorder_.timeline_step();
  pool_.busy_conn_s += active_ * to_s(t - last_change_);
  pool_.pending_s += pending_ * to_s(t - last_change_);
  // Time only moves forward: while t is inside bucket_, it is bucket_ (no division).
  const std::int64_t b = bucket_ >= 0 && t < bucket_end_ ? bucket_ : t / step;
  if (b != bucket_) {
    if (bucket_ >= 0) {
      bucket_pending_s_ += pending_ * to_s(bucket_end_ - last_change_);
      bucket_peak_.pending_mean = bucket_pending_s_ / to_s(step);
      recorder_.pool_sample(bucket_peak_);
    }
    // Seconds without any change carry the state they started with.
    for (std::int64_t k = std::max<std::int64_t>(bucket_ + 1, b - 100000); k < b; ++k)
      recorder_.pool_sample({step * k, active_, pending_, idle_, static_cast<double>(pending_)});
    bucket_ = b;
    bucket_end_ = step * (b + 1);
    bucket_peak_ = {step * b, active_, pending_, idle_};
    bucket_pending_s_ = pending_ * to_s(t - step * b);
  } else {
    bucket_pending_s_ += pending_ * to_s(t - last_change_);
  }
  last_change_ = t;
  active_ += active_delta;
  pending_ += pending_delta;
  idle_ += idle_delta;
  if (active_ + pending_ > bucket_peak_.active + bucket_peak_.pending) bucket_peak_ = {step * b, active_, pending_, idle_};
  pool_.active_max = std::max(pool_.active_max, active_);
  pool_.pending_max = std::max(pool_.pending_max, pending_);
}

void SimWorld::flush_timeline(bool) {
  pool_.busy_conn_s += active_ * to_s(now() - last_change_);
  pool_.pending_s += pending_ * to_s(now() - last_change_);
  if (bucket_ >= 0) {
    // The last interval ends now: its average over the part the run lived.
    const Duration end = std::min(now(), bucket_end_);
    if (end > last_change_) bucket_pending_s_ += pending_ * to_s(end - last_change_);
    const double lived_s = to_s(end - (bucket_end_ - recorder_.timeline_step()));
    bucket_peak_.pending_mean = lived_s > 0 ? bucket_pending_s_ / lived_s : static_cast<double>(pending_);
    recorder_.pool_sample(bucket_peak_);
  }
  last_change_ = now();
}

// ---- requests

void SimWorld::on_arrival(void* self, std::uint64_t index) {
  auto& w = *static_cast<SimWorld*>(self);
  // The schedule is read once, in order, a few hundred events apart: too sparse for the
  // hardware's prefetcher, so its next entry missed the cache (3.6 % of a long run's
  // samples on this load). Ask for the entries 16 ahead now; they are there when due.
  if (index + 16 < w.requests_.size()) __builtin_prefetch(&w.requests_[index + 16]);
  // One arrival event at a time keeps the event queue short.
  if (index + 1 < w.requests_.size())
    w.loop_.at_stream(w.arrivals_, w.requests_[index + 1].intended, kGlobal, &on_arrival, self, index + 1);
  w.deliver(index);
}

void SimWorld::on_deliver(void* self, std::uint64_t index) { static_cast<SimWorld*>(self)->deliver(index); }

void SimWorld::on_user_request(void* self, std::uint64_t user) {
  auto& w = *static_cast<SimWorld*>(self);
  w.requests_.push_back(w.workload_.next_for_user(static_cast<int>(user), w.now()));
  w.deliver(w.requests_.size() - 1);
}

void SimWorld::deliver(std::size_t index) {
  const Request& r = requests_[index];
  if (kube_on_) {  // the load balancer over ready pods (sim/kubelet.cpp)
    const int to = kube_->route(r.id);
    if (to >= 0) {  // a paused pod's request waits below, then is routed again
      if (r.id >= routed_.size()) routed_.resize(std::max<std::size_t>(r.id + 1, routed_.size() * 2), 0);
      routed_[r.id] = static_cast<std::uint8_t>(to);
    }
    if (to < 0 || !kube_->serving(to, now())) {
      --arrivals_left_;
      ++in_flight_;
      refuse(r, to < 0 ? "no pod ready (503 from the load balancer)" : "the pod's application is still starting");
      return;
    }
  }
  Pod& pod = pod_for(r.id);
  // A paused pod accepts nothing until it wakes; the request waits in the network.
  if (const Duration until = loop_.paused_until(pod.owner()); until > Duration::zero()) {
    loop_.at(until, kGlobal, &on_deliver, this, index);
    return;
  }
  --arrivals_left_;
  ++in_flight_;
  if (kube_on_) ++kube_->stats().by_pod[static_cast<std::size_t>(pod.index())];
  pod.accept(r);
}

void SimWorld::start_request(Pod&, const Request& r) {
  if (r.id >= live_.size()) live_.resize(std::max<std::size_t>(r.id + 1, live_.size() * 2), 0);
  live_[r.id] = 1;
}

void SimWorld::reject(const Request& r) {
  recorder_.finish(r.id, Outcome::rejected, r.intended, now(), TimeSplit{});
  if (tracing()) recorder_.trace({r.id, "outcome", now(), now(), -1, "rejected"});
  finished(r, true);
}

void SimWorld::finished(const Request& r, bool rejected) {
  --in_flight_;
  ++done_;
  if (r.id < live_.size()) live_[r.id] = 0;
  if (r.user >= 0) {
    const Duration next = now() + workload_.think_after(r.user, rejected);
    if (next < s_.duration) {
      ++arrivals_left_;
      loop_.at(next, kGlobal, &on_user_request, this, static_cast<std::uint64_t>(r.user));
    }
  }
}

void SimWorld::lease_taken_over(std::string_view previous_owner) {
  const auto id = request_of_owner(previous_owner);
  if (id > 0 && id < live_.size() && live_[id]) ++steals_from_live_;
}

// ---- faults

void SimWorld::on_crash(void* self, std::uint64_t) { static_cast<SimWorld*>(self)->crash(0); }

void SimWorld::on_pause(void* self, std::uint64_t) {
  auto& w = *static_cast<SimWorld*>(self);
  Pod& pod = *w.pods_[w.pods_.size() >= 2 ? 1 : 0];
  w.loop_.pause(pod.owner(), w.now() + w.s_.pause_for);
  // A frozen pod answers no readiness check: every probe due in the pause fails.
  if (w.s_.probe_interval > Duration::zero() && !w.s_.readiness.on) {
    const auto missed = static_cast<std::int64_t>(w.s_.pause_for / w.s_.probe_interval);
    w.probe_.total += missed;
    w.probe_.failed += missed;
  }
}

void SimWorld::crash(int index, bool liveness) {
  auto& slot = pods_[static_cast<std::size_t>(index)];
  const Duration t = now();
  loop_.kill(slot->owner());
  std::vector<Pod::Lost> lost = slot->crash();

  // When can the crashed requests' keys be locked again? Locks held by the
  // pod's backends are released with them, now; leases stay until their TTL.
  Duration usable_at = t;
  std::int64_t keys = 0;
  for (Backend b : slot->backends()) keys += static_cast<std::int64_t>(db_.held_by(b).size());
  std::vector<std::string> owners;
  for (const auto& l : lost)
    if (!l.probe && l.cx) owners.push_back("req-" + std::to_string(l.request.id));
  db_.for_each_row([&](Key, const RowState& r) {
    if (!r.lease_at || std::find(owners.begin(), owners.end(), r.lease_owner) == owners.end()) return;
    ++keys;
    usable_at = std::max(usable_at, *r.lease_at + s_.lease_ttl);
  });
  leases_.for_each_held(t, [&](const std::string& owner, Duration expires_at) {  // redis-lease: the store's PX
    if (std::find(owners.begin(), owners.end(), owner) == owners.end()) return;
    ++keys;
    usable_at = std::max(usable_at, expires_at);
  });
  etcd_.for_each_held(t, [&](const std::string& owner, Duration expires_at) {  // etcd-lease: the lease's TTL
    if (std::find(owners.begin(), owners.end(), owner) == owners.end()) return;
    ++keys;
    usable_at = std::max(usable_at, expires_at);
  });
  for (auto& c : slot->conns_) c->close();

  for (auto& l : lost) {
    if (l.root) vanished_.push_back(l.root);
    if (l.probe) continue;
    ++(liveness ? kube_->stats().killed_in_flight : crashed_requests_);
    recorder_.finish(l.request.id, Outcome::error, l.request.intended, t, l.cx ? l.cx->split() : TimeSplit{});
    if (tracing())
      recorder_.trace({l.request.id, "outcome", t, t, -1, liveness ? "error: pod killed by its liveness probe" : "error: pod crashed"});
    finished(l.request);
  }
  if (!liveness) {  // the faults block is --crash-at's
    has_crashed_ = true;
    keys_held_at_crash_ = keys;
    recovery_ms_ = to_ms(usable_at - t);
  }

  // A replacement pod with a fresh pool: at once after a crash; after a liveness
  // kill it serves (probes, background work) when kubelet has started it (on_pod_serving).
  pool_changed(-slot->active(), -slot->pending(), -slot->idle());
  crashed_.push_back(std::move(slot));
  slot = std::make_unique<Pod>(*this, index, loop_.new_owner());
  if (liveness) return;
  slot->start_probes();
  slot->start_background();
}

void SimWorld::shutdown() {
  for (auto& pod : pods_) {
    loop_.kill(pod->owner());
    for (auto& l : pod->crash()) {
      if (l.root) vanished_.push_back(l.root);
      if (l.probe) continue;
      ++unfinished_;
      recorder_.finish(l.request.id, Outcome::error, l.request.intended, now(), l.cx ? l.cx->split() : TimeSplit{});
      if (tracing()) recorder_.trace({l.request.id, "outcome", now(), now(), -1, "error: unfinished when the simulation stopped"});
    }
    for (auto& c : pod->conns_) c->close();
  }
  loop_.clear();
}

// ---- the run

void SimWorld::run(const RunHooks& hooks, const SettledFn& settled) {
  for (int i = 0; i < s_.pods; ++i) {
    pods_.push_back(std::make_unique<Pod>(*this, i, loop_.new_owner()));
    pods_.back()->start_probes();
    pods_.back()->start_background();
  }
  kube_start();
  if (s_.arrival == Arrival::closed) {
    for (int u = 0; u < s_.users; ++u) {
      const Duration first = workload_.think(u);
      if (first >= s_.duration) continue;
      ++arrivals_left_;
      loop_.at(first, kGlobal, &on_user_request, this, static_cast<std::uint64_t>(u));
    }
  } else {
    requests_ = workload_.schedule();
    recorder_.reserve(requests_.size());
    // A request borrows once or twice (row-lease: the lease, then its release), so room for two
    // each: growing a long run's samples by doubling copied them and faulted in twice the memory.
    // Room not used is never touched (the kernel maps a page on its first write).
    pool_.wait_ms.reserve(2 * requests_.size());
    pool_.hold_ms.reserve(2 * requests_.size());
    live_.assign(requests_.size() + 1, 0);  // by request id, one byte each: never grown
    arrivals_left_ = static_cast<std::int64_t>(requests_.size());
    arrivals_ = loop_.new_stream();  // requests_ is in time order: its arrivals need no heap
    if (!requests_.empty()) loop_.at_stream(arrivals_, requests_.front().intended, kGlobal, &on_arrival, this, 0);
  }
  if (s_.crash_at) loop_.at(*s_.crash_at, kGlobal, &on_crash, this);
  if (s_.pause_at) loop_.at(*s_.pause_at, kGlobal, &on_pause, this);
  if (s_.redis_failover_at) loop_.at(*s_.redis_failover_at, kGlobal, &on_redis_failover, this);
  if (s_.etcd_leader_change_at) {
    etcd_leaderless_from_ = etcd_leaderless_until_ = *s_.etcd_leader_change_at;
    loop_.at(*s_.etcd_leader_change_at, kGlobal, &on_etcd_leader_lost, this);
  }

  // Bound: every request ends within its timeouts; past this something waits forever.
  const Duration lock_bound = s_.lock_timeout > Duration::zero() ? s_.lock_timeout : Duration::zero();
  const Duration drain = 2 * s_.connection_timeout + lock_bound +
                         worst_case_call(s_) * (2 * std::max(1, scenario_.partner_calls())) + s_.lease_ttl +
                         s_.pause_for + std::chrono::minutes(10);
  const Duration until = s_.duration + (s_.pause_at ? *s_.pause_at : Duration::zero()) + drain;
  // Progress a few times per second of wall time; a verdict to settle is asked eight times as often (a
  // batch is then about 10 ms): where the loop pauses changes nothing in the run, only where it may stop.
  const std::uint64_t chunk = settled ? 1 << 16 : 1 << 19;
  constexpr std::uint64_t kMaxEvents = 4'000'000'000ULL;
  for (;;) {
    const bool drained = loop_.run(until, std::min(kMaxEvents, loop_.events_run() + chunk));
    if (hooks.progress) hooks.progress(done_, recorder_.count(Outcome::ok), loop_.now());
    if (drained || loop_.next_time() > until || loop_.events_run() >= kMaxEvents) break;
    if (hooks.should_stop && hooks.should_stop()) break;  // interrupted: unfinished requests end as errors
    if (settled && settled(counts())) {
      stopped_early_ = loop_.now();
      break;
    }
  }
  if (!all_done()) shutdown();
  flush_timeline(true);
}

SimCounts SimWorld::counts() const {
  SimCounts c;
  c.at = loop_.now();
  c.done = done_;
  c.pool_timeouts = recorder_.count(Outcome::pool_timeout);
  c.rejected = recorder_.count(Outcome::rejected);
  c.conflicts = recorder_.count(Outcome::conflict);
  c.errors = recorder_.count(Outcome::error);
  c.probe_failures = probe_.failed;
  c.lease_steals = recorder_.locks.lease_steals.load(std::memory_order_relaxed);
  return c;
}

std::vector<StoredRow> SimWorld::stored_rows() const {
  std::vector<StoredRow> out;
  const auto& tables = scenario_.tables();
  db_.for_each_row([&](Key rk, const RowState& r) {
    const auto t = static_cast<std::size_t>(table_of(rk));
    if (t >= tables.size() || (tables[t].seed && r.version == 0)) return;  // untouched seeded rows agree by construction
    for (std::int64_t i = 0; i < r.copies; ++i)  // one per row: a table without a unique key holds several
      out.push_back({table_of(rk), key_of_row(rk), Row{true, r.text, r.ref, r.num, r.version}});
  });
  std::sort(out.begin(), out.end(), [](const StoredRow& a, const StoredRow& b) {
    return std::pair(a.table, a.key) < std::pair(b.table, b.key);
  });
  return out;
}

nlohmann::json SimWorld::result() {
  std::int64_t leases_left = 0;
  db_.for_each_row([&](Key, const RowState& r) { leases_left += r.lease_at ? 1 : 0; });
  recorder_.locks.leaked = db_.session_locks_held() + leases_left + leases_.held(now()) + etcd_.held(now());

  RunSummary run;
  run.settings = &s_;
  run.settings_json = settings_json(s_);
  run.world = "sim";
  run.strategy = strategy_spec_;
  run.holds_connection = info_.props.holds_connection_during_call;
  run.partner_calls = scenario_.partner_calls();
  run.recorder = &recorder_;
  run.pool = &pool_;
  run.probe = &probe_;
  run.partner = partner_.report(scenario_.service_view(stored_rows()));
  run.extra["strategy_info"] = strategy_info_json(info_);
  if (bouncer_) run.extra["pgbouncer"] = bouncer_->report();
  run.extra["sim"] = {{"events", loop_.events_run()},
                      {"pods", s_.pods},
                      {"lock_waits", db_.waits()},
                      {"lease_steals_from_live", steals_from_live_},
                      {"unfinished", unfinished_}};
  if (uses_etcd_ || s_.etcd_leader_change_at)
    run.extra["sim"]["etcd"] = {
        {"leader_change_at_s",
         s_.etcd_leader_change_at ? nlohmann::json(to_s(*s_.etcd_leader_change_at)) : nlohmann::json(nullptr)},
        {"election_ms", to_ms(s_.etcd_election)},
        {"requests_paused_by_election", etcd_requests_paused_},
        {"leases_refreshed_by_new_leader", etcd_leases_refreshed_},
        {"revision", etcd_.revision()}};
  else if (info_.props.needs_lease_store || s_.redis_failover_at)
    run.extra["sim"]["lease_store"] = {
        {"failover_at_s", s_.redis_failover_at ? nlohmann::json(to_s(*s_.redis_failover_at)) : nlohmann::json(nullptr)},
        {"replication_lag_ms", to_ms(s_.redis_replication_lag)},
        {"leases_lost_on_failover", failover_leases_lost_},
        {"leases_resurrected_on_failover", failover_leases_resurrected_}};
  if (kube_on_) run.extra["pods"] = kube_->pods_json(loop_.now());
  if (s_.virtual_threads) run.extra["virtual_threads"] = carriers_block(pins_carriers_, s_.carriers, carriers_);
  if (fault_window_)
    run.extra["recovery"] = recovery_json(recorder_.finished_requests(), fault_window_->from, fault_window_->until, s_.duration);
  if (s_.crash_at || s_.pause_at || s_.clock_skew != Duration::zero()) {
    run.extra["faults"] = faults_block(s_, has_crashed_ ? nlohmann::json(recovery_ms_) : nlohmann::json(nullptr),
                                       crashed_requests_, keys_held_at_crash_);
  }
  return make_result(run);
}

}  // namespace lockbench::sim

// The strategy interface: how exclusion and transaction boundaries are arranged
// around a scenario's critical section. Each strategy is one file in
// strategies/, written once as a coroutine over the World interface, ending
// with its registry row (strategies/family.hpp) that states its properties.
#pragma once

#include <string>

#include "core/context.hpp"
#include "core/metrics.hpp"
#include "core/scenario.hpp"

namespace lockbench {

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual Task<Outcome> run(RequestCtx& cx, Scenario& sc) = 0;

  // Work each pod runs beside its requests (the outbox's pollers). Each world
  // starts background_workers() of them per pod when the run starts (and in the
  // pod that replaces a crashed one); they die with a crashed pod. Each ends by
  // itself, bounded (World::requests_over and nothing left to do, or a limit of
  // its own); the run ends when requests and background work have ended. `cx`
  // is the worker's own context (background_request): it routes to its pod.
  // Database errors must be handled inside: nothing above catches them.
  virtual int background_workers(const Settings&) const { return 0; }
  virtual Task<void> background(RequestCtx&, Scenario&) { co_return; }
};

// The request a pod's background worker runs as: an id above every real
// request's whose remainder modulo `pods` is the pod (both worlds route a
// request to pod id % pods), key 0.
inline Request background_request(int pod, int pods, int worker) {
  Request r;
  r.id = (std::uint64_t{1} << 40) * static_cast<std::uint64_t>(pods) +
         static_cast<std::uint64_t>(worker) * static_cast<std::uint64_t>(pods) + static_cast<std::uint64_t>(pod);
  r.key = 0;
  return r;
}

// What a strategy guarantees, stated once in its registry row and read by the
// result, the report, lint and explain (nobody keeps a second list).
enum class Exclusion {
  none,      // nothing stops two requests for one key
  one_pod,   // excludes within one service instance only (an in-process lock)
  all_pods,  // excludes across every pod sharing the database
};

// Entries a strategy keeps in PostgreSQL's shared lock table (sized
// max_locks_per_transaction x (max_connections + max_prepared_transactions)),
// beyond the fast-path relation locks every statement takes.
enum class LockTableUse {
  none,            // leases, versions, Redis: nothing held in the lock table
  per_connection,  // at most one advisory or tuple lock per connection in use
  per_key,         // locks that outlive their request (leaked session locks): up to one per key
};

// Which external lease store a strategy's World::kv_lease_* reach, when it
// needs one: each world opens that store for the run (real: --redis or --etcd).
enum class LeaseStoreKind {
  redis,  // redis-lease: SET NX PX, asynchronous replication (a failover loses writes)
  etcd,   // etcd-lease: a txn bound to a lease, through Raft (a leader change pauses)
};

struct StrategyProps {
  bool holds_connection_during_call = false;  // Little's law caps throughput at pool / hold time
  Exclusion exclusion = Exclusion::none;
  // A crashed holder frees the key by itself (at once, or after a TTL). False
  // where there is nothing to free, or where a crash leaves the lock held.
  bool crash_safe = false;
  // It excludes only through a row that exists: a record that is not there yet
  // (a first claim, a new order) is not protected.
  bool needs_existing_row = false;
  // It cannot run at all without that row (a lease lives in it): refused on
  // scenarios whose record does not exist before the first request.
  bool refuses_missing_row = false;
  // It sends an Idempotency-Key, so it applies only where the partner takes one (payments).
  bool needs_idempotency = false;
  // Its lock lives in an external lease store (lease_store says which): a real
  // run needs --redis or --etcd.
  bool needs_lease_store = false;
  LockTableUse lock_table = LockTableUse::none;
  // Its lock is a lease with --lease-ttl: a TTL below the worst-case critical
  // section can be stolen from live work, and a crashed holder's key is free
  // one TTL later (what `plan` sizes the TTL by).
  bool lease_ttl = false;
  // Its lock columns are fields of the ORM entity (row-lease:orm-mapped): an
  // unrelated save() of that entity writes them back from stale state
  // (--orm-writer-rate, strategies/side_traffic.hpp).
  bool lock_in_entity = false;
  // The store, when needs_lease_store.
  LeaseStoreKind lease_store = LeaseStoreKind::redis;
  // It extends its lease while the call runs (World::keep_renewing, every
  // TTL/3): a slow call keeps the lease, a holder that cannot renew loses it.
  bool renews_lease = false;
  // Its Java shape holds a monitor (synchronized) through the partner call: on
  // virtual threads before JDK 24 (JEP 491) the holder, blocked in the call, and
  // every request waiting to enter pin their carrier threads (lint check 7).
  bool monitor_during_call = false;
};

}  // namespace lockbench

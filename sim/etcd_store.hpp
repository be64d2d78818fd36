// EtcdStore: the simulated etcd behind etcd-lease (World::kv_lease_* when the
// strategy's StrategyProps::lease_store is etcd). One lock key per lock, bound
// to a lease (owner, granted TTL, expiry in virtual time), a holder mark
// without a lease (the last acquirer that has not released: a steal when it
// still works), and the store's one revision counter, which every kv write
// bumps: the lock key's mod_revision is the fencing token. Each operation
// applies atomically, as one etcd txn does.
//
// What differs from sim/lease_store (Redis):
// - A TTL is granted in whole seconds, at least 1 (etcd's lease/grant takes
//   seconds; its minimum, 1.5 x election timeout, is below 1 s with lockbench's
//   scripts/etcd): a 500 ms --lease-ttl holds for 1 s.
// - A leader change loses nothing: an acknowledged write is on a quorum. While
//   there is no leader the store answers nobody (SimWorld makes its requests
//   wait); leases do not expire then (no leader revokes them), and the new
//   leader gives every lease its whole TTL again (etcd's lessor.Promote). The
//   revision only grows, so no fencing token is handed out twice.
// Single-threaded, like all of sim/.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/world.hpp"

namespace lockbench::sim {

class EtcdStore {
 public:
  // The TTL etcd grants for `ttl`: whole seconds, rounded up, at least 1 s.
  static Duration granted_ttl(Duration ttl);

  // lease/grant, then txn IF create_revision(lock) == 0 THEN put lock owner
  // (with the lease), put holder owner ELSE range holder. token = the put's revision.
  LeaseResult acquire(Duration now, Key key, std::string_view owner, Duration ttl);
  // txn IF value(lock) == owner THEN delete lock, delete holder; then lease/revoke.
  bool release(Duration now, Key key, std::string_view owner);
  // lease/keepalive: the lease gets its granted TTL again; false when it expired (or is not ours).
  bool extend(Duration now, Key key, std::string_view owner);
  // A new leader at `now`, elected after a leaderless time that began at
  // `since`: every lease alive at `since` is refreshed to now + its TTL.
  // Returns how many.
  std::int64_t promote(Duration since, Duration now);

  // The owner of key's lock at `now` ("" when free or its lease expired).
  std::string owner_of(Duration now, Key key) const;
  // Locks held at `now` (lease not expired): the end-of-run leak count.
  std::int64_t held(Duration now) const;
  // Calls f(owner, expires_at) for every lock held at `now`.
  template <class F>
  void for_each_held(Duration now, F f) const {
    for (const auto& [k, e] : locks_)
      if (e.held(now)) f(e.owner, e.expires_at);
  }
  // The store's revision (every put and delete adds one).
  std::uint64_t revision() const { return revision_; }

 private:
  struct Entry {
    std::string owner;      // the lock key's value ("" = no key)
    Duration ttl{};         // granted
    Duration expires_at{};  // the lease's expiry, on the leader's clock
    std::string holder;     // the last acquirer that did not release
    bool held(Duration now) const { return !owner.empty() && expires_at > now; }
  };
  std::unordered_map<Key, Entry> locks_;
  std::uint64_t revision_ = 1;  // a fresh etcd answers revision 1
};

}  // namespace lockbench::sim

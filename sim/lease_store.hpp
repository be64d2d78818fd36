// LeaseStore: the simulated Redis behind redis-lease (World::kv_lease_*). One
// entry per lock key: the lease (owner, expiry in virtual time: Redis's PX), the
// fencing counter (INCR) and the last holder that has not released (a steal
// when it still works). Commands apply atomically, as Redis's Lua scripts do.
//
// Failover: the primary replicates asynchronously to a replica that is
// `replication_lag` behind. failover() promotes the replica: every write of the
// last `replication_lag` is lost, a held lease vanishes (a second holder gets
// in), and the fencing counter goes back with it, so the next holder gets a
// token that was already handed out (a partner that refuses only tokens below
// the highest seen lets both through). Single-threaded, like all of sim/.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/world.hpp"

namespace lockbench::sim {

class LeaseStore {
 public:
  explicit LeaseStore(Duration replication_lag) : lag_(replication_lag) {}

  // SET lease owner NX PX ttl; INCR token; GETSET holder owner (one script), at `now`.
  LeaseResult acquire(Duration now, Key key, std::string_view owner, Duration ttl);
  // GET == owner ? DEL : 0 (one script).
  bool release(Duration now, Key key, std::string_view owner);
  // GET == owner ? PEXPIRE ttl : 0 (one script).
  bool extend(Duration now, Key key, std::string_view owner, Duration ttl);
  // The replica becomes the primary: writes after now - replication_lag are
  // lost. `lost`: leases held on the old primary that are gone or someone
  // else's on the new one (a second holder can get in); `resurrected`: leases
  // held on the new primary that were free on the old (a lost release: the key
  // stays blocked until that TTL passes).
  struct Failover {
    std::int64_t lost = 0;
    std::int64_t resurrected = 0;
  };
  Failover failover(Duration now);

  // The owner of key's lease at `now` ("" when free or expired).
  std::string owner_of(Duration now, Key key) const;
  // Leases held at `now` (not expired): the end-of-run leak count.
  std::int64_t held(Duration now) const;
  // Calls f(owner, expires_at) for every lease held at `now`.
  template <class F>
  void for_each_held(Duration now, F f) const {
    for (const auto& [k, e] : primary_)
      if (e.held(now)) f(e.owner, e.expires_at);
  }

 private:
  struct Entry {
    std::string owner;        // the lease key's value ("" = no key)
    Duration expires_at{};    // PX, on the store's clock
    std::uint64_t token = 0;  // the INCR counter
    std::string holder;       // the last acquirer that did not release
    bool held(Duration now) const { return !owner.empty() && expires_at > now; }
  };
  struct Write {
    Duration at;
    Key key;
    Entry state;  // the key's entry after the write
  };
  void wrote(Duration now, Key key, const Entry& e);
  void replicate_until(Duration t);  // applies the log's writes up to t to the replica

  const Duration lag_;
  std::unordered_map<Key, Entry> primary_;
  std::unordered_map<Key, Entry> replica_;
  std::deque<Write> log_;  // writes not yet on the replica, in time order
};

}  // namespace lockbench::sim

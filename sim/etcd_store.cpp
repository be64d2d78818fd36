#include "sim/etcd_store.hpp"

#include <chrono>

namespace lockbench::sim {

Duration EtcdStore::granted_ttl(Duration ttl) {
  const auto s = std::chrono::ceil<std::chrono::seconds>(ttl);
  return std::chrono::duration_cast<Duration>(s < std::chrono::seconds(1) ? std::chrono::seconds(1) : s);
}

LeaseResult EtcdStore::acquire(Duration now, Key key, std::string_view owner, Duration ttl) {
  Entry& e = locks_[key];
  LeaseResult r;
  if (e.held(now)) return r;  // create_revision != 0: the key exists (its lease has not expired)
  r.acquired = true;
  // The holder mark has no lease: it names an acquirer whose lease expired under it.
  r.took_over_expired = !e.holder.empty();
  r.previous_owner = e.holder;
  e.owner = owner;
  e.ttl = granted_ttl(ttl);
  e.expires_at = now + e.ttl;
  e.holder = owner;
  r.token = ++revision_;  // the txn's puts share one revision: the lock key's mod_revision
  return r;
}

bool EtcdStore::release(Duration now, Key key, std::string_view owner) {
  auto it = locks_.find(key);
  if (it == locks_.end() || !it->second.held(now) || it->second.owner != owner) return false;
  it->second.owner.clear();
  it->second.holder.clear();
  ++revision_;  // the deletes
  return true;
}

bool EtcdStore::extend(Duration now, Key key, std::string_view owner) {
  auto it = locks_.find(key);
  if (it == locks_.end() || !it->second.held(now) || it->second.owner != owner) return false;
  it->second.expires_at = now + it->second.ttl;  // keep-alive: no kv write, no revision
  return true;
}

std::int64_t EtcdStore::promote(Duration since, Duration now) {
  std::int64_t n = 0;
  for (auto& [k, e] : locks_) {
    if (!e.held(since)) continue;
    e.expires_at = now + e.ttl;
    ++n;
  }
  return n;
}

std::string EtcdStore::owner_of(Duration now, Key key) const {
  const auto it = locks_.find(key);
  return it != locks_.end() && it->second.held(now) ? it->second.owner : std::string();
}

std::int64_t EtcdStore::held(Duration now) const {
  std::int64_t n = 0;
  for (const auto& [k, e] : locks_) n += e.held(now) ? 1 : 0;
  return n;
}

}  // namespace lockbench::sim

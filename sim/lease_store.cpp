#include "sim/lease_store.hpp"

namespace lockbench::sim {

void LeaseStore::wrote(Duration now, Key key, const Entry& e) {
  replicate_until(now - lag_);
  if (lag_ <= Duration::zero()) {
    replica_[key] = e;
    return;
  }
  log_.push_back({now, key, e});
}

void LeaseStore::replicate_until(Duration t) {
  while (!log_.empty() && log_.front().at <= t) {
    replica_[log_.front().key] = log_.front().state;
    log_.pop_front();
  }
}

LeaseResult LeaseStore::acquire(Duration now, Key key, std::string_view owner, Duration ttl) {
  Entry& e = primary_[key];
  LeaseResult r;
  if (e.held(now)) return r;  // SET NX: the key exists
  r.acquired = true;
  r.token = ++e.token;
  // The last holder never released: its key expired under it (PX), and it may still be working.
  r.took_over_expired = !e.holder.empty();
  r.previous_owner = e.holder;
  e.owner = owner;
  e.expires_at = now + ttl;
  e.holder = owner;
  wrote(now, key, e);
  return r;
}

bool LeaseStore::release(Duration now, Key key, std::string_view owner) {
  auto it = primary_.find(key);
  if (it == primary_.end() || !it->second.held(now) || it->second.owner != owner) return false;
  it->second.owner.clear();
  it->second.holder.clear();
  wrote(now, key, it->second);
  return true;
}

bool LeaseStore::extend(Duration now, Key key, std::string_view owner, Duration ttl) {
  auto it = primary_.find(key);
  if (it == primary_.end() || !it->second.held(now) || it->second.owner != owner) return false;
  it->second.expires_at = now + ttl;
  wrote(now, key, it->second);
  return true;
}

LeaseStore::Failover LeaseStore::failover(Duration now) {
  replicate_until(now - lag_);
  log_.clear();  // never reached the replica: lost
  Failover f;
  for (const auto& [k, e] : primary_) {
    if (!e.held(now)) continue;
    const auto it = replica_.find(k);
    if (it == replica_.end() || !it->second.held(now) || it->second.owner != e.owner) ++f.lost;
  }
  for (const auto& [k, e] : replica_) {
    if (!e.held(now)) continue;
    const auto it = primary_.find(k);
    if (it == primary_.end() || !it->second.held(now)) ++f.resurrected;
  }
  primary_ = replica_;
  return f;
}

std::string LeaseStore::owner_of(Duration now, Key key) const {
  const auto it = primary_.find(key);
  return it != primary_.end() && it->second.held(now) ? it->second.owner : std::string();
}

std::int64_t LeaseStore::held(Duration now) const {
  std::int64_t n = 0;
  for (const auto& [k, e] : primary_) n += e.held(now) ? 1 : 0;
  return n;
}

}  // namespace lockbench::sim

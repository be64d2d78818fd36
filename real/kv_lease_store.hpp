// KvLeaseStore: the external lease store of a real run (World::kv_lease_*),
// one interface for the two stores a strategy's registry row can name
// (StrategyProps::lease_store): Redis (real/redis_store, redis-lease) and etcd
// (real/etcd_store, etcd-lease). Every key a run writes starts with its own
// prefix (the run key), so a run touches only its own keys and removes them at
// its end. Implementations are thread-safe; errors become DbError at their edge.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/settings.hpp"
#include "core/strategy.hpp"
#include "core/world.hpp"

namespace lockbench::real {

class KvLeaseStore {
 public:
  virtual ~KvLeaseStore() = default;
  virtual std::string_view name() const = 0;  // "redis", "etcd": traces and messages
  virtual LeaseResult acquire(Key key, std::string_view owner, Duration ttl) = 0;
  virtual bool release(Key key, std::string_view owner) = 0;
  virtual bool extend(Key key, std::string_view owner, Duration ttl) = 0;
  // Leases of this run still held (not expired).
  virtual std::int64_t held() = 0;
  // Leases of this run held by one of `owners` (a crashed pod's requests): how
  // many, and the longest time left before their TTL frees them.
  struct Held {
    std::int64_t count = 0;
    double left_ms_max = 0;
  };
  virtual Held held_by(const std::vector<std::string>& owners) = 0;
  // Keys of this run (any kind).
  virtual std::int64_t keys() = 0;
  // Deletes every key of this run; returns how many.
  virtual std::int64_t drop_run_keys() = 0;
};

// The store the strategy's row names, for a run keyed `run_id`: Redis from
// s.redis_url, etcd from s.etcd_url. Throws SettingError (one line naming
// --redis or --etcd) when the URL is missing, malformed or does not answer.
std::unique_ptr<KvLeaseStore> open_kv_lease_store(const Settings& s, const StrategyProps& props, const std::string& run_id,
                                                  Duration timeout);

// Deletes a run's keys when it goes out of scope, whatever the way out (a
// failure says so on stderr and is not thrown). A null store does nothing.
class DropRunKeysAtExit {
 public:
  explicit DropRunKeysAtExit(KvLeaseStore* store) : store_(store) {}
  ~DropRunKeysAtExit();
  DropRunKeysAtExit(const DropRunKeysAtExit&) = delete;
  DropRunKeysAtExit& operator=(const DropRunKeysAtExit&) = delete;

 private:
  KvLeaseStore* store_;
};

}  // namespace lockbench::real

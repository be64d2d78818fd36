// RedisStore: redis-lease's lease store on a real redis-server, through hiredis
// (Debian's libhiredis 0.14). Every key of a run starts with its prefix
// ("lockbench:<run-id>:"), so a run touches only its own keys, and deletes them
// at its end. Each operation is ONE EVAL of a Lua script (atomic on the server):
//   acquire  SET lease owner NX PX ttl; INCR token; GET holder, SET holder owner
//   release  GET lease == owner ? DEL lease (and the holder mark) : 0
//   extend   GET lease == owner ? PEXPIRE lease ttl : 0
// The holder mark (no TTL) names the last acquirer that has not released: an
// acquire that finds one took over an expired lease (a steal when it still works).
// Connections: a small guarded pool of hiredis contexts, one per concurrent
// caller, each with a connect and a command timeout; a context that failed is
// closed, not reused. Errors become DbError here, at the edge.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/world.hpp"

struct redisContext;

namespace lockbench::real {

struct RedisUrl {
  std::string host;
  int port = 6379;
  int db = 0;
};
// redis://HOST:PORT[/DB]; throws SettingError naming --redis and the accepted form.
RedisUrl parse_redis_url(const std::string& url);

class RedisStore;
// The lease store of a real run that needs one (StrategyProps::needs_lease_store):
// its keys are "lockbench:<run_id>:...". Throws SettingError (one line naming
// --redis) when the URL is missing, malformed or the server does not answer.
std::unique_ptr<RedisStore> open_lease_store(const std::string& url, const std::string& run_id, Duration timeout);

class RedisStore {
 public:
  // Connects once and PINGs (throws DbError with the reason when it cannot).
  RedisStore(const std::string& url, std::string prefix, Duration timeout);
  ~RedisStore();
  RedisStore(const RedisStore&) = delete;
  RedisStore& operator=(const RedisStore&) = delete;

  LeaseResult acquire(Key key, std::string_view owner, Duration ttl);
  bool release(Key key, std::string_view owner);
  bool extend(Key key, std::string_view owner, Duration ttl);
  // Leases of this run still held (their key has not expired).
  std::int64_t held();
  // Leases of this run held by one of `owners` (a crashed pod's requests): how
  // many, and the longest time left before their PX expires them.
  struct Held {
    std::int64_t count = 0;
    double left_ms_max = 0;
  };
  Held held_by(const std::vector<std::string>& owners);
  // Keys of this run (any kind).
  std::int64_t keys();
  // Deletes every key of this run (SCAN MATCH prefix*, bounded); returns how many.
  std::int64_t drop_run_keys();
  const std::string& prefix() const { return prefix_; }

 private:
  struct Reply;
  redisContext* connect();
  redisContext* borrow();
  void give_back(redisContext* c, bool healthy);
  // One command (argv) on a borrowed context; throws DbError.
  Reply command(const std::vector<std::string>& argv);
  std::string key(std::string_view kind, Key k) const;
  // SCAN MATCH pattern, page by page (at most kScanPagesMax pages of about 1000 keys).
  void for_each_key(const std::string& pattern, const std::function<void(std::vector<std::string>&&)>& page_fn);
  static constexpr int kScanPagesMax = 100000;

  const RedisUrl url_;
  const std::string prefix_;
  const Duration timeout_;
  std::mutex mu_;
  std::vector<redisContext*> idle_;  // GUARDED_BY(mu_)
  static constexpr std::size_t kIdleMax = 64;
};

// Deletes a run's keys when it goes out of scope, whatever the way out (a
// failure says so on stderr and is not thrown). A null store does nothing.
class DropRunKeysAtExit {
 public:
  explicit DropRunKeysAtExit(RedisStore* store) : store_(store) {}
  ~DropRunKeysAtExit();
  DropRunKeysAtExit(const DropRunKeysAtExit&) = delete;
  DropRunKeysAtExit& operator=(const DropRunKeysAtExit&) = delete;

 private:
  RedisStore* store_;
};

}  // namespace lockbench::real

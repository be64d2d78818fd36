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
#include "real/kv_lease_store.hpp"

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

class RedisStore final : public KvLeaseStore {
 public:
  // Connects once and PINGs (throws DbError with the reason when it cannot).
  RedisStore(const std::string& url, std::string prefix, Duration timeout);
  ~RedisStore();
  RedisStore(const RedisStore&) = delete;
  RedisStore& operator=(const RedisStore&) = delete;

  std::string_view name() const override { return "redis"; }
  LeaseResult acquire(Key key, std::string_view owner, Duration ttl) override;
  bool release(Key key, std::string_view owner) override;
  bool extend(Key key, std::string_view owner, Duration ttl) override;
  // Leases of this run still held (their key has not expired).
  std::int64_t held() override;
  // Leases held by `owners`; the time left is their PTTL.
  Held held_by(const std::vector<std::string>& owners) override;
  std::int64_t keys() override;
  // Deletes every key of this run (SCAN MATCH prefix*, bounded); returns how many.
  std::int64_t drop_run_keys() override;
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

}  // namespace lockbench::real

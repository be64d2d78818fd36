#include "real/redis_store.hpp"

#include <sys/time.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <functional>
#include <iterator>
#include <memory>

#include <hiredis/hiredis.h>

#include "base/units.hpp"

namespace lockbench::real {

namespace {

constexpr const char* kAcquire =
    "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then "
    "  local token = redis.call('INCR', KEYS[2]) "
    "  local prev = redis.call('GET', KEYS[3]) "
    "  redis.call('SET', KEYS[3], ARGV[1]) "
    "  if not prev then prev = '' end "
    "  return {1, token, prev} "
    "end "
    "return {0, 0, ''}";
constexpr const char* kRelease =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then "
    "  redis.call('DEL', KEYS[1]) "
    "  if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end "
    "  return 1 "
    "end "
    "return 0";
constexpr const char* kExtend =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end "
    "return 0";

timeval to_timeval(Duration d) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(d).count();
  return timeval{static_cast<time_t>(us / 1000000), static_cast<suseconds_t>(us % 1000000)};
}

std::string ms_text(Duration d) {
  return std::to_string(std::max<long long>(1, std::chrono::duration_cast<std::chrono::milliseconds>(d).count()));
}

bool parse_int(std::string_view s, int lo, int hi, int& out) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && out >= lo && out <= hi;
}

}  // namespace

struct RedisStore::Reply {
  std::unique_ptr<redisReply, void (*)(void*)> r{nullptr, freeReplyObject};
};

RedisUrl parse_redis_url(const std::string& url) {
  const auto bad = [&](const std::string& why) {
    return SettingError("--redis: '" + url + "' " + why + " (accepted: redis://HOST:PORT[/DB], e.g. redis://127.0.0.1:6379)");
  };
  constexpr std::string_view scheme = "redis://";
  if (url.rfind(scheme, 0) != 0) throw bad("is not a redis:// URL");
  std::string_view rest = std::string_view(url).substr(scheme.size());
  RedisUrl out;
  if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
    if (!parse_int(rest.substr(slash + 1), 0, 15, out.db)) throw bad("has no database number from 0 to 15 after /");
    rest = rest.substr(0, slash);
  }
  if (rest.find('@') != std::string_view::npos) throw bad("carries credentials, which lockbench does not take");
  const auto colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0) throw bad("has no HOST:PORT");
  out.host = std::string(rest.substr(0, colon));
  if (!parse_int(rest.substr(colon + 1), 1, 65535, out.port)) throw bad("has no port from 1 to 65535");
  return out;
}

std::unique_ptr<RedisStore> open_lease_store(const std::string& url, const std::string& run_id, Duration timeout) {
  if (url.empty())
    throw SettingError(
        "--redis: redis-lease needs a Redis URL (e.g. --redis redis://127.0.0.1:6379; scripts/redis start DIR starts one)");
  parse_redis_url(url);
  try {
    return std::make_unique<RedisStore>(url, "lockbench:" + run_id + ":", timeout);
  } catch (const DbError& e) {
    std::string why = e.what();
    for (char& ch : why)
      if (ch == '\n' || ch == '\r') ch = ' ';
    throw SettingError("--redis: cannot use " + url + ": " + why);
  }
}

RedisStore::RedisStore(const std::string& url, std::string prefix, Duration timeout)
    : url_(parse_redis_url(url)), prefix_(std::move(prefix)), timeout_(timeout) {
  command({"PING"});
}

RedisStore::~RedisStore() {
  std::lock_guard lock(mu_);
  for (redisContext* c : idle_) redisFree(c);
  idle_.clear();
}

redisContext* RedisStore::connect() {
  redisContext* c = redisConnectWithTimeout(url_.host.c_str(), url_.port, to_timeval(timeout_));
  if (!c) throw DbError("redis: cannot allocate a connection");
  if (c->err) {
    const std::string why = c->errstr;
    redisFree(c);
    throw DbError("redis " + url_.host + ":" + std::to_string(url_.port) + ": " + why);
  }
  redisSetTimeout(c, to_timeval(timeout_));  // every command's bound
  if (url_.db != 0) {
    auto* r = static_cast<redisReply*>(redisCommand(c, "SELECT %d", url_.db));
    const bool ok = r && r->type != REDIS_REPLY_ERROR;
    if (r) freeReplyObject(r);
    if (!ok) {
      redisFree(c);
      throw DbError("redis: SELECT " + std::to_string(url_.db) + " failed");
    }
  }
  return c;
}

redisContext* RedisStore::borrow() {
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      redisContext* c = idle_.back();
      idle_.pop_back();
      return c;
    }
  }
  return connect();  // one per concurrent caller (bounded by the pods' worker and renewal threads)
}

void RedisStore::give_back(redisContext* c, bool healthy) {
  if (!c) return;
  std::lock_guard lock(mu_);
  if (healthy && idle_.size() < kIdleMax) {
    idle_.push_back(c);
  } else {
    redisFree(c);
  }
}

RedisStore::Reply RedisStore::command(const std::vector<std::string>& argv) {
  redisContext* c = borrow();
  std::vector<const char*> args;
  std::vector<std::size_t> lens;
  for (const auto& a : argv) {
    args.push_back(a.data());
    lens.push_back(a.size());
  }
  Reply out;
  out.r.reset(static_cast<redisReply*>(redisCommandArgv(c, static_cast<int>(args.size()), args.data(), lens.data())));
  if (!out.r) {
    const std::string why = c->errstr;
    give_back(c, false);
    throw DbError("redis " + argv.front() + ": " + why);
  }
  give_back(c, true);
  if (out.r->type == REDIS_REPLY_ERROR) throw DbError("redis " + argv.front() + ": " + std::string(out.r->str, out.r->len));
  return out;
}

std::string RedisStore::key(std::string_view kind, Key k) const {
  return prefix_ + std::string(kind) + ":" + std::to_string(k);
}

LeaseResult RedisStore::acquire(Key k, std::string_view owner, Duration ttl) {
  const Reply r = command({"EVAL", kAcquire, "3", key("lease", k), key("token", k), key("holder", k), std::string(owner),
                           ms_text(ttl)});
  if (r.r->type != REDIS_REPLY_ARRAY || r.r->elements != 3) throw DbError("redis: unexpected answer to the acquire script");
  LeaseResult out;
  out.acquired = r.r->element[0]->integer == 1;
  if (!out.acquired) return out;
  out.token = static_cast<std::uint64_t>(r.r->element[1]->integer);
  const redisReply* prev = r.r->element[2];
  if (prev->type == REDIS_REPLY_STRING && prev->len > 0) {
    out.took_over_expired = true;
    out.previous_owner.assign(prev->str, prev->len);
  }
  return out;
}

bool RedisStore::release(Key k, std::string_view owner) {
  const Reply r = command({"EVAL", kRelease, "2", key("lease", k), key("holder", k), std::string(owner)});
  return r.r->type == REDIS_REPLY_INTEGER && r.r->integer == 1;
}

bool RedisStore::extend(Key k, std::string_view owner, Duration ttl) {
  const Reply r = command({"EVAL", kExtend, "1", key("lease", k), std::string(owner), ms_text(ttl)});
  return r.r->type == REDIS_REPLY_INTEGER && r.r->integer == 1;
}

void RedisStore::for_each_key(const std::string& pattern, const std::function<void(std::vector<std::string>&&)>& page_fn) {
  std::string cursor = "0";
  for (int page = 0; page < kScanPagesMax; ++page) {
    const Reply r = command({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
    if (r.r->type != REDIS_REPLY_ARRAY || r.r->elements != 2) break;
    cursor.assign(r.r->element[0]->str, r.r->element[0]->len);
    const redisReply* found = r.r->element[1];
    std::vector<std::string> keys;
    keys.reserve(found->elements);
    for (std::size_t i = 0; i < found->elements; ++i) keys.emplace_back(found->element[i]->str, found->element[i]->len);
    if (!keys.empty()) page_fn(std::move(keys));
    if (cursor == "0") break;
  }
}

std::int64_t RedisStore::held() {
  std::int64_t n = 0;
  for_each_key(prefix_ + "lease:*", [&](std::vector<std::string>&& keys) { n += static_cast<std::int64_t>(keys.size()); });
  return n;
}

RedisStore::Held RedisStore::held_by(const std::vector<std::string>& owners) {
  Held out;
  if (owners.empty()) return out;
  for_each_key(prefix_ + "lease:*", [&](std::vector<std::string>&& keys) {
    for (const std::string& k : keys) {
      const Reply owner = command({"GET", k});
      if (owner.r->type != REDIS_REPLY_STRING) continue;  // expired since the SCAN
      if (std::find(owners.begin(), owners.end(), std::string(owner.r->str, owner.r->len)) == owners.end()) continue;
      const Reply left = command({"PTTL", k});
      if (left.r->type != REDIS_REPLY_INTEGER || left.r->integer < 0) continue;
      ++out.count;
      out.left_ms_max = std::max(out.left_ms_max, static_cast<double>(left.r->integer));
    }
  });
  return out;
}

std::int64_t RedisStore::keys() {
  std::int64_t n = 0;
  for_each_key(prefix_ + "*", [&](std::vector<std::string>&& keys) { n += static_cast<std::int64_t>(keys.size()); });
  return n;
}

std::int64_t RedisStore::drop_run_keys() {
  std::int64_t n = 0;
  for_each_key(prefix_ + "*", [&](std::vector<std::string>&& keys) {
    std::vector<std::string> argv{"DEL"};
    argv.insert(argv.end(), std::make_move_iterator(keys.begin()), std::make_move_iterator(keys.end()));
    n += command(argv).r->integer;
  });
  return n;
}

}  // namespace lockbench::real

// strategy_bench: what the lock itself costs, per strategy, through lockbench's
// pool against a real PostgreSQL (no partner call: the critical section is empty).
//
//   BM_pool_only           borrow + give back: the pool's own overhead (no SQL)
//   BM_held_tx             BEGIN; SELECT ... FOR UPDATE; COMMIT
//   BM_advisory_xact       BEGIN; pg_try_advisory_xact_lock; COMMIT
//   BM_advisory_session    pg_try_advisory_lock; pg_advisory_unlock
//   BM_row_lease           lease UPDATE ... RETURNING; release UPDATE (the pgbench_compare case)
//   BM_optimistic          read the version; UPDATE ... WHERE version = $v
//   BM_row_lease_extend    one renewal of row-lease:renew: borrow, owner-checked UPDATE, give back
//   BM_redis_lease         redis-lease: EVAL acquire (SET NX PX + INCR), EVAL release; no pool
//                          (needs LOCKBENCH_BENCH_REDIS=redis://127.0.0.1:PORT as well)
//   BM_redis_lease_extend  one renewal of redis-lease:renew: EVAL owner-checked PEXPIRE
//
// Each thread works on its own key, so the figures are the uncontended cost;
// items_per_second is acquire + release pairs per second over all threads.
// Needs LOCKBENCH_BENCH_DB=postgresql://...; without it every case is skipped.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>
#include <mutex>

#include "real/pool.hpp"
#include "real/redis_store.hpp"

#include <unistd.h>

namespace {

using namespace lockbench;
using namespace lockbench::real;
using namespace std::chrono_literals;

constexpr int kKeys = 64;
constexpr Table kUsers = 0;     // the one table of switch-primary
constexpr std::int64_t kRun = 1;  // this benchmark's rows in lockbench.rows

// The shared pool (one per process, like a service's), or null with the reason.
Pool* shared_pool(benchmark::State& state) {
  static std::mutex mu;
  static std::unique_ptr<Pool> pool;  // GUARDED_BY(mu) while created
  static std::string error;           // GUARDED_BY(mu)
  std::lock_guard lock(mu);
  if (!pool && error.empty()) {
    const char* url = std::getenv("LOCKBENCH_BENCH_DB");
    if (!url || !*url) {
      error = "LOCKBENCH_BENCH_DB is unset (e.g. bench/pgbench_compare.sh starts a throw-away PostgreSQL)";
    } else {
      try {
        auto admin = open_session(url);
        create_schema(*admin);
        seed_rows(*admin, kRun, {{"users", true, TableSpec::Seed{"auth0|u", 0}}}, kKeys);
        PoolConfig cfg;
        cfg.url = url;
        cfg.run = kRun;
        cfg.maximum_pool_size = 4;  // as many as the most threads: one backend per client, like pgbench -c 4
        pool = std::make_unique<Pool>(cfg, std::chrono::steady_clock::now());
      } catch (const std::exception& e) {
        error = std::string("cannot prepare the database: ") + e.what();
      }
    }
  }
  if (!pool) state.SkipWithError(error.c_str());
  return pool.get();
}

// Runs `op(conn, key)` once per iteration on a borrowed connection.
template <class Op>
void run_case(benchmark::State& state, Op op) {
  Pool* pool = shared_pool(state);
  if (!pool) return;
  const Key key = state.thread_index() + 1;
  const std::string owner = "bench-" + std::to_string(key);
  for (auto _ : state) {
    PgConn* c = pool->borrow();
    if (!c) {
      state.SkipWithError("pool timeout");
      break;
    }
    const bool ok = op(*c, key, owner);
    c->release();
    if (!ok) {
      state.SkipWithError("the lock was not acquired on an uncontended key");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_pool_only(benchmark::State& state) {
  run_case(state, [](PgConn&, Key, const std::string&) { return true; });
}

void BM_held_tx(benchmark::State& state) {
  run_case(state, [](PgConn& c, Key k, const std::string&) {
    run_sync(c.begin());
    const bool got = run_sync(c.lock_row(kUsers, k, {LockWait::nowait, {}})) == LockResult::acquired;
    run_sync(c.commit());
    return got;
  });
}

void BM_advisory_xact(benchmark::State& state) {
  run_case(state, [](PgConn& c, Key k, const std::string&) {
    run_sync(c.begin());
    const bool got = run_sync(c.advisory_xact_lock(k, {LockWait::try_lock, {}})) == LockResult::acquired;
    run_sync(c.commit());
    return got;
  });
}

void BM_advisory_session(benchmark::State& state) {
  run_case(state, [](PgConn& c, Key k, const std::string&) {
    const bool got = run_sync(c.advisory_lock(k, {LockWait::try_lock, {}})) == LockResult::acquired;
    return got && run_sync(c.advisory_unlock(k));
  });
}

void BM_row_lease(benchmark::State& state) {
  run_case(state, [](PgConn& c, Key k, const std::string& owner) {
    const bool got = run_sync(c.lease_acquire(kUsers, k, owner, 30s, LeaseClock::database, LeaseSql::owned)).acquired;
    return got && run_sync(c.lease_release(kUsers, k, owner, LeaseSql::owned));
  });
}

void BM_optimistic(benchmark::State& state) {
  run_case(state, [](PgConn& c, Key k, const std::string&) {
    const Row row = run_sync(c.read(kUsers, k));
    return row.found && run_sync(c.update(kUsers, k, row, Guard::if_version(row.version)));
  });
}

void BM_row_lease_extend(benchmark::State& state) {
  Pool* pool = shared_pool(state);
  if (!pool) return;
  const Key key = state.thread_index() + 1;
  const std::string owner = "bench-" + std::to_string(key);
  {
    PgConn* c = pool->borrow();
    const bool got = c && run_sync(c->lease_acquire(kUsers, key, owner, 30s, LeaseClock::database, LeaseSql::owned)).acquired;
    if (c) c->release();
    if (!got) {
      state.SkipWithError("the lease was not acquired on an uncontended key");
      return;
    }
  }
  run_case(state, [](PgConn& c, Key k, const std::string& o) { return run_sync(c.lease_extend(kUsers, k, o, 30s)); });
  PgConn* c = pool->borrow();
  if (c) {
    run_sync(c->lease_release(kUsers, key, owner, LeaseSql::owned));
    c->release();
  }
}

// The shared Redis store (its keys deleted at exit), or null with the reason.
RedisStore* shared_redis(benchmark::State& state) {
  static std::mutex mu;
  struct Owned {
    std::unique_ptr<RedisStore> store;
    ~Owned() {
      try {
        if (store) store->drop_run_keys();
      } catch (const std::exception&) {
      }
    }
  };
  static Owned redis;        // GUARDED_BY(mu) while created
  static std::string error;  // GUARDED_BY(mu)
  std::lock_guard lock(mu);
  if (!redis.store && error.empty()) {
    const char* url = std::getenv("LOCKBENCH_BENCH_REDIS");
    if (!url || !*url) {
      error = "LOCKBENCH_BENCH_REDIS is unset (scripts/redis start DIR starts a throw-away redis-server)";
    } else {
      try {
        redis.store = std::make_unique<RedisStore>(url, "lockbench:bench-" + std::to_string(::getpid()) + ":", 2s);
      } catch (const std::exception& e) {
        error = std::string("cannot use Redis: ") + e.what();
      }
    }
  }
  if (!redis.store) state.SkipWithError(error.c_str());
  return redis.store.get();
}

void BM_redis_lease(benchmark::State& state) {
  RedisStore* r = shared_redis(state);
  if (!r) return;
  const Key key = state.thread_index() + 1;
  const std::string owner = "bench-" + std::to_string(key);
  for (auto _ : state) {
    if (!r->acquire(key, owner, 30s).acquired || !r->release(key, owner)) {
      state.SkipWithError("the lease was not acquired on an uncontended key");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_redis_lease_extend(benchmark::State& state) {
  RedisStore* r = shared_redis(state);
  if (!r) return;
  const Key key = 1000 + state.thread_index();
  const std::string owner = "bench-" + std::to_string(key);
  if (!r->acquire(key, owner, 30s).acquired) {
    state.SkipWithError("the lease was not acquired on an uncontended key");
    return;
  }
  for (auto _ : state) {
    if (!r->extend(key, owner, 30s)) {
      state.SkipWithError("the renewal found the lease lost");
      break;
    }
  }
  r->release(key, owner);
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_pool_only)->UseRealTime()->Threads(1)->Threads(4);
BENCHMARK(BM_held_tx)->UseRealTime()->Threads(1)->Threads(4);
BENCHMARK(BM_advisory_xact)->UseRealTime()->Threads(1)->Threads(4);
BENCHMARK(BM_advisory_session)->UseRealTime()->Threads(1)->Threads(4);
BENCHMARK(BM_row_lease)->UseRealTime()->Threads(1)->Threads(4);
BENCHMARK(BM_optimistic)->UseRealTime()->Threads(1)->Threads(4);
BENCHMARK(BM_row_lease_extend)->UseRealTime()->Threads(1)->Threads(4);
BENCHMARK(BM_redis_lease)->UseRealTime()->Threads(1)->Threads(4);
BENCHMARK(BM_redis_lease_extend)->UseRealTime()->Threads(1)->Threads(4);

}  // namespace

BENCHMARK_MAIN();

// pool_rate: row-lease acquire + release pairs per second through lockbench's
// real-world client (Pool + PgConn; the lease statements go through libpq
// directly, everything else through libpqxx), counted the way pgbench counts
// transactions: N client threads for a fixed time, every pair each thread
// finished, summed. (Google Benchmark's threaded runs give each thread a fixed
// share of the iterations and stop the clock when the slowest finishes; on a
// busy 2-core machine that measures the straggler, not the rate.)
//
// The code path is strategy_bench's BM_row_lease: borrow, lease_acquire
// (UPDATE ... RETURNING), lease_release, give back; thread t on key t + 1.
//
//   LOCKBENCH_BENCH_DB=postgresql://... pool_rate [THREADS=4] [SECONDS=5]
// Prints one line: "pool_rate threads=4 seconds=5 pairs=... pairs_per_s=...".
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "real/pool.hpp"

using namespace lockbench;
using namespace lockbench::real;
using namespace std::chrono_literals;

int main(int argc, char** argv) {
  const char* url = std::getenv("LOCKBENCH_BENCH_DB");
  const int threads = argc > 1 ? std::atoi(argv[1]) : 4;
  const double seconds = argc > 2 ? std::atof(argv[2]) : 5;
  if (!url || !*url || threads < 1 || threads > 64 || seconds <= 0 || seconds > 600) {
    std::fprintf(stderr, "usage: LOCKBENCH_BENCH_DB=postgresql://... pool_rate [THREADS 1..64] [SECONDS 0..600]\n");
    return 2;
  }
  try {
    auto admin = open_session(url);
    create_schema(*admin);
    constexpr std::int64_t kRun = 1;  // the rows pgbench_compare.sh's pgbench script uses too
    seed_rows(*admin, kRun, {{"users", true, TableSpec::Seed{"auth0|u", 0}}}, 64);
    PoolConfig cfg;
    cfg.url = url;
    cfg.run = kRun;
    cfg.maximum_pool_size = threads;  // one backend per client, like pgbench -c N
    Pool pool(cfg, std::chrono::steady_clock::now());
    std::atomic<bool> stop{false};
    std::atomic<long> failures{0};
    std::vector<long> pairs(static_cast<std::size_t>(threads), 0);
    std::vector<std::jthread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        const Key key = t + 1;
        const std::string owner = "bench-" + std::to_string(key);
        long n = 0;
        while (!stop.load(std::memory_order_relaxed)) {
          PgConn* c = pool.borrow();
          if (!c) {
            ++failures;
            break;
          }
          const bool ok =
              run_sync(c->lease_acquire(0, key, owner, 30s, LeaseClock::database, LeaseSql::owned)).acquired &&
              run_sync(c->lease_release(0, key, owner, LeaseSql::owned));
          c->release();
          if (!ok) {
            ++failures;
            break;
          }
          ++n;
        }
        pairs[static_cast<std::size_t>(t)] = n;
      });
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    stop = true;
    workers.clear();
    long total = 0;
    for (long n : pairs) total += n;
    if (failures > 0) {
      std::fprintf(stderr, "pool_rate: %ld client(s) failed (pool timeout or a lease not acquired on its own key)\n",
                   failures.load());
      return 1;
    }
    std::printf("pool_rate threads=%d seconds=%g pairs=%ld pairs_per_s=%.0f\n", threads, seconds, total, total / seconds);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pool_rate: %s\n", e.what());
    return 1;
  }
  return 0;
}

// Pool: a JDBC-style connection pool with HikariCP's semantics and names.
//
//  - maximumPoolSize connections are opened at start (HikariCP's minimumIdle
//    defaults to the maximum, so a default pool is fixed-size).
//  - Waiters are served first come, first served; a waiter gives up after
//    connectionTimeout (borrow() returns null: the request's pool_timeout).
//  - Idle connections are handed out least-recently-returned first (a FIFO of
//    connections). Chosen on purpose: a request that gives its connection back
//    and borrows again usually gets ANOTHER session, which is exactly what makes
//    advisory-session:pooled's unlock fail. (HikariCP prefers the connection the
//    same thread used last; with many threads the effect is the same.)
//  - On return: an open transaction is rolled back; a broken connection, or one
//    older than maxLifetime, is replaced by a new session rather than handed out.
//    A connection idle for more than 500 ms is validated before it is handed out
//    (HikariCP's aliveBypassWindow) and replaced when the check fails.
//  - leakDetectionThreshold: check_leaks() warns once per borrow held longer,
//    naming the step the holder was in.
//  - Every session carries application_name (PoolConfig::application_name),
//    so a run can find, count and if need be terminate its own backends.
//  - close() (HikariCP's close on shutdown): waiters and later borrows get no
//    connection at once, and broken connections are no longer replaced.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/metrics.hpp"
#include "real/pg_conn.hpp"

namespace lockbench::real {

struct PoolConfig {
  std::string url;
  int maximum_pool_size = 10;
  Duration connection_timeout = std::chrono::seconds(30);
  Duration leak_detection_threshold{};  // 0 = off
  Duration max_lifetime = std::chrono::minutes(30);
  int first_conn_id = 0;                // connection ids are unique across pods
  std::string name = "pool";            // for warnings
  std::int64_t run = 0;                 // the run whose rows (lockbench.rows.run) the connections use
  std::string application_name;         // every session's (real/leftovers.hpp); empty = the URL's
  bool unnamed_statements = false;      // --statements resolved (real/pg_conn.hpp)
};

class Pool {
 public:
  using Clock = std::chrono::steady_clock;
  // Opens every connection; throws DbError when the database cannot be reached.
  Pool(PoolConfig cfg, Clock::time_point epoch);
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  // Who borrows: a request (its wait and hold are the pool's wait_ms and
  // hold_ms, and so the Little's-law ceiling), or a readiness probe (counted in
  // probe_borrows only: a 1 ms SELECT 1 is no request's hold).
  enum class Borrower { request, probe };
  // A connection, or null after `timeout`. Throws DbError when a broken
  // connection cannot be replaced (the database is gone).
  PgConn* borrow(Duration timeout, Borrower who = Borrower::request);
  PgConn* borrow() { return borrow(cfg_.connection_timeout); }
  // Called by PgConn::release().
  void give_back(PgConn* c, Duration borrowed_at);

  // Time since the run's epoch.
  Duration now() const { return Clock::now() - epoch_; }
  // Moves the epoch (the run's start, taken once every pool and worker is up).
  // Only before any other thread uses the pool.
  void restart_clock(Clock::time_point epoch) { epoch_ = epoch; }
  PoolSample sample() const;
  // Leak detection: counts (and logs the first few) borrows held past the threshold.
  void check_leaks();
  PoolStats stats() const;  // a copy
  std::vector<int> backend_pids() const;
  // Shutting down: wakes every waiter with no connection and refuses later
  // borrows (they return null at once); broken connections stay broken.
  void close();
  std::int64_t replaced() const;
  int size() const { return cfg_.maximum_pool_size; }
  const PoolConfig& config() const { return cfg_; }

 private:
  struct Waiter {
    std::condition_variable cv;
    PgConn* conn = nullptr;  // set by give_back() when handed over
  };
  struct Slot {
    std::unique_ptr<PgConn> conn;
    bool borrowed = false;
    Duration borrowed_at{};
    Duration returned_at{};
    bool leak_warned = false;
    bool probe = false;          // borrowed by a readiness probe
    StepNote* holder = nullptr;  // the borrower's step note (null: not a request)
  };
  Slot& slot_of(PgConn* c);
  void account_busy_locked(Duration t);
  void account_waiters_locked(Duration t);  // before waiters_ changes: the pending_s integral
  PgConn* take_locked(PgConn* c, Duration waited, Borrower who);
  // Replaces a broken or too old connection (outside the lock: a connect is slow).
  void refresh(PgConn* c, bool validate_first);

  const PoolConfig cfg_;
  Clock::time_point epoch_;  // written only by restart_clock(), before the run
  static constexpr Duration kAliveBypass = std::chrono::milliseconds(500);

  mutable std::mutex mu_;
  // GUARDED_BY(mu_): everything below. slots_ itself (the vector) never changes
  // after construction; the Slot fields do.
  std::vector<Slot> slots_;
  std::deque<PgConn*> idle_;      // least-recently-returned at the front
  std::deque<Waiter*> waiters_;   // first come, first served
  int active_ = 0;
  Duration last_change_{};        // for the busy-connection integral
  Duration last_waiters_change_{};  // for the waiting-borrowers integral
  PoolStats stats_;
  std::int64_t replaced_ = 0;
  int leak_logs_ = 0;
  bool closed_ = false;
};

}  // namespace lockbench::real

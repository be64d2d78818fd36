// Bouncer: PgBouncer between the pods' pools and the simulated database
// (--pgbouncer transaction|session). The pods' pool connections are its
// clients; it owns at most pgbouncer_pool_size server backends, shared by all
// pods, opened when first needed (PgBouncer's min_pool_size 0).
//
//   transaction  a client holds a backend for one transaction, or for one
//                autocommitted statement, then gives it back. Session state
//                stays on the BACKEND: a session advisory lock taken by client
//                A stays on backend X; the next client given X re-enters it
//                (advisory locks are re-entrant per session), A's unlock on
//                another backend fails, and the lock outlives both clients.
//   session      a client takes a backend at its first statement and keeps it
//                until it closes (today's model, with the backend limit).
//
//  - Idle backends are handed out most recently released first (PgBouncer's
//    server_round_robin = 0), clients wait first come, first served.
//  - A statement waiting for a lock keeps its backend: under load every
//    backend can be held by waiters, and the pool stands still until their
//    lock_timeout (or, unbounded, until query_wait_timeout drops the clients
//    waiting for a backend: 120 s, PgBouncer's default; the client is closed).
//  - A client that closes while it holds a backend (a crash mid-transaction,
//    maxLifetime, a lost connection, session mode's end) takes that backend
//    with it: its transaction rolls back and its locks go (PgBouncer closes a
//    server left in a transaction; session mode resets it with DISCARD ALL).
//    Idle backends keep their session locks.
// Single-threaded, like everything in sim/.
#pragma once

#include <coroutine>
#include <cstdint>
#include <deque>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/units.hpp"
#include "sim/lock_manager.hpp"

namespace lockbench::sim {

class SimConn;
class SimWorld;

class Bouncer {
 public:
  static constexpr Duration kQueryWaitTimeout = std::chrono::seconds(120);

  Bouncer(SimWorld& w, bool transaction_mode, int pool_size);
  bool transaction_mode() const { return transaction_mode_; }

  // A statement of `c` starts: true when c holds a backend now (kept, or an
  // idle or new one given); false: it must wait (enqueue).
  bool try_attach(SimConn& c);
  // Waits for a backend; `h` is resumed `latency` after one is given, or at
  // query_wait_timeout with c.server_wait_failed() set.
  void enqueue(SimConn& c, std::coroutine_handle<> h, Duration latency);
  // A statement of `c` ended outside a transaction: in transaction mode its backend goes back.
  void statement_done(SimConn& c);
  // The client connection closes (crash, maxLifetime, lost): a backend it holds
  // ends with it (replaced when a client next needs one); a wait it was in vanishes.
  void client_closed(SimConn& c);

  nlohmann::json report() const;

 private:
  struct Waiter {
    std::uint64_t ticket;
    SimConn* conn;
    std::coroutine_handle<> handle;
    Duration latency;
  };
  void give(SimConn& c, Backend b);
  void release(Backend b);  // to the first waiter, else on top of the idle stack
  static void on_timeout(void* self, std::uint64_t ticket);

  SimWorld& w_;
  const bool transaction_mode_;
  const int pool_size_;
  int open_ = 0;                  // server backends open (idle + given)
  std::vector<Backend> idle_;     // back = most recently released
  std::deque<Waiter> waiters_;    // FIFO, tickets increasing
  std::uint64_t next_ticket_ = 1;
  std::int64_t waits_ = 0;
  std::int64_t timeouts_ = 0;
  std::int64_t waiting_max_ = 0;
  std::int64_t closed_with_backend_ = 0;
};

}  // namespace lockbench::sim

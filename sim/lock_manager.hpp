// The simulated database: rows with MVCC-lite visibility, and PostgreSQL's lock
// manager as far as the strategies can observe it.
//   - row locks (SELECT ... FOR UPDATE, and every UPDATE): exclusive, held to
//     the end of the transaction, FIFO waiters, lock_timeout, NOWAIT;
//   - advisory locks in transaction and session scope: one holder backend,
//     re-entrant, counted (PostgreSQL needs as many unlocks as locks);
//   - a dead backend (crashed pod, closed connection) releases everything and
//     its open transaction is rolled back; data (leases) stays.
// Waiting is modelled, not slept: a waiter is a suspended coroutine that the
// manager resumes through the event loop when the lock is granted or times out.
// Single-threaded, like everything in sim/.
#pragma once

#include <coroutine>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/world.hpp"
#include "sim/event_loop.hpp"

namespace lockbench::sim {

using Backend = int;  // one per simulated connection, like a PostgreSQL backend process

// One row of a scenario table (core/world.hpp's Row, plus the lease columns).
// Rows are keyed by row_key(table, key).
struct RowState {
  std::string text;
  std::string ref;
  std::int64_t num = 0;
  std::int64_t version = 0;
  std::optional<Duration> lease_at;  // locked_at (database or app clock, as the writer chose)
  std::string lease_owner;           // lock_owner
  std::uint64_t lease_token = 0;     // fencing token: +1 per acquisition
  // Committed rows under this key: 1, or more in a table without a unique key
  // (TableSpec::unique = false), whose rows share the first one's state here.
  std::int64_t copies = 1;
};

enum class Space : std::uint8_t { row, advisory };

// A row's key in the lock manager: the scenario table in the high bits, so
// every table shares one row space (and one row-lock space) like the real
// world's lockbench.rows. Keys below 2^40.
inline constexpr int kRowKeyBits = 40;
inline Key row_key(Table t, Key k) { return (static_cast<Key>(t) << kRowKeyBits) | k; }
inline Table table_of(Key row) { return static_cast<Table>(row >> kRowKeyBits); }
inline Key key_of_row(Key row) { return row & ((Key{1} << kRowKeyBits) - 1); }
enum class Scope : std::uint8_t { xact, session };

class LockManager {
 public:
  // `make_row(row_key)` gives a row's initial state, or nullopt when the row does not exist.
  LockManager(EventLoop& loop, std::function<std::optional<RowState>(Key)> make_row);

  // ---- data
  // The row as backend b sees it: its own uncommitted write, else the committed
  // row. Null when the key does not exist.
  const RowState* visible(Key k, Backend b);
  // Writes the row: into b's transaction (seen by others at commit) or committed at once.
  void put(Key k, Backend b, bool in_tx, const RowState& s);
  // The row to change in place, with the same visibility as put(). Null when the
  // key does not exist. Call with the row lock held.
  RowState* writable(Key k, Backend b, bool in_tx);
  // INSERT of a row that does not exist: into b's transaction (others see it at
  // commit; a rollback drops it) or committed at once. false when the row
  // exists. Call with the row lock held (a second inserter waits for the first
  // one's transaction, as PostgreSQL's unique index makes it).
  bool insert(Key k, Backend b, bool in_tx, const RowState& s);
  // INSERT into a table without a unique key: never conflicts and never waits
  // (no unique index to check); another row under the key, seen by others at
  // commit (or at once outside a transaction).
  void insert_multi(Key k, Backend b, bool in_tx, const RowState& s);
  // SELECT count(*) for the key as b sees it: committed rows plus b's own uncommitted inserts.
  std::int64_t count(Key k, Backend b);
  // Every committed row touched so far (for end-of-run counts and the service
  // view); a key with several rows comes once, with RowState::copies.
  template <class F>
  void for_each_row(F f) const {
    for (const auto& [k, r] : row_store_)
      if (r.committed) f(k, *r.committed);
  }

  // Makes the seeded rows 1..n of table t exist (rows are otherwise made when
  // first touched), so that a scan sees them; once per table.
  void materialize(Table t, Key n) {
    if (!materialized_.insert(t).second) return;
    for (Key k = 1; k <= n; ++k) row(row_key(t, k));
  }
  // Keys of every row of table t that exists or is being inserted, in key order
  // from key `from` (a work queue's scan: claim_due). Rows of other tables are
  // not visited.
  template <class F>
  void for_each_key_in(Table t, Key from, F f) const {
    for (auto it = keys_.lower_bound(row_key(t, from)); it != keys_.end() && table_of(*it) == t; ++it)
      if (!f(*it)) break;
  }
  // A work queue's scan need not revisit a prefix of rows that are done (num < 0,
  // committed, no write pending) and have not been written since: claim_due
  // keeps where that prefix ends per table; any write below it moves it back.
  Key scan_floor(Table t) const {
    auto it = scan_floor_.find(t);
    return it == scan_floor_.end() ? 0 : it->second;
  }
  void set_scan_floor(Table t, Key k) { scan_floor_[t] = k; }
  bool settled(Key k) const {
    const Row* r = find_row(k);
    return r && r->committed && r->committed->num < 0 && !r->pending;
  }

  // ---- locks
  struct Waiter {
    Backend backend = -1;
    Space space = Space::row;
    Scope scope = Scope::xact;
    Key key = 0;
    std::uint64_t ticket = 0;
    int owner = kGlobal;  // event-loop owner that resumes the coroutine
    std::coroutine_handle<> handle;
    LockResult result = LockResult::busy;
  };
  struct WaitAwaiter {
    LockManager& lm;
    Waiter w;
    Duration timeout;         // zero = no bound
    bool try_first = false;   // take a free lock without suspending
    bool ready = false;       // nothing to wait for at all
    bool await_ready() {
      if (ready) return true;
      if (!try_first) return false;
      w.result = lm.try_lock(w.space, w.key, w.backend, w.scope);
      return w.result == LockResult::acquired;
    }
    void await_suspend(std::coroutine_handle<> h) {
      w.handle = h;
      lm.enqueue(&w, timeout);
    }
    LockResult await_resume() const noexcept { return w.result; }
  };

  // Takes the lock when it is free or already b's (re-entrant: counted); busy otherwise.
  LockResult try_lock(Space sp, Key k, Backend b, Scope sc);
  // co_await: waits in FIFO order behind earlier waiters; timed_out after `timeout` (zero = no bound).
  // Call only after try_lock answered busy.
  WaitAwaiter wait_lock(Space sp, Key k, Backend b, Scope sc, Duration timeout, int owner) {
    return WaitAwaiter{*this, Waiter{b, sp, sc, k, 0, owner, {}, LockResult::busy}, timeout};
  }
  // co_await: try_lock, else wait_lock (what an UPDATE does on a row).
  WaitAwaiter lock(Space sp, Key k, Backend b, Scope sc, Duration timeout, int owner) {
    return WaitAwaiter{*this, Waiter{b, sp, sc, k, 0, owner, {}, LockResult::busy}, timeout, true};
  }
  // Is the lock held by a backend other than b? (An UPDATE then has to wait.)
  bool held_by_other(Space sp, Key k, Backend b) const;
  // Releases one xact-scope row lock of b at once (an autocommitted UPDATE's statement end).
  void release_row(Key k, Backend b);
  // pg_advisory_unlock: false when b holds no session lock on k.
  bool unlock_session(Key k, Backend b);
  // COMMIT / ROLLBACK: xact-scope and row locks released, b's writes published or dropped.
  void end_xact(Backend b, bool commit);
  // The backend is gone: its transaction rolls back, every lock it held is
  // released, a lock wait it was in vanishes (its coroutine is never resumed).
  void backend_died(Backend b);

  // Keys of every lock b holds (any scope), for crash accounting.
  std::vector<std::pair<Space, Key>> held_by(Backend b) const;
  // Session-scope advisory locks still held (the end-of-run leak count).
  std::int64_t session_locks_held() const;
  std::int64_t waits() const { return waits_; }

 private:
  struct Lock {
    Backend holder = -1;
    int xact = 0;     // transaction-scope acquisitions (row locks count here)
    int session = 0;  // session-scope acquisitions
    std::vector<Waiter*> waiters;  // FIFO; short in practice
  };
  struct Row {
    std::optional<RowState> committed;  // absent: not inserted yet (or its insert is still uncommitted)
    std::optional<RowState> pending;    // the row-lock holder's uncommitted write or insert
  };
  struct BackendState {
    std::vector<std::uint64_t> held;  // lock ids with a count > 0
    std::vector<Key> pending_rows;
    std::vector<std::pair<Key, RowState>> pending_multi;  // uncommitted inserts into tables without a unique key
    Waiter* waiting = nullptr;
  };
  static std::uint64_t lock_id(Space sp, Key k) {
    return (static_cast<std::uint64_t>(sp) << 62) ^ static_cast<std::uint64_t>(k);
  }
  static Space space_of(std::uint64_t id) { return static_cast<Space>(id >> 62); }
  static Key key_of(std::uint64_t id) { return static_cast<Key>(id & ((1ULL << 62) - 1)); }
  BackendState& backend(Backend b);
  Row* row(Key k);
  void add_committed(Key k, const RowState& s);  // one more committed row under k (insert_multi)
  void grant(Lock& l, std::uint64_t id, Backend b, Scope sc);
  void release_if_free(Lock& l);
  void enqueue(Waiter* w, Duration timeout);
  static void on_timeout(void* self, std::uint64_t ticket);

  EventLoop& loop_;
  std::function<std::optional<RowState>(Key)> make_row_;
  // key -> row. Rows are never removed: they live in a deque (their addresses
  // stay), indexed by open addressing (linear probing, at most half full). A
  // lookup reads one slot and the row, where a node-based map divided by its
  // bucket count and followed two pointers: twice per statement, 2.6 % of a
  // run's time in cache stalls (issue 14).
  struct RowSlot {
    Key key = 0;
    Row* row = nullptr;  // nullptr: empty
  };
  Row* find_row(Key k) const {
    const std::size_t mask = row_index_.size() - 1;
    for (std::size_t i = slot_of(k, mask);; i = (i + 1) & mask) {
      const RowSlot& s = row_index_[i];
      if (s.row == nullptr || s.key == k) return s.row;
    }
  }
  static std::size_t slot_of(Key k, std::size_t mask) {
    return static_cast<std::size_t>((static_cast<std::uint64_t>(k) * 0x9E3779B97F4A7C15ULL) >> 32) & mask;
  }
  Row& add_row(Key k, Row r);  // k must not have a row yet
  std::deque<std::pair<Key, Row>> row_store_;
  std::vector<RowSlot> row_index_ = std::vector<RowSlot>(64);
  std::set<Key> keys_;  // every key in row_store_, ordered (for_each_key_in)
  std::set<Table> materialized_;
  std::unordered_map<Table, Key> scan_floor_;  // see scan_floor(); lowered by written()
  void written(Key k) {
    if (scan_floor_.empty()) return;
    auto it = scan_floor_.find(table_of(k));
    if (it != scan_floor_.end() && key_of_row(k) < it->second) it->second = key_of_row(k);
  }
  std::unordered_map<std::uint64_t, Lock> locks_;
  std::unordered_map<std::uint64_t, Waiter*> by_ticket_;  // waiters with a pending timeout
  std::vector<BackendState> backends_;
  std::uint64_t next_ticket_ = 1;
  std::int64_t waits_ = 0;
};

}  // namespace lockbench::sim

// The world interface: the handful of operations a strategy may use, in the
// problem's own words. The real world (real/) turns each into parameterised SQL
// or an HTTP call; the simulated world (sim/) into lock-manager and partner-model
// events in virtual time. Strategies see nothing else: no SQL text, no sockets,
// no threads, no system clock.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/task.hpp"
#include "base/units.hpp"

namespace lockbench {

class RequestCtx;
class PartnerGuard;  // core/client_policy.hpp

using Key = std::int64_t;

// How a lock request behaves when the lock is taken.
enum class LockWait {
  try_lock,  // pg_try_advisory_*: answer "busy" at once
  nowait,    // SELECT ... FOR UPDATE NOWAIT: error 55P03 at once, reported as "busy"
  wait,      // wait, bounded by lock_timeout (SET LOCAL lock_timeout): "timed_out" after it
};
struct LockMode {
  LockWait wait = LockWait::wait;
  Duration timeout{};  // for LockWait::wait; zero = wait without bound
};
enum class LockResult {
  acquired,
  busy,       // try-lock or NOWAIT found it taken
  timed_out,  // lock_timeout passed while waiting
  no_row,     // SELECT ... FOR UPDATE found no row: nothing is locked (a record that does not exist yet)
};

struct LeaseResult {
  bool acquired = false;
  // The lease was taken over from an owner whose lease had expired (TTL passed)
  // without being released: a "steal" when that owner is still working.
  bool took_over_expired = false;
  std::string previous_owner;
  // Fencing token: grows by one with every acquisition of this key's lease, so
  // a partner that remembers the highest token seen can refuse a stale holder.
  std::uint64_t token = 0;
};

// Which clock computes lease expiry: the database's now() (one clock for all
// pods) or the application's own clock (skew between pods matters).
enum class LeaseClock { database, app };

// How a lease is taken and given back.
//   owned    UPDATE ... SET locked_at = <clock>, lock_owner = $me WHERE ... AND
//            (locked_at IS NULL OR locked_at < <clock> - ttl); release checks the owner
//   article  the first article's SQL: locked_at = now() (database clock) but the
//            expiry compared with :staleBefore from the application's clock, and
//            a release WHERE id = $k without an owner check
enum class LeaseSql { owned, article };

// A scenario's table, declared by the scenario (core/scenario.hpp). Rows are
// keyed by (table, key); both worlds store every scenario table the same way.
using Table = int;

// One row of a scenario table, in the world interface's words: a text, a
// reference, a number and the row's version. A scenario says what they mean
// (users: text = primary identity; orders: text = status, ref = charge id,
// num = amount; accounts: num = balance).
struct Row {
  bool found = false;
  std::string text;
  std::string ref;
  std::int64_t num = 0;
  std::int64_t version = 0;  // +1 with every update
};

// The condition an UPDATE carries beside its key (0 rows = not written).
struct Guard {
  enum class Kind { none, version, lease_owner } kind = Kind::none;
  std::int64_t version = 0;  // Kind::version: WHERE version = $v (optimistic locking)
  std::string owner;         // Kind::lease_owner: WHERE lock_owner = $me (a lease still ours)
  static Guard any() { return {}; }
  static Guard if_version(std::int64_t v) { return {Kind::version, v, {}}; }
  static Guard if_lease_owner(std::string o) { return {Kind::lease_owner, 0, std::move(o)}; }
};

// An entity as an ORM loads it: every column of the row, the lease columns
// included (a JPA entity that maps locked_at and lock_owner as fields). The
// lease columns are the world's own encoding of what was read ("" = NULL):
// a save writes them back exactly as they were.
struct Entity {
  Row row;
  std::string locked_at;   // "" = NULL
  std::string lock_owner;  // "" = NULL
};
// What an entity save did (Conn::save_entity).
struct EntitySave {
  bool found = false;         // the row exists (it was written)
  bool lock_changed = false;  // the save changed the lease columns: it wrote back a lock value that was no longer there
};

// What claim_due found: the rows it locked, and how much is left to do.
struct Claimed {
  Key key = 0;
  Row row;
};
struct Claim {
  std::vector<Claimed> rows;  // locked by this transaction, in key order
  std::int64_t undone = 0;    // rows of the table not done (num >= 0), due or not, claimed by anyone
};

// A database failure that the strategy cannot handle (broken connection,
// unexpected SQLSTATE, a failed COMMIT). Becomes Outcome::error at the edge of
// the request.
class DbError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A borrowed pooled connection. Every operation is one statement (or one short
// statement group) on this connection. Not shared between requests.
class Conn {
 public:
  virtual ~Conn() = default;
  virtual int id() const = 0;

  virtual Task<void> begin() = 0;
  // Throws DbError when the commit fails (the transaction is then rolled back).
  virtual Task<void> commit() = 0;
  virtual Task<void> rollback() = 0;

  // SELECT 1 FROM <table> WHERE key = $1 FOR UPDATE [NOWAIT], inside a
  // transaction. no_row when the row does not exist: nothing is locked.
  virtual Task<LockResult> lock_row(Table t, Key key, LockMode mode) = 0;
  // pg_[try_]advisory_xact_lock($1), inside a transaction; released by commit/rollback.
  virtual Task<LockResult> advisory_xact_lock(Key key, LockMode mode) = 0;
  // pg_[try_]advisory_lock($1): session scope, survives commit, stays with the connection.
  virtual Task<LockResult> advisory_lock(Key key, LockMode mode) = 0;
  // pg_advisory_unlock($1): false when this session does not hold the lock.
  virtual Task<bool> advisory_unlock(Key key) = 0;

  // The lease on the row (table, key): one autocommitted UPDATE; 1 row = held.
  virtual Task<LeaseResult> lease_acquire(Table t, Key key, std::string_view owner, Duration ttl, LeaseClock clock,
                                          LeaseSql sql) = 0;
  // Gives the lease back. LeaseSql::owned: WHERE lock_owner = $me, false when
  // the lease is no longer ours (it was taken over). LeaseSql::article: no owner
  // check; it clears whoever holds the lease and always answers true.
  virtual Task<bool> lease_release(Table t, Key key, std::string_view owner, LeaseSql sql) = 0;
  // Renews the lease (ShedLock's extend): one autocommitted UPDATE ... SET
  // locked_at = now() WHERE lock_owner = $me AND locked_at >= now() - ttl
  // (database clock). false when the lease is no longer ours, or expired.
  virtual Task<bool> lease_extend(Table t, Key key, std::string_view owner, Duration ttl) = 0;

  // SELECT text, ref, num, version FROM <table> WHERE key = $1 (found = false when absent).
  virtual Task<Row> read(Table t, Key key) = 0;
  // SELECT count(*) FROM <table> WHERE key = $1 (tables without a unique key may hold several).
  virtual Task<std::int64_t> count(Table t, Key key) = 0;
  // INSERT ... ON CONFLICT DO NOTHING: false when a row with this key exists in
  // a table with a unique key (after waiting for an uncommitted insert of the
  // same key, as PostgreSQL's unique index does).
  virtual Task<bool> insert(Table t, Key key, const Row& values) = 0;
  // UPDATE <table> SET text, ref, num, version = version + 1 WHERE key = $1 AND
  // <guard>: false when no row matched (absent, version changed, lease lost).
  virtual Task<bool> update(Table t, Key key, const Row& values, const Guard& guard) = 0;

  // A second code path's entity (the row-lease article's "not mapped as an
  // entity field"), each one autocommitted statement (or in the open transaction):
  //   load_entity  SELECT text, ref, num, version, locked_at, lock_owner ... WHERE key = $1
  //   save_entity  the ORM's save() of that snapshot after its own change (a
  //                last-login stamp): with `lock_mapped`, UPDATE ... SET text,
  //                ref, num, version = version + 1, locked_at, lock_owner from
  //                the snapshot, touched_at = now() (every mapped field, the
  //                stale lock value included); without, UPDATE ... SET
  //                touched_at = now() (its own column only)
  virtual Task<Entity> load_entity(Table t, Key key) = 0;
  virtual Task<EntitySave> save_entity(Table t, Key key, const Entity& e, bool lock_mapped) = 0;

  // A work queue's claim (the outbox poller's), inside a transaction:
  //   SELECT key, text, ref, num, version FROM <table> WHERE num BETWEEN 0 AND $due
  //   ORDER BY key LIMIT $limit FOR UPDATE SKIP LOCKED
  // `num` is the row's due time (ms since the run's start); a row with a negative
  // num is done and never due. Rows locked by other transactions are skipped,
  // not waited for; rows not committed yet are not seen. `undone` counts the
  // table's rows with num >= 0 (SELECT count(*) in the same call).
  virtual Task<Claim> claim_due(Table t, std::int64_t due_at_most, int limit) = 0;

  // Gives the connection back to its pool (rolling back an open transaction,
  // as HikariCP does). Called by ConnHandle; idempotent.
  virtual void release() = 0;
};

// Owns a borrowed connection for one scope; returns it to the pool on scope exit.
class ConnHandle {
 public:
  ConnHandle() = default;
  explicit ConnHandle(Conn* c) : c_(c) {}
  ConnHandle(ConnHandle&& o) noexcept : c_(std::exchange(o.c_, nullptr)) {}
  ConnHandle& operator=(ConnHandle&& o) noexcept {
    if (this != &o) {
      reset();
      c_ = std::exchange(o.c_, nullptr);
    }
    return *this;
  }
  ~ConnHandle() { reset(); }
  explicit operator bool() const { return c_ != nullptr; }
  Conn* operator->() const { return c_; }
  Conn& operator*() const { return *c_; }
  // Returns the connection to the pool now.
  void reset() {
    if (c_) std::exchange(c_, nullptr)->release();
  }

 private:
  Conn* c_ = nullptr;
};

// One call to the partner (one attempt; retries are core/partner_client.hpp's).
struct PartnerCall {
  enum class Kind {
    get_user,  // GET /api/v2/users/{subject}
    unlink,    // DELETE /api/v2/users/{subject}/identities/{identity}
    link,      // POST /api/v2/users/{subject}/identities {identity}
    charge,    // POST /v1/charges amount, currency, metadata[order_id] = subject
    payout,    // POST /v1/payouts amount, currency, metadata[account_id] = subject
    credit,    // POST /v1/customers/{subject}/balance_transactions amount, metadata[reward] = identity
  } kind = Kind::get_user;
  std::string subject;   // the user id "provider|user_id", order id, account id or customer id
  std::string identity;  // unlink: the identity removed; link: the secondary linked under subject; credit: the reward
  std::int64_t amount = 0;   // payments, in the currency's smallest unit
  std::string currency;      // payments
  std::string idempotency_key;  // Idempotency-Key ("" = none)
  std::uint64_t op_id = 0;
  int op_step = 0;  // 1 or 2 within a promotion; 0 = none
  std::optional<std::uint64_t> fencing_token;

  static PartnerCall to(Kind kind, std::string subject, std::string identity = {}) {
    PartnerCall c;
    c.kind = kind;
    c.subject = std::move(subject);
    c.identity = std::move(identity);
    return c;
  }
};
// "partner.get", "partner.unlink", "partner.link", "partner.charge", "partner.payout", "partner.credit".
std::string_view partner_call_name(PartnerCall::Kind);

// Why an attempt got no usable answer.
// breaker_open: the pod's circuit breaker refused the attempt; it never left the pod.
enum class CallFailure { none, connect, timeout, reset, bad_response, breaker_open };
// "", "connect", "timeout", "reset", "bad_response", "breaker_open"
std::string_view call_failure_name(CallFailure f);

struct PartnerReply {
  int status = 0;  // HTTP status; 0 when no usable answer arrived
  CallFailure failure = CallFailure::none;
  std::string error_code;  // the partner's errorCode / error.code when it answered with an error ("" otherwise)
  std::string object_id;   // payments: the charge / payout / balance transaction id ("ch_000001")
  bool replayed = false;   // Idempotent-Replayed: true
  bool answered() const { return status != 0; }
  bool success() const { return status >= 200 && status < 300; }

  // A reply crosses two coroutine returns per call (the attempt's, then
  // call_partner's), and most carry neither an error code nor an object id.
  // Moving a short std::string copies its bytes with a call to memcpy, empty
  // or not: these moves leave an empty one alone.
  PartnerReply() = default;
  PartnerReply(const PartnerReply&) = default;
  PartnerReply& operator=(const PartnerReply&) = default;
  PartnerReply(PartnerReply&& o) noexcept : status(o.status), failure(o.failure), replayed(o.replayed) {
    if (!o.error_code.empty()) error_code = std::move(o.error_code);
    if (!o.object_id.empty()) object_id = std::move(o.object_id);
  }
  PartnerReply& operator=(PartnerReply&& o) noexcept {
    status = o.status;
    failure = o.failure;
    replayed = o.replayed;
    take_unless_empty(error_code, o.error_code);
    take_unless_empty(object_id, o.object_id);
    return *this;
  }
  ~PartnerReply() = default;

 private:
  static void take_unless_empty(std::string& to, std::string& from) {
    if (from.empty())
      to.clear();
    else
      to = std::move(from);
  }
};

// Renewal running beside a request (World::keep_renewing). The request stops
// it with co_await stop(), which waits for a renewal in flight, before it
// gives its lease back. The strategy's RenewFn counts renewals
// (LockCounters::renewals, renewal_failures).
class Renewal {
 public:
  virtual ~Renewal() = default;
  virtual Task<void> stop() = 0;
};
// One renewal. It gets a context of its own (the request's id and owner name,
// its own time split), because it runs beside the request: in the real world
// on another thread. Answers false when the lease is lost (renewal then stops).
using RenewFn = std::function<Task<bool>(RequestCtx&)>;

class World {
 public:
  virtual ~World() = default;
  // Time since the run's start (virtual in the simulator).
  virtual Duration now() = 0;
  virtual Task<void> sleep(RequestCtx& cx, Duration d) = 0;
  // Borrows a connection: FIFO waiters, empty handle after connectionTimeout.
  virtual Task<ConnHandle> acquire(RequestCtx& cx) = 0;
  // One attempt at a partner call, bounded by the client's connect and read timeouts.
  virtual Task<PartnerReply> partner_attempt(RequestCtx& cx, const PartnerCall& call) = 0;
  // True once arrivals have stopped and every request has finished: a
  // strategy's background work (Strategy::background) may end when it has
  // nothing left to do. A world that cannot tell answers false (the background
  // then runs to its own limit).
  virtual bool requests_over() { return false; }
  // The request's pod's circuit breaker and retry budget (core/client_policy.hpp),
  // one per pod incarnation; call_partner consults it on every attempt. Null:
  // this world keeps none, and call_partner refuses a run that asks for them.
  virtual PartnerGuard* partner_guard(RequestCtx&) { return nullptr; }
  // An in-process lock on `key` in the request's own pod (Java's synchronized,
  // a ReentrantLock per key): it excludes requests of this pod only, holds no
  // connection, and vanishes with the pod. try_lock: busy at once; wait: FIFO
  // in the simulator (unfair, like ReentrantLock, in the real world), timed_out
  // after mode.timeout (zero: no bound). Not re-entrant across requests.
  virtual Task<LockResult> local_lock(RequestCtx& cx, Key key, LockMode mode) = 0;
  // Gives the pod-local lock back (a no-op when this request does not hold it).
  virtual void local_unlock(RequestCtx& cx, Key key) = 0;

  // An external lease store (Redis), outside the database: one key per lock
  // key, holding its owner, with a TTL in the store's own clock. Each call is
  // one round trip; none holds a pooled connection. A world without a store
  // throws DbError.
  //   acquire  SET lease owner NX PX ttl, then INCR on the key's counter (the
  //            fencing token), one Lua script; took_over_expired = the last
  //            holder never released (its key expired: a steal if it still works)
  //   release  the owner-checked DEL, one Lua script: false when not ours
  //   extend   the owner-checked PEXPIRE, one Lua script: false when not ours
  virtual Task<LeaseResult> kv_lease_acquire(RequestCtx& cx, Key key, std::string_view owner, Duration ttl);
  virtual Task<bool> kv_lease_release(RequestCtx& cx, Key key, std::string_view owner);
  virtual Task<bool> kv_lease_extend(RequestCtx& cx, Key key, std::string_view owner, Duration ttl);

  // Runs `renew` every `period` beside the request, on the request's pod,
  // until stop() or until it answers false (ShedLock's extendable lock, a
  // RenewableLockRegistry, Redisson's watchdog). The simulator runs it as a
  // coroutine of the pod (a crashed pod renews nothing; a paused one renews
  // nothing while paused); the real world on a renewal thread of the pod.
  virtual std::unique_ptr<Renewal> keep_renewing(RequestCtx& cx, Duration period, RenewFn renew) = 0;
};

// A world without a lease store (the default): the request fails with DbError.
inline Task<LeaseResult> World::kv_lease_acquire(RequestCtx&, Key, std::string_view, Duration) {
  throw DbError("this world has no lease store (redis-lease needs --redis redis://HOST:PORT)");
  co_return LeaseResult{};
}
inline Task<bool> World::kv_lease_release(RequestCtx&, Key, std::string_view) {
  throw DbError("this world has no lease store");
  co_return false;
}
inline Task<bool> World::kv_lease_extend(RequestCtx&, Key, std::string_view, Duration) {
  throw DbError("this world has no lease store");
  co_return false;
}

}  // namespace lockbench

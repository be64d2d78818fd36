// The world interface: the handful of operations a strategy may use, in the
// problem's own words. The real world (real/) turns each into parameterised SQL
// or an HTTP call; the simulated world (sim/) into lock-manager and partner-model
// events in virtual time. Strategies see nothing else: no SQL text, no sockets,
// no threads, no system clock.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "core/task.hpp"
#include "core/units.hpp"

namespace lockbench {

class RequestCtx;

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
enum class LockResult { acquired, busy, timed_out };

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

struct UserRow {
  bool found = false;
  std::string primary_identity;
  std::int64_t version = 0;
};

// A database failure that the strategy cannot handle (broken connection,
// unexpected SQLSTATE). Becomes Outcome::error at the edge of the request.
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
  virtual Task<void> commit() = 0;
  virtual Task<void> rollback() = 0;

  // SELECT ... FROM users WHERE id = $1 FOR UPDATE [NOWAIT], inside a transaction.
  virtual Task<LockResult> lock_row(Key key, LockMode mode) = 0;
  // pg_[try_]advisory_xact_lock($1), inside a transaction; released by commit/rollback.
  virtual Task<LockResult> advisory_xact_lock(Key key, LockMode mode) = 0;
  // pg_[try_]advisory_lock($1): session scope, survives commit, stays with the connection.
  virtual Task<LockResult> advisory_lock(Key key, LockMode mode) = 0;
  // pg_advisory_unlock($1): false when this session does not hold the lock.
  virtual Task<bool> advisory_unlock(Key key) = 0;

  // UPDATE users SET locked_at = now, lock_owner = $owner WHERE id = $key AND
  // (locked_at IS NULL OR locked_at < now - ttl): one autocommitted statement.
  virtual Task<LeaseResult> lease_acquire(Key key, std::string_view owner, Duration ttl, LeaseClock clock) = 0;
  // UPDATE ... SET locked_at = NULL, lock_owner = NULL WHERE id = $key AND lock_owner = $owner.
  // false when the lease is no longer ours (it was taken over).
  virtual Task<bool> lease_release(Key key, std::string_view owner) = 0;

  virtual Task<UserRow> read_user(Key key) = 0;
  // UPDATE users SET primary_identity = $p, version = version + 1 WHERE id = $key.
  virtual Task<void> write_user(Key key, std::string_view primary) = 0;
  // The same, AND version = $expected: false when someone else wrote first.
  virtual Task<bool> write_user_if_version(Key key, std::string_view primary, std::int64_t expected) = 0;

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
  enum class Kind { get_user, unlink, link } kind = Kind::get_user;
  std::string user_id;   // path {id}: the primary, "provider|user_id"
  std::string identity;  // unlink: the identity removed; link: the secondary linked under user_id
  std::uint64_t op_id = 0;
  int op_step = 0;  // 1 or 2 within a promotion; 0 = none
  std::optional<std::uint64_t> fencing_token;
};
std::string_view partner_call_name(PartnerCall::Kind);  // "partner.get", "partner.unlink", "partner.link"

struct PartnerReply {
  int status = 0;       // HTTP status; 0 when no usable answer arrived
  std::string failure;  // "" when answered; else connect | timeout | reset | bad_response
  std::string error_code;  // the partner's errorCode when it answered with an error ("" otherwise)
  bool answered() const { return status != 0; }
  bool success() const { return status >= 200 && status < 300; }
};

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
};

}  // namespace lockbench

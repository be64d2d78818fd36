// PgConn: one PostgreSQL session (libpqxx) behind core's Conn interface. Every
// statement is prepared once per session and executed with parameters only.
// Errors are turned into outcomes here, at the edge: SQLSTATE 55P03 becomes
// LockResult::busy / timed_out, a lost session becomes DbError and marks the
// connection broken so that its pool replaces it rather than hands it out.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <pqxx/pqxx>

#include "core/context.hpp"
#include "core/world.hpp"
#include "real/step_note.hpp"


namespace lockbench::real {

class Pool;

// Opens a libpqxx session named `application_name` (real/leftovers.hpp: every
// lockbench session is "lockbench/<run-id>/<part>"; empty = the name the URL
// already carries); throws DbError with libpq's reason, password redacted.
std::unique_ptr<pqxx::connection> open_session(const std::string& url, const std::string& application_name = {});

// The users table (DDL) and a fresh copy of its rows for keys 1..keys.
void create_schema(pqxx::connection& c);
void reset_users(pqxx::connection& c, int keys, int identities_per_person);

class PgConn final : public Conn {
 public:
  PgConn(Pool& pool, int id, std::string url);  // connects; throws DbError
  ~PgConn() override;

  int id() const override { return id_; }
  Task<void> begin() override;
  Task<void> commit() override;
  Task<void> rollback() override;
  Task<LockResult> lock_row(Key key, LockMode mode) override;
  Task<LockResult> advisory_xact_lock(Key key, LockMode mode) override;
  Task<LockResult> advisory_lock(Key key, LockMode mode) override;
  Task<bool> advisory_unlock(Key key) override;
  Task<LeaseResult> lease_acquire(Key key, std::string_view owner, Duration ttl, LeaseClock clock) override;
  Task<bool> lease_release(Key key, std::string_view owner) override;
  Task<UserRow> read_user(Key key) override;
  Task<void> write_user(Key key, std::string_view primary) override;
  Task<bool> write_user_if_version(Key key, std::string_view primary, std::int64_t expected) override;
  // Back to the pool (rolls back an open transaction there). Idempotent.
  void release() override;

  // --- The pool's side (called only while the connection is not borrowed, or
  // by its borrower's thread). ---
  // Attributes time and trace events to this request until release().
  void bind(RequestCtx* cx, Duration borrowed_at);
  // The world attributes this borrow to a request (bind() came from the pool).
  void attach(RequestCtx* cx) { cx_ = cx; }
  // Rolls back an open transaction; marks the connection broken on failure.
  void reset_for_pool();
  // A cheap round trip (HikariCP's isValid): false and broken when it fails.
  bool validate();
  // Closes the session and opens a new one; throws DbError.
  void reconnect();
  bool broken() const { return broken_; }
  int backend_pid() const { return backend_pid_; }
  std::chrono::steady_clock::time_point opened_at() const { return opened_at_; }
  // Runs `SELECT 1` (the health probe's query); throws DbError.
  void select_one();

 private:
  class Quiet;
  enum class Bucket { db, lock };
  template <class F>
  auto guarded(F&& f) -> decltype(f());
  void account(const char* step, Bucket b, Duration start, std::string detail = {});
  Duration now() const;
  void set_lock_timeout(pqxx::work& tx, Duration timeout);

  Pool& pool_;
  const int id_;
  const std::string url_;
  // Declaration order matters: the transaction goes before its connection.
  std::unique_ptr<pqxx::connection> conn_;
  std::unique_ptr<Quiet> quiet_;
  std::optional<pqxx::work> tx_;
  bool broken_ = false;
  std::atomic<int> backend_pid_{0};  // read by the pool at the end of a run
  std::chrono::steady_clock::time_point opened_at_;
  // The borrower (null for the probe, the benchmark and pool tests).
  RequestCtx* cx_ = nullptr;
  bool borrowed_ = false;
  Duration borrowed_at_{};
};

}  // namespace lockbench::real

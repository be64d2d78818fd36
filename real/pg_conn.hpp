// PgConn: one PostgreSQL session (libpqxx) behind core's Conn interface. Every
// statement is prepared once per session and executed with parameters only,
// or (--statements unnamed, for PgBouncer's transaction pooling) sent as an
// unnamed statement with the same SQL and parameters.
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
#include "core/scenario.hpp"
#include "core/world.hpp"
#include "real/step_note.hpp"


namespace lockbench::real {

class Pool;

// Opens a libpqxx session named `application_name` (real/leftovers.hpp: every
// lockbench session is "lockbench/<run-id>/<part>"; empty = the name the URL
// already carries); throws DbError with libpq's reason, password redacted.
std::unique_ptr<pqxx::connection> open_session(const std::string& url, const std::string& application_name = {});

// lockbench's own schema: every scenario table lives in lockbench.rows, keyed
// by (run, tbl, id, seq), so two runs on one server never see each other's rows.
// seq is 0 in tables with a unique key (TableSpec::unique), so a second insert
// of a key conflicts; tables without one get a new seq per row.
inline constexpr std::string_view kSchema = "lockbench";
inline constexpr std::string_view kRowsTable = "rows";
inline constexpr std::string_view kRunsTable = "runs";  // one record per live run (real/leftovers.hpp's RunRecord)
inline constexpr std::string_view kSchemaComment = "lockbench: benchmark state (lockbench.rows); safe to drop";
// Thrown by create_schema when a schema named lockbench holds what lockbench did not make.
class SchemaNotOurs : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// Creates the schema and table when absent; refuses (SchemaNotOurs) a schema
// that is not lockbench's. Touches nothing outside the schema.
void create_schema(pqxx::connection& c);
// This run's seeded rows (keys 1..keys of every seeded table), in bulk; also
// tells this process's PgConns which of the run's tables have a unique key.
void seed_rows(pqxx::connection& c, std::int64_t run, const std::vector<TableSpec>& tables, int keys);
// The rows the run changed or inserted: the service's side of the oracle.
std::vector<StoredRow> stored_rows(pqxx::connection& c, std::int64_t run, const std::vector<TableSpec>& tables);
// Removes this run's rows.
void drop_rows(pqxx::connection& c, std::int64_t run);
// The advisory-lock key the database sees for a strategy's key: salted with
// the run, so that two runs on one server never share a lock.
std::int64_t advisory_key(std::int64_t run, Key key);
// Is this advisory lock key (pg_locks' classid << 32 | objid) one of this
// run's? advisory_key undone: true when it unmixes to one of lockbench's keys.
bool is_run_advisory_key(std::int64_t run, std::int64_t lock_key);

// True when the session reaches PostgreSQL through a pooler such as
// PgBouncer: the backend pid libpq was given at connect (BackendKeyData, which
// PgBouncer invents) is not the pid of the backend that runs our statements.
bool behind_pooler(pqxx::connection& c);
// --statements resolved: true = unnamed. auto is unnamed with --pgbouncer
// transaction or when `pooler_found` (behind_pooler on --db).
bool unnamed_statements(const std::string& statements, const std::string& pgbouncer, bool pooler_found);

class PgConn final : public Conn {
 public:
  PgConn(Pool& pool, int id, std::string url, std::int64_t run);  // connects; throws DbError
  ~PgConn() override;

  int id() const override { return id_; }
  Task<void> begin() override;
  Task<void> commit() override;
  Task<void> rollback() override;
  Task<LockResult> lock_row(Table t, Key key, LockMode mode) override;
  Task<LockResult> advisory_xact_lock(Key key, LockMode mode) override;
  Task<LockResult> advisory_lock(Key key, LockMode mode) override;
  Task<bool> advisory_unlock(Key key) override;
  Task<LeaseResult> lease_acquire(Table t, Key key, std::string_view owner, Duration ttl, LeaseClock clock,
                                  LeaseSql sql) override;
  Task<bool> lease_release(Table t, Key key, std::string_view owner, LeaseSql sql) override;
  Task<bool> lease_extend(Table t, Key key, std::string_view owner, Duration ttl) override;
  Task<Row> read(Table t, Key key) override;
  Task<std::int64_t> count(Table t, Key key) override;
  Task<bool> insert(Table t, Key key, const Row& values) override;
  Task<bool> update(Table t, Key key, const Row& values, const Guard& guard) override;
  Task<Claim> claim_due(Table t, std::int64_t due_at_most, int limit) override;
  Task<Entity> load_entity(Table t, Key key) override;
  Task<EntitySave> save_entity(Table t, Key key, const Entity& e, bool lock_mapped) override;
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
  // A trace event of this borrow would be kept: only then is its detail worth building.
  bool traced() const;
  Duration now() const;
  void set_lock_timeout(pqxx::work& tx, Duration timeout);
  // Named fault sites (--db-faults), drawn from this connection's own seeded
  // Rng while a request's context is attached: true = inject.
  bool fault_due(double p);
  template <class F>
  auto in_tx(F&& f) -> decltype(f(std::declval<pqxx::transaction_base&>()));
  // The lease statements straight through libpq (pg_conn.cpp, "the hot path"):
  // PQexecPrepared of statement `name` with text parameters, on the open
  // transaction if there is one, else autocommitted. Throws pqxx's exceptions,
  // so guarded() turns failures into outcomes as for every other statement.
  struct RawResult;
  RawResult exec_hot(const char* name, const char* const* params, int n);
  // A statement of kStatements by name, prepared or unnamed (--statements).
  template <class... Args>
  pqxx::result exec(pqxx::transaction_base& tx, const char* name, Args&&... args);
  template <class... Args>
  pqxx::row exec1(pqxx::transaction_base& tx, const char* name, Args&&... args);

  Pool& pool_;
  const int id_;
  const std::string url_;
  const std::int64_t run_;  // this run's rows and advisory-key salt
  // Declaration order matters: the transaction goes before its connection.
  std::unique_ptr<pqxx::connection> conn_;
  pqxx::internal::pq::PGconn* raw_ = nullptr;  // conn_'s libpq handle, for exec_hot
  std::string owner_text_;                     // exec_hot's owner parameter, NUL-terminated (reused)
  std::unique_ptr<Quiet> quiet_;
  std::optional<pqxx::work> tx_;
  bool broken_ = false;
  bool unnamed_ = false;  // --statements unnamed: no named statement on the session
  unsigned hot_prepared_ = 0;  // bit i: kHotStatements[i] is prepared on this session (exec_hot)
  std::atomic<int> backend_pid_{0};  // read by the pool at the end of a run
  std::chrono::steady_clock::time_point opened_at_;
  // The borrower (null for the probe, the benchmark and pool tests).
  RequestCtx* cx_ = nullptr;
  bool borrowed_ = false;
  std::optional<Rng> fault_rng_;
  bool rolling_back_ = false;  // seeded at first use from the run's seed and this connection's id
  Duration borrowed_at_{};
  std::int64_t insert_seq_ = 0;  // the seq of this connection's rows in tables without a unique key
};

}  // namespace lockbench::real

#include "real/pg_conn.hpp"

#include <charconv>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>

#include <libpq-fe.h>

#include "core/scenario.hpp"
#include "base/redact.hpp"
#include "real/carriers.hpp"
#include "real/leftovers.hpp"
#include "real/pool.hpp"

namespace lockbench::real {

namespace {

// Every statement lockbench sends, by name. Values only ever travel as $n.
struct Statement {
  const char* name;
  const char* sql;
};
// Every scenario table lives in lockbench.rows, keyed by (run, tbl, id): $1 run,
// $2 table, $3 key in every statement. Values only ever travel as $n.
constexpr Statement kStatements[] = {
    {"read", "SELECT text, ref, num, version FROM lockbench.rows WHERE run = $1 AND tbl = $2 AND id = $3 "
             "ORDER BY seq LIMIT 1"},
    {"count", "SELECT count(*) FROM lockbench.rows WHERE run = $1 AND tbl = $2 AND id = $3"},
    // ON CONFLICT DO NOTHING: a second insert of a key waits for the first one's
    // transaction (the primary key's unique index), then inserts nothing.
    {"insert",
     "INSERT INTO lockbench.rows (run, tbl, id, text, ref, num) VALUES ($1, $2, $3, $4, $5, $6) "
     "ON CONFLICT DO NOTHING"},
    // A table without a unique key (TableSpec::unique = false): every insert is
    // another row, told apart by seq ($7, unique per connection), so nothing
    // conflicts and nothing waits.
    {"insert_multi",
     "INSERT INTO lockbench.rows (run, tbl, id, seq, text, ref, num) VALUES ($1, $2, $3, $7, $4, $5, $6)"},
    {"update", "UPDATE lockbench.rows SET text = $4, ref = $5, num = $6, version = version + 1 "
               "WHERE run = $1 AND tbl = $2 AND id = $3"},
    {"update_if_version", "UPDATE lockbench.rows SET text = $4, ref = $5, num = $6, version = version + 1 "
                          "WHERE run = $1 AND tbl = $2 AND id = $3 AND version = $7"},
    {"update_if_lease_owner", "UPDATE lockbench.rows SET text = $4, ref = $5, num = $6, version = version + 1 "
                              "WHERE run = $1 AND tbl = $2 AND id = $3 AND lock_owner = $7"},
    // A second code path's entity (Conn::load_entity / save_entity): every
    // column, the lease's as text ('' = NULL) so that a save writes back exactly
    // what was read.
    {"load_entity",
     "SELECT text, ref, num, version, COALESCE(locked_at::text, ''), COALESCE(lock_owner, '') FROM lockbench.rows "
     "WHERE run = $1 AND tbl = $2 AND id = $3 ORDER BY seq LIMIT 1"},
    // The ORM's save() with the lock mapped: every field from the snapshot, the
    // stale lock included. The CTE locks the row and reads the lock as it is
    // now, only to tell whether the save changed it (the answer, not the write).
    {"save_entity_mapped",
     "WITH cur AS (SELECT locked_at, lock_owner FROM lockbench.rows WHERE run = $1 AND tbl = $2 AND id = $3 FOR UPDATE) "
     "UPDATE lockbench.rows r SET text = $4, ref = $5, num = $6, version = r.version + 1, "
     "locked_at = NULLIF($7, '')::timestamptz, lock_owner = NULLIF($8, ''), touched_at = now() "
     "FROM cur WHERE r.run = $1 AND r.tbl = $2 AND r.id = $3 "
     "RETURNING cur.locked_at IS DISTINCT FROM NULLIF($7, '')::timestamptz OR cur.lock_owner IS DISTINCT FROM NULLIF($8, '')"},
    // The lock not mapped: the second path writes its own column only.
    {"save_entity_own", "UPDATE lockbench.rows SET touched_at = now() WHERE run = $1 AND tbl = $2 AND id = $3"},
    {"lock_row", "SELECT 1 FROM lockbench.rows WHERE run = $1 AND tbl = $2 AND id = $3 FOR UPDATE"},
    {"lock_row_nowait", "SELECT 1 FROM lockbench.rows WHERE run = $1 AND tbl = $2 AND id = $3 FOR UPDATE NOWAIT"},
    {"set_lock_timeout", "SELECT set_config('lock_timeout', $1, true)"},
    {"advisory_xact_lock", "SELECT pg_advisory_xact_lock($1)"},
    {"try_advisory_xact_lock", "SELECT pg_try_advisory_xact_lock($1)"},
    {"advisory_lock", "SELECT pg_advisory_lock($1)"},
    {"try_advisory_lock", "SELECT pg_try_advisory_lock($1)"},
    {"advisory_unlock", "SELECT pg_advisory_unlock($1)"},
    // The lease: one autocommitted statement. SET's right-hand side sees the old
    // row (after the row-lock re-check), so lease_taken_over names the owner
    // whose expired lease we took: a steal when that owner is still working.
    {"lease_acquire_db",
     "UPDATE lockbench.rows SET locked_at = now(), lock_owner = $4, lease_token = lease_token + 1, "
     "lease_taken_over = CASE WHEN locked_at IS NULL THEN NULL ELSE lock_owner END "
     "WHERE run = $1 AND tbl = $2 AND id = $3 AND (locked_at IS NULL OR locked_at < now() - $5::interval) "
     "RETURNING lease_taken_over, lease_token"},
    // The same with the application's clock ($6, epoch seconds) instead of now().
    {"lease_acquire_app",
     "UPDATE lockbench.rows SET locked_at = to_timestamp($6::float8), lock_owner = $4, lease_token = lease_token + 1, "
     "lease_taken_over = CASE WHEN locked_at IS NULL THEN NULL ELSE lock_owner END "
     "WHERE run = $1 AND tbl = $2 AND id = $3 AND "
     "(locked_at IS NULL OR locked_at < to_timestamp($6::float8) - $5::interval) "
     "RETURNING lease_taken_over, lease_token"},
    // The first article's lease: locked_at = NOW() from the database, compared
    // with :staleBefore = the application's clock minus the TTL ($6 - $5).
    {"lease_acquire_article",
     "UPDATE lockbench.rows SET locked_at = now(), lock_owner = $4, lease_token = lease_token + 1, "
     "lease_taken_over = CASE WHEN locked_at IS NULL THEN NULL ELSE lock_owner END "
     "WHERE run = $1 AND tbl = $2 AND id = $3 AND "
     "(locked_at IS NULL OR locked_at < to_timestamp($6::float8) - $5::interval) "
     "RETURNING lease_taken_over, lease_token"},
    {"lease_release", "UPDATE lockbench.rows SET locked_at = NULL, lock_owner = NULL "
                      "WHERE run = $1 AND tbl = $2 AND id = $3 AND lock_owner = $4"},
    // The article's release: no owner check, whoever holds the lease loses it.
    {"lease_release_article",
     "UPDATE lockbench.rows SET locked_at = NULL, lock_owner = NULL WHERE run = $1 AND tbl = $2 AND id = $3"},
    // The renewal (ShedLock's extend): only our lease, and only while its TTL holds.
    {"lease_extend", "UPDATE lockbench.rows SET locked_at = now() "
                     "WHERE run = $1 AND tbl = $2 AND id = $3 AND lock_owner = $4 AND locked_at >= now() - $5::interval"},
    {"select_one", "SELECT 1"},
    // The outbox poller's claim: due rows (num = due time, negative = done) in
    // key order, rows locked by other transactions skipped, not waited for.
    {"claim_due",
     "SELECT id, text, ref, num, version FROM lockbench.rows WHERE run = $1 AND tbl = $2 AND num BETWEEN 0 AND $3 "
     "ORDER BY id LIMIT $4 FOR UPDATE SKIP LOCKED"},
    {"count_undone", "SELECT count(*) FROM lockbench.rows WHERE run = $1 AND tbl = $2 AND num >= 0"},
    // The fault conn_lost: this session ends its own backend (and nothing else):
    // the server rolls its transaction back and releases its locks.
    {"terminate_self", "SELECT pg_terminate_backend(pg_backend_pid())"},
};

// The hot path (issue 14): the lease statements, the two a row-lease request
// runs every time, go to libpq directly. libpqxx 6 polls for notifications
// (PQconsumeInput: one more recv() that finds nothing) when a nontransaction
// begins and after every statement, so an autocommitted statement cost five
// system calls (send, poll, recv, recv, recv) against pgbench's three. These
// are prepared with PQprepare when the session opens and never through libpqxx.
constexpr const char* kHotStatements[] = {"lease_acquire_db", "lease_release"};
constexpr int kNotHot = -1;
int hot_index(const char* name) {
  for (int i = 0; i < static_cast<int>(std::size(kHotStatements)); ++i)
    if (std::strcmp(kHotStatements[i], name) == 0) return i;
  return kNotHot;
}

// libpqxx 6 hands its PGconn to large objects only (largeobject::raw_connection);
// this is the one place lockbench reaches it.
struct LibpqHandle : pqxx::largeobject {
  static pqxx::internal::pq::PGconn* of(const pqxx::dbtransaction& tx) { return raw_connection(tx); }
};

const char* sql_of(const char* name) {
  for (const auto& st : kStatements)
    if (std::string_view(st.name) == name) return st.sql;
  throw DbError(std::string("no statement named ") + name);
}

// Thrown inside guarded() for SQLSTATE 55P03 (lock_not_available): NOWAIT
// found the row locked, or lock_timeout expired.
struct LockNotAvailable {};

std::string interval_of(Duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(d).count()) + " microseconds";
}

// An integer as text for a libpq parameter, in a caller's buffer (NUL-terminated).
template <class Int>
const char* int_text(Int v, char (&buf)[24]) {
  *std::to_chars(buf, buf + sizeof buf - 1, v).ptr = '\0';
  return buf;
}

}  // namespace

// libpqxx prints server notices to stderr by default; pg_advisory_unlock's
// "you don't own a lock" WARNING is an expected outcome here, counted instead.
class PgConn::Quiet final : public pqxx::errorhandler {
 public:
  explicit Quiet(pqxx::connection_base& c) : pqxx::errorhandler(c) {}
  bool operator()(const char[]) noexcept override { return false; }
};

std::unique_ptr<pqxx::connection> open_session(const std::string& url, const std::string& application_name) {
  try {
    return std::make_unique<pqxx::connection>(application_name.empty() ? url
                                                                        : url_with_application_name(url, application_name));
  } catch (const std::exception& e) {
    std::string reason = redact_driver_message(e.what(), url);
    while (!reason.empty() && (reason.back() == '\n' || reason.back() == ' ')) reason.pop_back();
    throw DbError(reason);
  }
}

bool behind_pooler(pqxx::connection& c) {
  pqxx::nontransaction tx(c);
  return tx.exec1("SELECT pg_backend_pid()")[0].as<int>() != c.backendpid();
}

bool unnamed_statements(const std::string& statements, const std::string& pgbouncer, bool pooler_found) {
  if (statements == "prepared") return false;
  if (statements == "unnamed") return true;
  return pgbouncer == "transaction" || pooler_found;
}

void create_schema(pqxx::connection& c) {
  pqxx::nontransaction tx(c);
  // Bounded: a stray session holding a lock on our table must not hang the run.
  tx.exec("SET lock_timeout = '10s'");
  // Someone else's schema of the same name is never touched: it must be empty
  // or hold exactly what lockbench makes, under lockbench's comment.
  const pqxx::result schema = tx.exec_params(
      "SELECT obj_description(n.oid, 'pg_namespace') FROM pg_namespace n WHERE n.nspname = $1", std::string(kSchema));
  if (!schema.empty()) {
    const std::string comment = schema[0][0].is_null() ? "" : schema[0][0].as<std::string>();
    const pqxx::result foreign = tx.exec_params(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = $1 AND c.relkind IN ('r', 'v', 'm', 'f', 'p', 'S') AND c.relname NOT IN ($2, $3) ORDER BY 1",
        std::string(kSchema), std::string(kRowsTable), std::string(kRunsTable));
    if (comment != kSchemaComment || !foreign.empty()) {
      std::string names;
      for (const auto& row : foreign) names += (names.empty() ? "" : ", ") + row[0].as<std::string>();
      throw SchemaNotOurs("schema " + std::string(kSchema) + " exists and was not made by lockbench" +
                          (names.empty() ? "" : " (it holds " + names + ")") +
                          "; lockbench uses only its own schema: rename or drop that one, or use another database");
    }
  } else {
    tx.exec("CREATE SCHEMA IF NOT EXISTS lockbench");
    tx.exec("COMMENT ON SCHEMA lockbench IS " + c.quote(std::string(kSchemaComment)));
  }
  tx.exec(
      "CREATE TABLE IF NOT EXISTS lockbench.rows ("
      " run bigint NOT NULL,"
      " tbl smallint NOT NULL,"
      " id bigint NOT NULL,"
      " text text NOT NULL DEFAULT '',"
      " ref text NOT NULL DEFAULT '',"
      " num bigint NOT NULL DEFAULT 0,"
      " version bigint NOT NULL DEFAULT 0,"
      " locked_at timestamptz,"
      " lock_owner text,"
      " lease_taken_over text,"
      " lease_token bigint NOT NULL DEFAULT 0,"
      " seq bigint NOT NULL DEFAULT 0,"
      " touched_at timestamptz,"
      " PRIMARY KEY (run, tbl, id, seq))");
  // A table made before the second code path's column (Conn::save_entity):
  // added only when missing, so a shared table is not locked for nothing.
  if (tx.exec("SELECT 1 FROM information_schema.columns WHERE table_schema = 'lockbench' AND table_name = 'rows' "
              "AND column_name = 'touched_at'")
          .empty())
    tx.exec("ALTER TABLE lockbench.rows ADD COLUMN IF NOT EXISTS touched_at timestamptz");
  // Who owns a run's rows: a runner that is killed leaves its record, and the
  // next run reclaims the rows of a runner proven gone (leftovers.hpp).
  tx.exec(
      "CREATE TABLE IF NOT EXISTS lockbench.runs ("
      " run bigint PRIMARY KEY,"
      " run_id text NOT NULL,"
      " host text NOT NULL,"
      " pid integer NOT NULL,"
      " started_at timestamptz NOT NULL DEFAULT now(),"
      " heartbeat_at timestamptz NOT NULL DEFAULT now())");
  // A table made by an earlier lockbench (key (run, tbl, id), no seq): its rows
  // are per run and transient, so widening the key loses nothing. Unique
  // tables keep seq = 0, so (run, tbl, id) stays unique for them.
  const pqxx::result pk = tx.exec(
      "SELECT c.conname, bool_or(a.attname = 'seq') FROM pg_constraint c "
      "JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey) "
      "WHERE c.conrelid = 'lockbench.rows'::regclass AND c.contype = 'p' GROUP BY c.conname");
  if (!pk.empty() && !pk[0][1].as<bool>()) {
    tx.exec("ALTER TABLE lockbench.rows ADD COLUMN IF NOT EXISTS seq bigint NOT NULL DEFAULT 0");
    tx.exec("ALTER TABLE lockbench.rows DROP CONSTRAINT " + c.quote_name(pk[0][0].as<std::string>()) +
            ", ADD PRIMARY KEY (run, tbl, id, seq)");
  }
}

namespace {
// Which tables of a run have a unique key, as seed_rows was told (PgConn::insert
// reads it; a run it was not told about has unique tables only).
std::mutex tables_mu;
std::map<std::int64_t, std::vector<bool>> unique_tables;  // GUARDED_BY(tables_mu)

bool table_is_unique(std::int64_t run, Table t) {
  std::lock_guard lock(tables_mu);
  const auto it = unique_tables.find(run);
  if (it == unique_tables.end() || t < 0 || static_cast<std::size_t>(t) >= it->second.size()) return true;
  return it->second[static_cast<std::size_t>(t)];
}
}  // namespace

void seed_rows(pqxx::connection& c, std::int64_t run, const std::vector<TableSpec>& tables, int keys) {
  {
    std::vector<bool> unique;
    for (const auto& t : tables) unique.push_back(t.unique);
    std::lock_guard lock(tables_mu);
    unique_tables[run] = std::move(unique);
  }
  pqxx::work tx(c);
  tx.exec("SELECT set_config('lock_timeout', '10s', true)");
  tx.exec_params("DELETE FROM lockbench.rows WHERE run = $1", run);  // a reused run id starts clean
  for (std::size_t t = 0; t < tables.size(); ++t) {
    if (!tables[t].seed) continue;
    tx.exec_params(
        "INSERT INTO lockbench.rows (run, tbl, id, text, num) "
        "SELECT $1, $2, k, $3 || k, $4 FROM generate_series(1, $5::bigint) AS k",
        run, static_cast<int>(t), tables[t].seed->text_prefix, tables[t].seed->num, keys);
  }
  tx.commit();
}

std::vector<StoredRow> stored_rows(pqxx::connection& c, std::int64_t run, const std::vector<TableSpec>& tables) {
  std::vector<StoredRow> out;
  pqxx::nontransaction tx(c);
  const pqxx::result r = tx.exec_params(
      "SELECT tbl, id, text, ref, num, version FROM lockbench.rows WHERE run = $1 ORDER BY tbl, id", run);
  for (const auto& row : r) {
    const auto t = row[0].as<int>();
    const auto version = row[5].as<std::int64_t>();
    const bool seeded = t >= 0 && static_cast<std::size_t>(t) < tables.size() && tables[static_cast<std::size_t>(t)].seed;
    if (seeded && version == 0) continue;  // untouched seeded rows agree with the partner by construction
    out.push_back({t, row[1].as<Key>(),
                   Row{true, row[2].as<std::string>(), row[3].as<std::string>(), row[4].as<std::int64_t>(), version}});
  }
  return out;
}

void drop_rows(pqxx::connection& c, std::int64_t run) {
  {
    std::lock_guard lock(tables_mu);
    unique_tables.erase(run);
  }
  pqxx::nontransaction tx(c);
  tx.exec_params("DELETE FROM lockbench.rows WHERE run = $1", run);
}

std::int64_t advisory_key(std::int64_t run, Key key) {
  // splitmix64's finaliser over (run, key): two runs on one server never share
  // a lock, and the key's bits stay spread over all 64.
  auto z = static_cast<std::uint64_t>(run) * 0x9E3779B97F4A7C15ULL ^ static_cast<std::uint64_t>(key);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return static_cast<std::int64_t>(z ^ (z >> 31));
}

namespace {
std::uint64_t unshift(std::uint64_t y, int s) {  // the inverse of x ^ (x >> s)
  std::uint64_t x = y;
  for (int i = 0; i < 64 / s + 1; ++i) x = y ^ (x >> s);
  return x;
}
std::uint64_t inverse(std::uint64_t c) {  // of an odd c, modulo 2^64 (Newton)
  std::uint64_t x = c;
  for (int i = 0; i < 6; ++i) x *= 2 - c * x;
  return x;
}
}  // namespace

bool is_run_advisory_key(std::int64_t run, std::int64_t lock_key) {
  auto z = unshift(static_cast<std::uint64_t>(lock_key), 31);
  z = unshift(z * inverse(0x94D049BB133111EBULL), 27);
  z = unshift(z * inverse(0xBF58476D1CE4E5B9ULL), 30);
  const std::uint64_t key = z ^ static_cast<std::uint64_t>(run) * 0x9E3779B97F4A7C15ULL;
  return key < (std::uint64_t{1} << 40);  // lockbench's keys (row_key's bound); a stranger's lands here once in 2^24
}

PgConn::PgConn(Pool& pool, int id, std::string url, std::int64_t run)
    : pool_(pool), id_(id), url_(std::move(url)), run_(run) {
  reconnect();
}

PgConn::~PgConn() {
  tx_.reset();
  quiet_.reset();
  conn_.reset();
}

void PgConn::reconnect() {
  tx_.reset();
  quiet_.reset();
  raw_ = nullptr;
  conn_.reset();
  broken_ = true;
  conn_ = open_session(url_);
  try {
    quiet_ = std::make_unique<Quiet>(*conn_);
    unnamed_ = pool_.config().unnamed_statements;
    {
      pqxx::work tx(*conn_);  // one round trip per session: reaches the PGconn for exec_hot
      raw_ = LibpqHandle::of(tx);
      tx.abort();
    }
    // With --statements unnamed nothing is prepared: exec() and exec_hot send the SQL each time.
    // Otherwise each statement is prepared on its first use, as libpqxx does (the hot ones by
    // exec_hot): behind transaction pooling a named statement then fails in the request that
    // uses it, as a JDBC driver's would, and not when the pool opens.
    hot_prepared_ = 0;
    for (const auto& s : kStatements)
      if (!unnamed_ && hot_index(s.name) == kNotHot) conn_->prepare(s.name, s.sql);
    backend_pid_ = conn_->backendpid();
  } catch (const std::exception& e) {
    throw DbError(std::string("preparing statements: ") + e.what());
  }
  opened_at_ = std::chrono::steady_clock::now();
  broken_ = false;
}

Duration PgConn::now() const { return pool_.now(); }

// The one switch between the statement modes (--statements). prepared: the
// named statement prepared at connect, as always. unnamed: the same SQL as an
// unnamed statement (PQexecParams: parse, bind and execute in one sync), which
// a backend PgBouncer hands out per transaction can run (1.18 does not carry
// named prepared statements across backends).
template <class... Args>
pqxx::result PgConn::exec(pqxx::transaction_base& tx, const char* name, Args&&... args) {
  if (unnamed_) return tx.exec_params(sql_of(name), std::forward<Args>(args)...);
  return tx.exec_prepared(name, std::forward<Args>(args)...);
}

template <class... Args>
pqxx::row PgConn::exec1(pqxx::transaction_base& tx, const char* name, Args&&... args) {
  if (unnamed_) return tx.exec_params1(sql_of(name), std::forward<Args>(args)...);
  return tx.exec_prepared1(name, std::forward<Args>(args)...);
}

template <class F>
auto PgConn::guarded(F&& f) -> decltype(f()) {
  if (broken_) throw DbError("connection " + std::to_string(id_) + " is broken");
  VirtualThread::Blocking unmounted;  // a statement's round trip: the carrier is free unless pinned
  try {
    if (tx_ && cx_ && !rolling_back_ && fault_due(cx_->settings().db_faults.conn_lost)) {
      cx_->recorder().effects.db_fault(DbFault::conn_lost);
      cx_->trace("db.conn_lost", now(), now(), id_, "fault conn_lost: pg_terminate_backend(pg_backend_pid())");
      std::string reason = "the backend did not end";
      try {
        exec(*tx_, "terminate_self");  // throws: the server ends this session
      } catch (const std::exception& e) {
        reason = e.what();
      }
      broken_ = true;
      while (!reason.empty() && (reason.back() == '\n' || reason.back() == ' ')) reason.pop_back();
      throw DbError("database connection lost (fault conn_lost: pg_terminate_backend ended this session): " + reason);
    }
    return f();
  } catch (const pqxx::broken_connection& e) {
    broken_ = true;
    throw DbError(std::string("database connection lost: ") + e.what());
  } catch (const pqxx::in_doubt_error& e) {
    // Never retried: we cannot know whether the commit happened.
    broken_ = true;
    throw DbError(std::string("commit in doubt: ") + e.what());
  } catch (const pqxx::sql_error& e) {
    if (e.sqlstate() == "55P03") throw LockNotAvailable{};
    // class 08 (connection exception) and 57 (operator intervention, e.g.
    // pg_terminate_backend) end the session; so do 25P03/25P04 (the server's
    // idle_in_transaction_session_timeout / transaction_timeout, a FATAL).
    const std::string st = e.sqlstate();
    if (st == "53200")  // out of shared memory: the whole server's lock table is full
      throw DbError("SQLSTATE 53200 out of shared memory: PostgreSQL's shared lock table is full "
                    "(max_locks_per_transaction x max_connections; lockbench lint checks it)");
    if (st.rfind("08", 0) == 0 || st.rfind("57", 0) == 0 || st == "25P03" || st == "25P04" || !conn_->is_open())
      broken_ = true;
    throw DbError("SQLSTATE " + st + ": " + e.what());
  } catch (const pqxx::failure& e) {
    if (!conn_->is_open()) broken_ = true;
    throw DbError(e.what());
  }
}

bool PgConn::traced() const { return cx_ && cx_->recorder().tracing(); }

void PgConn::account(const char* step, Bucket b, Duration start, std::string detail) {
  note_step(step);
  if (!cx_) return;
  const Duration end = now();
  (b == Bucket::lock ? cx_->split().lock_wait : cx_->split().db) += end - start;
  cx_->trace(step, start, end, id_, std::move(detail));
}

void PgConn::set_lock_timeout(pqxx::work& tx, Duration timeout) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count();
  // lock_timeout 0 means "no bound"; a positive bound below 1 ms rounds up.
  exec(tx, "set_lock_timeout", timeout > Duration::zero() ? std::to_string(std::max<long long>(ms, 1)) : "0");
}

Task<void> PgConn::begin() {
  const Duration t0 = now();
  guarded([&] { tx_.emplace(*conn_); });
  account("db.begin", Bucket::db, t0);
  co_return;
}

Task<void> PgConn::commit() {
  const Duration t0 = now();
  guarded([&] {
    if (!tx_) throw DbError("commit without a transaction");
    struct Reset {
      std::optional<pqxx::work>& tx;
      ~Reset() { tx.reset(); }
    } reset{tx_};
    if (cx_ && fault_due(cx_->settings().db_faults.commit_fail)) {
      // The fault commit_fail: the transaction is rolled back instead of committed.
      tx_->abort();
      cx_->recorder().effects.db_fault(DbFault::commit_fail);
      account("db.commit", Bucket::db, t0, "fault commit_fail: rolled back");
      throw DbError("COMMIT failed (fault commit_fail): the transaction was rolled back");
    }
    tx_->commit();
  });
  account("db.commit", Bucket::db, t0);
  co_return;
}

Task<void> PgConn::rollback() {
  const Duration t0 = now();
  rolling_back_ = true;  // not a fault site: the transaction ends either way
  struct Clear {
    bool& flag;
    ~Clear() { flag = false; }
  } clear{rolling_back_};
  guarded([&] {
    if (!tx_) return;
    struct Reset {
      std::optional<pqxx::work>& tx;
      ~Reset() { tx.reset(); }
    } reset{tx_};
    tx_->abort();
  });
  account("db.rollback", Bucket::db, t0);
  co_return;
}

Task<LockResult> PgConn::lock_row(Table t, Key key, LockMode mode) {
  const Duration t0 = now();
  LockResult r = LockResult::acquired;
  try {
    guarded([&] {
      if (!tx_) throw DbError("lock_row outside a transaction");
      pqxx::result rows;
      if (mode.wait == LockWait::wait) {
        set_lock_timeout(*tx_, mode.timeout);
        rows = exec(*tx_, "lock_row", run_, t, key);
      } else {
        rows = exec(*tx_, "lock_row_nowait", run_, t, key);
      }
      if (rows.empty()) r = LockResult::no_row;  // nothing to lock: the record does not exist (yet)
    });
  } catch (const LockNotAvailable&) {
    r = mode.wait == LockWait::wait ? LockResult::timed_out : LockResult::busy;
  }
  const char* step = r == LockResult::acquired ? "lock.acquire" : r == LockResult::no_row ? "lock.none" : "lock.denied";
  account(step, Bucket::lock, t0, "row " + std::to_string(key) + (r == LockResult::no_row ? ": no row, nothing locked" : ""));
  co_return r;
}

Task<LockResult> PgConn::advisory_xact_lock(Key key, LockMode mode) {
  const Duration t0 = now();
  LockResult r = LockResult::acquired;
  try {
    guarded([&] {
      if (!tx_) throw DbError("advisory_xact_lock outside a transaction");
      if (mode.wait == LockWait::wait) {
        set_lock_timeout(*tx_, mode.timeout);
        exec(*tx_, "advisory_xact_lock", advisory_key(run_, key));
      } else if (!exec1(*tx_, "try_advisory_xact_lock", advisory_key(run_, key))[0].as<bool>()) {
        r = LockResult::busy;
      }
    });
  } catch (const LockNotAvailable&) {
    r = mode.wait == LockWait::wait ? LockResult::timed_out : LockResult::busy;
  }
  account(r == LockResult::acquired ? "lock.acquire" : "lock.denied", Bucket::lock, t0,
          "advisory xact " + std::to_string(key));
  co_return r;
}

Task<LockResult> PgConn::advisory_lock(Key key, LockMode mode) {
  const Duration t0 = now();
  LockResult r = LockResult::acquired;
  try {
    guarded([&] {
      if (mode.wait == LockWait::wait) {
        // A bounded wait needs SET LOCAL, hence a short transaction of its own
        // when none is open; the session lock outlives its commit.
        if (tx_) {
          set_lock_timeout(*tx_, mode.timeout);
          exec(*tx_, "advisory_lock", advisory_key(run_, key));
        } else {
          pqxx::work tx(*conn_);
          set_lock_timeout(tx, mode.timeout);
          exec(tx, "advisory_lock", advisory_key(run_, key));
          tx.commit();
        }
      } else {
        bool got = false;
        if (tx_) {
          got = exec1(*tx_, "try_advisory_lock", advisory_key(run_, key))[0].as<bool>();
        } else {
          pqxx::nontransaction tx(*conn_);
          got = exec1(tx, "try_advisory_lock", advisory_key(run_, key))[0].as<bool>();
        }
        if (!got) r = LockResult::busy;
      }
    });
  } catch (const LockNotAvailable&) {
    r = mode.wait == LockWait::wait ? LockResult::timed_out : LockResult::busy;
  }
  if (r == LockResult::acquired && cx_) cx_->locks().session_lock_granted(key, cx_->request().id);
  account(r == LockResult::acquired ? "lock.acquire" : "lock.denied", Bucket::lock, t0,
          "advisory session " + std::to_string(key));
  co_return r;
}

Task<bool> PgConn::advisory_unlock(Key key) {
  const Duration t0 = now();
  const bool ok = guarded([&] {
    if (tx_) return exec1(*tx_, "advisory_unlock", advisory_key(run_, key))[0].as<bool>();
    pqxx::nontransaction tx(*conn_);
    return exec1(tx, "advisory_unlock", advisory_key(run_, key))[0].as<bool>();
  });
  if (ok && cx_) cx_->locks().session_lock_unlocked(key, cx_->request().id);
  account("lock.release", Bucket::lock, t0, ok ? "advisory " + std::to_string(key) : "not held by this session");
  co_return ok;
}

struct PgConn::RawResult {
  std::unique_ptr<PGresult, void (*)(PGresult*)> r{nullptr, PQclear};
};

PgConn::RawResult PgConn::exec_hot(const char* name, const char* const* params, int n) {
  RawResult out;
  // A failed result becomes libpqxx's exception, so guarded() treats it as every other statement's.
  const auto ok_or_throw = [&] {
    const ExecStatusType st = out.r ? PQresultStatus(out.r.get()) : PGRES_FATAL_ERROR;
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return;
    std::string msg = out.r ? PQresultErrorMessage(out.r.get()) : "";
    if (msg.empty()) msg = PQerrorMessage(raw_);
    const char* sqlstate = out.r ? PQresultErrorField(out.r.get(), PG_DIAG_SQLSTATE) : nullptr;
    if (PQstatus(raw_) != CONNECTION_OK) throw pqxx::broken_connection(msg);
    throw pqxx::sql_error(msg, name, sqlstate);
  };
  const unsigned bit = 1u << hot_index(name);
  if (!unnamed_ && !(hot_prepared_ & bit)) {  // prepared on first use (see reconnect)
    out.r.reset(PQprepare(raw_, name, sql_of(name), 0, nullptr));
    ok_or_throw();
    hot_prepared_ |= bit;
  }
  out.r.reset(unnamed_ ? PQexecParams(raw_, sql_of(name), n, nullptr, params, nullptr, nullptr, 0)
                      : PQexecPrepared(raw_, name, n, params, nullptr, nullptr, 0));
  ok_or_throw();
  return out;
}

Task<LeaseResult> PgConn::lease_acquire(Table t, Key key, std::string_view owner, Duration ttl, LeaseClock clock,
                                        LeaseSql sql) {
  const Duration t0 = now();
  LeaseResult out;
  // Autocommitted either way: the lease is visible at once. (Inside an open
  // transaction both refuse, as a libpqxx nontransaction beside it does.)
  if (clock == LeaseClock::database && sql == LeaseSql::owned && !tx_) {
    guarded([&] {  // the hot path, straight through libpq
      char run_buf[24], t_buf[24], key_buf[24], ttl_buf[48];
      owner_text_.assign(owner);
      const auto ttl_us = std::chrono::duration_cast<std::chrono::microseconds>(ttl).count();
      char* end = std::to_chars(ttl_buf, ttl_buf + 24, ttl_us).ptr;
      std::memcpy(end, " microseconds", sizeof " microseconds");  // as interval_of(ttl)
      const char* params[] = {int_text(run_, run_buf), int_text(t, t_buf), int_text(key, key_buf),
                              owner_text_.c_str(), ttl_buf};
      const RawResult r = exec_hot("lease_acquire_db", params, 5);
      if (PQntuples(r.r.get()) == 1) {
        out.acquired = true;
        const char* token = PQgetvalue(r.r.get(), 0, 1);
        std::from_chars(token, token + std::strlen(token), out.token);
        if (!PQgetisnull(r.r.get(), 0, 0)) {
          out.took_over_expired = true;
          out.previous_owner = PQgetvalue(r.r.get(), 0, 0);
        }
      }
    });
  } else {
    guarded([&] {
      pqxx::nontransaction tx(*conn_);
      const Duration skew = cx_ ? cx_->settings().clock_skew : Duration::zero();
      const double app_now_s =
          std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch() + skew).count();
      const pqxx::result r = exec(tx, sql == LeaseSql::article ? "lease_acquire_article" : "lease_acquire_app", run_, t,
                                  key, std::string(owner), interval_of(ttl), app_now_s);
      if (r.size() == 1) {
        out.acquired = true;
        out.token = r[0][1].as<std::uint64_t>();
        if (!r[0][0].is_null()) {
          out.took_over_expired = true;
          out.previous_owner = r[0][0].as<std::string>();
        }
      }
    });
  }
  account(out.acquired ? "lock.acquire" : "lock.denied", Bucket::lock, t0,
          traced() ? "lease " + std::to_string(key) + (out.took_over_expired ? " taken over from " + out.previous_owner : "")
                   : std::string());
  co_return out;
}

Task<bool> PgConn::lease_release(Table t, Key key, std::string_view owner, LeaseSql sql) {
  const Duration t0 = now();
  const bool ok = guarded([&] {
    if (sql == LeaseSql::article) {
      const auto release = [&](pqxx::transaction_base& tx) {
        return exec(tx, "lease_release_article", run_, t, key).affected_rows() == 1;
      };
      if (tx_) return release(*tx_);
      pqxx::nontransaction tx(*conn_);
      return release(tx);
    }
    // The hot path, straight through libpq: inside the open transaction if there is one.
    char run_buf[24], t_buf[24], key_buf[24];
    owner_text_.assign(owner);
    const char* params[] = {int_text(run_, run_buf), int_text(t, t_buf), int_text(key, key_buf), owner_text_.c_str()};
    const RawResult r = exec_hot("lease_release", params, 4);
    return std::strcmp(PQcmdTuples(r.r.get()), "1") == 0;
  });
  account("lock.release", Bucket::lock, t0,
          traced() ? (ok ? "lease " + std::to_string(key) : "lease no longer ours") : std::string());
  co_return ok;
}

Task<bool> PgConn::lease_extend(Table t, Key key, std::string_view owner, Duration ttl) {
  const Duration t0 = now();
  const bool ok = guarded([&] {
    pqxx::nontransaction tx(*conn_);  // autocommitted: the new expiry is visible at once
    return tx.exec_prepared("lease_extend", run_, t, key, std::string(owner), interval_of(ttl)).affected_rows() == 1;
  });
  account("lock.extend", Bucket::lock, t0, "lease " + std::to_string(key) + (ok ? "" : ": lost"));
  co_return ok;
}

// Runs f on the open transaction, or on an autocommitted one of its own.
template <class F>
auto PgConn::in_tx(F&& f) -> decltype(f(std::declval<pqxx::transaction_base&>())) {
  if (tx_) return f(*tx_);
  pqxx::nontransaction tx(*conn_);
  return f(tx);
}

Task<Row> PgConn::read(Table t, Key key) {
  const Duration t0 = now();
  Row row;
  guarded([&] {
    in_tx([&](pqxx::transaction_base& tx) {
      const pqxx::result r = exec(tx, "read", run_, t, key);
      if (!r.empty())
        row = Row{true, r[0][0].as<std::string>(), r[0][1].as<std::string>(), r[0][2].as<std::int64_t>(),
                  r[0][3].as<std::int64_t>()};
    });
  });
  account("db.read", Bucket::db, t0);
  co_return row;
}

Task<Entity> PgConn::load_entity(Table t, Key key) {
  const Duration t0 = now();
  Entity e;
  guarded([&] {
    in_tx([&](pqxx::transaction_base& tx) {
      const pqxx::result r = exec(tx, "load_entity", run_, t, key);
      if (r.empty()) return;
      e.row = Row{true, r[0][0].as<std::string>(), r[0][1].as<std::string>(), r[0][2].as<std::int64_t>(),
                  r[0][3].as<std::int64_t>()};
      e.locked_at = r[0][4].as<std::string>();
      e.lock_owner = r[0][5].as<std::string>();
    });
  });
  account("entity.load", Bucket::db, t0, traced() ? "lock_owner " + (e.lock_owner.empty() ? std::string("NULL") : e.lock_owner) : std::string());
  co_return e;
}

Task<EntitySave> PgConn::save_entity(Table t, Key key, const Entity& e, bool lock_mapped) {
  const Duration t0 = now();
  EntitySave out;
  guarded([&] {
    in_tx([&](pqxx::transaction_base& tx) {
      if (!lock_mapped) {
        out.found = exec(tx, "save_entity_own", run_, t, key).affected_rows() == 1;
        return;
      }
      const pqxx::result r = exec(tx, "save_entity_mapped", run_, t, key, e.row.text, e.row.ref, e.row.num, e.locked_at,
                                  e.lock_owner);
      out.found = r.size() == 1;
      out.lock_changed = out.found && r[0][0].as<bool>();
    });
  });
  account("entity.save", Bucket::db, t0,
          traced() ? std::string(lock_mapped ? "every field" : "touched_at") + (out.lock_changed ? ", wrote back a stale lock" : "")
                   : std::string());
  co_return out;
}

Task<std::int64_t> PgConn::count(Table t, Key key) {
  const Duration t0 = now();
  const std::int64_t n = guarded([&] {
    return in_tx([&](pqxx::transaction_base& tx) { return exec1(tx, "count", run_, t, key)[0].as<std::int64_t>(); });
  });
  account("db.read", Bucket::db, t0, "count " + std::to_string(n));
  co_return n;
}

Task<bool> PgConn::insert(Table t, Key key, const Row& v) {
  const Duration t0 = now();
  const bool unique = table_is_unique(run_, t);
  const bool ok = guarded([&] {
    return in_tx([&](pqxx::transaction_base& tx) {
      if (!unique) {
        const std::int64_t seq = (static_cast<std::int64_t>(id_ + 1) << 32) | ++insert_seq_;
        return exec(tx, "insert_multi", run_, t, key, v.text, v.ref, v.num, seq).affected_rows() == 1;
      }
      return exec(tx, "insert", run_, t, key, v.text, v.ref, v.num).affected_rows() == 1;
    });
  });
  account("db.insert", Bucket::db, t0, ok ? (unique ? "" : "no unique key") : "ON CONFLICT DO NOTHING, 0 rows");
  co_return ok;
}

Task<bool> PgConn::update(Table t, Key key, const Row& v, const Guard& guard) {
  const Duration t0 = now();
  const bool ok = guarded([&] {
    return in_tx([&](pqxx::transaction_base& tx) {
      pqxx::result r;
      switch (guard.kind) {
        case Guard::Kind::none: r = exec(tx, "update", run_, t, key, v.text, v.ref, v.num); break;
        case Guard::Kind::version:
          r = exec(tx, "update_if_version", run_, t, key, v.text, v.ref, v.num, guard.version);
          break;
        case Guard::Kind::lease_owner:
          r = exec(tx, "update_if_lease_owner", run_, t, key, v.text, v.ref, v.num, guard.owner);
          break;
      }
      return r.affected_rows() == 1;
    });
  });
  account("db.write", Bucket::db, t0, ok ? "" : guard.kind == Guard::Kind::version ? "version changed" : "0 rows");
  co_return ok;
}

bool PgConn::fault_due(double p) {
  if (p <= 0 || !cx_) return false;
  if (!fault_rng_) fault_rng_.emplace(derive_seed(cx_->settings().seed, "real.db_faults") ^ static_cast<std::uint64_t>(id_));
  return fault_rng_->uniform(0, 1) < p;
}

Task<Claim> PgConn::claim_due(Table t, std::int64_t due_at_most, int limit) {
  const Duration t0 = now();
  Claim out;
  guarded([&] {
    if (!tx_) throw DbError("claim_due outside a transaction");
    const pqxx::result r = exec(*tx_, "claim_due", run_, t, due_at_most, limit);
    for (const auto& row : r)
      out.rows.push_back({row[0].as<Key>(), Row{true, row[1].as<std::string>(), row[2].as<std::string>(),
                                                row[3].as<std::int64_t>(), row[4].as<std::int64_t>()}});
    out.undone = exec1(*tx_, "count_undone", run_, t)[0].as<std::int64_t>();
  });
  account("db.claim", Bucket::db, t0, "claimed " + std::to_string(out.rows.size()) + " of " + std::to_string(out.undone) + " undone");
  co_return out;
}

void PgConn::bind(RequestCtx* cx, Duration borrowed_at) {
  cx_ = cx;
  borrowed_ = true;
  borrowed_at_ = borrowed_at;
}

void PgConn::release() {
  if (!borrowed_) return;
  borrowed_ = false;
  const Duration borrowed_at = borrowed_at_;
  if (cx_) {
    const Duration t = now();
    cx_->split().held += t - borrowed_at;
    cx_->trace("pool.release", t, t, id_, "held " + format_duration(t - borrowed_at));
  }
  cx_ = nullptr;
  pool_.give_back(this, borrowed_at);
}

void PgConn::reset_for_pool() {
  // A session the server ended (a failed rollback says nothing) goes back broken, to be replaced.
  if (conn_ && !conn_->is_open()) broken_ = true;
  if (!tx_) return;
  try {
    tx_->abort();
  } catch (const std::exception&) {
    broken_ = true;
  }
  tx_.reset();
  if (!conn_->is_open()) broken_ = true;
}

bool PgConn::validate() {
  if (broken_) return false;
  try {
    pqxx::nontransaction tx(*conn_);
    tx.exec(";");  // an empty query: one round trip, nothing parsed
    return true;
  } catch (const std::exception&) {
    broken_ = true;
    return false;
  }
}

void PgConn::select_one() {
  guarded([&] {
    pqxx::nontransaction tx(*conn_);
    exec(tx, "select_one");
  });
}

}  // namespace lockbench::real

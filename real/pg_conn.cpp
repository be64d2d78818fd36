#include "real/pg_conn.hpp"

#include <chrono>

#include "core/scenario.hpp"
#include "core/redact.hpp"
#include "real/leftovers.hpp"
#include "real/pool.hpp"

namespace lockbench::real {

namespace {

// Every statement lockbench sends, by name. Values only ever travel as $n.
struct Statement {
  const char* name;
  const char* sql;
};
constexpr Statement kStatements[] = {
    {"read_user", "SELECT primary_identity, version FROM users WHERE id = $1"},
    {"write_user", "UPDATE users SET primary_identity = $2, version = version + 1 WHERE id = $1"},
    {"write_user_if_version",
     "UPDATE users SET primary_identity = $2, version = version + 1 WHERE id = $1 AND version = $3"},
    {"lock_row", "SELECT id FROM users WHERE id = $1 FOR UPDATE"},
    {"lock_row_nowait", "SELECT id FROM users WHERE id = $1 FOR UPDATE NOWAIT"},
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
     "UPDATE users SET locked_at = now(), lock_owner = $2, lease_token = lease_token + 1, "
     "lease_taken_over = CASE WHEN locked_at IS NULL THEN NULL ELSE lock_owner END "
     "WHERE id = $1 AND (locked_at IS NULL OR locked_at < now() - $3::interval) RETURNING lease_taken_over, lease_token"},
    // The same with the application's clock ($4, epoch seconds) instead of now().
    {"lease_acquire_app",
     "UPDATE users SET locked_at = to_timestamp($4::float8), lock_owner = $2, lease_token = lease_token + 1, "
     "lease_taken_over = CASE WHEN locked_at IS NULL THEN NULL ELSE lock_owner END "
     "WHERE id = $1 AND (locked_at IS NULL OR locked_at < to_timestamp($4::float8) - $3::interval) "
     "RETURNING lease_taken_over, lease_token"},
    {"lease_release", "UPDATE users SET locked_at = NULL, lock_owner = NULL WHERE id = $1 AND lock_owner = $2"},
    {"select_one", "SELECT 1"},
};

// Thrown inside guarded() for SQLSTATE 55P03 (lock_not_available): NOWAIT
// found the row locked, or lock_timeout expired.
struct LockNotAvailable {};

std::string interval_of(Duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(d).count()) + " microseconds";
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
    std::string reason = redact_secrets(e.what());
    while (!reason.empty() && (reason.back() == '\n' || reason.back() == ' ')) reason.pop_back();
    throw DbError(reason);
  }
}

void create_schema(pqxx::connection& c) {
  pqxx::nontransaction tx(c);
  tx.exec(
      "CREATE TABLE IF NOT EXISTS users ("
      " id bigint PRIMARY KEY,"
      " primary_identity text NOT NULL,"
      " version bigint NOT NULL DEFAULT 0,"
      " locked_at timestamptz,"
      " lock_owner text,"
      " lease_taken_over text,"
      " lease_token bigint NOT NULL DEFAULT 0)");
  // A table made by an earlier lockbench lacks the fencing token.
  tx.exec("ALTER TABLE users ADD COLUMN IF NOT EXISTS lease_token bigint NOT NULL DEFAULT 0");
}

void reset_users(pqxx::connection& c, int keys, int identities_per_person) {
  // identities_of(k)[0] is "<provider>|u<k>": one prefix, then the key.
  const std::string first = identities_of(1, identities_per_person).front();
  const std::string prefix = first.substr(0, first.size() - 1);
  pqxx::work tx(c);
  // Bounded: a stray session idle in a transaction on users must not hang the run.
  tx.exec("SELECT set_config('lock_timeout', '10s', true)");
  tx.exec("TRUNCATE users");
  tx.exec_params("INSERT INTO users (id, primary_identity) SELECT k, $2 || k FROM generate_series(1, $1::bigint) AS k",
                 keys, prefix);
  tx.commit();
}

PgConn::PgConn(Pool& pool, int id, std::string url) : pool_(pool), id_(id), url_(std::move(url)) { reconnect(); }

PgConn::~PgConn() {
  tx_.reset();
  quiet_.reset();
  conn_.reset();
}

void PgConn::reconnect() {
  tx_.reset();
  quiet_.reset();
  conn_.reset();
  broken_ = true;
  conn_ = open_session(url_);
  try {
    quiet_ = std::make_unique<Quiet>(*conn_);
    for (const auto& s : kStatements) conn_->prepare(s.name, s.sql);
    backend_pid_ = conn_->backendpid();
  } catch (const std::exception& e) {
    throw DbError(std::string("preparing statements: ") + e.what());
  }
  opened_at_ = std::chrono::steady_clock::now();
  broken_ = false;
}

Duration PgConn::now() const { return pool_.now(); }

template <class F>
auto PgConn::guarded(F&& f) -> decltype(f()) {
  if (broken_) throw DbError("connection " + std::to_string(id_) + " is broken");
  try {
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
    // pg_terminate_backend) end the session.
    const std::string st = e.sqlstate();
    if (st.rfind("08", 0) == 0 || st.rfind("57", 0) == 0 || !conn_->is_open()) broken_ = true;
    throw DbError("SQLSTATE " + st + ": " + e.what());
  } catch (const pqxx::failure& e) {
    if (!conn_->is_open()) broken_ = true;
    throw DbError(e.what());
  }
}

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
  tx.exec_prepared("set_lock_timeout", timeout > Duration::zero() ? std::to_string(std::max<long long>(ms, 1)) : "0");
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
    tx_->commit();
  });
  account("db.commit", Bucket::db, t0);
  co_return;
}

Task<void> PgConn::rollback() {
  const Duration t0 = now();
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

Task<LockResult> PgConn::lock_row(Key key, LockMode mode) {
  const Duration t0 = now();
  LockResult r = LockResult::acquired;
  try {
    guarded([&] {
      if (!tx_) throw DbError("lock_row outside a transaction");
      if (mode.wait == LockWait::wait) {
        set_lock_timeout(*tx_, mode.timeout);
        tx_->exec_prepared("lock_row", key);
      } else {
        tx_->exec_prepared("lock_row_nowait", key);
      }
    });
  } catch (const LockNotAvailable&) {
    r = mode.wait == LockWait::wait ? LockResult::timed_out : LockResult::busy;
  }
  account(r == LockResult::acquired ? "lock.acquire" : "lock.denied", Bucket::lock, t0, "row " + std::to_string(key));
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
        tx_->exec_prepared("advisory_xact_lock", key);
      } else if (!tx_->exec_prepared1("try_advisory_xact_lock", key)[0].as<bool>()) {
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
          tx_->exec_prepared("advisory_lock", key);
        } else {
          pqxx::work tx(*conn_);
          set_lock_timeout(tx, mode.timeout);
          tx.exec_prepared("advisory_lock", key);
          tx.commit();
        }
      } else {
        bool got = false;
        if (tx_) {
          got = tx_->exec_prepared1("try_advisory_lock", key)[0].as<bool>();
        } else {
          pqxx::nontransaction tx(*conn_);
          got = tx.exec_prepared1("try_advisory_lock", key)[0].as<bool>();
        }
        if (!got) r = LockResult::busy;
      }
    });
  } catch (const LockNotAvailable&) {
    r = mode.wait == LockWait::wait ? LockResult::timed_out : LockResult::busy;
  }
  account(r == LockResult::acquired ? "lock.acquire" : "lock.denied", Bucket::lock, t0,
          "advisory session " + std::to_string(key));
  co_return r;
}

Task<bool> PgConn::advisory_unlock(Key key) {
  const Duration t0 = now();
  const bool ok = guarded([&] {
    if (tx_) return tx_->exec_prepared1("advisory_unlock", key)[0].as<bool>();
    pqxx::nontransaction tx(*conn_);
    return tx.exec_prepared1("advisory_unlock", key)[0].as<bool>();
  });
  account("lock.release", Bucket::lock, t0, ok ? "advisory " + std::to_string(key) : "not held by this session");
  co_return ok;
}

Task<LeaseResult> PgConn::lease_acquire(Key key, std::string_view owner, Duration ttl, LeaseClock clock) {
  const Duration t0 = now();
  LeaseResult out;
  guarded([&] {
    pqxx::nontransaction tx(*conn_);  // autocommitted: the lease is visible at once
    pqxx::result r;
    if (clock == LeaseClock::database) {
      r = tx.exec_prepared("lease_acquire_db", key, std::string(owner), interval_of(ttl));
    } else {
      const Duration skew = cx_ ? cx_->settings().clock_skew : Duration::zero();
      const double app_now_s =
          std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch() + skew).count();
      r = tx.exec_prepared("lease_acquire_app", key, std::string(owner), interval_of(ttl), app_now_s);
    }
    if (r.size() == 1) {
      out.acquired = true;
      out.token = r[0][1].as<std::uint64_t>();
      if (!r[0][0].is_null()) {
        out.took_over_expired = true;
        out.previous_owner = r[0][0].as<std::string>();
      }
    }
  });
  account(out.acquired ? "lock.acquire" : "lock.denied", Bucket::lock, t0,
          "lease " + std::to_string(key) + (out.took_over_expired ? " taken over from " + out.previous_owner : ""));
  co_return out;
}

Task<bool> PgConn::lease_release(Key key, std::string_view owner) {
  const Duration t0 = now();
  const bool ok = guarded([&] {
    if (tx_) return tx_->exec_prepared("lease_release", key, std::string(owner)).affected_rows() == 1;
    pqxx::nontransaction tx(*conn_);
    return tx.exec_prepared("lease_release", key, std::string(owner)).affected_rows() == 1;
  });
  account("lock.release", Bucket::lock, t0, ok ? "lease " + std::to_string(key) : "lease no longer ours");
  co_return ok;
}

Task<UserRow> PgConn::read_user(Key key) {
  const Duration t0 = now();
  UserRow row;
  guarded([&] {
    const auto read = [&](pqxx::transaction_base& tx) {
      const pqxx::result r = tx.exec_prepared("read_user", key);
      if (r.size() == 1) row = {true, r[0][0].as<std::string>(), r[0][1].as<std::int64_t>()};
    };
    if (tx_) {
      read(*tx_);
    } else {
      pqxx::nontransaction tx(*conn_);
      read(tx);
    }
  });
  account("db.read", Bucket::db, t0);
  co_return row;
}

Task<void> PgConn::write_user(Key key, std::string_view primary) {
  const Duration t0 = now();
  guarded([&] {
    if (tx_) {
      tx_->exec_prepared("write_user", key, std::string(primary));
    } else {
      pqxx::nontransaction tx(*conn_);
      tx.exec_prepared("write_user", key, std::string(primary));
    }
  });
  account("db.write", Bucket::db, t0);
  co_return;
}

Task<bool> PgConn::write_user_if_version(Key key, std::string_view primary, std::int64_t expected) {
  const Duration t0 = now();
  const bool ok = guarded([&] {
    if (tx_) return tx_->exec_prepared("write_user_if_version", key, std::string(primary), expected).affected_rows() == 1;
    pqxx::nontransaction tx(*conn_);
    return tx.exec_prepared("write_user_if_version", key, std::string(primary), expected).affected_rows() == 1;
  });
  account("db.write", Bucket::db, t0, ok ? "" : "version changed");
  co_return ok;
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
  if (!tx_) return;
  try {
    tx_->abort();
  } catch (const std::exception&) {
    broken_ = true;
  }
  tx_.reset();
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
    tx.exec_prepared("select_one");
  });
}

}  // namespace lockbench::real

// SimConn: one pooled connection in virtual time. A statement waits one
// db_latency sample, then takes effect (lock, read, write, commit) at its end;
// a lock it cannot get is waited for in the LockManager, not slept.
#include <string>
#include <utility>

#include "sim/sim_world.hpp"

namespace lockbench::sim {

namespace {
std::string key_text(const char* what, Key k) { return std::string(what) + " " + std::to_string(k); }
}  // namespace

SimConn::SimConn(SimWorld& w, Pod& pod, int id, Backend backend)
    : w_(w), pod_(pod), id_(id), backend_(backend), created_at_(w.now()) {}

bool SimConn::tracing() const { return cx_ && w_.tracing(); }

Sleep SimConn::statement() { return Sleep{w_.loop(), w_.db_latency(), pod_.owner()}; }

void SimConn::check_usable(std::string_view what) const {
  if (aborted_)
    throw DbError(std::string(what) + ": current transaction is aborted, commands ignored until end of transaction block");
}

void SimConn::account(const char* step, Duration start, bool lock_statement, std::string detail) {
  last_step_ = step;
  if (!cx_) return;
  const Duration end = w_.now();
  (lock_statement ? cx_->split().lock_wait : cx_->split().db) += end - start;
  if (tracing()) cx_->trace(step, start, end, id_, std::move(detail));
}

void SimConn::on_borrow(RequestCtx* cx, Duration at, std::size_t record) {
  cx_ = cx;
  record_ = record;
  borrowed_ = true;
  borrowed_at_ = at;
  ++borrow_gen_;
  last_step_ = "borrowed";
}

Task<void> SimConn::begin() {
  const Duration t0 = w_.now();
  co_await statement();
  check_usable("BEGIN");
  in_tx_ = true;
  account("db.begin", t0, false);
}

Task<void> SimConn::commit() {
  const Duration t0 = w_.now();
  co_await statement();
  // COMMIT of an aborted transaction is a ROLLBACK in PostgreSQL.
  const bool ok = !aborted_;
  w_.db().end_xact(backend_, ok);
  in_tx_ = false;
  aborted_ = false;
  account("db.commit", t0, false, ok ? "" : "aborted: rolled back");
}

Task<void> SimConn::rollback() {
  const Duration t0 = w_.now();
  co_await statement();
  w_.db().end_xact(backend_, false);
  in_tx_ = false;
  aborted_ = false;
  account("db.rollback", t0, false);
}

Task<LockResult> SimConn::lock(Space sp, Scope sc, Key key, LockMode mode, const char* what) {
  const Duration t0 = w_.now();
  co_await statement();
  check_usable(what);
  LockResult r = w_.db().try_lock(sp, key, backend_, sc);
  bool waited = false;
  if (r == LockResult::busy && mode.wait == LockWait::wait) {
    waited = true;
    r = co_await w_.db().wait_lock(sp, key, backend_, sc, mode.timeout, pod_.owner());
  }
  // NOWAIT and lock_timeout raise an error, which aborts the transaction;
  // pg_try_advisory_* only answers false.
  const bool error = r != LockResult::acquired && (mode.wait != LockWait::try_lock || sp == Space::row);
  if (error && in_tx_) aborted_ = true;
  if (!in_tx_ && sc == Scope::xact && r == LockResult::acquired) w_.db().end_xact(backend_, true);  // autocommit
  std::string detail;
  if (tracing()) {
    detail = key_text(what, key);
    if (r == LockResult::acquired) {
      if (waited) detail += " after waiting";
    } else {
      detail += r == LockResult::timed_out ? " lock_timeout" : " busy";
    }
  }
  account(r == LockResult::acquired ? "lock.acquire" : "lock.denied", t0, true, std::move(detail));
  co_return r;
}

Task<LockResult> SimConn::lock_row(Key key, LockMode mode) {
  return lock(Space::row, Scope::xact, key, mode, "row");  // the same coroutine: no wrapper frame
}

Task<LockResult> SimConn::advisory_xact_lock(Key key, LockMode mode) {
  return lock(Space::advisory, Scope::xact, key, mode, "advisory_xact");  // the same coroutine: no wrapper frame
}

Task<LockResult> SimConn::advisory_lock(Key key, LockMode mode) {
  return lock(Space::advisory, Scope::session, key, mode, "advisory");  // the same coroutine: no wrapper frame
}

Task<bool> SimConn::advisory_unlock(Key key) {
  const Duration t0 = w_.now();
  co_await statement();
  check_usable("pg_advisory_unlock");
  const bool ok = w_.db().unlock_session(key, backend_);
  account("lock.release", t0, true,
          tracing() ? key_text("advisory", key) + (ok ? "" : ": WARNING you don't own a lock of type ExclusiveLock")
                    : std::string());
  co_return ok;
}

LockManager::WaitAwaiter SimConn::lock_for_update(Key key) {
  auto a = w_.db().lock(Space::row, key, backend_, Scope::xact, Duration::zero(), pod_.owner());
  // An autocommitted UPDATE on a row nobody holds takes and drops the row lock
  // within this one event: nobody can observe it, so skip the lock table.
  if (!in_tx_ && !w_.db().held_by_other(Space::row, key, backend_)) a.ready = true;
  return a;
}

void SimConn::update_done(Key key) {
  if (!in_tx_) w_.db().release_row(key, backend_);  // an autocommitted UPDATE commits at its end
}

Task<LeaseResult> SimConn::lease_acquire(Key key, std::string_view owner, Duration ttl, LeaseClock clock) {
  const Duration t0 = w_.now();
  co_await statement();
  check_usable("lease acquire");
  co_await lock_for_update(key);
  LeaseResult res;
  std::string detail;
  if (RowState* row = w_.db().writable(key, backend_, in_tx_)) {
    // The WHERE clause, evaluated now (after any row-lock wait: PostgreSQL's re-check).
    const Duration now_c = clock == LeaseClock::app ? w_.now() + pod_.app_skew() : w_.now();
    if (!row->lease_at || *row->lease_at < now_c - ttl) {
      res.acquired = true;
      res.took_over_expired = row->lease_at.has_value();
      res.previous_owner = std::move(row->lease_owner);
      row->lease_at = now_c;
      row->lease_owner = owner;
      res.token = ++row->lease_token;
      if (res.took_over_expired) {
        w_.lease_taken_over(res.previous_owner);
        if (tracing()) detail = key_text("lease", key) + " took over the expired lease of " + res.previous_owner;
      }
    } else if (tracing()) {
      detail = key_text("lease", key) + " held by " + row->lease_owner;
    }
  }
  update_done(key);
  if (tracing() && detail.empty()) detail = key_text("lease", key);
  account(res.acquired ? "lock.acquire" : "lock.denied", t0, true, std::move(detail));
  co_return res;
}

Task<bool> SimConn::lease_release(Key key, std::string_view owner) {
  const Duration t0 = w_.now();
  co_await statement();
  check_usable("lease release");
  co_await lock_for_update(key);
  bool ok = false;
  std::string detail;
  if (RowState* row = w_.db().writable(key, backend_, in_tx_)) {
    ok = row->lease_owner == owner;
    if (ok) {
      row->lease_at.reset();
      row->lease_owner.clear();
      if (tracing()) detail = key_text("lease", key);
    } else if (tracing()) {
      detail = key_text("lease", key) + ": 0 rows, owner is now " +
               (row->lease_owner.empty() ? std::string("nobody") : row->lease_owner);
    }
  }
  update_done(key);
  account("lock.release", t0, true, std::move(detail));
  co_return ok;
}

Task<UserRow> SimConn::read_user(Key key) {
  const Duration t0 = w_.now();
  co_await statement();
  check_usable("SELECT");
  UserRow out;
  if (const RowState* row = w_.db().visible(key, backend_)) out = UserRow{true, row->primary, row->version};
  account("db.read", t0, false, tracing() ? key_text("user", key) : std::string());
  co_return out;
}

Task<void> SimConn::write_user(Key key, std::string_view primary) {
  const Duration t0 = w_.now();
  co_await statement();
  check_usable("UPDATE");
  co_await lock_for_update(key);
  RowState* row = w_.db().writable(key, backend_, in_tx_);
  if (!row) {
    update_done(key);
    throw DbError("write of user " + std::to_string(key) + ": no such row");
  }
  row->primary = primary;
  ++row->version;
  const auto version = row->version;
  update_done(key);
  account("db.write", t0, false,
          tracing() ? key_text("user", key) + " version " + std::to_string(version) : std::string());
}

Task<bool> SimConn::write_user_if_version(Key key, std::string_view primary, std::int64_t expected) {
  const Duration t0 = w_.now();
  co_await statement();
  check_usable("UPDATE");
  co_await lock_for_update(key);
  bool ok = false;
  std::string detail;
  // The version is compared after any row-lock wait: the re-check of UPDATE ... WHERE.
  if (const RowState* seen = w_.db().visible(key, backend_)) {
    ok = seen->version == expected;
    if (ok) {
      RowState* row = w_.db().writable(key, backend_, in_tx_);
      row->primary = primary;
      ++row->version;
      if (tracing()) detail = key_text("user", key) + " version " + std::to_string(row->version);
    } else if (tracing()) {
      detail = key_text("user", key) + ": 0 rows, version is " + std::to_string(seen->version) + " not " +
               std::to_string(expected);
    }
  }
  update_done(key);
  account("db.write", t0, false, std::move(detail));
  co_return ok;
}

void SimConn::release() {
  if (dead_ || !borrowed_) return;
  const bool rolled_back = in_tx_;
  if (in_tx_) {
    // HikariCP rolls back a connection returned inside a transaction.
    w_.db().end_xact(backend_, false);
    in_tx_ = false;
    aborted_ = false;
  }
  const Duration now = w_.now();
  const Duration held = now - borrowed_at_;
  if (cx_) {
    cx_->split().held += held;
    w_.pool_stats().hold_ms.add(to_ms(held));
    if (w_.tracing())
      cx_->trace("pool.release", now, now, id_,
                 "held " + format_duration(held) + (rolled_back ? ", rolled back an open transaction" : ""));
  }
  if (record_ != kNoRecord) w_.borrow_returned(std::exchange(record_, kNoRecord));
  cx_ = nullptr;
  borrowed_ = false;
  pod_.give_back(this);
}

}  // namespace lockbench::sim

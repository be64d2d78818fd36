// SimConn: one pooled connection in virtual time. A statement waits one
// db_latency sample, then takes effect (lock, read, write, commit) at its end;
// a lock it cannot get is waited for in the LockManager, not slept.
#include <charconv>
#include <cstring>
#include <string>
#include <utility>

#include "sim/sim_world.hpp"

namespace lockbench::sim {

namespace {
// "what key", written once into one string (a traced request has a few).
std::string key_text(const char* what, Key k) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, k).ptr;
  const std::size_t n = std::strlen(what);
  std::string out;
  out.reserve(n + 1 + static_cast<std::size_t>(end - digits));
  out.append(what, n).append(" ").append(digits, end);
  return out;
}
}  // namespace

SimConn::SimConn(SimWorld& w, Pod& pod, int id, Backend backend)
    : w_(w), pod_(pod), id_(id), backend_(w.bouncer() ? -1 : backend), created_at_(w.now()) {}

bool SimConn::tracing() const { return __builtin_expect(cx_ && w_.tracing(), 0); }

SimConn::StatementStart SimConn::statement() { return StatementStart{*this, w_.db_latency()}; }

void SimConn::StatementStart::await_suspend(std::coroutine_handle<> h) {
  Bouncer* b = c.w_.bouncer();
  if (b && !b->try_attach(c)) {
    b->enqueue(c, h, latency);  // every backend is taken: wait for one
    return;
  }
  c.w_.loop().resume_at(c.w_.now() + latency, c.owner(), h);
}

void SimConn::StatementStart::await_resume() { c.statement_resumed(); }

void SimConn::statement_resumed() {
  if (!std::exchange(server_wait_failed_, false)) return;
  lost_ = true;  // PgBouncer closes the client: its pool replaces the connection
  throw DbError("query_wait_timeout: PgBouncer gave this client no server connection within 120 s and closed it");
}

void SimConn::forget_session_locks(Backend b) {
  if (b < 0) return;
  for (const auto& [space, key] : w_.db().held_by(b))
    if (space == Space::advisory) w_.recorder().locks.session_lock_ended(key);
}

void SimConn::close() {
  if (Bouncer* b = w_.bouncer()) {
    b->client_closed(*this);
    return;
  }
  forget_session_locks(backend_);
  w_.db().backend_died(backend_);
}

void SimConn::check_usable(std::string_view what) const {
  if (lost_) throw DbError(std::string(what) + ": database connection lost (its backend is gone)");
  if (aborted_)
    throw DbError(std::string(what) + ": current transaction is aborted, commands ignored until end of transaction block");
}

void SimConn::lose_connection(std::string_view what) {
  // The backend dies: PostgreSQL rolls its transaction back and releases its
  // locks; the client sees the connection break under this statement.
  lost_ = true;
  in_tx_ = false;
  aborted_ = false;
  close();
  w_.recorder().effects.db_fault(DbFault::conn_lost);
  if (tracing()) cx_->trace("db.conn_lost", w_.now(), w_.now(), id_, "fault conn_lost during " + std::string(what));
  throw DbError(std::string(what) + ": database connection lost (fault conn_lost: the backend ended, its transaction rolled back)");
}

void SimConn::maybe_lose_connection(std::string_view what) {
  if (in_tx_ && w_.db_fault(w_.settings().db_faults.conn_lost)) lose_connection(what);
}

void SimConn::account(const char* step, Duration start, bool lock_statement, std::string detail) {
  last_step_ = step;
  // Transaction pooling: an autocommitted statement or a transaction's end gives the backend back.
  if (!in_tx_)
    if (Bouncer* b = w_.bouncer()) b->statement_done(*this);
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

Duration SimConn::w_now() const { return w_.now(); }

int SimConn::owner() const { return cx_ ? pod_.owner_for(cx_->request().id) : pod_.owner(); }

// Statements that suspend only for their latency are awaiters (one_statement), not coroutines.
Task<void> SimConn::begin() {
  return one_statement([this](Duration t0) {
    check_usable("BEGIN");
    in_tx_ = true;
    account("db.begin", t0, false);
  });
}

Task<void> SimConn::commit() {
  return one_statement([this](Duration t0) {
    if (lost_) throw DbError("COMMIT: database connection lost (its backend is gone)");
    maybe_lose_connection("COMMIT");
    if (in_tx_ && !aborted_ && w_.db_fault(w_.settings().db_faults.commit_fail)) {
      w_.db().end_xact(backend_, false);
      in_tx_ = false;
      w_.recorder().effects.db_fault(DbFault::commit_fail);
      account("db.commit", t0, false, "fault commit_fail: rolled back");
      throw DbError("COMMIT failed (fault commit_fail): the transaction was rolled back");
    }
    // COMMIT of an aborted transaction is a ROLLBACK in PostgreSQL.
    const bool ok = !aborted_;
    w_.db().end_xact(backend_, ok);
    in_tx_ = false;
    aborted_ = false;
    account("db.commit", t0, false, ok ? "" : "aborted: rolled back");
  });
}

Task<void> SimConn::rollback() {
  return one_statement([this](Duration t0) {
    w_.db().end_xact(backend_, false);
    in_tx_ = false;
    aborted_ = false;
    account("db.rollback", t0, false);
  });
}

// A try-lock or NOWAIT never waits for the lock: one statement, an awaiter.
// Only LockWait::wait may suspend a second time and needs a coroutine. (The
// captures are ordered widest first: the awaiter fits the Task without padding.)
Task<LockResult> SimConn::lock(Space sp, Scope sc, Key key, LockMode mode, const char* what) {
  if (mode.wait == LockWait::wait) return lock_waiting(sp, sc, key, mode, what);
  return one_statement([this, key, what, sp, sc, wait = mode.wait](Duration t0) {
    return lock_answer(sp, sc, key, wait, what, lock_try(sp, sc, key, what), false, t0);
  });
}

Task<LockResult> SimConn::lock_waiting(Space sp, Scope sc, Key key, LockMode mode, const char* what) {
  const Duration t0 = w_.now();
  co_await statement();
  LockResult r = lock_try(sp, sc, key, what);
  bool waited = false;
  if (r == LockResult::busy) {
    waited = true;
    r = co_await w_.db().wait_lock(sp, key, backend_, sc, mode.timeout, owner());
  }
  co_return lock_answer(sp, sc, key, mode.wait, what, r, waited, t0);
}

LockResult SimConn::lock_try(Space sp, Scope sc, Key key, const char* what) {
  check_usable(what);
  maybe_lose_connection(what);
  return w_.db().try_lock(sp, key, backend_, sc);
}

LockResult SimConn::lock_answer(Space sp, Scope sc, Key key, LockWait wait, const char* what, LockResult r,
                                bool waited, Duration t0) {
  // NOWAIT and lock_timeout raise an error, which aborts the transaction;
  // pg_try_advisory_* only answers false.
  const bool error = r != LockResult::acquired && (wait != LockWait::try_lock || sp == Space::row);
  if (error && in_tx_) aborted_ = true;
  if (!in_tx_ && sc == Scope::xact && r == LockResult::acquired) w_.db().end_xact(backend_, true);  // autocommit
  if (sc == Scope::session && r == LockResult::acquired && cx_)
    w_.recorder().locks.session_lock_granted(key, cx_->request().id);
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
  return r;
}

Task<LockResult> SimConn::lock_row(Table t, Key key, LockMode mode) {
  const Key rk = row_key(t, key);
  // (Behind a Bouncer outside a transaction no backend is held yet: the lock statement takes one.)
  if (backend_ >= 0 && !w_.db().visible(rk, backend_)) {
    // SELECT ... FOR UPDATE on a row that does not exist (or whose insert is not
    // committed yet) returns no row, locks nothing and waits for nothing.
    const Duration t0 = w_.now();
    co_await statement();
    check_usable("SELECT ... FOR UPDATE");
  maybe_lose_connection("SELECT ... FOR UPDATE");
    account("lock.none", t0, true, tracing() ? key_text(table_name(t), key) + ": no row, nothing locked" : std::string());
    co_return LockResult::no_row;
  }
  co_return co_await lock(Space::row, Scope::xact, rk, mode, "row");
}

Task<LockResult> SimConn::advisory_xact_lock(Key key, LockMode mode) {
  return lock(Space::advisory, Scope::xact, key, mode, "advisory_xact");  // the same Task: no wrapper frame
}

Task<LockResult> SimConn::advisory_lock(Key key, LockMode mode) {
  return lock(Space::advisory, Scope::session, key, mode, "advisory");  // the same Task: no wrapper frame
}

Task<bool> SimConn::advisory_unlock(Key key) {
  return one_statement([this, key](Duration t0) {
    check_usable("pg_advisory_unlock");
    const bool ok = w_.db().unlock_session(key, backend_);
    if (ok && cx_) w_.recorder().locks.session_lock_unlocked(key, cx_->request().id);
    account("lock.release", t0, true,
            tracing() ? key_text("advisory", key) + (ok ? "" : ": WARNING you don't own a lock of type ExclusiveLock")
                      : std::string());
    return ok;
  });
}

const char* SimConn::table_name(Table t) const {
  const auto& tables = w_.scenario().tables();
  return t >= 0 && static_cast<std::size_t>(t) < tables.size() ? tables[static_cast<std::size_t>(t)].name.c_str() : "row";
}

bool SimConn::unique_table(Table t) const {
  const auto& tables = w_.scenario().tables();
  return t < 0 || static_cast<std::size_t>(t) >= tables.size() || tables[static_cast<std::size_t>(t)].unique;
}

LockManager::WaitAwaiter SimConn::lock_for_update(Key rk) {
  auto a = w_.db().lock(Space::row, rk, backend_, Scope::xact, Duration::zero(), owner());
  // An autocommitted UPDATE on a row nobody holds takes and drops the row lock
  // within this one event: nobody can observe it, so skip the lock table.
  if (!in_tx_ && !w_.db().held_by_other(Space::row, rk, backend_)) a.ready = true;
  return a;
}

void SimConn::update_done(Key rk) {
  if (!in_tx_) w_.db().release_row(rk, backend_);  // an autocommitted statement commits at its end
}

Task<LeaseResult> SimConn::lease_acquire(Table t, Key key, std::string_view owner, Duration ttl, LeaseClock clock,
                                         LeaseSql sql) {
  const Duration t0 = w_.now();
  const Key rk = row_key(t, key);
  co_await statement();
  check_usable("lease acquire");
  co_await lock_for_update(rk);
  LeaseResult res;
  std::string detail;
  if (RowState* row = w_.db().writable(rk, backend_, in_tx_)) {
    // The WHERE clause, evaluated now (after any row-lock wait: PostgreSQL's re-check).
    // The article's SQL sets locked_at from the database's clock but compares it
    // with :staleBefore computed from the application's clock.
    const Duration db_now = w_.now();
    const Duration app_now = w_.now() + pod_.app_skew();
    const Duration set_to = clock == LeaseClock::app && sql == LeaseSql::owned ? app_now : db_now;
    const Duration compare_now = clock == LeaseClock::app || sql == LeaseSql::article ? app_now : db_now;
    if (!row->lease_at || *row->lease_at < compare_now - ttl) {
      res.acquired = true;
      res.took_over_expired = row->lease_at.has_value();
      res.previous_owner = std::move(row->lease_owner);
      row->lease_at = set_to;
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
  update_done(rk);
  if (tracing() && detail.empty()) detail = key_text("lease", key);
  account(res.acquired ? "lock.acquire" : "lock.denied", t0, true, std::move(detail));
  co_return res;
}

Task<bool> SimConn::lease_release(Table t, Key key, std::string_view owner, LeaseSql sql) {
  const Duration t0 = w_.now();
  const Key rk = row_key(t, key);
  co_await statement();
  check_usable("lease release");
  co_await lock_for_update(rk);
  bool ok = false;
  std::string detail;
  if (RowState* row = w_.db().writable(rk, backend_, in_tx_)) {
    // The article's release has no owner check: it clears whoever holds the
    // lease, and its one row always answers "released".
    ok = sql == LeaseSql::article || row->lease_owner == owner;
    if (ok) {
      if (tracing())
        detail = key_text("lease", key) + (row->lease_owner == owner ? "" : " released the lease of " + row->lease_owner);
      row->lease_at.reset();
      row->lease_owner.clear();
    } else if (tracing()) {
      detail = key_text("lease", key) + ": 0 rows, owner is now " +
               (row->lease_owner.empty() ? std::string("nobody") : row->lease_owner);
    }
  }
  update_done(rk);
  account("lock.release", t0, true, std::move(detail));
  co_return ok;
}

Task<bool> SimConn::lease_extend(Table t, Key key, std::string_view owner, Duration ttl) {
  const Duration t0 = w_.now();
  const Key rk = row_key(t, key);
  const std::string me(owner);
  co_await statement();
  check_usable("lease extend");
  co_await lock_for_update(rk);
  bool ok = false;
  if (RowState* row = w_.db().writable(rk, backend_, in_tx_)) {
    // WHERE lock_owner = $me AND locked_at >= now() - ttl (database clock)
    ok = row->lease_at && row->lease_owner == me && *row->lease_at >= w_.now() - ttl;
    if (ok) row->lease_at = w_.now();
  }
  update_done(rk);
  account("lock.extend", t0, true, tracing() ? key_text("lease", key) + (ok ? "" : ": 0 rows, lost") : std::string());
  co_return ok;
}

Task<Row> SimConn::read(Table t, Key key) {
  return one_statement([this, t, key](Duration t0) {
    check_usable("SELECT");
    maybe_lose_connection("SELECT");
    Row out;
    if (const RowState* row = w_.db().visible(row_key(t, key), backend_))
      out = Row{true, row->text, row->ref, row->num, row->version};
    account("db.read", t0, false, tracing() ? key_text(table_name(t), key) : std::string());
    return out;
  });
}

Task<std::int64_t> SimConn::count(Table t, Key key) {
  return one_statement([this, t, key](Duration t0) {
    check_usable("SELECT count(*)");
    maybe_lose_connection("SELECT count(*)");
    const std::int64_t n = w_.db().count(row_key(t, key), backend_);
    account("db.read", t0, false, tracing() ? key_text(table_name(t), key) + " count " + std::to_string(n) : std::string());
    return n;
  });
}

Task<bool> SimConn::insert(Table t, Key key, const Row& values) {
  const Duration t0 = w_.now();
  const Key rk = row_key(t, key);
  co_await statement();
  check_usable("INSERT");
  maybe_lose_connection("INSERT");
  const RowState fresh{values.text, values.ref, values.num, 0, {}, {}, 0, 1};
  if (!unique_table(t)) {
    // No unique key: nothing to check, nothing to wait for; another row under the key.
    w_.db().insert_multi(rk, backend_, in_tx_, fresh);
    account("db.insert", t0, false, tracing() ? key_text(table_name(t), key) + " (no unique key)" : std::string());
    co_return true;
  }
  // A unique index: an uncommitted insert of the same key makes us wait for its
  // transaction; then the row exists (conflict) or was rolled back (we insert).
  co_await lock_for_update(rk);
  const bool ok = w_.db().insert(rk, backend_, in_tx_, fresh);
  update_done(rk);
  account("db.insert", t0, false,
          tracing() ? key_text(table_name(t), key) + (ok ? "" : ": ON CONFLICT DO NOTHING, 0 rows") : std::string());
  co_return ok;
}

Task<bool> SimConn::update(Table t, Key key, const Row& values, const Guard& guard) {
  const Duration t0 = w_.now();
  const Key rk = row_key(t, key);
  co_await statement();
  check_usable("UPDATE");
  maybe_lose_connection("UPDATE");
  co_await lock_for_update(rk);
  bool ok = false;
  std::string detail;
  // The guard is evaluated after any row-lock wait: the re-check of UPDATE ... WHERE.
  if (const RowState* seen = w_.db().visible(rk, backend_)) {
    switch (guard.kind) {
      case Guard::Kind::none: ok = true; break;
      case Guard::Kind::version: ok = seen->version == guard.version; break;
      case Guard::Kind::lease_owner: ok = seen->lease_owner == guard.owner; break;
    }
    if (ok) {
      RowState* row = w_.db().writable(rk, backend_, in_tx_);
      row->text = values.text;
      row->ref = values.ref;
      row->num = values.num;
      ++row->version;
      if (tracing()) detail = key_text(table_name(t), key) + " version " + std::to_string(row->version);
    } else if (tracing()) {
      detail = key_text(table_name(t), key) + (guard.kind == Guard::Kind::version
                                                   ? ": 0 rows, version is " + std::to_string(seen->version) +
                                                         " not " + std::to_string(guard.version)
                                                   : ": 0 rows, the lease is now " +
                                                         (seen->lease_owner.empty() ? std::string("nobody's")
                                                                                    : seen->lease_owner + "'s"));
    }
  } else if (tracing()) {
    detail = key_text(table_name(t), key) + ": no such row";
  }
  update_done(rk);
  account("db.write", t0, false, std::move(detail));
  co_return ok;
}

// The lease columns as an entity holds them: locked_at as its virtual time in
// nanoseconds ("" = NULL), written back exactly as read.
namespace {
std::string encode_lease_at(const std::optional<Duration>& at) { return at ? std::to_string(at->count()) : std::string(); }
std::optional<Duration> decode_lease_at(const std::string& text) {
  if (text.empty()) return std::nullopt;
  return Duration(static_cast<Duration::rep>(std::stoll(text)));
}
}  // namespace

Task<Entity> SimConn::load_entity(Table t, Key key) {
  return one_statement([this, t, key](Duration t0) {
    check_usable("SELECT");
    maybe_lose_connection("SELECT");
    Entity out;
    if (const RowState* row = w_.db().visible(row_key(t, key), backend_)) {
      out.row = Row{true, row->text, row->ref, row->num, row->version};
      out.locked_at = encode_lease_at(row->lease_at);
      out.lock_owner = row->lease_owner;
    }
    account("entity.load", t0, false,
            tracing() ? key_text(table_name(t), key) + " lock_owner " + (out.lock_owner.empty() ? "NULL" : out.lock_owner)
                      : std::string());
    return out;
  });
}

Task<EntitySave> SimConn::save_entity(Table t, Key key, const Entity& e, bool lock_mapped) {
  const Duration t0 = w_.now();
  const Key rk = row_key(t, key);
  co_await statement();
  check_usable("UPDATE");
  maybe_lose_connection("UPDATE");
  co_await lock_for_update(rk);
  EntitySave out;
  std::string detail;
  if (RowState* row = w_.db().writable(rk, backend_, in_tx_)) {
    out.found = true;
    // touched_at (the second path's own column) is read by nobody: the simulator keeps no copy.
    if (lock_mapped) {
      // ORMs write back every mapped field: the scenario's columns and the lock, as loaded.
      const std::optional<Duration> at = decode_lease_at(e.locked_at);
      out.lock_changed = row->lease_at != at || row->lease_owner != e.lock_owner;
      if (out.lock_changed && tracing())
        detail = key_text(table_name(t), key) + " wrote back lock_owner " +
                 (e.lock_owner.empty() ? std::string("NULL") : e.lock_owner) + " over " +
                 (row->lease_owner.empty() ? std::string("NULL") : row->lease_owner);
      row->text = e.row.text;
      row->ref = e.row.ref;
      row->num = e.row.num;
      ++row->version;
      row->lease_at = at;
      row->lease_owner = e.lock_owner;
    }
  }
  update_done(rk);
  if (tracing() && detail.empty()) detail = key_text(table_name(t), key) + (lock_mapped ? " every field" : " touched_at");
  account("entity.save", t0, false, std::move(detail));
  co_return out;
}

Task<Claim> SimConn::claim_due(Table t, std::int64_t due_at_most, int limit) {
  const Duration t0 = w_.now();
  co_await statement();
  check_usable("SELECT ... FOR UPDATE SKIP LOCKED");
  maybe_lose_connection("SELECT ... FOR UPDATE SKIP LOCKED");
  Claim out;
  LockManager& db = w_.db();
  const auto& tables = w_.scenario().tables();
  if (t >= 0 && static_cast<std::size_t>(t) < tables.size() && tables[static_cast<std::size_t>(t)].seed)
    db.materialize(t, w_.settings().keys);
  std::vector<Key> due;
  // Rows below the scan floor are done for everyone; the floor moves up past
  // the done rows this scan finds at its start (a performance cut, not a semantic one).
  Key floor = db.scan_floor(t);
  bool in_done_prefix = true;
  db.for_each_key_in(t, floor, [&](Key rk) {
    if (in_done_prefix && db.settled(rk)) {
      floor = key_of_row(rk) + 1;
      return true;
    }
    in_done_prefix = false;
    const RowState* row = db.visible(rk, backend_);
    if (!row || row->num < 0) return true;
    ++out.undone;
    if (row->num <= due_at_most && static_cast<int>(due.size()) < limit && !db.held_by_other(Space::row, rk, backend_))
      due.push_back(rk);  // SKIP LOCKED: a row another transaction holds is passed over, not waited for
    return true;
  });
  db.set_scan_floor(t, floor);
  for (Key rk : due) {
    db.try_lock(Space::row, rk, backend_, Scope::xact);
    if (!in_tx_) db.release_row(rk, backend_);  // autocommitted: the lock ends with the statement
    const RowState* row = db.visible(rk, backend_);
    out.rows.push_back({key_of_row(rk), Row{true, row->text, row->ref, row->num, row->version}});
  }
  account("db.claim", t0, false,
          tracing() ? std::string(table_name(t)) + ": claimed " + std::to_string(out.rows.size()) + " of " +
                          std::to_string(out.undone) + " undone"
                    : std::string());
  co_return out;
}

void SimConn::release() {
  if (dead_ || !borrowed_) return;
  const bool rolled_back = in_tx_;
  if (in_tx_) {
    // HikariCP rolls back a connection returned inside a transaction.
    w_.db().end_xact(backend_, false);
    in_tx_ = false;
    aborted_ = false;
    if (Bouncer* b = w_.bouncer()) b->statement_done(*this);
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

#include "sim/lock_manager.hpp"

#include <algorithm>

namespace lockbench::sim {

LockManager::LockManager(EventLoop& loop, std::function<std::optional<RowState>(Key)> make_row)
    : loop_(loop), make_row_(std::move(make_row)) {}

LockManager::BackendState& LockManager::backend(Backend b) {
  const auto i = static_cast<std::size_t>(b);
  if (i >= backends_.size()) backends_.resize(i + 1);
  return backends_[i];
}

LockManager::Row* LockManager::row(Key k) {
  if (Row* r = find_row(k)) return r;
  std::optional<RowState> fresh = make_row_ ? make_row_(k) : std::nullopt;
  if (!fresh) return nullptr;
  keys_.insert(k);
  return &add_row(k, Row{std::move(*fresh), std::nullopt});
}

LockManager::Row& LockManager::add_row(Key k, Row r) {
  if (2 * (row_store_.size() + 1) > row_index_.size()) {  // keep it at most half full
    std::vector<RowSlot> bigger(row_index_.size() * 2);
    const std::size_t mask = bigger.size() - 1;
    for (const RowSlot& s : row_index_) {
      if (s.row == nullptr) continue;
      std::size_t i = slot_of(s.key, mask);
      while (bigger[i].row != nullptr) i = (i + 1) & mask;
      bigger[i] = s;
    }
    row_index_.swap(bigger);
  }
  Row& stored = row_store_.emplace_back(k, std::move(r)).second;
  const std::size_t mask = row_index_.size() - 1;
  std::size_t i = slot_of(k, mask);
  while (row_index_[i].row != nullptr) i = (i + 1) & mask;
  row_index_[i] = {k, &stored};
  return stored;
}

const RowState* LockManager::visible(Key k, Backend b) {
  Row* r = row(k);
  if (!r) {
    for (const auto& [pk, ps] : backend(b).pending_multi)
      if (pk == k) return &ps;
    return nullptr;
  }
  // Only the row-lock holder can have a pending write: it sees its own.
  if (r->pending) {
    auto it = locks_.find(lock_id(Space::row, k));
    if (it != locks_.end() && it->second.holder == b) return &*r->pending;
  }
  if (r->committed) return &*r->committed;
  for (const auto& [pk, ps] : backend(b).pending_multi)  // our own uncommitted insert into a non-unique table
    if (pk == k) return &ps;
  return nullptr;
}

void LockManager::put(Key k, Backend b, bool in_tx, const RowState& s) {
  written(k);
  Row* r = row(k);
  if (!r || !r->committed) return;
  if (!in_tx) {
    r->committed = s;
    return;
  }
  if (!r->pending) backend(b).pending_rows.push_back(k);
  r->pending = s;
}

RowState* LockManager::writable(Key k, Backend b, bool in_tx) {
  written(k);
  Row* r = row(k);
  if (!r) return nullptr;
  if (r->pending) {  // our own uncommitted insert or write (we hold the row lock)
    if (!in_tx) return nullptr;
    return &*r->pending;
  }
  if (!r->committed) return nullptr;
  if (!in_tx) return &*r->committed;
  backend(b).pending_rows.push_back(k);
  r->pending = r->committed;
  return &*r->pending;
}

bool LockManager::insert(Key k, Backend b, bool in_tx, const RowState& s) {
  written(k);
  Row* r = row(k);
  if (!r) {
    keys_.insert(k);
    r = &add_row(k, Row{});
  }
  if (r->committed || r->pending) return false;
  if (!in_tx) {
    r->committed = s;
    return true;
  }
  backend(b).pending_rows.push_back(k);
  r->pending = s;
  return true;
}

void LockManager::add_committed(Key k, const RowState& s) {
  Row* r = row(k);
  if (!r) r = &add_row(k, Row{});
  if (r->committed) {
    ++r->committed->copies;
    return;
  }
  r->committed = s;
  r->committed->copies = 1;
}

void LockManager::insert_multi(Key k, Backend b, bool in_tx, const RowState& s) {
  if (!in_tx) {
    add_committed(k, s);
    return;
  }
  backend(b).pending_multi.emplace_back(k, s);
}

std::int64_t LockManager::count(Key k, Backend b) {
  std::int64_t n = 0;
  for (const auto& [pk, ps] : backend(b).pending_multi) n += pk == k ? 1 : 0;
  Row* r = row(k);
  if (!r) return n;
  if (r->pending) {  // only the row-lock holder sees its own uncommitted insert or write
    auto it = locks_.find(lock_id(Space::row, k));
    if (it != locks_.end() && it->second.holder == b) return n + r->pending->copies;
  }
  return n + (r->committed ? r->committed->copies : 0);
}

bool LockManager::held_by_other(Space sp, Key k, Backend b) const {
  auto it = locks_.find(lock_id(sp, k));
  return it != locks_.end() && it->second.holder >= 0 && it->second.holder != b;
}

void LockManager::grant(Lock& l, std::uint64_t id, Backend b, Scope sc) {
  if (l.holder != b) {
    l.holder = b;
    backend(b).held.push_back(id);
  }
  (sc == Scope::session ? l.session : l.xact)++;
}

LockResult LockManager::try_lock(Space sp, Key k, Backend b, Scope sc) {
  const auto id = lock_id(sp, k);
  Lock& l = locks_[id];
  // FIFO fairness: a free lock with waiters is never left free (release grants
  // at once), so "free" here means nobody is queued either.
  if (l.holder >= 0 && l.holder != b) return LockResult::busy;
  grant(l, id, b, sc);
  return LockResult::acquired;
}

void LockManager::enqueue(Waiter* w, Duration timeout) {
  ++waits_;
  Lock& l = locks_[lock_id(w->space, w->key)];
  if (l.holder < 0) {  // released between try_lock and the wait: take it now
    grant(l, lock_id(w->space, w->key), w->backend, w->scope);
    w->result = LockResult::acquired;
    loop_.resume_at(loop_.now(), w->owner, w->handle);
    return;
  }
  w->ticket = next_ticket_++;
  l.waiters.push_back(w);
  backend(w->backend).waiting = w;
  by_ticket_.emplace(w->ticket, w);
  // lock_timeout is enforced by the server, so it fires even while the client pod is paused.
  if (timeout > Duration::zero()) loop_.at(loop_.now() + timeout, kGlobal, &LockManager::on_timeout, this, w->ticket);
}

void LockManager::on_timeout(void* self, std::uint64_t ticket) {
  auto& lm = *static_cast<LockManager*>(self);
  auto it = lm.by_ticket_.find(ticket);
  if (it == lm.by_ticket_.end()) return;  // granted (or its backend died) before the timeout
  Waiter* w = it->second;
  lm.by_ticket_.erase(it);
  auto& ws = lm.locks_[lock_id(w->space, w->key)].waiters;
  ws.erase(std::find(ws.begin(), ws.end(), w));
  lm.backend(w->backend).waiting = nullptr;
  w->result = LockResult::timed_out;
  lm.loop_.resume_at(lm.loop_.now(), w->owner, w->handle);
}

void LockManager::release_if_free(Lock& l) {
  if (l.xact > 0 || l.session > 0) return;
  l.holder = -1;
  if (l.waiters.empty()) return;
  Waiter* w = l.waiters.front();
  l.waiters.erase(l.waiters.begin());
  by_ticket_.erase(w->ticket);
  backend(w->backend).waiting = nullptr;
  grant(l, lock_id(w->space, w->key), w->backend, w->scope);
  w->result = LockResult::acquired;
  loop_.resume_at(loop_.now(), w->owner, w->handle);
}

void LockManager::release_row(Key k, Backend b) {
  const auto id = lock_id(Space::row, k);
  auto it = locks_.find(id);
  if (it == locks_.end() || it->second.holder != b) return;
  auto& held = backend(b).held;
  held.erase(std::remove(held.begin(), held.end(), id), held.end());
  it->second.xact = 0;
  release_if_free(it->second);
}

bool LockManager::unlock_session(Key k, Backend b) {
  const auto id = lock_id(Space::advisory, k);
  auto it = locks_.find(id);
  // PostgreSQL: WARNING "you don't own a lock of type ExclusiveLock", returns false.
  if (it == locks_.end() || it->second.holder != b || it->second.session == 0) return false;
  Lock& l = it->second;
  if (--l.session == 0 && l.xact == 0) {
    auto& held = backend(b).held;
    held.erase(std::remove(held.begin(), held.end(), id), held.end());
    release_if_free(l);
  }
  return true;
}

void LockManager::end_xact(Backend b, bool commit) {
  BackendState& bs = backend(b);
  for (Key k : bs.pending_rows) {
    Row& r = *find_row(k);
    if (commit && r.pending) r.committed = std::move(*r.pending);
    r.pending.reset();
  }
  bs.pending_rows.clear();
  if (commit)
    for (const auto& [k, s] : bs.pending_multi) add_committed(k, s);
  backend(b).pending_multi.clear();
  // Copy: releasing grants locks to waiters, which may touch other backends' lists.
  const std::vector<std::uint64_t> held = bs.held;
  std::vector<std::uint64_t> kept;
  for (auto id : held) {
    Lock& l = locks_.at(id);
    l.xact = 0;
    if (l.session > 0) {
      kept.push_back(id);
      continue;
    }
    release_if_free(l);
  }
  backend(b).held = std::move(kept);
}

void LockManager::backend_died(Backend b) {
  BackendState& bs = backend(b);
  if (Waiter* w = bs.waiting) {
    by_ticket_.erase(w->ticket);
    auto& ws = locks_[lock_id(w->space, w->key)].waiters;
    ws.erase(std::find(ws.begin(), ws.end(), w));
    bs.waiting = nullptr;
  }
  end_xact(b, false);
  const std::vector<std::uint64_t> held = backend(b).held;
  backend(b).held.clear();
  for (auto id : held) {
    Lock& l = locks_.at(id);
    l.session = 0;
    l.xact = 0;
    release_if_free(l);
  }
}

std::vector<std::pair<Space, Key>> LockManager::held_by(Backend b) const {
  std::vector<std::pair<Space, Key>> out;
  if (static_cast<std::size_t>(b) >= backends_.size()) return out;
  for (auto id : backends_[static_cast<std::size_t>(b)].held) out.emplace_back(space_of(id), key_of(id));
  return out;
}

std::int64_t LockManager::session_locks_held() const {
  std::int64_t n = 0;
  // One per lock held in session scope, however often it was re-entered:
  // what pg_locks shows, and what the real world counts.
  for (const auto& [id, l] : locks_)
    if (l.holder >= 0 && l.session > 0) ++n;
  return n;
}

}  // namespace lockbench::sim

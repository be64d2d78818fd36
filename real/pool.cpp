#include "real/pool.hpp"

#include <algorithm>
#include <cstdio>

#include "real/leftovers.hpp"

namespace lockbench::real {

Pool::Pool(PoolConfig cfg, Clock::time_point epoch) : cfg_(std::move(cfg)), epoch_(epoch) {
  slots_.resize(static_cast<std::size_t>(cfg_.maximum_pool_size));
  // Opened before any other thread sees the pool: no lock needed yet.
  const std::string url =
      cfg_.application_name.empty() ? cfg_.url : url_with_application_name(cfg_.url, cfg_.application_name);
  for (int i = 0; i < cfg_.maximum_pool_size; ++i) {
    slots_[static_cast<std::size_t>(i)].conn = std::make_unique<PgConn>(*this, cfg_.first_conn_id + i, url, cfg_.run);
    idle_.push_back(slots_[static_cast<std::size_t>(i)].conn.get());
  }
  stats_.size = cfg_.maximum_pool_size;
}

Pool::~Pool() = default;

Pool::Slot& Pool::slot_of(PgConn* c) { return slots_.at(static_cast<std::size_t>(c->id() - cfg_.first_conn_id)); }

void Pool::account_busy_locked(Duration t) {
  if (t > last_change_) {
    stats_.busy_conn_s += active_ * to_s(t - last_change_);
    last_change_ = t;
  }
}

void Pool::account_waiters_locked(Duration t) {
  if (t > last_waiters_change_) {
    stats_.pending_s += static_cast<double>(waiters_.size()) * to_s(t - last_waiters_change_);
    last_waiters_change_ = t;
  }
}

PgConn* Pool::take_locked(PgConn* c, Duration waited, Borrower who) {
  Slot& s = slot_of(c);
  s.borrowed = true;
  s.borrowed_at = now();
  s.leak_warned = false;
  s.probe = who == Borrower::probe;
  s.holder = current_step_note();
  if (s.probe)
    ++stats_.probe_borrows;
  else
    stats_.wait_ms.add(to_ms(waited));
  stats_.active_max = std::max(stats_.active_max, active_);
  return c;
}

PgConn* Pool::borrow(Duration timeout, Borrower who) {
  const Duration start = now();
  PgConn* c = nullptr;
  Duration returned_at{};
  Duration borrowed_at{};
  {
    std::unique_lock lock(mu_);
    if (closed_) return nullptr;
    if (waiters_.empty() && !idle_.empty()) {
      c = idle_.front();
      idle_.pop_front();
      account_busy_locked(now());
      ++active_;
    } else {
      Waiter w;
      account_waiters_locked(now());
      waiters_.push_back(&w);
      stats_.pending_max = std::max(stats_.pending_max, static_cast<int>(waiters_.size()));
      const auto deadline = Clock::now() + timeout;
      // Bounded: returns by the deadline at the latest.
      while (w.conn == nullptr) {
        if (closed_) {  // close() already took us off waiters_
          ++stats_.timeouts;
          return nullptr;
        }
        if (w.cv.wait_until(lock, deadline) == std::cv_status::timeout && w.conn == nullptr && !closed_) {
          account_waiters_locked(now());
          waiters_.erase(std::find(waiters_.begin(), waiters_.end(), &w));
          ++stats_.timeouts;
          return nullptr;
        }
      }
      c = w.conn;  // handed over by give_back(): already counted active
    }
    take_locked(c, now() - start, who);
    returned_at = slot_of(c).returned_at;
    borrowed_at = slot_of(c).borrowed_at;
  }
  c->bind(nullptr, borrowed_at);
  // Outside the lock: validation and replacement are round trips.
  if (c->broken() || now() - returned_at > kAliveBypass) {
    refresh(c, /*validate_first=*/!c->broken());
    if (c->broken()) {
      c->release();
      throw DbError("connection pool " + cfg_.name + ": cannot replace a broken connection");
    }
  }
  return c;
}

void Pool::refresh(PgConn* c, bool validate_first) {
  if (validate_first && c->validate()) return;
  {
    std::lock_guard lock(mu_);
    if (closed_) return;  // shutting down: no new sessions
  }
  try {
    c->reconnect();
    std::lock_guard lock(mu_);
    ++replaced_;
  } catch (const DbError&) {
    // stays broken: the next borrow tries again
  }
}

void Pool::give_back(PgConn* c, Duration borrowed_at) {
  c->reset_for_pool();
  if (c->broken() || Clock::now() - c->opened_at() > cfg_.max_lifetime) refresh(c, false);
  std::lock_guard lock(mu_);
  const Duration t = now();
  Slot& s = slot_of(c);
  if (!s.probe) stats_.hold_ms.add(to_ms(t - borrowed_at));
  s.borrowed = false;
  s.holder = nullptr;
  s.returned_at = t;
  if (!waiters_.empty() && !closed_) {
    // Hand over directly: the connection stays active, the oldest waiter gets it.
    Waiter* w = waiters_.front();
    account_waiters_locked(t);
    waiters_.pop_front();
    w->conn = c;
    s.borrowed = true;  // in flight to the waiter (take_locked sets the rest)
    w->cv.notify_one();  // under the lock: the waiter's stack frame lives until it re-locks
  } else {
    account_busy_locked(t);
    --active_;
    idle_.push_back(c);
  }
}

PoolSample Pool::sample() const {
  std::lock_guard lock(mu_);
  return {now(), active_, static_cast<int>(waiters_.size()), static_cast<int>(idle_.size())};
}

void Pool::check_leaks() {
  if (cfg_.leak_detection_threshold <= Duration::zero()) return;
  std::vector<std::string> logs;
  {
    std::lock_guard lock(mu_);
    const Duration t = now();
    for (Slot& s : slots_) {
      if (!s.borrowed || s.leak_warned || t - s.borrowed_at < cfg_.leak_detection_threshold) continue;
      s.leak_warned = true;
      ++stats_.leaks;
      const char* step = s.holder ? s.holder->step.load(std::memory_order_relaxed) : "not a request";
      if (stats_.leak_steps.size() < 20) stats_.leak_steps.emplace_back(step);
      if (leak_logs_++ < 3)
        logs.push_back("lockbench: " + cfg_.name + " - connection leak detection triggered for connection " +
                       std::to_string(s.conn->id()) + ", held for " + format_duration(t - s.borrowed_at) +
                       " in step " + step);
    }
  }
  for (const auto& l : logs) std::fprintf(stderr, "%s\n", l.c_str());
}

PoolStats Pool::stats() const {
  std::lock_guard lock(mu_);
  PoolStats out = stats_;
  // close the busy integral at the time of the copy
  const Duration t = now();
  if (t > last_change_) out.busy_conn_s += active_ * to_s(t - last_change_);
  if (t > last_waiters_change_) out.pending_s += static_cast<double>(waiters_.size()) * to_s(t - last_waiters_change_);
  return out;
}

std::vector<int> Pool::backend_pids() const {
  std::lock_guard lock(mu_);
  std::vector<int> pids;
  for (const Slot& s : slots_) pids.push_back(s.conn->backend_pid());
  return pids;
}

void Pool::close() {
  std::lock_guard lock(mu_);
  closed_ = true;
  account_waiters_locked(now());
  for (Waiter* w : waiters_) w->cv.notify_one();  // under the lock, as in give_back()
  waiters_.clear();
}

std::int64_t Pool::replaced() const {
  std::lock_guard lock(mu_);
  return replaced_;
}

}  // namespace lockbench::real

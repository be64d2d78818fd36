#include "sim/bouncer.hpp"

#include <algorithm>

#include "sim/sim_world.hpp"

namespace lockbench::sim {

Bouncer::Bouncer(SimWorld& w, bool transaction_mode, int pool_size)
    : w_(w), transaction_mode_(transaction_mode), pool_size_(pool_size) {}

void Bouncer::give(SimConn& c, Backend b) { c.backend_ = b; }

bool Bouncer::try_attach(SimConn& c) {
  if (c.backend_ >= 0) return true;  // session mode, or inside a transaction
  if (!waiters_.empty()) return false;  // first come, first served
  if (!idle_.empty()) {
    give(c, idle_.back());
    idle_.pop_back();
    return true;
  }
  if (open_ < pool_size_) {
    ++open_;
    give(c, w_.next_backend());
    return true;
  }
  return false;
}

void Bouncer::enqueue(SimConn& c, std::coroutine_handle<> h, Duration latency) {
  const std::uint64_t ticket = next_ticket_++;
  waiters_.push_back({ticket, &c, h, latency});
  ++waits_;
  waiting_max_ = std::max<std::int64_t>(waiting_max_, static_cast<std::int64_t>(waiters_.size()));
  // PgBouncer's own timer: it runs while the client's pod is paused.
  w_.loop().at(w_.now() + kQueryWaitTimeout, kGlobal, &Bouncer::on_timeout, this, ticket);
}

void Bouncer::on_timeout(void* self, std::uint64_t ticket) {
  auto& b = *static_cast<Bouncer*>(self);
  auto it = std::lower_bound(b.waiters_.begin(), b.waiters_.end(), ticket,
                             [](const Waiter& w, std::uint64_t t) { return w.ticket < t; });
  if (it == b.waiters_.end() || it->ticket != ticket) return;  // served before
  const Waiter w = *it;
  b.waiters_.erase(it);
  ++b.timeouts_;
  w.conn->server_wait_failed_ = true;
  b.w_.loop().resume_at(b.w_.now(), w.conn->owner(), w.handle);
}

void Bouncer::release(Backend b) {
  if (!waiters_.empty()) {
    const Waiter w = waiters_.front();
    waiters_.pop_front();
    give(*w.conn, b);
    w_.loop().resume_at(w_.now() + w.latency, w.conn->owner(), w.handle);
    return;
  }
  idle_.push_back(b);
}

void Bouncer::statement_done(SimConn& c) {
  if (!transaction_mode_ || c.backend_ < 0) return;
  const Backend b = c.backend_;
  c.backend_ = -1;
  release(b);
}

void Bouncer::client_closed(SimConn& c) {
  auto it = std::find_if(waiters_.begin(), waiters_.end(), [&](const Waiter& w) { return w.conn == &c; });
  if (it != waiters_.end()) waiters_.erase(it);
  if (c.backend_ < 0) return;
  const Backend b = c.backend_;
  c.backend_ = -1;
  ++closed_with_backend_;
  c.forget_session_locks(b);
  w_.db().backend_died(b);  // rolled back, its locks released
  --open_;
  // A client waiting for a backend gets a new one in its place.
  if (!waiters_.empty() && open_ < pool_size_) {
    ++open_;
    release(w_.next_backend());
  }
}

nlohmann::json Bouncer::report() const {
  return {{"pool_mode", transaction_mode_ ? "transaction" : "session"},
          {"pool_size", pool_size_},
          {"backends_open_at_end", open_},
          {"client_waits", waits_},
          {"clients_waiting_max", waiting_max_},
          {"query_wait_timeouts", timeouts_},
          {"backends_closed_with_client", closed_with_backend_}};
}

}  // namespace lockbench::sim

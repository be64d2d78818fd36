#include "sim/event_loop.hpp"

#include <algorithm>

namespace lockbench::sim {

namespace {
void resume_handle(void* ctx, std::uint64_t) { std::coroutine_handle<>::from_address(ctx).resume(); }
}  // namespace

void EventLoop::push(const Event& e) {
  heap_.push_back(e);
  std::push_heap(heap_.begin(), heap_.end(), Later{});
}

void EventLoop::at(Duration t, int owner, EventFn fn, void* ctx, std::uint64_t arg) {
  push({std::max(t, now_), seq_++, fn, ctx, arg, owner});
}

void EventLoop::resume_at(Duration t, int owner, std::coroutine_handle<> h) {
  at(t, owner, &resume_handle, h.address());
}

int EventLoop::new_owner() {
  owners_.push_back({});
  return static_cast<int>(owners_.size() - 1);
}

void EventLoop::kill(int owner) {
  if (owner >= 0) owners_[static_cast<std::size_t>(owner)].alive = false;
}

void EventLoop::pause(int owner, Duration until) {
  if (owner >= 0) owners_[static_cast<std::size_t>(owner)].paused_until = until;
}

Duration EventLoop::paused_until(int owner) const {
  if (owner < 0) return Duration::zero();
  const Duration u = owners_[static_cast<std::size_t>(owner)].paused_until;
  return u > now_ ? u : Duration::zero();
}

bool EventLoop::run(Duration until, std::uint64_t max_events) {
  while (!heap_.empty()) {
    if (heap_.front().t > until || events_run_ >= max_events) return false;
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    Event e = heap_.back();
    heap_.pop_back();
    now_ = e.t;
    if (e.owner >= 0) {
      const Owner& o = owners_[static_cast<std::size_t>(e.owner)];
      if (!o.alive) continue;  // a crashed pod: its work vanished
      if (o.paused_until > now_) {
        // Frozen: runs when the pause ends, after what was queued before it
        // (a new sequence number keeps the deferred events in their order).
        e.t = o.paused_until;
        e.seq = seq_++;
        push(e);
        continue;
      }
    }
    ++events_run_;
    e.fn(e.ctx, e.arg);
  }
  return true;
}

}  // namespace lockbench::sim

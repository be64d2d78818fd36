#include "sim/event_loop.hpp"

#include <algorithm>

namespace lockbench::sim {

namespace {
void resume_handle(void* ctx, std::uint64_t) { std::coroutine_handle<>::from_address(ctx).resume(); }
}  // namespace

void EventLoop::Lane::push(const Event& e) {
  if (size == ring.size()) {  // full: unroll into a ring twice the size
    std::vector<Event> bigger(std::max<std::size_t>(16, ring.size() * 2));
    for (std::size_t i = 0; i < size; ++i) bigger[i] = ring[(head + i) & (ring.size() - 1)];
    ring.swap(bigger);
    head = 0;
  }
  ring[(head + size) & (ring.size() - 1)] = e;
  ++size;
}

EventLoop::Event EventLoop::Lane::pop() {
  const Event e = ring[head];
  head = (head + 1) & (ring.size() - 1);
  --size;
  return e;
}

std::size_t EventLoop::pending() const {
  std::size_t n = heap_.size();
  for (const Lane& l : lanes_) n += l.size;
  return n;
}

void EventLoop::lane_push(std::size_t lane, const Event& e) {
  Lane& l = lanes_[lane];
  if (l.size == 0) fronts_[lane] = {e.t, e.seq};
  l.push(e);
}

EventLoop::Event EventLoop::lane_pop(std::size_t lane) {
  Lane& l = lanes_[lane];
  const Event e = l.pop();
  fronts_[lane] = l.size == 0 ? kNoFront : Front{l.front().t, l.front().seq};
  return e;
}

int EventLoop::next_source() const {
  int best = -1;
  Front min = kNoFront;
  if (!heap_.empty()) {
    best = kLanes;
    min = {heap_.front().t, heap_.front().seq};
  }
  for (int i = 0; i < kLanes; ++i) {
    const Front& f = fronts_[static_cast<std::size_t>(i)];
    if (f.t < min.t || (f.t == min.t && f.seq < min.seq)) {
      best = i;
      min = f;
    }
  }
  return best;
}

Duration EventLoop::next_time() const {
  const int src = next_source();
  if (src < 0) return Duration::max();
  return src == kLanes ? heap_.front().t : lanes_[static_cast<std::size_t>(src)].front().t;
}

void EventLoop::clear() {
  heap_.clear();
  for (Lane& l : lanes_) {
    const bool stream = l.delay == kStream;
    l = Lane{};
    if (stream) l.delay = kStream;
  }
  fronts_.fill(kNoFront);
  last_miss_ = Duration(-1);
}

int EventLoop::new_stream() {
  for (int i = 0; i < kLanes; ++i) {
    Lane& l = lanes_[static_cast<std::size_t>(i)];
    if (l.delay == Duration(-1) && l.size == 0) {
      l.delay = kStream;
      return i;
    }
  }
  return -1;
}

void EventLoop::at_stream(int stream, Duration t, int owner, EventFn fn, void* ctx, std::uint64_t arg) {
  const Event e{std::max(t, now_), seq_++, fn, ctx, static_cast<std::uint32_t>(arg), owner};
  if (stream >= 0) {
    Lane& l = lanes_[static_cast<std::size_t>(stream)];
    // Its sequence number is the newest: after the lane's last when not earlier.
    if (l.size == 0 || e.t >= l.back().t) {
      lane_push(static_cast<std::size_t>(stream), e);
      return;
    }
  }
  push(e);
}

void EventLoop::push(const Event& e) {
  // Same delay as a lane's: its events stay in (t, seq) order, so it is appended.
  const Duration delay = e.t - now_;
  for (std::size_t i = 0; i < kLanes; ++i)
    if (lanes_[i].delay == delay) {
      lane_push(i, e);
      return;
    }
  if (delay == last_miss_) {  // a delay seen twice running: give it an empty lane
    for (std::size_t i = 0; i < kLanes; ++i)
      if (lanes_[i].size == 0 && lanes_[i].delay != kStream) {
        lanes_[i].delay = delay;
        lane_push(i, e);
        return;
      }
  }
  last_miss_ = delay;
  // Sift the hole up from the end, then drop the event in.
  std::size_t i = heap_.size();
  heap_.emplace_back();
  while (i > 0) {
    const std::size_t parent = (i - 1) / 4;
    if (!before(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

EventLoop::Event EventLoop::pop_heap() {
  const Event top = heap_.front();
  const Event last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return top;
  // Sift the hole down from the root, then put the last event in it.
  std::size_t i = 0;
  for (;;) {
    const std::size_t first = 4 * i + 1;
    if (first >= n) break;
    std::size_t best = first;
    const std::size_t end = std::min(first + 4, n);
    for (std::size_t c = first + 1; c < end; ++c)
      if (before(heap_[c], heap_[best])) best = c;
    if (!before(heap_[best], last)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = last;
  return top;
}

void EventLoop::at(Duration t, int owner, EventFn fn, void* ctx, std::uint64_t arg) {
  push({std::max(t, now_), seq_++, fn, ctx, static_cast<std::uint32_t>(arg), owner});
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
  for (;;) {
    const int src = next_source();
    if (src < 0) break;
    const Event& next = src == kLanes ? heap_.front() : lanes_[static_cast<std::size_t>(src)].front();
    if (next.t > until || events_run_ >= max_events) return false;
    Event e = src == kLanes ? pop_heap() : lane_pop(static_cast<std::size_t>(src));
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

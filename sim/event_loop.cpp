#include "sim/event_loop.hpp"

#include "base/assert.hpp"

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
  for (const Owner& o : owners_) n += o.parked.size();
  return n;
}

void EventLoop::lane_push(std::size_t lane, const Event& e) {
  Lane& l = lanes_[lane];
  if (l.size == 0) fronts_[lane] = e.key();
  l.push(e);
}

EventLoop::Event EventLoop::lane_pop(std::size_t lane) {
  Lane& l = lanes_[lane];
  const Event e = l.pop();
  fronts_[lane] = l.size == 0 ? kNoKey : l.front().key();
  return e;
}

int EventLoop::next_source(Key& min) const {
  int best = -1;
  min = kNoKey;
  if (!heap_.empty()) {
    best = kLanes;
    min = heap_.front().key();
  }
  for (int i = 0; i < kLanes; ++i) {
    const Key f = fronts_[static_cast<std::size_t>(i)];
    if (f < min) {
      best = i;
      min = f;
    }
  }
  return best;
}

Duration EventLoop::next_time() const {
  Key min;
  if (next_source(min) < 0) return Duration::max();
  return Duration(static_cast<std::int64_t>(min >> 64));
}

void EventLoop::clear() {
  heap_.clear();
  for (Lane& l : lanes_) {
    const bool stream = l.delay == kStream;
    l = Lane{};
    if (stream) l.delay = kStream;
  }
  fronts_.fill(kNoKey);
  last_miss_ = Duration(-1);
  for (Owner& o : owners_) o.parked.clear();
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
  LOCKBENCH_ASSERT(t >= now_, "an event scheduled in the past");
  const Event e{t, seq_++, fn, ctx, static_cast<std::uint32_t>(arg), owner};
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
  // Which lanes take this delay, as a bit mask: one branch, not one per lane.
  const Duration delay = e.t - now_;
  unsigned match = 0;
  for (std::size_t i = 0; i < kLanes; ++i) match |= static_cast<unsigned>(lanes_[i].delay == delay) << i;
  if (match != 0) {
    lane_push(static_cast<std::size_t>(__builtin_ctz(match)), e);
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
  const Key k = e.key();
  std::size_t i = heap_.size();
  heap_.emplace_back();
  while (i > 0) {
    const std::size_t parent = (i - 1) / 4;
    if (!(k < heap_[parent].key())) break;
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
  const Key last_key = last.key();
  Event* const h = heap_.data();
  std::size_t i = 0;
  for (;;) {
    const std::size_t first = 4 * i + 1;
    std::size_t best;
    Key best_key;
    if (first + 4 <= n) {
      // All four children: the smaller of each pair, then of the two winners.
      const Key k0 = h[first].key(), k1 = h[first + 1].key(), k2 = h[first + 2].key(), k3 = h[first + 3].key();
      const bool b01 = k1 < k0, b23 = k3 < k2;
      const Key m01 = b01 ? k1 : k0, m23 = b23 ? k3 : k2;
      const bool right = m23 < m01;
      best = first + (right ? 2 + b23 : b01);
      best_key = right ? m23 : m01;
    } else {
      if (first >= n) break;
      best = first;
      best_key = h[first].key();
      for (std::size_t c = first + 1; c < n; ++c)
        if (const Key k = h[c].key(); k < best_key) {
          best = c;
          best_key = k;
        }
    }
    if (!(best_key < last_key)) break;
    h[i] = h[best];
    i = best;
  }
  h[i] = last;
  return top;
}

void EventLoop::at(Duration t, int owner, EventFn fn, void* ctx, std::uint64_t arg) {
  // Virtual time never runs back: an event before now is a bug of its caller
  // (once silently moved to now, which hid it).
  LOCKBENCH_ASSERT(t >= now_, "an event scheduled in the past");
  push({t, seq_++, fn, ctx, static_cast<std::uint32_t>(arg), owner});
}

void EventLoop::resume_at(Duration t, int owner, std::coroutine_handle<> h) {
  at(t, owner, &resume_handle, h.address());
}

int EventLoop::new_owner() {
  owners_.push_back({});
  return static_cast<int>(owners_.size() - 2);
}

int EventLoop::new_twin(int owner) {
  const int twin = new_owner();
  owner_of(owner).twin = twin;
  return twin;
}

void EventLoop::kill(int owner) {
  if (owner < 0) return;
  Owner& o = owner_of(owner);
  o.alive = false;
  o.parked.clear();
  if (o.twin >= 0) kill(o.twin);
}

void EventLoop::pause(int owner, Duration until) {
  if (owner < 0) return;
  Owner& o = owner_of(owner);
  o.pause_end = until;
  if (!o.held) o.paused_until = until;
  if (o.twin >= 0) pause(o.twin, until);
}

Duration EventLoop::paused_until(int owner) const {
  if (owner < 0) return Duration::zero();
  const Duration u = owner_of(owner).pause_end;
  return u > now_ ? u : Duration::zero();
}

void EventLoop::hold(int owner) {
  Owner& o = owner_of(owner);
  o.held = true;
  o.paused_until = Duration::max();
}

void EventLoop::release(int owner) {
  Owner& o = owner_of(owner);
  if (!o.held) return;
  o.held = false;
  o.paused_until = o.pause_end;
  // Due already: back at the current time, in the order they came due.
  std::vector<Event> parked;
  parked.swap(o.parked);
  for (Event& e : parked) {
    e.t = now_;
    e.seq = seq_++;
    push(e);
  }
}

bool EventLoop::run(Duration until, std::uint64_t max_events) {
  for (;;) {
    Key next;
    const int src = next_source(next);
    if (src < 0) break;
    if (Duration(static_cast<std::int64_t>(next >> 64)) > until || events_run_ >= max_events) return false;
    Event e = src == kLanes ? pop_heap() : lane_pop(static_cast<std::size_t>(src));
    now_ = e.t;
    Owner& o = owner_of(e.owner);  // kGlobal's is alive and never paused
    if (!o.alive) [[unlikely]]
      continue;  // a crashed pod: its work vanished
    if (o.paused_until > now_) [[unlikely]] {
      if (o.held) {  // no carrier: waits for release()
        o.parked.push_back(e);
        continue;
      }
      // Frozen: runs when the pause ends, after what was queued before it
      // (a new sequence number keeps the deferred events in their order).
      e.t = o.paused_until;
      e.seq = seq_++;
      push(e);
      continue;
    }
    ++events_run_;
    e.fn(e.ctx, e.arg);
  }
  return true;
}

}  // namespace lockbench::sim

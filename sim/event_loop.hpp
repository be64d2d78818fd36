// The simulator's clock: a queue of events ordered by (virtual time, sequence
// number) that jumps from one event to the next and never sleeps (like
// FoundationDB's sim2 run loop). Equal times keep insertion order, so a run is
// a pure function of its seed.
//
// Every event has an owner: -1 for the database, the partner and the load
// balancer (they always run), or a pod incarnation. A dead owner's events are
// dropped (a crashed pod's coroutines are never resumed); a paused owner's
// events are deferred to the end of its pause (a GC pause freezes the pod); a
// held owner's events are parked until it is released (a pod whose virtual
// threads' carriers are all pinned: sim/pod.cpp). An owner may have a twin, an
// owner of its own that dies and pauses with it but is never held: the events
// of the pod's pinned virtual threads, which keep running on their carriers.
#pragma once

#include <array>
#include <coroutine>
#include <cstdint>
#include <vector>

#include "base/assert.hpp"
#include "base/units.hpp"

namespace lockbench::sim {

// An event handler: a plain function pointer and its context, so scheduling an
// event allocates nothing (the heap's vector grows once and is reused).
using EventFn = void (*)(void* ctx, std::uint64_t arg);

inline constexpr int kGlobal = -1;

class EventLoop {
 public:
  Duration now() const { return now_; }
  std::uint64_t events_run() const { return events_run_; }
  std::size_t pending() const;
  // Time of the next event (Duration::max() when none).
  Duration next_time() const;

  // `arg` must fit in 32 bits (request indices, tickets, slots).
  void at(Duration t, int owner, EventFn fn, void* ctx, std::uint64_t arg = 0);
  // Resumes a suspended coroutine at time t (never in the past).
  void resume_at(Duration t, int owner, std::coroutine_handle<> h);

  // A stream: a lane of its own for events scheduled in time order, such as
  // an open loop's arrivals (each scheduled when the one before it runs), so
  // they skip the heap. -1 when no lane is free; at(stream, ...) then uses the
  // heap. An event earlier than the stream's last goes to the heap too: the
  // order of events never depends on where they wait.
  int new_stream();
  void at_stream(int stream, Duration t, int owner, EventFn fn, void* ctx, std::uint64_t arg = 0);

  // Owners: a new one is alive, not paused and not held.
  int new_owner();
  // A second owner that is killed and paused with `owner` (its twin), never held.
  int new_twin(int owner);
  void kill(int owner);
  bool alive(int owner) const { return owner < 0 || owner_of(owner).alive; }
  // The owner's events between now and `until` wait until `until`.
  void pause(int owner, Duration until);
  // Non-zero while the owner is paused: when it resumes.
  Duration paused_until(int owner) const;
  // Hold: the owner's events that come due are parked, in their order, until
  // release() puts them back at the current time (after a pause's end, if one
  // is still running). A kill drops them.
  void hold(int owner);
  void release(int owner);
  bool held(int owner) const { return owner >= 0 && owner_of(owner).held; }

  // Runs events until none is left, the next one is after `until`, or
  // `max_events` ran. Returns false when it stopped because of a bound.
  bool run(Duration until, std::uint64_t max_events);
  // Forgets every pending event (their coroutines are destroyed by their owners).
  void clear();

 private:
  // (t, seq) as one unsigned 128-bit number: times are never negative, so
  // comparing keys orders events by time, then by insertion, in one compare
  // without branches.
  using Key = __uint128_t;
  static constexpr Key kNoKey = ~Key{0};  // after every event
  static Key key(Duration t, std::uint64_t seq) {
    return (Key{static_cast<std::uint64_t>(t.count())} << 64) | seq;
  }
  struct Event {
    Duration t;
    std::uint64_t seq;
    EventFn fn;
    void* ctx;
    std::uint32_t arg;  // indices, tickets, generations: 32 bits are plenty for one run
    int owner;
    Key key() const { return EventLoop::key(t, seq); }
  };
  Event pop_heap();
  // A FIFO of events scheduled with one same delay (a fixed DB latency, a
  // hand-off, zero): as the clock only moves forward, they arrive in (t, seq)
  // order, so the lane is sorted without a heap. A third of a run's events
  // take a lane instead of the heap's two sifts.
  struct Lane {
    Duration delay{-1};          // -1 = unassigned, kStream = a stream's
    std::vector<Event> ring;     // capacity a power of two
    std::size_t head = 0, size = 0;
    const Event& front() const { return ring[head]; }
    const Event& back() const { return ring[(head + size - 1) & (ring.size() - 1)]; }
    void push(const Event& e);
    Event pop();
  };
  static constexpr int kLanes = 5;
  static constexpr Duration kStream = Duration::min();
  // Where the next event is: a lane's index, or kLanes for the heap; -1 when
  // none. `min` is its key.
  int next_source(Key& min) const;
  void lane_push(std::size_t lane, const Event& e);
  Event lane_pop(std::size_t lane);
  struct Owner {
    bool alive = true;
    bool held = false;
    int twin = -1;
    // What run() reads: the pause's end, or Duration::max() while held (one
    // compare on the hot path covers both).
    Duration paused_until{};
    Duration pause_end{};
    std::vector<Event> parked;  // while held
  };
  void push(const Event& e);

  Duration now_{};
  std::uint64_t seq_ = 0;
  std::uint64_t events_run_ = 0;
  std::vector<Event> heap_;    // a 4-ary min-heap by (t, seq): shallower than a binary one
  std::array<Lane, kLanes> lanes_;
  // Each lane's first event's key, kept beside the lanes so that finding the
  // next event reads one small array (an empty lane's is kNoKey).
  std::array<Key, kLanes> fronts_ = [] {
    std::array<Key, kLanes> f;
    f.fill(kNoKey);
    return f;
  }();
  Duration last_miss_{-1};     // the delay of the last event no lane took: seen twice running, it gets a lane
  // owner id + 1: entry 0 is kGlobal's (alive, never paused), so running an
  // event looks its owner up without asking whose it is.
  std::vector<Owner> owners_ = std::vector<Owner>(1);
  const Owner& owner_of(int owner) const { return owners_[static_cast<std::size_t>(owner + 1)]; }
  Owner& owner_of(int owner) { return owners_[static_cast<std::size_t>(owner + 1)]; }
};

// co_await Sleep{loop, d, owner}: resumes after d of virtual time.
struct Sleep {
  EventLoop& loop;
  Duration d;
  int owner;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) {
    LOCKBENCH_ASSERT(d >= Duration::zero(), "a negative wait");
    loop.resume_at(loop.now() + d, owner, h);
  }
  void await_resume() const noexcept {}
};

}  // namespace lockbench::sim

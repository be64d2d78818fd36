// The simulator's clock: a queue of events ordered by (virtual time, sequence
// number) that jumps from one event to the next and never sleeps (like
// FoundationDB's sim2 run loop). Equal times keep insertion order, so a run is
// a pure function of its seed.
//
// Every event has an owner: -1 for the database, the partner and the load
// balancer (they always run), or a pod incarnation. A dead owner's events are
// dropped (a crashed pod's coroutines are never resumed); a paused owner's
// events are deferred to the end of its pause (a GC pause freezes the pod).
#pragma once

#include <coroutine>
#include <cstdint>
#include <vector>

#include "core/units.hpp"

namespace lockbench::sim {

// An event handler: a plain function pointer and its context, so scheduling an
// event allocates nothing (the heap's vector grows once and is reused).
using EventFn = void (*)(void* ctx, std::uint64_t arg);

inline constexpr int kGlobal = -1;

class EventLoop {
 public:
  Duration now() const { return now_; }
  std::uint64_t events_run() const { return events_run_; }
  std::size_t pending() const { return heap_.size(); }
  // Time of the next event (Duration::max() when none).
  Duration next_time() const { return heap_.empty() ? Duration::max() : heap_.front().t; }

  // `arg` must fit in 32 bits (request indices, tickets, slots).
  void at(Duration t, int owner, EventFn fn, void* ctx, std::uint64_t arg = 0);
  // Resumes a suspended coroutine at time t (never in the past).
  void resume_at(Duration t, int owner, std::coroutine_handle<> h);

  // Owners: a new one is alive and not paused.
  int new_owner();
  void kill(int owner);
  bool alive(int owner) const { return owner < 0 || owners_[static_cast<std::size_t>(owner)].alive; }
  // The owner's events between now and `until` wait until `until`.
  void pause(int owner, Duration until);
  // Non-zero while the owner is paused: when it resumes.
  Duration paused_until(int owner) const;

  // Runs events until none is left, the next one is after `until`, or
  // `max_events` ran. Returns false when it stopped because of a bound.
  bool run(Duration until, std::uint64_t max_events);
  // Forgets every pending event (their coroutines are destroyed by their owners).
  void clear() { heap_.clear(); }

 private:
  struct Event {
    Duration t;
    std::uint64_t seq;
    EventFn fn;
    void* ctx;
    std::uint32_t arg;  // indices, tickets, generations: 32 bits are plenty for one run
    int owner;
  };
  static bool before(const Event& a, const Event& b) { return a.t != b.t ? a.t < b.t : a.seq < b.seq; }
  Event pop();
  struct Owner {
    bool alive = true;
    Duration paused_until{};
  };
  void push(const Event& e);

  Duration now_{};
  std::uint64_t seq_ = 0;
  std::uint64_t events_run_ = 0;
  std::vector<Event> heap_;    // a 4-ary min-heap by (t, seq): shallower than a binary one
  std::vector<Owner> owners_;  // indexed by owner id
};

// co_await Sleep{loop, d, owner}: resumes after d of virtual time.
struct Sleep {
  EventLoop& loop;
  Duration d;
  int owner;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) { loop.resume_at(loop.now() + d, owner, h); }
  void await_resume() const noexcept {}
};

}  // namespace lockbench::sim

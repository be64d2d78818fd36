// LocalLocks: the in-process locks of one simulated pod (Java's synchronized, a
// ReentrantLock per key), for World::local_lock. One holder request per key,
// FIFO waiters suspended on the event loop, a timeout per waiter. The table
// belongs to its Pod: a crashed pod's locks (and its waiters) vanish with it,
// and another pod never sees them, which is the whole point of the strategy
// `synchronized`. Single-threaded, like everything in sim/.
#pragma once

#include <coroutine>
#include <cstdint>
#include <deque>
#include <unordered_map>

#include "core/world.hpp"
#include "sim/event_loop.hpp"

namespace lockbench::sim {

class LocalLocks {
 public:
  struct Waiter {
    std::uint64_t request = 0;
    std::uint64_t ticket = 0;
    int owner = kGlobal;  // the pod's event-loop owner
    std::coroutine_handle<> handle;
    LockResult result = LockResult::busy;
  };
  struct WaitAwaiter {
    LocalLocks& locks;
    EventLoop& loop;
    Key key;
    Duration timeout;  // zero = no bound
    Waiter w;
    bool await_ready() const noexcept { return false; }  // the caller tried first
    void await_suspend(std::coroutine_handle<> h) {
      w.handle = h;
      locks.enqueue(loop, key, &w, timeout);
    }
    LockResult await_resume() const noexcept { return w.result; }
  };

  // Takes the lock when it is free; busy when another request holds it.
  LockResult try_lock(Key key, std::uint64_t request);
  // co_await, after try_lock answered busy: the lock, waiting in FIFO order; timed_out after `timeout`.
  WaitAwaiter wait(EventLoop& loop, int owner, Key key, std::uint64_t request, Duration timeout) {
    return WaitAwaiter{*this, loop, key, timeout, Waiter{request, 0, owner, {}, LockResult::busy}};
  }
  // Gives the lock back and hands it to the first waiter (nothing when `request` does not hold it).
  void unlock(EventLoop& loop, Key key, std::uint64_t request);
  std::size_t held() const { return held_.size(); }

 private:
  struct Entry {
    std::uint64_t holder = 0;
    std::deque<Waiter*> waiters;
  };
  void enqueue(EventLoop& loop, Key key, Waiter* w, Duration timeout);
  static void on_timeout(void* self, std::uint64_t ticket);

  std::unordered_map<Key, Entry> held_;
  struct Timed {
    Key key;
    Waiter* w;
    EventLoop* loop;
  };
  std::unordered_map<std::uint64_t, Timed> by_ticket_;  // waiters with a pending timeout
  std::uint64_t next_ticket_ = 1;
};

}  // namespace lockbench::sim

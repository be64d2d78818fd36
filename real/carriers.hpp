// Carriers: a pod's carrier threads when its requests run on virtual threads
// (--virtual-threads, --carriers), the real world's side of what the
// simulator's Pod::pin models. A request thread stands for a virtual thread: it
// runs only while mounted on one of the pod's carriers (a FIFO semaphore, as
// the JDK's scheduler takes virtual threads in turn), and gives its carrier back
// while it blocks (VirtualThread::Blocking: the pool, a statement, the partner
// call, a sleep, a lease store) unless it is pinned: inside synchronized below
// JDK 24 (RealWorld::local_lock, waiting or holding) it keeps it. Once every
// carrier is pinned nothing else in the pod mounts: new requests, blocked
// requests coming back, the health probes' handlers.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>

#include "core/carriers.hpp"

namespace lockbench::real {

class Carriers {
 public:
  explicit Carriers(int carriers);
  // Waits its turn for a free carrier (FIFO). `start`: a request starting (counted when it waited).
  void mount(bool start);
  void unmount();
  // The mounted caller pins its carrier / no longer does.
  void pin();
  void unpin();
  int carriers() const { return carriers_; }
  CarrierStats stats();  // a stall still running counts up to now

 private:
  using Clock = std::chrono::steady_clock;
  const int carriers_;
  std::mutex mu_;
  std::condition_variable cv_;
  int free_;                          // GUARDED_BY(mu_)
  std::deque<std::uint64_t> queue_;   // GUARDED_BY(mu_): tickets waiting, in arrival order
  std::uint64_t next_ticket_ = 0;     // GUARDED_BY(mu_)
  int pinned_ = 0;                    // GUARDED_BY(mu_)
  Clock::time_point stalled_since_{}; // GUARDED_BY(mu_): valid while pinned_ == carriers_
  CarrierStats stats_;                // GUARDED_BY(mu_)
};

// The calling thread as a virtual thread of `carriers` (null: a platform
// thread, and every call below does nothing). Mounted for its lifetime.
class VirtualThread {
 public:
  VirtualThread(Carriers* carriers, bool start);
  ~VirtualThread();
  VirtualThread(const VirtualThread&) = delete;
  VirtualThread& operator=(const VirtualThread&) = delete;

  // Around a blocking call: unmounted for its duration, unless pinned (or
  // already unmounted by an outer Blocking).
  class Blocking {
   public:
    Blocking();
    ~Blocking();
    Blocking(const Blocking&) = delete;
    Blocking& operator=(const Blocking&) = delete;

   private:
    bool unmounted_ = false;
  };
  // synchronized below JDK 24: the carrier stays with this thread until unpin().
  static void pin();
  static void unpin();

 private:
  Carriers* carriers_;
  VirtualThread* outer_;
  bool pinned_ = false;
  bool unmounted_ = false;
};

}  // namespace lockbench::real

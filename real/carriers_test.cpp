// Carriers and VirtualThread (real/carriers.hpp): a carrier per mounted thread,
// FIFO turns, a blocking call that frees the carrier unless pinned, and the
// stall figures. Orderings only (threads that must or must not get through),
// each wait bounded so that a broken scheduler fails instead of hanging.
#include "real/carriers.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

namespace lockbench::real {
namespace {

using namespace std::chrono_literals;

// Mounts on `c` in another thread; the future is ready once it got a carrier.
std::future<void> mount_elsewhere(Carriers& c, std::atomic<bool>& leave) {
  return std::async(std::launch::async, [&c, &leave] {
    VirtualThread vt(&c, true);
    while (!leave.load()) std::this_thread::sleep_for(1ms);
  });
}

TEST(Carriers, ASecondThreadMountsOnlyWhenTheFirstBlocksOrLeavesAndNeverWhilePinned) {
  Carriers c(1);
  std::atomic<bool> leave{false};
  std::promise<void> blocked, may_go_on, pinned, may_unpin;
  std::thread first([&] {
    VirtualThread vt(&c, true);
    {
      VirtualThread::Blocking b;  // a partner call: the carrier is free meanwhile
      blocked.set_value();
      may_go_on.get_future().wait();
    }
    VirtualThread::pin();  // synchronized below JDK 24: blocking keeps the carrier
    {
      VirtualThread::Blocking b;
      pinned.set_value();
      may_unpin.get_future().wait();
    }
    VirtualThread::unpin();
  });
  blocked.get_future().wait();
  std::atomic<bool> second_leave{false};
  auto second = mount_elsewhere(c, second_leave);
  second_leave = true;
  ASSERT_EQ(second.wait_for(5s), std::future_status::ready);  // mounted on the carrier the first freed
  may_go_on.set_value();
  pinned.get_future().wait();
  auto third = mount_elsewhere(c, leave);
  EXPECT_EQ(third.wait_for(200ms), std::future_status::timeout);  // pinned: no carrier for anyone else
  may_unpin.set_value();
  first.join();
  leave = true;
  EXPECT_EQ(third.wait_for(5s), std::future_status::ready);
  const CarrierStats s = c.stats();
  EXPECT_EQ(s.stalls, 1);
  EXPECT_EQ(s.pinned_peak, 1);
  EXPECT_GT(s.stalled, Duration::zero());
  EXPECT_GE(s.starts_waited, 1);
}

TEST(Carriers, ThreadsWaitingForACarrierMountInTheOrderTheyCame) {
  Carriers c(1);
  c.mount(false);
  std::vector<int> order;
  std::mutex mu;
  std::vector<std::thread> waiters;
  for (int i = 0; i < 4; ++i) {
    waiters.emplace_back([&, i] {
      c.mount(true);
      {
        std::lock_guard l(mu);
        order.push_back(i);
      }
      c.unmount();
    });
    // the next one comes after this one is queued
    for (int k = 0; k < 500 && c.stats().starts_waited < i + 1; ++k) std::this_thread::sleep_for(1ms);
  }
  c.unmount();
  for (auto& t : waiters) t.join();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(c.stats().starts_waited, 4);
}

}  // namespace
}  // namespace lockbench::real

// The simulator's invariants (LOCKBENCH_ASSERT, base/assert.hpp) fire where
// they are broken: a connection given back to its pool twice, or to a pool
// that lent none. (The event loop's own, an event in the past and a negative
// wait: sim/event_loop_test.cpp.) Every other simulator test runs with them
// armed and proves that the model never trips them.
#include <gtest/gtest.h>

#include "scenarios/registry.hpp"
#include "sim/sim_world.hpp"
#include "strategies/registry.hpp"

namespace lockbench {
namespace invariants_test {

using namespace std::chrono_literals;

struct PodOfItsOwn {
  Settings s = [] {
    Settings s;
    s.strategy = "held-tx";
    s.scenario = "switch-primary";
    s.maximum_pool_size = 3;
    s.probe_interval = 0s;
    return s;
  }();
  std::unique_ptr<Strategy> strategy = make_strategy(s.strategy);
  std::unique_ptr<Scenario> scenario = make_scenario(s.scenario);
  sim::SimWorld w{s, *strategy, *scenario};
  sim::Pod pod{w, 0, w.loop().new_owner()};
  sim::SimConn* borrow() {
    auto b = pod.borrow(1s);
    return b.await_ready() ? b.got : nullptr;
  }
};

TEST(SimPoolInvariants, ABorrowedConnectionGoesBackOnceAndThePoolCountsAgree) {
  PodOfItsOwn f;
  sim::SimConn* a = f.borrow();
  sim::SimConn* b = f.borrow();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(f.pod.active(), 2);
  f.pod.give_back(a);
  f.pod.give_back(b);
  EXPECT_EQ(f.pod.active(), 0);
  EXPECT_EQ(f.pod.idle(), 3);
}

TEST(SimPoolInvariantsDeathTest, AConnectionReturnedTwiceStopsTheSimulatorWithItsPlace) {
  EXPECT_DEATH(
      {
        PodOfItsOwn f;
        sim::SimConn* a = f.borrow();
        f.borrow();  // a second one stays lent: the count alone would not notice
        f.pod.give_back(a);
        f.pod.give_back(a);
      },
      "invariant broken at .*pod\\.cpp:[0-9]+: a connection returned twice to the pool");
}

TEST(SimPoolInvariantsDeathTest, AConnectionReturnedToAPoolThatLentNoneStopsTheSimulator) {
  EXPECT_DEATH(
      {
        PodOfItsOwn f;
        sim::SimConn* a = f.borrow();
        f.pod.give_back(a);
        f.pod.give_back(a);
      },
      "a connection returned to a pool that has none lent");
}

}  // namespace invariants_test
}  // namespace lockbench

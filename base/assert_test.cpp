#include "base/assert.hpp"

#include <gtest/gtest.h>

namespace lockbench {
namespace {

int checked_half(int even) {
  LOCKBENCH_ASSERT(even % 2 == 0, "an even number");
  return even / 2;
}

TEST(LockbenchAssert, AHoldingInvariantPassesAndReturns) { EXPECT_EQ(checked_half(8), 4); }

TEST(LockbenchAssertDeathTest, ABrokenInvariantAbortsNamingItsPlaceItsMessageAndItsCondition) {
  EXPECT_DEATH(checked_half(7), "invariant broken at .*assert_test\\.cpp:[0-9]+: an even number \\(even % 2 == 0\\)");
}

}  // namespace
}  // namespace lockbench

#include <gtest/gtest.h>

#include "core/metrics.hpp"
#include "core/result.hpp"

using namespace lockbench;

TEST(Samples, QuantilesAreNearestRank) {
  Samples s;
  for (int i = 100; i >= 1; --i) s.add(i);
  EXPECT_EQ(s.quantile(0.5), 50);
  EXPECT_EQ(s.quantile(0.99), 99);
  EXPECT_EQ(s.quantile(1.0), 100);
  EXPECT_EQ(s.max(), 100);
  EXPECT_DOUBLE_EQ(s.mean(), 50.5);
  s.add(1000);  // adding after a quantile re-sorts
  EXPECT_EQ(s.quantile(1.0), 1000);
}

TEST(Queueing, ErlangCMatchesKnownValues) {
  // c = 1: M/M/1, P(wait) = rho
  EXPECT_NEAR(erlang_c(1, 0.5), 0.5, 1e-12);
  // c = 2, a = 1: C = 1/3
  EXPECT_NEAR(erlang_c(2, 1.0), 1.0 / 3, 1e-12);
  // 10 servers at a = 8: table value 0.4092
  EXPECT_NEAR(erlang_c(10, 8.0), 0.4092, 1e-3);
  EXPECT_TRUE(std::isinf(erlang_c_wait_s(10, 20, 1.0)));
}

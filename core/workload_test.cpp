#include <gtest/gtest.h>

#include <map>

#include "core/workload.hpp"

using namespace lockbench;
using namespace std::chrono_literals;

TEST(Workload, PoissonScheduleHasTheRateAndIsSorted) {
  Settings s;
  s.rate_per_s = 50;
  s.duration = 200s;
  Workload w(s);
  const auto reqs = w.schedule();
  EXPECT_NEAR(static_cast<double>(reqs.size()), 10000, 400);
  for (std::size_t i = 1; i < reqs.size(); ++i) {
    ASSERT_LE(reqs[i - 1].intended, reqs[i].intended);
    ASSERT_EQ(reqs[i].id, reqs[i - 1].id + 1);
  }
}

TEST(Workload, SameSeedSameScheduleOtherSeedAnother) {
  Settings s;
  s.duration = 10s;
  Workload a(s), b(s);
  s.seed = 2;
  Workload c(s);
  const auto ra = a.schedule(), rb = b.schedule(), rc = c.schedule();
  ASSERT_EQ(ra.size(), rb.size());
  for (std::size_t i = 0; i < ra.size(); ++i) {
    EXPECT_EQ(ra[i].intended, rb[i].intended);
    EXPECT_EQ(ra[i].key, rb[i].key);
  }
  EXPECT_TRUE(ra.size() != rc.size() || ra[0].intended != rc[0].intended);
}

TEST(Workload, BurstPutsKRequestsAtTheSameInstantOnTheHotKey) {
  Settings s;
  s.arrival = Arrival::burst;
  s.burst = 8;
  s.key_dist = KeyDist::hot;
  Workload w(s);
  const auto reqs = w.schedule();
  ASSERT_EQ(reqs.size(), 8u);
  for (const auto& r : reqs) {
    EXPECT_EQ(r.intended, 0ns);
    EXPECT_EQ(r.key, 1);
  }
}

TEST(Workload, ZipfFavoursLowKeysUniformDoesNot) {
  Settings s;
  s.keys = 100;
  s.key_dist = KeyDist::zipf;
  s.zipf_s = 1.2;
  KeyChooser z(s);
  s.key_dist = KeyDist::uniform;
  KeyChooser u(s);
  Rng r(1);
  std::map<Key, int> zc, uc;
  for (int i = 0; i < 20000; ++i) {
    const Key kz = z.next(r), ku = u.next(r);
    ASSERT_GE(kz, 1);
    ASSERT_LE(kz, 100);
    ASSERT_GE(ku, 1);
    ASSERT_LE(ku, 100);
    zc[kz]++;
    uc[ku]++;
  }
  EXPECT_GT(zc[1], 5 * zc[50]);
  EXPECT_LT(uc[1], 2 * uc[50] + 50);
}

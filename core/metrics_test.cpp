#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

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

TEST(LatencyHistogram, EveryValueFallsInItsBucketWithinAnEighthOfItsLowerBound) {
  for (double v : {0.0, 0.0005, 0.001, 0.0013, 0.5, 1.0, 1.5, 7.0, 250.0, 1500.0, 30000.0, 86400000.0}) {
    const auto b = histogram_bounds(histogram_bucket(v));
    EXPECT_LE(b.lower, v * (1 + 1e-12)) << v;
    EXPECT_GT(b.upper, v * (1 - 1e-12)) << v;
    if (v >= kHistogramLowestMs) {
      EXPECT_LE(b.upper - b.lower, b.lower / kHistogramSubBuckets * (1 + 1e-12)) << v;
    }
  }
  EXPECT_LT(histogram_bucket(10), histogram_bucket(11));  // ordered
}

TEST(LatencyHistogram, TheBucketReadFromTheBitsIsTheOneIlogbAndLdexpGive) {
  const auto reference = [](double v) -> std::size_t {
    if (!(v >= kHistogramLowestMs)) return 0;
    const double ratio = v / kHistogramLowestMs;
    const int e = std::ilogb(ratio);
    auto sub = static_cast<int>((ratio / std::ldexp(1.0, e) - 1) * kHistogramSubBuckets);
    sub = std::clamp(sub, 0, kHistogramSubBuckets - 1);
    return 1 + static_cast<std::size_t>(e) * kHistogramSubBuckets + static_cast<std::size_t>(sub);
  };
  std::uint64_t x = 88172645463325252ULL;
  for (int i = 0; i < 200000; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const double v = std::ldexp(static_cast<double>(x >> 11) * 0x1.0p-53, static_cast<int>(x % 80) - 20);
    ASSERT_EQ(histogram_bucket(v), reference(v)) << v;
  }
  for (double v : {0.001, 0.002, 0.0015, 1.0, 1.125, 1e300, 4e3, 1e-9})
    EXPECT_EQ(histogram_bucket(v), reference(v)) << v;
}

TEST(LatencyHistogram, TwoRunsMergeByAddingEqualBuckets) {
  Samples a, b, both;
  for (int i = 1; i <= 500; ++i) a.add(i * 1.7), both.add(i * 1.7);
  for (int i = 1; i <= 300; ++i) b.add(i * 23.0), both.add(i * 23.0);
  const auto ha = histogram_json(a), hb = histogram_json(b), hboth = histogram_json(both);
  EXPECT_EQ(ha["count"], 500);
  std::map<double, std::int64_t> merged;
  for (const auto* h : {&ha, &hb})
    for (const auto& bucket : (*h)["buckets"]) merged[bucket[0].get<double>()] += bucket[2].get<std::int64_t>();
  std::map<double, std::int64_t> direct;
  std::int64_t total = 0;
  for (const auto& bucket : hboth["buckets"]) {
    direct[bucket[0].get<double>()] = bucket[2].get<std::int64_t>();
    total += bucket[2].get<std::int64_t>();
  }
  EXPECT_EQ(merged, direct);
  EXPECT_EQ(total, 800);
}

TEST(Timeline, A24HourRunIsDownsampledToTheBoundAndKeepsItsPeaks) {
  Recorder rec;  // one-second intervals
  const int seconds = 24 * 3600;
  for (int t = 0; t < seconds; ++t) {
    const bool spike = t == 40000;  // one busy second in a quiet day
    rec.pool_sample({std::chrono::seconds(t), spike ? 10 : 1, spike ? 250 : 0, spike ? 0 : 9});
    rec.finish(static_cast<std::uint64_t>(t), Outcome::ok, std::chrono::seconds(t), std::chrono::seconds(t), {});
  }
  const auto tl = rec.timeline_json();
  ASSERT_LE(tl.size(), kTimelinePointsMax);
  EXPECT_GE(tl.size(), kTimelinePointsMax / 2);
  int active = 0, pending = 0;
  std::int64_t ok = 0;
  for (const auto& row : tl) {
    active = std::max(active, row["active"].get<int>());
    pending = std::max(pending, row["pending"].get<int>());
    ok += row["ok"].get<std::int64_t>();
    EXPECT_NEAR(row["dt_s"].get<double>(), 144.0, 1e-9);
  }
  EXPECT_EQ(active, 10);      // the peak survives as the interval's max
  EXPECT_EQ(pending, 250);
  EXPECT_EQ(ok, seconds);     // outcomes are summed, none lost
  EXPECT_LT(tl.dump().size(), 200000u);
  // A short run keeps one row per second, the same shape.
  Recorder short_run;
  for (int t = 0; t < 30; ++t) short_run.pool_sample({std::chrono::seconds(t), 2, 0, 8});
  const auto st = short_run.timeline_json();
  EXPECT_EQ(st.size(), 30u);
  EXPECT_EQ(st[0].size(), tl[0].size());
}

TEST(LatencyHistogram, BucketsAscendAndHoldEverySampleFromZeroToHuge) {
  Samples s;
  for (double v : {0.0, 0.0005, 3.0, 3.0, 1e6, 2.5, 1e300}) s.add(v);
  const auto h = histogram_json(s);
  std::int64_t total = 0;
  double last_lower = -1;
  for (const auto& bucket : h["buckets"]) {
    EXPECT_GT(bucket[0].get<double>(), last_lower);
    last_lower = bucket[0].get<double>();
    total += bucket[2].get<std::int64_t>();
  }
  EXPECT_EQ(total, 7);
  EXPECT_EQ(h["buckets"][0][2], 2);  // 0 and 0.0005 share bucket 0
}

namespace {
// n samples from a xorshift64 sequence that starts at `seed`, each made by
// value(i, x): added to `s` in arrival order, and returned sorted (the copy
// the expected quantiles are read from).
template <class F>
std::vector<double> add_samples(Samples& s, int n, std::uint64_t seed, F value) {
  std::vector<double> copy;
  std::uint64_t x = seed;
  for (int i = 0; i < n; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const double v = value(i, x);
    s.add(v);
    copy.push_back(v);
  }
  std::sort(copy.begin(), copy.end());
  return copy;
}

// What quantile q must be: the value at its nearest rank in the sorted copy.
double nearest_rank(const std::vector<double>& sorted, double q) {
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}
}  // namespace

TEST(Samples, QuantilesOfManySamplesAreThoseOfTheSortedValues) {
  // Enough samples for the radix sort, with ties, zeros and a huge value.
  Samples s;
  const auto copy = add_samples(s, 20000, 88172645463325252ULL, [](int i, std::uint64_t x) {
    return i % 97 == 0 ? 0.0 : i % 101 == 0 ? 1e12 : static_cast<double>(x % 1000000) / 7.0;
  });
  for (double q : {0.0, 0.001, 0.5, 0.9, 0.99, 0.999, 1.0}) EXPECT_EQ(s.quantile(q), nearest_rank(copy, q)) << q;
  // All at once (the selection path), in the order asked, and again once sorted.
  const auto asked = {0.999, 0.5, 0.0, 1.0, 0.9, 0.5, 0.001, 0.99};
  auto all = s.quantiles(asked);
  std::size_t i = 0;
  for (double q : asked) EXPECT_EQ(all[i++], nearest_rank(copy, q)) << q;
  EXPECT_EQ(s.quantiles({0.25, 0.75}), (std::vector<double>{nearest_rank(copy, 0.25), nearest_rank(copy, 0.75)}));
}

TEST(Samples, SelectedQuantilesMatchTheSortedCopyAcrossBucketsAndTies) {
  // Unsorted, many equal values, and ranks that fall in one narrow bucket
  // and at bucket edges: every rank of a small grid is checked.
  Samples s;
  const auto copy = add_samples(s, 30000, 0x9E3779B97F4A7C15ULL, [](int i, std::uint64_t x) {
    return i % 3 == 0 ? 1500.0 : i % 7 == 0 ? 0.0 : 1000.0 + static_cast<double>(x % 100000) / 50.0;
  });
  for (int k = 0; k <= 200; ++k) {
    const double q = k / 200.0;
    const auto got = s.quantiles({q, 0.5});
    EXPECT_EQ(got[0], nearest_rank(copy, q)) << q;
    EXPECT_EQ(got[1], copy[copy.size() / 2 - 1]);
  }
}

TEST(Samples, NegativeSamplesStillSortByValue) {
  Samples s;
  for (int i = 0; i < 5000; ++i) s.add(i % 2 ? -i : i);
  EXPECT_EQ(s.quantile(0), -4999);
  EXPECT_EQ(s.quantile(1), 4998);
}

// Every database fault kind has a name of its own and a count in the result's
// db_faults: a kind added before DbFault::count_ without a name fails here.
TEST(DbFaults, EveryKindHasANameAndACountInTheResult) {
  SideEffects effects;
  std::set<std::string_view> names;
  for (std::size_t k = 0; k < kDbFaultCount; ++k) {
    const auto kind = static_cast<DbFault>(k);
    const std::string_view name = db_fault_name(kind);
    EXPECT_FALSE(name.empty()) << "kind " << k << " has no name in kDbFaultNames";
    EXPECT_TRUE(names.insert(name).second) << name << " names two kinds";
    for (std::size_t n = 0; n <= k; ++n) effects.db_fault(kind);  // kind k counted k + 1 times
  }
  const nlohmann::json faults = effects.json()["db_faults"];
  ASSERT_EQ(faults.size(), kDbFaultCount) << faults;
  for (std::size_t k = 0; k < kDbFaultCount; ++k)
    EXPECT_EQ(faults.value(std::string(db_fault_name(static_cast<DbFault>(k))), -1), static_cast<int>(k) + 1) << faults;
  EXPECT_EQ(db_fault_name(DbFault::commit_fail), "commit_fail");
  EXPECT_EQ(db_fault_name(DbFault::conn_lost), "conn_lost");
}

// pending_mean is the waiters' time average, not a mean of each second's
// busiest sample (issue 43): a second sampled 0, 0, 0, 8 has a peak of 8 and a
// time average of 2; a world that knows its exact average gives it instead.
TEST(Timeline, PendingMeanIsTheTimeAverageAndPendingTheSecondsPeak) {
  using std::chrono::milliseconds;
  Recorder rec;
  for (int ms : {0, 250, 500}) rec.pool_sample({milliseconds(ms), 1, 0, 9});
  rec.pool_sample({milliseconds(750), 9, 8, 1});
  rec.pool_sample({milliseconds(1000), 4, 3, 6, 1.5});  // second 1: the world's own average
  const auto tl = rec.timeline_json();
  ASSERT_EQ(tl.size(), 2u);
  EXPECT_EQ(tl[0]["pending"], 8);
  EXPECT_DOUBLE_EQ(tl[0]["pending_mean"].get<double>(), 2.0);
  EXPECT_EQ(tl[1]["pending"], 3);
  EXPECT_DOUBLE_EQ(tl[1]["pending_mean"].get<double>(), 1.5);
}

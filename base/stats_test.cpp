// core/stats against reference values computed offline with scipy 1.10.1
// (Debian 12's python3-scipy), numpy 1.24.2:
//   summaries: v.mean(), np.median(v), v.std(ddof=1), and
//              scipy.stats.t.interval(0.95, n - 1, loc=mean, scale=scipy.stats.sem(v))
//   quantiles: scipy.stats.t.ppf(p, df), scipy.stats.norm.ppf(p)
//   U tests:   scipy.stats.mannwhitneyu(x, y, alternative="two-sided") (method="auto")
// The literals below are those outputs, printed with repr().
#include "base/stats.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace lockbench::stats {
namespace {

TEST(Stats, SummarizeGivesScipysMeanMedianStddevAndTInterval) {
  const std::vector<double> a = {18.7, 18.9, 18.6, 18.8, 18.75};
  const Summary s = summarize(a);
  EXPECT_EQ(s.n, 5u);
  EXPECT_NEAR(s.mean, 18.75, 1e-12);
  EXPECT_NEAR(s.median, 18.75, 1e-12);
  EXPECT_NEAR(s.stddev, 0.11180339887498869, 1e-12);
  EXPECT_NEAR(s.cv, 0.005962847939999397, 1e-12);
  EXPECT_NEAR(s.ci95_low, 18.61117774474011, 1e-9);
  EXPECT_NEAR(s.ci95_high, 18.88882225525989, 1e-9);

  const std::vector<double> c = {3.1, 2.9, 3.4, 3.0, 3.3, 2.8, 3.2, 3.05, 2.95, 3.15};
  const Summary t = summarize(c);
  EXPECT_NEAR(t.median, 3.075, 1e-12);
  EXPECT_NEAR(t.stddev, 0.1841647812874836, 1e-12);
  EXPECT_NEAR(t.ci95_low, 2.9532564518727535, 1e-9);
  EXPECT_NEAR(t.ci95_high, 3.2167435481272464, 1e-9);
}

TEST(Stats, OneValueHasAnIntervalOfNoWidthAndNoValueIsRefused) {
  const std::vector<double> one = {1.0};
  const Summary s = summarize(one);
  EXPECT_EQ(s.stddev, 0);
  EXPECT_EQ(s.ci95_low, 1.0);
  EXPECT_EQ(s.ci95_high, 1.0);
  EXPECT_THROW(summarize(std::vector<double>{}), std::invalid_argument);
}

TEST(Stats, TAndNormalQuantilesMatchScipy) {
  const std::vector<std::tuple<double, double, double>> t975_t05 = {
      {1, 12.706204736432095, -6.313751514800938}, {2, 4.302652729911275, -2.9199855803555175},
      {3, 3.182446305284263, -2.3533634348018273}, {4, 2.7764451051977987, -2.1318467813362907},
      {9, 2.2621571627409915, -1.8331129326536337}, {29, 2.045229642132703, -1.6991270265334977},
      {30, 2.0422724563012373, -1.6972608943617384}, {100, 1.9839715184496334, -1.6602343260657506},
      {1000, 1.9623390808264074, -1.6463788172854645}};
  // 1e-7: scipy's t.ppf (cephes stdtrit) is itself off by about 3e-10 in probability at some
  // points (t.sf(-t.ppf(0.05, 4), 4) = 0.0500000002806), a few 1e-9 in t.
  for (const auto& [df, q975, q05] : t975_t05) {
    EXPECT_NEAR(t_quantile(0.975, df), q975, 1e-7) << df;
    EXPECT_NEAR(t_quantile(0.05, df), q05, 1e-7) << df;
  }
  EXPECT_NEAR(normal_quantile(0.975), 1.959963984540054, 1e-12);
  EXPECT_NEAR(normal_quantile(0.8), 0.8416212335729143, 1e-12);
  EXPECT_NEAR(normal_quantile(0.001), -3.090232306167813, 1e-12);
  EXPECT_NEAR(normal_quantile(0.999999), 4.753424308817087, 1e-9);
  EXPECT_NEAR(normal_quantile(0.5), 0, 1e-15);
}

struct UCase {
  std::vector<double> x, y;
  double u1, p;
  bool exact;
};

TEST(Stats, MannWhitneyUMatchesScipyExactAndAsymptotic) {
  const std::vector<double> x1 = {1.2, 3.4, 2.2, 5.1, 0.7};
  const std::vector<UCase> cases = {
      // small, no ties: exact
      {x1, {6.3, 4.4, 7.9, 5.5, 8.1, 6.0}, 1.0, 0.008658008658008658, true},
      {{1, 2, 3}, {4, 5, 6}, 0.0, 0.1, true},  // three a side cannot reach 0.05
      // ten a side: normal approximation with continuity correction
      {{10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, {12.5, 13.5, 14.5, 15.5, 16.5, 17.5, 18.5, 19.5, 20.5, 21.5}, 28.0,
       0.10410988966022681, false},
      // small with ties: asymptotic with tie correction
      {{1, 2, 2, 3, 3, 3}, {2, 3, 4, 4, 5}, 5.5, 0.08871369199677616, false},
      // an 8 % drop over ten repetitions
      {{20.1, 19.8, 20.3, 20.0, 19.9, 20.2, 20.05, 19.95, 20.15, 19.85},
       {18.5, 18.4, 18.6, 18.3, 18.55, 18.45, 18.65, 18.35, 18.5, 18.42}, 100.0, 0.00018165114609146497, false},
      // identical sets
      {std::vector<double>(10, 5.0), std::vector<double>(10, 5.0), 50.0, 1.0, false},
      {x1, {0.7, 5.1, 2.2, 3.4, 1.2}, 12.5, 1.0, false},
  };
  for (const auto& c : cases) {
    const UTest t = mann_whitney_u(c.x, c.y);
    EXPECT_DOUBLE_EQ(t.u1, c.u1);
    EXPECT_NEAR(t.p, c.p, 1e-12) << c.u1;
    EXPECT_EQ(t.exact, c.exact) << c.u1;
  }
  EXPECT_THROW(mann_whitney_u(std::vector<double>{}, x1), std::invalid_argument);
}

TEST(Stats, RepetitionsToDetectGrowWithTheSquareOfCvOverTheDifference) {
  // 2 (z_0.975 + z_0.8)^2 cv^2 / d^2 / (3 / pi) = 16.4388 cv^2 / d^2, at least 4.
  EXPECT_EQ(repetitions_to_detect(0.05, 0.10), 5u);   // 4.11
  EXPECT_EQ(repetitions_to_detect(0.10, 0.08), 26u);  // 25.69
  EXPECT_EQ(repetitions_to_detect(0.001, 0.10), 4u);
  EXPECT_GT(repetitions_to_detect(0.2, 0.05), repetitions_to_detect(0.1, 0.05));
  EXPECT_THROW(repetitions_to_detect(0.1, 0), std::invalid_argument);
}

TEST(Stats, NearestRankIsTheSmallestRankWhoseShareReachesQ) {
  // The ranks numpy.quantile(x, q, method="inverted_cdf") reads for 10 values.
  EXPECT_EQ(nearest_rank(0.0, 10), 1u);
  EXPECT_EQ(nearest_rank(0.1, 10), 1u);
  EXPECT_EQ(nearest_rank(0.11, 10), 2u);
  EXPECT_EQ(nearest_rank(0.5, 10), 5u);
  EXPECT_EQ(nearest_rank(0.99, 10), 10u);
  EXPECT_EQ(nearest_rank(1.0, 10), 10u);
  EXPECT_EQ(nearest_rank(0.999, 1), 1u);
  // Outside [0, 1]: the nearest end.
  EXPECT_EQ(nearest_rank(-0.5, 10), 1u);
  EXPECT_EQ(nearest_rank(2.0, 10), 10u);
}

}  // namespace
}  // namespace lockbench::stats

// Statistics over repetitions: what a figure's uncertainty is and whether two
// sets of figures differ. No I/O, no randomness; the reference values of its
// tests come from scipy (base/stats_test.cpp says which call gave each).
//
// - summarize(): n, mean, median, sample standard deviation (n - 1), cv
//   (stddev / |mean|) and the 95 % t-interval of the mean
//   (scipy.stats.t.interval(0.95, n - 1, mean, sem)); one value gives an
//   interval of zero width and a note that it has none.
// - mann_whitney_u(): the two-sided Mann-Whitney U test exactly as
//   scipy.stats.mannwhitneyu(x, y, alternative="two-sided") (scipy 1.10,
//   method="auto"): the exact distribution when either side has at most 8
//   values and nothing is tied, else the normal approximation with tie
//   correction and continuity correction.
// - repetitions_to_detect(): how many repetitions per side a two-sided test
//   at 5 % needs to see a relative difference with 80 % power, from the
//   observed coefficient of variation (normal sample-size formula divided by
//   the U test's asymptotic efficiency 3/pi, and at least 4: with 3 a side the
//   exact U test cannot reach p < 0.05).
// - nearest_rank(): the 1-based rank of quantile q among n sorted values,
//   ceil(q n) clamped to 1..n (the nearest-rank method): what
//   Samples::quantiles and a replayed sequence's quantile both read.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace lockbench::stats {

struct Summary {
  std::size_t n = 0;
  double mean = 0;
  double median = 0;
  double stddev = 0;  // sample (n - 1); 0 for one value
  double cv = 0;      // stddev / |mean|; 0 when the mean is 0
  double ci95_low = 0, ci95_high = 0;  // t-interval of the mean; [mean, mean] for one value
  double half_width() const { return (ci95_high - ci95_low) / 2; }
};
// Throws std::invalid_argument for no values.
Summary summarize(std::span<const double> values);

// Student's t quantile (the inverse CDF) for df >= 1 degrees of freedom, p in (0, 1).
double t_quantile(double p, double df);
// The standard normal's inverse CDF and survival function.
double normal_quantile(double p);
double normal_sf(double z);

struct UTest {
  double u1 = 0;       // U of the first sample (scipy's statistic)
  double p = 1;        // two-sided p-value
  bool exact = false;  // exact distribution (else normal approximation)
};
// Throws std::invalid_argument when a side is empty.
UTest mann_whitney_u(std::span<const double> x, std::span<const double> y);

// Repetitions per side to detect a relative difference `relative_difference`
// (0.1 = 10 %) given the coefficient of variation `cv`.
std::size_t repetitions_to_detect(double cv, double relative_difference);

// q outside [0, 1] is taken as its nearest end; n must be at least 1.
std::size_t nearest_rank(double q, std::size_t n);

}  // namespace lockbench::stats

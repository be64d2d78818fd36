#include "base/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace lockbench::stats {

namespace {

// Continued fraction of the regularized incomplete beta function (modified Lentz).
double beta_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300, kEps = 1e-15;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 1000; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    c = 1 + aa / c;
    d = 1 / (std::fabs(d) < kTiny ? kTiny : d);
    c = std::fabs(c) < kTiny ? kTiny : c;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    c = 1 + aa / c;
    d = 1 / (std::fabs(d) < kTiny ? kTiny : d);
    c = std::fabs(c) < kTiny ? kTiny : c;
    const double step = d * c;
    h *= step;
    if (std::fabs(step - 1) < kEps) break;
  }
  return h;
}

// I_x(a, b).
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) +
                                b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(a, b, x) / a;
  return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

// P(T > t) for t >= 0.
double t_sf(double t, double df) { return 0.5 * incomplete_beta(df / 2, 0.5, df / (df + t * t)); }

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Average ranks (1-based) of the pooled values, as scipy.stats.rankdata; adds sum(t^3 - t) over ties.
std::vector<double> ranks_of(const std::vector<double>& pooled, double& tie_term, bool& ties) {
  std::vector<std::size_t> order(pooled.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return pooled[a] < pooled[b]; });
  std::vector<double> rank(pooled.size());
  tie_term = 0;
  ties = false;
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && pooled[order[j + 1]] == pooled[order[i]]) ++j;
    const double avg = (static_cast<double>(i + 1) + static_cast<double>(j + 1)) / 2;
    for (std::size_t k = i; k <= j; ++k) rank[order[k]] = avg;
    const double t = static_cast<double>(j - i + 1);
    if (t > 1) ties = true;
    tie_term += t * t * t - t;
    i = j + 1;
  }
  return rank;
}

// P(U >= k) under the null for sample sizes m and n: the coefficients of the
// Gaussian binomial [m+n choose m]_q = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i).
double exact_u_sf(long k, std::size_t m, std::size_t n) {
  if (m > n) std::swap(m, n);
  const std::size_t top = m * n;
  std::vector<double> c(top + 1, 0.0);
  c[0] = 1;
  for (std::size_t i = 1; i <= m; ++i) {
    for (std::size_t d = top; d >= n + i; --d) c[d] -= c[d - n - i];  // times (1 - q^(n+i))
    for (std::size_t d = i; d <= top; ++d) c[d] += c[d - i];          // divided by (1 - q^i)
  }
  double total = 0, tail = 0;
  for (std::size_t d = 0; d <= top; ++d) {
    total += c[d];
    if (static_cast<long>(d) >= k) tail += c[d];
  }
  return tail / total;
}

}  // namespace

double normal_sf(double z) { return 0.5 * std::erfc(z / std::numbers::sqrt2); }

double normal_quantile(double p) {
  if (!(p > 0 && p < 1)) throw std::invalid_argument("normal_quantile: p must be in (0, 1)");
  // Acklam's rational approximation, then one Halley step against erfc (about 1e-15).
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                                 1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                 6.680131188771972e+01,  -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                 -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                 3.754408661907416e+00};
  double x;
  if (p < 0.02425) {
    const double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p > 1 - 0.02425) {
    const double q = std::sqrt(-2 * std::log1p(-p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else {
    const double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  }
  const double e = 0.5 * std::erfc(-x / std::numbers::sqrt2) - p;
  const double u = e * std::sqrt(2 * std::numbers::pi) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

double t_quantile(double p, double df) {
  if (!(p > 0 && p < 1)) throw std::invalid_argument("t_quantile: p must be in (0, 1)");
  if (!(df >= 1)) throw std::invalid_argument("t_quantile: df must be at least 1");
  if (p == 0.5) return 0;
  const double tail = p < 0.5 ? p : 1 - p;  // P(T > t) wanted
  double lo = 0, hi = 1;
  while (t_sf(hi, df) > tail && hi < 1e300) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-14 * hi; ++i) {
    const double mid = (lo + hi) / 2;
    (t_sf(mid, df) > tail ? lo : hi) = mid;
  }
  const double t = (lo + hi) / 2;
  return p < 0.5 ? -t : t;
}

Summary summarize(std::span<const double> values) {
  if (values.empty()) throw std::invalid_argument("summarize: no values");
  Summary s;
  s.n = values.size();
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(s.n);
  s.median = median_of({values.begin(), values.end()});
  s.ci95_low = s.ci95_high = s.mean;
  if (s.n < 2) return s;
  double ss = 0;
  for (double v : values) ss += (v - s.mean) * (v - s.mean);
  s.stddev = std::sqrt(ss / static_cast<double>(s.n - 1));
  s.cv = s.mean != 0 ? s.stddev / std::fabs(s.mean) : 0;
  const double half = t_quantile(0.975, static_cast<double>(s.n - 1)) * s.stddev / std::sqrt(static_cast<double>(s.n));
  s.ci95_low = s.mean - half;
  s.ci95_high = s.mean + half;
  return s;
}

UTest mann_whitney_u(std::span<const double> x, std::span<const double> y) {
  if (x.empty() || y.empty()) throw std::invalid_argument("mann_whitney_u: a sample is empty");
  const std::size_t n1 = x.size(), n2 = y.size();
  std::vector<double> pooled(x.begin(), x.end());
  pooled.insert(pooled.end(), y.begin(), y.end());
  double tie_term = 0;
  bool ties = false;
  const std::vector<double> rank = ranks_of(pooled, tie_term, ties);
  double r1 = 0;
  for (std::size_t i = 0; i < n1; ++i) r1 += rank[i];
  UTest t;
  t.u1 = r1 - static_cast<double>(n1 * (n1 + 1)) / 2;
  const double mn = static_cast<double>(n1 * n2);
  const double u = std::max(t.u1, mn - t.u1);
  t.exact = (n1 <= 8 || n2 <= 8) && !ties;
  if (t.exact) {
    t.p = 2 * exact_u_sf(std::lround(u), n1, n2);
  } else {
    const double n = static_cast<double>(n1 + n2);
    const double s = std::sqrt(mn / 12 * ((n + 1) - tie_term / (n * (n - 1))));
    t.p = s > 0 ? 2 * normal_sf((u - mn / 2 - 0.5) / s) : 1;
  }
  t.p = std::clamp(t.p, 0.0, 1.0);
  return t;
}

std::size_t repetitions_to_detect(double cv, double relative_difference) {
  if (!(relative_difference > 0)) throw std::invalid_argument("repetitions_to_detect: difference must be > 0");
  const double z = normal_quantile(0.975) + normal_quantile(0.8);
  const double n = 2 * z * z * cv * cv / (relative_difference * relative_difference) / (3 / std::numbers::pi);
  return std::max<std::size_t>(4, static_cast<std::size_t>(std::ceil(n)));
}

std::size_t nearest_rank(double q, std::size_t n) {
  const auto rank = static_cast<std::size_t>(std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(n)));
  return std::clamp<std::size_t>(rank, 1, n);
}

}  // namespace lockbench::stats

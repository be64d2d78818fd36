#include "core/workload.hpp"

#include <algorithm>
#include <cmath>

namespace lockbench {

namespace {
// log1p(x) / x and expm1(x) / x, with their Taylor series near 0 (where the
// quotients lose precision): together they make h_integral smooth through s = 1.
double log1p_over_x(double x) { return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1 - x * (0.5 - x * (1.0 / 3 - 0.25 * x)); }
double expm1_over_x(double x) { return std::abs(x) > 1e-8 ? std::expm1(x) / x : 1 + x * 0.5 * (1 + x / 3 * (1 + 0.25 * x)); }
}  // namespace

ZipfSampler::ZipfSampler(std::int64_t n, double s) : n_(std::max<std::int64_t>(1, n)), s_(s) {
  h_integral_x1_ = h_integral(1.5) - 1;
  h_integral_n_ = h_integral(static_cast<double>(n_) + 0.5);
  s_threshold_ = 2 - h_integral_inverse(h_integral(2.5) - h(2));
}

double ZipfSampler::h(double x) const { return std::exp(-s_ * std::log(x)); }

double ZipfSampler::h_integral(double x) const {
  const double log_x = std::log(x);
  return expm1_over_x((1 - s_) * log_x) * log_x;
}

double ZipfSampler::h_integral_inverse(double x) const {
  double t = x * (1 - s_);
  if (t < -1) t = -1;  // rounding near the lower end of the domain
  return std::exp(log1p_over_x(t) * x);
}

std::int64_t ZipfSampler::next(Rng& rng) const {
  // Bounded: the expected number of rounds is below 1.1; 1000 rounds without
  // acceptance would take a broken generator, and then the last candidate is used.
  std::int64_t k = 1;
  for (int round = 0; round < 1000; ++round) {
    const double u = h_integral_n_ + rng.uniform01() * (h_integral_x1_ - h_integral_n_);
    const double x = h_integral_inverse(u);
    k = std::clamp(static_cast<std::int64_t>(x + 0.5), std::int64_t{1}, n_);
    if (static_cast<double>(k) - x <= s_threshold_ || u >= h_integral(static_cast<double>(k) + 0.5) - h(static_cast<double>(k)))
      return k;
  }
  return k;
}

KeyChooser::KeyChooser(const Settings& s) : dist_(s.key_dist), keys_(s.keys), zipf_(s.keys, s.zipf_s) {}

Key KeyChooser::next(Rng& rng) const {
  switch (dist_) {
    case KeyDist::hot:
      return 1;
    case KeyDist::uniform:
      return 1 + static_cast<Key>(rng.below(static_cast<std::uint64_t>(keys_)));
    case KeyDist::zipf:
      return zipf_.next(rng);
  }
  return 1;
}

Workload::Workload(const Settings& s, bool fresh_keys)
    : s_(s),
      fresh_keys_(fresh_keys),
      keys_(s),
      arrivals_(s.seed, "workload.arrivals"),
      key_rng_(s.seed, "workload.keys"),
      choice_rng_(s.seed, "workload.choice"),
      think_rng_(s.seed, "workload.think"),
      dup_rng_(s.seed, "workload.duplicates"),
      backoff_rng_(s.seed, "workload.rejected_backoff") {}

Request Workload::make(Duration at, int user) {
  Request r;
  r.id = next_id_++;
  r.key = fresh_keys_ ? static_cast<Key>(r.id) : keys_.next(key_rng_);
  r.choice = choice_rng_.next();
  r.intended = at;
  r.user = user;
  return r;
}

std::vector<Request> Workload::schedule() {
  std::vector<Request> out;
  if (s_.arrival == Arrival::burst) {
    for (int i = 0; i < s_.burst; ++i) out.push_back(make(Duration::zero(), -1));
    add_duplicates(out);
    return out;
  }
  const double mean_gap_s = 1.0 / s_.rate_per_s;
  double t_s = arrivals_.exponential(mean_gap_s);
  const double end_s = to_s(s_.duration);
  // bounded: at most rate * duration * 2 + 1000 requests
  const auto cap = static_cast<std::size_t>(s_.rate_per_s * end_s * 2 + 1000);
  // Room for the expected count and six standard deviations (Poisson), so the
  // vector is not copied as it grows (a 1 h run at the incident: 72,000).
  const double expected = s_.rate_per_s * end_s;
  out.reserve(std::min(cap, static_cast<std::size_t>(expected + 6 * std::sqrt(expected) + 16)));
  while (t_s < end_s && out.size() < cap) {
    out.push_back(make(from_s(t_s), -1));
    t_s += arrivals_.exponential(mean_gap_s);
  }
  add_duplicates(out);
  return out;
}

void Workload::add_duplicates(std::vector<Request>& out) {
  if (s_.duplicate_share <= 0) return;
  const std::size_t n = out.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (dup_rng_.uniform01() >= s_.duplicate_share) continue;
    Request twin = out[i];  // the same record, the same choice: a resubmission
    twin.intended += from_ms(dup_rng_.uniform(0, to_ms(s_.duplicate_gap)));
    out.push_back(twin);
  }
  std::stable_sort(out.begin(), out.end(), [](const Request& a, const Request& b) { return a.intended < b.intended; });
  std::uint64_t id = 1;
  for (auto& r : out) r.id = id++;  // ids stay in arrival order; keys keep naming the record
}

Request Workload::next_for_user(int user, Duration at) { return make(at, user); }

Duration Workload::think(int) { return from_ms(think_rng_.exponential(to_ms(s_.think_time))); }

Duration Workload::think_after(int user, bool rejected) {
  const Duration thought = think(user);
  if (user < 0) return thought;
  const auto u = static_cast<std::size_t>(user);
  if (u >= rejected_streak_.size()) rejected_streak_.resize(u + 1, 0);
  int& streak = rejected_streak_[u];
  if (!rejected) {
    streak = 0;
    return thought;
  }
  streak = std::min(streak + 1, 30);
  const double ceiling_ms =
      std::min(to_ms(kRejectedBackoffCap), to_ms(kRejectedBackoffBase) * static_cast<double>(1ull << (streak - 1)));
  return std::max(thought, from_ms(backoff_rng_.uniform(0, ceiling_ms)));
}

}  // namespace lockbench

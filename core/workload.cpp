#include "core/workload.hpp"

#include <algorithm>
#include <cmath>

namespace lockbench {

KeyChooser::KeyChooser(const Settings& s) : dist_(s.key_dist), keys_(s.keys) {
  if (dist_ == KeyDist::zipf) {
    zipf_cdf_.resize(static_cast<std::size_t>(keys_));
    double sum = 0;
    for (int k = 1; k <= keys_; ++k) {
      sum += 1.0 / std::pow(static_cast<double>(k), s.zipf_s);
      zipf_cdf_[static_cast<std::size_t>(k - 1)] = sum;
    }
    for (auto& c : zipf_cdf_) c /= sum;
  }
}

Key KeyChooser::next(Rng& rng) const {
  switch (dist_) {
    case KeyDist::hot:
      return 1;
    case KeyDist::uniform:
      return 1 + static_cast<Key>(rng.below(static_cast<std::uint64_t>(keys_)));
    case KeyDist::zipf: {
      const double u = rng.uniform01();
      const auto it = std::lower_bound(zipf_cdf_.begin(), zipf_cdf_.end(), u);
      return 1 + static_cast<Key>(std::min<std::ptrdiff_t>(it - zipf_cdf_.begin(), keys_ - 1));
    }
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
      dup_rng_(s.seed, "workload.duplicates") {}

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

}  // namespace lockbench

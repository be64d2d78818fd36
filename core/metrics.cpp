#include "core/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace lockbench {

double Samples::mean() const {
  if (v_.empty()) return 0;
  return std::accumulate(v_.begin(), v_.end(), 0.0) / static_cast<double>(v_.size());
}

double Samples::max() const {
  if (v_.empty()) return 0;
  return *std::max_element(v_.begin(), v_.end());
}

double Samples::quantile(double q) const {
  if (v_.empty()) return 0;
  if (!std::is_sorted(v_.begin(), v_.end())) std::sort(v_.begin(), v_.end());
  const auto n = v_.size();
  auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(n)));
  if (rank < 1) rank = 1;
  if (rank > n) rank = n;
  return v_[rank - 1];
}

std::string_view outcome_name(Outcome o) {
  switch (o) {
    case Outcome::ok: return "ok";
    case Outcome::conflict: return "conflict";
    case Outcome::pool_timeout: return "pool_timeout";
    case Outcome::rejected: return "rejected";
    case Outcome::error: return "error";
  }
  return "?";
}

Recorder::Bucket& Recorder::bucket(Duration t) {
  const auto i = static_cast<std::size_t>(std::max<Duration::rep>(0, t.count() / timeline_step_.count()));
  if (i >= timeline_.size()) timeline_.resize(i + 1);
  return timeline_[i];
}

void Recorder::finish(std::uint64_t, Outcome o, Duration intended, Duration finished, const TimeSplit& s) {
  std::lock_guard lock(mu_);
  counts_[static_cast<int>(o)]++;
  latency_ms_.add(to_ms(finished - intended));
  if (o == Outcome::ok) latency_ok_ms_.add(to_ms(finished - intended));
  split_sum_.queue += s.queue;
  split_sum_.pool_wait += s.pool_wait;
  split_sum_.lock_wait += s.lock_wait;
  split_sum_.partner += s.partner;
  split_sum_.db += s.db;
  split_sum_.held += s.held;
  last_finish_ = std::max(last_finish_, finished);
  bucket(finished).done[static_cast<int>(o)]++;
}

void Recorder::trace(TraceEvent e) {
  std::lock_guard lock(mu_);
  if (events_.size() < trace_event_cap_) events_.push_back(std::move(e));
}

void Recorder::pool_sample(const PoolSample& s) {
  std::lock_guard lock(mu_);
  auto& b = bucket(s.t);
  // keep the busiest sample of the interval: exhaustion shows as peaks
  if (!b.has_pool || s.active + s.pending > b.pool.active + b.pool.pending) b.pool = s;
  b.has_pool = true;
}

std::int64_t Recorder::total() const {
  std::int64_t t = 0;
  for (auto c : counts_) t += c;
  return t;
}

nlohmann::json Recorder::timeline_json() const {
  std::lock_guard lock(mu_);
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < timeline_.size(); ++i) {
    const auto& b = timeline_[i];
    nlohmann::json row = {{"t_s", to_s(timeline_step_) * static_cast<double>(i)},
                          {"active", b.pool.active},
                          {"pending", b.pool.pending},
                          {"idle", b.pool.idle}};
    for (auto o : kOutcomes) row[std::string(outcome_name(o))] = b.done[static_cast<int>(o)];
    out.push_back(row);
  }
  return out;
}

}  // namespace lockbench

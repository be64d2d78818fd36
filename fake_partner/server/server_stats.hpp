// The server's own figures, apart from the model's: connections, and how late
// answers leave compared with their plan. GET /admin/server shows them, so a
// load test can tell the server's lateness from its client's.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>

namespace lockbench::partner_server {

// Lateness in 0.1 ms buckets up to 100 ms, and one overflow bucket: fixed
// memory however many calls, good to 0.1 ms where the targets are (10 ms).
class LatenessHistogram {
 public:
  static constexpr double kBucketMs = 0.1;
  static constexpr std::size_t kBuckets = 1000;

  void add(double ms) {
    const double clamped = std::max(0.0, ms);
    const auto i = std::min(kBuckets, static_cast<std::size_t>(clamped / kBucketMs));
    ++counts_[i];
    ++total_;
    max_ms_ = std::max(max_ms_, clamped);
  }
  std::uint64_t total() const { return total_; }
  // Upper edge of the bucket holding the q-quantile; max for the overflow bucket.
  double quantile_ms(double q) const {
    if (total_ == 0) return 0;
    const auto rank = static_cast<std::uint64_t>(q * static_cast<double>(total_ - 1)) + 1;
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i <= kBuckets; ++i) {
      seen += counts_[i];
      if (seen >= rank) return i == kBuckets ? max_ms_ : std::min(max_ms_, static_cast<double>(i + 1) * kBucketMs);
    }
    return max_ms_;
  }
  double max_ms() const { return max_ms_; }

 private:
  std::array<std::uint64_t, kBuckets + 1> counts_{};
  std::uint64_t total_ = 0;
  double max_ms_ = 0;
};

struct ServerStats {
  std::size_t connections_open = 0;
  std::size_t connections_peak = 0;
  std::uint64_t connections_refused = 0;  // beyond --max-connections and the admin reserve
  std::uint64_t connections_evicted = 0;  // idle ones closed to make room at the limit
  // Answer write started minus (arrival + planned delay), for calls answered normally.
  LatenessHistogram lateness;

  nlohmann::json to_json() const {
    return {{"connections", {{"open", connections_open}, {"peak", connections_peak}, {"refused", connections_refused},
                              {"evicted", connections_evicted}}},
            {"answers", lateness.total()},
            {"lateness_ms",
             {{"p50", lateness.quantile_ms(0.50)},
              {"p99", lateness.quantile_ms(0.99)},
              {"max", lateness.max_ms()}}}};
  }
};

}  // namespace lockbench::partner_server

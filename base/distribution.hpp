// Latency distributions: the one model used by the partner (both fronts), the
// simulator's DB latency and the CLI's --partner-latency flag.
#pragma once

#include <nlohmann/json.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/random.hpp"
#include "base/units.hpp"

namespace lockbench {

// The largest latency parameter accepted (a day) and the largest sample ever
// drawn (a lognormal or exponential tail is cut there): both stay far inside
// the nanosecond clock, also after --time-scale (at most x1000).
inline constexpr double kLatencyMsMax = 24.0 * 3600 * 1000;
inline constexpr double kSampleMsMax = 100 * kLatencyMsMax;

struct Distribution {
  enum class Kind { fixed, uniform, exponential, lognormal, sequence };
  Kind kind = Kind::fixed;
  // fixed: a = value. uniform: a = min, b = max. exponential: a = mean.
  // lognormal: a = p50, b = p99, cap = optional upper bound (0 = none).
  // sequence: values measured elsewhere (validate --targets: a service's
  // connection holds in the order it granted them), a = their mean. A
  // DistributionSampler replays them in order, from the first again after
  // the last; Distribution::sample_ms draws one of them at random.
  double a_ms = 0;
  double b_ms = 0;
  double cap_ms = 0;
  std::shared_ptr<const std::vector<double>> values;  // sequence only

  static Distribution fixed(double ms) { return {Kind::fixed, ms, 0, 0, nullptr}; }
  static Distribution uniform(double lo_ms, double hi_ms) { return {Kind::uniform, lo_ms, hi_ms, 0, nullptr}; }
  static Distribution exponential(double mean_ms) { return {Kind::exponential, mean_ms, 0, 0, nullptr}; }
  static Distribution lognormal(double p50_ms, double p99_ms, double cap_ms = 0) {
    return {Kind::lognormal, p50_ms, p99_ms, cap_ms, nullptr};
  }
  // At least one value, each from 0 to kLatencyMsMax (the caller's to check; from_json checks).
  static Distribution sequence(std::vector<double> ms);

  double sample_ms(Rng& rng) const;
  Duration sample(Rng& rng) const { return from_ms(sample_ms(rng)); }
  double mean_ms() const;
  // A sequence's q-quantile (0 <= q <= 1), nearest rank among its values; 0 for the other kinds.
  double sequence_quantile_ms(double q) const;
  // Every value multiplied by f (used by --time-scale).
  Distribution scaled(double f) const;

  // Parameters are refused above kLatencyMsMax (by parse and from_json).
  // CLI form: fixed:200ms | uniform:100ms..300ms | exponential:mean=1.5s |
  // lognormal:p50=1.5s,p99=4s[,cap=10s]. Throws SettingError naming `setting`.
  static Distribution parse(std::string_view spec, std::string_view setting);
  std::string to_string() const;

  // Partner configuration form (docs/reference/partner-api.md section C):
  // {"dist":"fixed","ms":50} {"dist":"uniform","min_ms","max_ms"}
  // {"dist":"exponential","mean_ms"} {"dist":"lognormal","p50_ms","p99_ms","cap_ms"?}
  // {"dist":"sequence","ms":[210.5,204.1,...]} (no CLI form)
  // from_json throws SettingError naming `setting`.
  nlohmann::json to_json() const;
  static Distribution from_json(const nlohmann::json& j, std::string_view setting);
};

// A distribution prepared for many draws: a lognormal's ln(p50) and sigma are
// computed once, not three logarithms per draw. Draws exactly what
// Distribution::sample draws from the same Rng state (the partner model's hot
// path), except a sequence: the sampler replays its values in order (the
// i-th draw is value i mod n; the Rng is not used). Not thread-safe: one
// sampler per drawing thread (the partner model draws under its own lock).
class DistributionSampler {
 public:
  DistributionSampler() = default;
  explicit DistributionSampler(const Distribution& d);
  double sample_ms(Rng& rng) const;
  Duration sample(Rng& rng) const { return from_ms(sample_ms(rng)); }

 private:
  Distribution d_;
  double mu_ = 0, sigma_ = 0;  // lognormal only
  mutable std::size_t next_ = 0;  // sequence only: the next value's index
};

}  // namespace lockbench

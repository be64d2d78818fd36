// Seeded randomness whose algorithms we control.
//
// std:: distributions differ between standard libraries, so a seed would not
// reproduce a run across machines. Everything random in lockbench (arrivals,
// keys, partner latency and faults, jitter) goes through this header:
// xoshiro256** seeded by splitmix64, sub-seeds derived from a name with FNV-1a.
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>

namespace lockbench {

// splitmix64: turns any 64-bit value into a well-mixed one.
constexpr std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

constexpr std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

// derive_seed(seed, "partner.latency"): an independent stream per named use,
// so adding a draw in one place never shifts the numbers drawn in another.
constexpr std::uint64_t derive_seed(std::uint64_t seed, std::string_view name) {
  std::uint64_t s = seed ^ fnv1a(name);
  return splitmix64(s);
}

// xoshiro256** 1.0 (Blackman and Vigna).
class Rng {
 public:
  explicit constexpr Rng(std::uint64_t seed = 1) {
    std::uint64_t s = seed;
    for (auto& w : s_) w = splitmix64(s);
  }
  Rng(std::uint64_t seed, std::string_view name) : Rng(derive_seed(seed, name)) {}

  constexpr std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1), 53 bits.
  double uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform in (0, 1]: safe for log().
  double uniform01_open_low() { return 1.0 - uniform01(); }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform01(); }
  // Uniform integer in [0, n), n > 0 (Lemire's multiply-shift, unbiased).
  std::uint64_t below(std::uint64_t n) {
    std::uint64_t x = next();
    __uint128_t m = static_cast<__uint128_t>(x) * n;
    auto l = static_cast<std::uint64_t>(m);
    if (l < n) {
      const std::uint64_t t = (0 - n) % n;
      while (l < t) {
        x = next();
        m = static_cast<__uint128_t>(x) * n;
        l = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }
  bool bernoulli(double p) { return p > 0 && uniform01() < p; }
  double exponential(double mean) { return -mean * std::log(uniform01_open_low()); }
  // Standard normal by Box-Muller (one value per call; simple and reproducible).
  double normal() {
    const double u1 = uniform01_open_low();
    const double u2 = uniform01();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
  }
  double lognormal(double mu, double sigma) { return std::exp(mu + sigma * normal()); }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4]{};
};

}  // namespace lockbench

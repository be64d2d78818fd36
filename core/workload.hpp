// Arrivals and key choice: the same schedule in both worlds for a given seed.
#pragma once

#include <cstdint>
#include <vector>

#include "base/random.hpp"
#include "core/settings.hpp"
#include "base/units.hpp"

namespace lockbench {

using Key = std::int64_t;

struct Request {
  std::uint64_t id = 0;      // 1-based, in arrival order
  Key key = 1;               // the user (1..keys)
  std::uint64_t choice = 0;  // random bits the scenario uses (which identity to promote)
  Duration intended{};       // intended start since the run's start: latency counts from here
  int user = -1;             // closed loop: the virtual user who sent it
};

// Zipf(s) over 1..n, P(k) proportional to k^-s, by rejection-inversion
// (Hörmann and Derflinger 1996, "Rejection-inversion to generate variates from
// monotone discrete distributions"; the same algorithm as Apache Commons'
// RejectionInversionZipfSampler). O(1) memory and about one uniform draw per
// sample (the acceptance rate is above 90 % for every s and n), so 10 million
// keys cost no more than ten. Deterministic for a given Rng state.
class ZipfSampler {
 public:
  ZipfSampler(std::int64_t n, double s);
  std::int64_t next(Rng& rng) const;

 private:
  double h(double x) const;                   // x^-s
  double h_integral(double x) const;          // an antiderivative of h
  double h_integral_inverse(double x) const;  // its inverse
  std::int64_t n_;
  double s_;
  double h_integral_x1_;  // h_integral(1.5) - 1
  double h_integral_n_;   // h_integral(n + 0.5)
  double s_threshold_;    // squeeze: k - x below this is accepted at once
};

// Picks keys: hot (always key 1), uniform over 1..K, zipf(s) over 1..K.
// O(1) memory whatever K is.
class KeyChooser {
 public:
  explicit KeyChooser(const Settings& s);
  Key next(Rng& rng) const;

 private:
  KeyDist dist_;
  int keys_;
  ZipfSampler zipf_;
};

// Makes requests in arrival order. Open loop: Poisson at `rate` until
// `duration`; burst: `burst` requests at t = 0. Closed loop: the driver asks
// for one request per user whenever that user finishes thinking.
class Workload {
 public:
  // fresh_keys: each request is a new record keyed by its number (an order),
  // and --duplicate-share of them are submitted twice (a double click, a
  // client retry) within --duplicate-gap.
  explicit Workload(const Settings& s, bool fresh_keys = false);
  // Open loop and burst: the whole schedule, sorted by intended start.
  std::vector<Request> schedule();
  // Closed loop: the next request of `user`, intended to start at `at`
  // (the previous one's end plus think time).
  Request next_for_user(int user, Duration at);
  // Closed loop: a think time sample (exponential with the configured mean).
  Duration think(int user);
  // The wait before a user's next request, after its last one ended
  // (`rejected`: the service had no thread and no queue slot for it). A
  // rejected user backs off as an HTTP client retrying a 503 does: its think
  // time, but at least a capped exponential backoff with full jitter
  // (kRejectedBackoffBase doubling per rejection in a row, at most
  // kRejectedBackoffCap); an answer resets the streak. Without rejections the
  // samples are think()'s, so such runs keep their results. Bounds a closed
  // loop's rate at any --users and --think-time (issue 42: 301 users at think
  // time 0 retried at once, forever).
  Duration think_after(int user, bool rejected);
  static constexpr Duration kRejectedBackoffBase = std::chrono::milliseconds(100);
  static constexpr Duration kRejectedBackoffCap = std::chrono::seconds(5);

 private:
  Request make(Duration at, int user);
  // Adds the duplicate submissions to a sorted schedule and renumbers it.
  void add_duplicates(std::vector<Request>& out);
  const Settings& s_;
  const bool fresh_keys_;
  KeyChooser keys_;
  Rng arrivals_;
  Rng key_rng_;
  Rng choice_rng_;
  Rng think_rng_;
  Rng dup_rng_;
  Rng backoff_rng_;
  std::vector<int> rejected_streak_;  // per user: rejections in a row
  std::uint64_t next_id_ = 1;
};

}  // namespace lockbench

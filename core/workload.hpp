// Arrivals and key choice: the same schedule in both worlds for a given seed.
#pragma once

#include <cstdint>
#include <vector>

#include "core/random.hpp"
#include "core/settings.hpp"
#include "core/units.hpp"

namespace lockbench {

using Key = std::int64_t;

struct Request {
  std::uint64_t id = 0;      // 1-based, in arrival order
  Key key = 1;               // the user (1..keys)
  std::uint64_t choice = 0;  // random bits the scenario uses (which identity to promote)
  Duration intended{};       // intended start since the run's start: latency counts from here
  int user = -1;             // closed loop: the virtual user who sent it
};

// Picks keys: hot (always key 1), uniform over 1..K, zipf(s) over 1..K.
class KeyChooser {
 public:
  explicit KeyChooser(const Settings& s);
  Key next(Rng& rng) const;

 private:
  KeyDist dist_;
  int keys_;
  std::vector<double> zipf_cdf_;
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
  std::uint64_t next_id_ = 1;
};

}  // namespace lockbench

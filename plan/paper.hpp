// `lockbench plan`, on paper: the smallest settings that should meet the
// targets, per strategy, from queueing arithmetic alone (no run).
//
//  - A strategy that holds a connection through the partner calls keeps it
//    for hold = calls x mean call + the statements' time per request; Little's
//    law: rate_per_pod x hold connections are busy on average (the offered
//    Erlangs a), so no pool of a or fewer keeps up. Above that the pool is an
//    M/M/c queue: Erlang C gives the probability that a request waits, and the
//    wait, when there is one, is exponential with rate c/hold - rate. The
//    paper p99 is the 99th percentile of wait + service, the service drawn from
//    the partner's own distribution (a fixed-seed Monte Carlo of 20,000 draws:
//    the same figures every time). The pool is the smallest above Little's
//    floor whose paper p99 meets the target and whose P(wait) is at most 0.5
//    (without a latency target, that alone).
//  - A strategy that holds no connection through the call borrows one only for
//    its statements: the same formulas with hold = the statements' time.
//  - connectionTimeout: the pool wait's 1 - 1e-5 quantile (no timeouts), at
//    least 250 ms, rounded up to 100 ms.
//  - The HTTP client's read timeout: the partner's p99.9 plus 10 %, rounded
//    up to 100 ms (a call that slow still completes); the attempts stay as
//    configured unless the recovery target needs fewer.
//  - A lease (StrategyProps::lease_ttl): TTL = 1.25 x the worst-case critical
//    section (calls x every attempt at connect + read timeout + every backoff
//    at its bound, as lint computes it), rounded up to a second. A crashed
//    holder's key is free one TTL later: that is its recovery on paper; a
//    strategy whose lock dies with its connection or its pod recovers at once.
//  - Tomcat threads per pod: Erlang C again, each thread busy for the whole
//    request (wait + service), the smallest count with P(wait) <= 1 %, and
//    never fewer than the pool.
//  - Headroom: the highest total rate at which those settings still meet the
//    paper's conditions (bisection on the rate): the pool stable, the p99
//    target, P(pool wait > connectionTimeout) <= 1e-5, and P(a request waits
//    for a thread) <= 5 % (acceptCount absorbs a short wait).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/distribution.hpp"
#include "base/units.hpp"
#include "strategies/registry.hpp"

namespace lockbench::plan {

// What the service is and does.
struct Load {
  double rate_per_s = 0;  // total over the pods
  int pods = 1;
  Distribution partner = Distribution::fixed(200);  // one partner call
  int calls = 1;                                    // partner calls in the critical section
  double db_ms = 2;                                 // connection time per request outside the calls
  // The HTTP client as configured (read timeout and attempts are recommended anew).
  Duration connect_timeout = std::chrono::seconds(1);
  Duration read_timeout = std::chrono::seconds(10);
  int attempts = 1;
  Duration backoff_base = std::chrono::milliseconds(100);
  Duration backoff_cap = std::chrono::seconds(2);
};

// The targets the paper can reason about (the simulator judges the rest).
struct PaperTargets {
  double p99_ms_max = 0;       // 0 = no latency target
  bool no_violations = true;   // the lock must exclude (across the pods it runs on)
  double recovery_ms_max = 0;  // 0 = no recovery target
};

struct Recommendation {
  int pool_size = 0;  // maximumPoolSize, per pod
  Duration connection_timeout{};
  Duration read_timeout{};
  int attempts = 1;
  Duration lease_ttl{};  // 0 = the strategy has no lease
  int max_threads = 0;   // Tomcat threads, per pod
};

struct PaperVerdict {
  std::string strategy;
  bool feasible = true;
  std::vector<std::string> why_not;  // one line per target it cannot meet
  Recommendation settings;
  bool holds_connection = false;
  // It excludes on these pods (the registry says): without that, runs that saw
  // no violation prove nothing, and the plan never calls it feasible.
  bool excludes = true;
  double hold_ms = 0;          // mean connection hold per request
  double erlangs = 0;          // per pod: rate / pods x hold (Little's law)
  int pool_min_little = 0;     // the smallest pool that keeps up at all: floor(erlangs) + 1
  double wait_probability = 0; // Erlang C at the recommended pool
  double wait_mean_ms = 0;
  double p99_ms = 0;           // paper p99 of a request (wait + service)
  double service_p99_ms = 0;   // the critical section alone, no queueing
  double window_ms = 0;        // worst-case critical section (every attempt, every backoff)
  double recovery_ms = 0;      // after a crash, on paper
  double headroom_per_s = 0;   // highest total rate at which the settings still hold
  std::vector<std::string> why;  // the arithmetic, one line each
};

// The q-quantile of one draw (0 < q < 1); lognormal and exponential exactly,
// a cap applied.
double quantile_ms(const Distribution& d, double q);

// P(a request waits) and the p99 of wait + service for `pool` connections per
// pod, as above. `hold_ms` is the mean connection hold.
struct PoolFigures {
  double wait_probability = 0;
  double wait_mean_ms = 0;
  double p99_ms = 0;
  bool stable = false;  // rate x hold < pool
};
// `read_timeout` and `attempts`: the client the service draws are made with.
PoolFigures pool_figures(const Load& load, double hold_ms, int pool);

// One strategy's paper plan (the caller has checked that it applies to the scenario).
PaperVerdict paper_plan(const StrategyInfo& strategy, const Load& load, const PaperTargets& targets);

// The highest total rate at which `v`'s settings hold on paper for `load`
// (another partner latency, say: the safe envelope's curves).
double headroom_per_s(const PaperVerdict& v, const Load& load, const PaperTargets& targets);

nlohmann::json to_json(const PaperVerdict& v);

}  // namespace lockbench::plan

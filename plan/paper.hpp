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
//  - The horizon (PaperTargets::horizon_s, `--horizon`, a day by default):
//    a count target ("pool_timeouts>0", "probe_failures>0", "rejected>0") is
//    met on paper when its expected count over the horizon is at most
//    kEventsPerHorizon. Those counts come from a finite queue, M/M/c/N, which
//    is what the simulator runs: N = Tomcat's threads + acceptCount requests
//    at most in a pod (the rest rejected), c = the pool for a strategy that
//    holds its connection through the call (the threads for one that does
//    not, whose own pool is M/M/c/threads). A request waits for a connection
//    behind the requests ahead of it that hold a thread; the health probe
//    (Load::probe_interval, probe_timeout) borrows from the same pool behind
//    them, so its failures per horizon are (horizon / interval) x P(its wait >
//    its timeout), per pod. The pool grows until every count target holds;
//    connectionTimeout is the shortest (100 ms steps, at least 250 ms) whose
//    pool timeouts per horizon hold; the threads grow until rejections hold.
//  - Ambiguity: a call slower than the read timeout is given up on while the
//    partner may still apply it, whichever lock is used: per day that is the
//    calls a day x P(partner latency > read timeout). With
//    PaperTargets::ambiguous_per_day_max the read timeout is raised to the
//    partner quantile that keeps that count (kEventsPerHorizon a day for 0).
//  - Floors (Recommendation given to paper_plan, the service's current
//    settings): pool, connectionTimeout, read timeout, lease TTL and threads
//    are never below them (fewest changes); the figures required without
//    them stay in PaperVerdict::required.
//  - Headroom: the highest total rate at which those settings still meet the
//    paper's conditions (bisection on the rate): the pool stable, the p99
//    target, every count target over the horizon, and P(a request waits for a
//    thread) <= 5 % (acceptCount absorbs a short wait).
// describe() writes the `why` lines for whatever settings a verdict holds, so
// the lines printed are those of the settings recommended.
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
  // The health probe: one borrow from the same pool every interval, given up after its timeout.
  Duration probe_interval = std::chrono::seconds(1);
  Duration probe_timeout = std::chrono::seconds(1);
  int accept_count = 100;  // Tomcat's acceptCount: queued beyond the threads, rejected beyond that
};

// A count target is met on paper when at most this many events are expected over the horizon.
inline constexpr double kEventsPerHorizon = 0.02;

// The targets the paper can reason about (the simulator judges the rest).
struct PaperTargets {
  double p99_ms_max = 0;       // 0 = no latency target
  bool no_violations = true;   // the lock must exclude (across the pods it runs on)
  double recovery_ms_max = 0;  // 0 = no recovery target
  // Counts that must stay at 0 over the horizon (--fail-on's "pool_timeouts>0" ...).
  bool no_pool_timeouts = false;
  bool no_probe_failures = false;
  bool no_rejected = false;
  double horizon_s = 86400;
  double ambiguous_per_day_max = -1;  // -1 = reported, not a target
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
  std::vector<std::string> why;  // the arithmetic, one line each (describe(): of `settings`)
  Recommendation required;       // the settings the targets need, before the floors
  double busy_ms = 0;            // a Tomcat thread's time per request (the critical section's mean)
  // At `settings`, over one horizon (every pod): expected counts.
  double requests_per_horizon = 0;
  double pool_timeouts_per_horizon = 0;
  double probe_failures_per_horizon = 0;
  double rejected_per_horizon = 0;
  double probe_wait_probability = 0;  // P(the probe's wait > its timeout)
  double timeout_share = 0;           // P(a partner call > the read timeout)
  double ambiguous_per_day = 0;       // calls given up on while the partner may apply them
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

// One strategy's paper plan (the caller has checked that it applies to the
// scenario); `floor`: the service's current settings, never lowered (all 0 = none: --minimize).
PaperVerdict paper_plan(const StrategyInfo& strategy, const Load& load, const PaperTargets& targets,
                        const Recommendation& floor = {});

// The figures and `why` lines of `v.settings` (after the caller changed them:
// the pool the simulator confirmed, say). Recomputes every figure above.
void describe(PaperVerdict& v, const Load& load, const PaperTargets& targets);

// The finite queue's figures (M/M/c/N, see above) for `r` at `load`, over `horizon_s`.
struct HorizonFigures {
  double requests = 0;
  double pool_timeouts = 0;
  double probe_failures = 0;
  double rejected = 0;
  double probe_wait_probability = 0;
  double wait_probability = 0;  // P(a request waits for a connection)
};
HorizonFigures horizon_figures(const Load& load, bool holds_connection, double hold_ms, double busy_ms,
                               const Recommendation& r, double horizon_s);

// P(W > t) in M/M/c/N for an arrival that finds room (FIFO): the independent
// closed form the tests check it against. `a` = lambda / mu, `mu` per ms.
double mmcn_wait_tail(double a, double mu_per_ms, int c, int n_max, double t_ms);

// The highest total rate at which `v`'s settings hold on paper for `load`
// (another partner latency, say: the safe envelope's curves).
double headroom_per_s(const PaperVerdict& v, const Load& load, const PaperTargets& targets);

nlohmann::json to_json(const PaperVerdict& v);

}  // namespace lockbench::plan

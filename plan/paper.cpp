// The paper plan: Little's law, Erlang C and a fixed-seed Monte Carlo of the
// critical section (plan/paper.hpp says what each setting is sized by).
#include "plan/paper.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "base/random.hpp"
#include "core/result.hpp"
#include "base/stats.hpp"
#include "strategies/registry.hpp"
#include "report/lint.hpp"

namespace lockbench::plan {

namespace {

constexpr int kDraws = 20000;
constexpr int kPoolMax = 5000;
constexpr double kTimeoutTail = 1e-5;  // connectionTimeout without a target: P(wait > it) at most this
constexpr double kThreadWaitShare = 0.01;  // Tomcat: P(a request waits for a thread) at most this
constexpr double kTtlMargin = 1.25;
constexpr double kReadTimeoutMargin = 1.10;
constexpr Duration kReadTimeoutMax = std::chrono::hours(1);  // a plan recommends no longer read timeout

Duration round_up(double ms, double step_ms) { return from_ms(std::ceil(ms / step_ms - 1e-9) * step_ms); }

// One critical section's service time: `calls` partner calls, each retried
// after a read timeout (backoff at its mean, full jitter), plus the statements.
double service_draw_ms(const Load& load, Rng& rng) {
  const double read_ms = to_ms(load.read_timeout);
  double total = load.db_ms;
  for (int c = 0; c < load.calls; ++c) {
    double backoff = to_ms(load.backoff_base);
    for (int attempt = 1;; ++attempt) {
      const double d = load.partner.sample_ms(rng);
      if (d <= read_ms || attempt >= load.attempts) {
        total += std::min(d, read_ms);
        break;
      }
      total += read_ms + std::min(backoff, to_ms(load.backoff_cap)) / 2;
      backoff *= 2;
    }
  }
  return total;
}

// The same draws for every pool size tried: service times and the uniforms
// that decide each request's wait.
struct Draws {
  std::vector<double> service_ms;
  std::vector<double> u;
};

Draws draws_for(const Load& load) {
  Draws d;
  Rng service(1, "plan.service"), wait(1, "plan.wait");
  d.service_ms.reserve(kDraws);
  d.u.reserve(kDraws);
  for (int i = 0; i < kDraws; ++i) {
    d.service_ms.push_back(service_draw_ms(load, service));
    d.u.push_back(wait.uniform01_open_low());
  }
  return d;
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

double quantile_of(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  const auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size()))) - 1;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

PoolFigures figures(const Load& load, const Draws& draws, double hold_ms, int pool) {
  PoolFigures f;
  const double lambda_ms = load.rate_per_s / load.pods / 1000;  // per pod, per ms
  const double drain_ms = pool / hold_ms - lambda_ms;           // c mu - lambda
  f.stable = drain_ms > 0;
  if (!f.stable) {
    f.wait_probability = 1;
    f.wait_mean_ms = f.p99_ms = std::numeric_limits<double>::infinity();
    return f;
  }
  f.wait_probability = erlang_c(pool, lambda_ms * hold_ms);
  f.wait_mean_ms = f.wait_probability / drain_ms;
  std::vector<double> total(draws.service_ms.size());
  for (std::size_t i = 0; i < total.size(); ++i) {
    const double u = draws.u[i];
    const double wait = u < f.wait_probability ? -std::log(u / f.wait_probability) / drain_ms : 0;
    total[i] = draws.service_ms[i] + wait;
  }
  f.p99_ms = quantile_of(std::move(total), 0.99);
  return f;
}

int threads_for(const Load& load, double busy_ms, int pool) {
  const double a = load.rate_per_s / load.pods * busy_ms / 1000;
  int c = std::max(1, static_cast<int>(std::floor(a)) + 1);
  while (c < kPoolMax && erlang_c(c, a) > kThreadWaitShare) ++c;
  return std::max(c, pool);
}

// M/M/s/N state probabilities (pi_0 .. pi_N), a = lambda / mu.
std::vector<double> mmsn_states(double a, int s, int n_max) {
  std::vector<double> p(static_cast<std::size_t>(n_max) + 1, 0.0);
  p[0] = 1;
  for (int n = 1; n <= n_max; ++n) {
    p[static_cast<std::size_t>(n)] = p[static_cast<std::size_t>(n) - 1] * a / std::min(n, s);
    if (p[static_cast<std::size_t>(n)] > 1e200)
      for (int k = 0; k <= n; ++k) p[static_cast<std::size_t>(k)] *= 1e-200;
  }
  double total = 0;
  for (double x : p) total += x;
  for (double& x : p) x /= total;
  return p;
}

// P(Gamma(k, rate) > t) for k = 1 .. k_max: P(Poisson(rate t) < k), as a table.
std::vector<double> gamma_tails(int k_max, double x) {
  std::vector<double> out(static_cast<std::size_t>(k_max) + 1, 0.0);
  double cum = 0;
  const double lx = x > 0 ? std::log(x) : -std::numeric_limits<double>::infinity();
  for (int k = 1; k <= k_max; ++k) {
    const int j = k - 1;
    cum += x > 0 ? std::exp(-x + j * lx - std::lgamma(j + 1.0)) : (j == 0 ? 1.0 : 0.0);
    out[static_cast<std::size_t>(k)] = std::min(cum, 1.0);
  }
  return out;
}

// A pod's pool queue: `servers` connections, at most `n_max` requests in it, of which at most
// `thread_cap` hold a thread (the others queue before they can ask for a connection).
struct PoolQueue {
  std::vector<double> pi;
  int servers = 1, n_max = 1, thread_cap = 1;
  double rate_per_ms = 0;  // servers / hold
};

PoolQueue pool_queue(double a, double hold_ms, int servers, int n_max, int thread_cap) {
  PoolQueue q;
  q.servers = std::max(servers, 1);
  q.n_max = std::max(n_max, q.servers);
  q.thread_cap = std::max(thread_cap, q.servers);
  q.pi = mmsn_states(a, q.servers, q.n_max);
  q.rate_per_ms = q.servers / hold_ms;
  return q;
}

// P(a request that finds room waits longer than t for a connection).
double request_wait_tail(const PoolQueue& q, double t_ms) {
  const auto g = gamma_tails(q.thread_cap - q.servers + 1, q.rate_per_ms * t_ms);
  const double room = 1 - q.pi.back();
  double p = 0;
  for (int n = q.servers; n < q.n_max; ++n)
    p += q.pi[static_cast<std::size_t>(n)] * g[static_cast<std::size_t>(std::min(n, q.thread_cap - 1) - q.servers + 1)];
  return room > 0 ? std::min(1.0, p / room) : 1.0;
}

// P(the probe, behind the requests that hold a thread, waits longer than t).
double probe_wait_tail(const PoolQueue& q, double t_ms) {
  const auto g = gamma_tails(q.thread_cap - q.servers + 1, q.rate_per_ms * t_ms);
  double p = 0;
  for (int n = q.servers; n <= q.n_max; ++n)
    p += q.pi[static_cast<std::size_t>(n)] * g[static_cast<std::size_t>(std::min(n, q.thread_cap) - q.servers + 1)];
  return std::min(p, 1.0);
}

struct Queues {
  PoolQueue pool;
  double reject_probability = 0;
  double requests_per_pod_s = 0;
};

Queues queues_of(const Load& load, bool holds, double hold_ms, double busy_ms, const Recommendation& r) {
  Queues qs;
  const double lambda_ms = load.rate_per_s / load.pods / 1000;
  qs.requests_per_pod_s = load.rate_per_s / load.pods;
  const int threads = std::max(r.max_threads, 1);
  const int n_max = threads + std::max(load.accept_count, 0);
  if (holds) {
    // One queue: a connection is held for (nearly) the thread's whole request.
    qs.pool = pool_queue(lambda_ms * hold_ms, hold_ms, std::min(r.pool_size, threads), n_max, threads);
    qs.reject_probability = qs.pool.pi.back();
  } else {
    const std::vector<double> t = mmsn_states(lambda_ms * busy_ms, threads, n_max);
    qs.reject_probability = t.back();
    qs.pool = pool_queue(lambda_ms * hold_ms, hold_ms, std::min(r.pool_size, threads), threads, threads);
  }
  return qs;
}

HorizonFigures figures_over(const Load& load, bool holds, double hold_ms, double busy_ms, const Recommendation& r,
                            double horizon_s) {
  HorizonFigures h;
  const Queues q = queues_of(load, holds, hold_ms, busy_ms, r);
  h.requests = load.rate_per_s * horizon_s;
  h.rejected = h.requests * q.reject_probability;
  h.pool_timeouts = h.requests * (1 - q.reject_probability) * request_wait_tail(q.pool, to_ms(r.connection_timeout));
  h.probe_wait_probability = probe_wait_tail(q.pool, to_ms(load.probe_timeout));
  const double probes = load.probe_interval.count() > 0 ? horizon_s / to_s(load.probe_interval) * load.pods : 0;
  h.probe_failures = probes * h.probe_wait_probability;
  h.wait_probability = request_wait_tail(q.pool, 0);
  return h;
}

// The shortest connectionTimeout (100 ms steps, >= 250 ms, >= the floor) whose pool timeouts over the
// horizon are at most kEventsPerHorizon; nullopt when even kConnTimeoutMax is not.
constexpr double kConnTimeoutMaxMs = 600000;
std::optional<Duration> connection_timeout_for(const Load& load, bool holds, double hold_ms, double busy_ms,
                                               Recommendation r, double horizon_s, bool needed) {
  const double floor_ms = std::max(250.0, to_ms(r.connection_timeout));
  // Without a pool-timeout target: P(a request's wait > it) <= kTimeoutTail, as before the horizon.
  const auto ok = [&](double ms) {
    r.connection_timeout = from_ms(ms);
    const HorizonFigures h = figures_over(load, holds, hold_ms, busy_ms, r, horizon_s);
    return needed ? h.pool_timeouts <= kEventsPerHorizon : h.pool_timeouts <= kTimeoutTail * std::max(h.requests, 1.0);
  };
  if (ok(floor_ms)) return round_up(floor_ms, 100);
  if (!ok(kConnTimeoutMaxMs)) return std::nullopt;
  double lo = floor_ms, hi = kConnTimeoutMaxMs;  // lo fails, hi holds
  while (hi - lo > 100) {
    const double mid = (lo + hi) / 2;
    (ok(mid) ? hi : lo) = mid;
  }
  return round_up(hi, 100);
}

// Does the plan hold at `rate` with these settings (the headroom's test)?
bool holds_at(Load load, double rate, double hold_ms, const Recommendation& r, const PaperTargets& t,
              const Draws& draws, double busy_ms, bool holds) {
  load.rate_per_s = rate;
  const PoolFigures f = figures(load, draws, hold_ms, r.pool_size);
  if (!f.stable || (t.p99_ms_max > 0 && f.p99_ms > t.p99_ms_max)) return false;
  const HorizonFigures h = figures_over(load, holds, hold_ms, busy_ms, r, t.horizon_s);
  if (t.no_pool_timeouts && h.pool_timeouts > kEventsPerHorizon) return false;
  if (t.no_probe_failures && h.probe_failures > kEventsPerHorizon) return false;
  if (t.no_rejected && h.rejected > kEventsPerHorizon) return false;
  const double a_threads = rate / load.pods * (busy_ms + f.wait_mean_ms) / 1000;
  return a_threads < r.max_threads && erlang_c(r.max_threads, a_threads) <= kThreadWaitShare * 5;
}

double headroom_of(const Load& load, const Draws& draws, double hold_ms, double service_mean_ms,
                   const Recommendation& r, const PaperTargets& t, bool holds) {
  const auto ok = [&](double rate) { return holds_at(load, rate, hold_ms, r, t, draws, service_mean_ms, holds); };
  const double start = std::max(load.rate_per_s, 0.01);
  double lo = 0, hi = start;  // below the planned rate when it does not hold there
  if (ok(start)) {
    lo = start, hi = start * 2;
    while (hi < start * 1024 && ok(hi)) lo = hi, hi *= 2;
  }
  for (int i = 0; i < 30; ++i) {
    const double mid = (lo + hi) / 2;
    (ok(mid) ? lo : hi) = mid;
  }
  return lo;
}

// P(one partner call takes longer than `ms`), from the draws of the distribution itself.
double exceed_share(const Distribution& d, double ms) {
  if (d.cap_ms > 0 && ms >= d.cap_ms) return 0;
  switch (d.kind) {
    case Distribution::Kind::fixed: return d.a_ms > ms ? 1 : 0;
    case Distribution::Kind::uniform: return std::clamp((d.b_ms - ms) / (d.b_ms - d.a_ms), 0.0, 1.0);
    case Distribution::Kind::exponential: return std::exp(-ms / d.a_ms);
    case Distribution::Kind::lognormal: {
      const double sigma = (std::log(d.b_ms) - std::log(d.a_ms)) / stats::normal_quantile(0.99);
      return 0.5 * std::erfc((std::log(ms) - std::log(d.a_ms)) / sigma / std::sqrt(2.0));
    }
    case Distribution::Kind::sequence: {
      if (!d.values || d.values->empty()) return 0;
      const auto above = std::count_if(d.values->begin(), d.values->end(), [&](double v) { return v > ms; });
      return static_cast<double>(above) / static_cast<double>(d.values->size());
    }
  }
  return 0;
}

std::string ms_text(double ms) {
  if (!std::isfinite(ms)) return "unbounded";
  return ms >= 1000 ? fmt::format("{:.2f} s", ms / 1000) : fmt::format("{:.1f} ms", ms);
}

}  // namespace

double quantile_ms(const Distribution& d, double q) {
  double v = 0;
  switch (d.kind) {
    case Distribution::Kind::fixed: v = d.a_ms; break;
    case Distribution::Kind::uniform: v = d.a_ms + q * (d.b_ms - d.a_ms); break;
    case Distribution::Kind::exponential: v = -d.a_ms * std::log(1 - q); break;
    case Distribution::Kind::lognormal: {
      const double sigma = (std::log(d.b_ms) - std::log(d.a_ms)) / stats::normal_quantile(0.99);
      v = d.a_ms * std::exp(sigma * stats::normal_quantile(q));
      break;
    }
    case Distribution::Kind::sequence: v = d.sequence_quantile_ms(q); break;
  }
  return d.cap_ms > 0 ? std::min(v, d.cap_ms) : v;
}

PoolFigures pool_figures(const Load& load, double hold_ms, int pool) {
  return figures(load, draws_for(load), hold_ms, pool);
}

namespace {

// The client first: the read timeout above the partner's p99.9 (and above the quantile that keeps the
// ambiguous calls within --ambiguous-max), never below the service's own; the attempts as configured.
// Returns the load with that read timeout.
Load client_settings(PaperVerdict& v, const Load& given, const PaperTargets& t, const Recommendation& floor) {
  Recommendation& r = v.settings;
  Load load = given;
  double read_ms = quantile_ms(load.partner, 0.999) * kReadTimeoutMargin;
  if (t.ambiguous_per_day_max >= 0) {
    const double calls_per_day = load.rate_per_s * 86400 * load.calls;
    const double allowed = std::max(t.ambiguous_per_day_max, kEventsPerHorizon);
    if (calls_per_day > allowed)
      read_ms = std::max(read_ms, quantile_ms(load.partner, 1 - allowed / calls_per_day) * kReadTimeoutMargin);
  }
  if (!(read_ms < to_ms(kReadTimeoutMax)))
    throw SettingError(fmt::format("--partner-latency: {} needs a read timeout of {} (its p99.9 + 10 %), above the "
                                   "{} a plan recommends; give a partner latency in seconds or minutes",
                                   load.partner.to_string(), ms_text(read_ms), format_duration(kReadTimeoutMax)));
  v.required.read_timeout = round_up(read_ms, 100);
  r.read_timeout = std::max(v.required.read_timeout, floor.read_timeout);
  r.attempts = load.attempts;
  v.required.attempts = r.attempts;
  load.read_timeout = r.read_timeout;
  return load;
}

// The worst-case critical section with `attempts` attempts: every call's retries and backoffs, and the statements.
double window_ms_of(const Load& load, Duration read_timeout, int attempts) {
  report::LintInput in;
  in.connect_timeout = load.connect_timeout;
  in.read_timeout = read_timeout;
  in.max_attempts = attempts;
  in.backoff_base = load.backoff_base;
  in.backoff_cap = load.backoff_cap;
  return to_ms(worst_case_call(in.retry())) * load.calls + load.db_ms;
}

// The lease: above the worst case, and (with a recovery target) short enough; fewer attempts if needed.
void lease_settings(PaperVerdict& v, const StrategyInfo& st, Load& load, const PaperTargets& t,
                    const Recommendation& floor) {
  Recommendation& r = v.settings;
  if (!st.props.lease_ttl) {
    v.window_ms = window_ms_of(load, r.read_timeout, r.attempts);
    return;
  }
  for (;;) {
    v.window_ms = window_ms_of(load, r.read_timeout, r.attempts);
    r.lease_ttl = round_up(v.window_ms * kTtlMargin, 1000);
    if (t.recovery_ms_max <= 0 || to_ms(r.lease_ttl) <= t.recovery_ms_max || r.attempts == 1) break;
    --r.attempts;
  }
  load.attempts = r.attempts;
  v.required.lease_ttl = r.lease_ttl;
  v.required.attempts = r.attempts;
  // The service's longer TTL is kept unless it breaks the recovery target.
  if (floor.lease_ttl > r.lease_ttl && (t.recovery_ms_max <= 0 || to_ms(floor.lease_ttl) <= t.recovery_ms_max))
    r.lease_ttl = floor.lease_ttl;
  v.recovery_ms = to_ms(r.lease_ttl);
  if (t.recovery_ms_max > 0 && v.recovery_ms > t.recovery_ms_max)
    v.why_not.push_back(fmt::format("recovery: the TTL ({}) must cover the worst case even with 1 attempt, which is "
                                    "above the recovery target ({})",
                                    ms_text(v.recovery_ms), ms_text(t.recovery_ms_max)));
}

// Exclusion: a strategy that does not exclude (on these pods) cannot keep the violations at 0.
void exclusion_check(PaperVerdict& v, const StrategyInfo& st, const Load& load, const PaperTargets& t) {
  v.excludes = !(st.props.exclusion == Exclusion::none || (st.props.exclusion == Exclusion::one_pod && load.pods > 1));
  if (t.no_violations && !v.excludes)
    v.why_not.push_back(fmt::format("violations: its exclusion is '{}'{}: it excludes nothing{}, so two requests for "
                                    "one key can both call the partner",
                                    exclusion_name(st.props.exclusion), load.pods > 1 ? fmt::format(" on {} pods", load.pods) : "",
                                    load.pods > 1 && st.props.exclusion == Exclusion::one_pod ? " across pods" : ""));
}

// What sizing a pool reads: the load, its draws, the hold, the targets and the floors.
struct PoolSizing {
  const Load& load;
  const PaperTargets& t;
  const Recommendation& floor;
  Recommendation base;  // the client's and the lease's settings
  Draws draws;
  double service_mean_ms = 0;
  double service_p99_ms = 0;
  double hold_ms = 0;
  bool holds = false;
};

// The settings at `pool` connections: threads for the rejections, connectionTimeout for the pool timeouts;
// none when a count target cannot hold over the horizon at that pool.
std::optional<Recommendation> sized(const PoolSizing& z, int pool, const PoolFigures& f) {
  const Load& load = z.load;
  const PaperTargets& t = z.t;
  Recommendation c = z.base;
  c.pool_size = pool;
  c.max_threads = std::max(threads_for(load, z.service_mean_ms + (std::isfinite(f.wait_mean_ms) ? f.wait_mean_ms : 0), pool),
                           z.floor.max_threads);
  c.connection_timeout = z.floor.connection_timeout;
  if (t.no_rejected)
    while (c.max_threads < kPoolMax &&
           figures_over(load, z.holds, z.hold_ms, z.service_mean_ms, c, t.horizon_s).rejected > kEventsPerHorizon)
      c.max_threads += std::max(1, c.max_threads / 20);
  const auto ct = connection_timeout_for(load, z.holds, z.hold_ms, z.service_mean_ms, c, t.horizon_s, t.no_pool_timeouts);
  if (!ct) return std::nullopt;
  c.connection_timeout = *ct;
  if (t.no_probe_failures &&
      figures_over(load, z.holds, z.hold_ms, z.service_mean_ms, c, t.horizon_s).probe_failures > kEventsPerHorizon)
    return std::nullopt;
  return c;
}

// The smallest pool from Little's floor up whose figures meet the p99 target and every count target.
Recommendation required_pool(PaperVerdict& v, const PoolSizing& z, int little) {
  const PaperTargets& t = z.t;
  const bool p99_bounds = t.p99_ms_max > 0 && z.service_p99_ms <= t.p99_ms_max;
  int pool = little;
  std::optional<Recommendation> found;
  for (; pool <= kPoolMax; ++pool) {
    const PoolFigures f = figures(z.load, z.draws, z.hold_ms, pool);
    if (f.wait_probability > 0.5 || (p99_bounds && f.p99_ms > t.p99_ms_max)) continue;
    if ((found = sized(z, pool, f))) break;
  }
  if (!found) {
    pool = std::min(pool, kPoolMax);
    found = z.base;
    found->pool_size = pool;
    found->max_threads = std::max(pool, z.floor.max_threads);
    found->connection_timeout = round_up(std::max(250.0, to_ms(z.floor.connection_timeout)), 100);
    v.why_not.push_back(fmt::format("pool: no pool up to {} meets every count target over {} on paper", kPoolMax,
                                    format_duration(from_s(t.horizon_s))));
  }
  return *found;
}

// The pool: Little's law's floor, then Erlang C upward until the p99 target holds and every count
// target holds over the horizon in the finite queue (threads and connectionTimeout sized with it);
// the service's larger pool kept.
void pool_settings(PaperVerdict& v, const Load& load, const PaperTargets& t, const Recommendation& floor) {
  PoolSizing z{load, t, floor, v.settings, draws_for(load)};
  z.service_mean_ms = mean_of(z.draws.service_ms);
  z.service_p99_ms = quantile_of(z.draws.service_ms, 0.99);
  z.hold_ms = v.holds_connection ? z.service_mean_ms : load.db_ms;
  z.holds = v.holds_connection;
  const int little = static_cast<int>(std::floor(load.rate_per_s / load.pods * z.hold_ms / 1000)) + 1;
  const Recommendation required = required_pool(v, z, little);
  v.required.pool_size = required.pool_size;
  v.required.connection_timeout = required.connection_timeout;
  v.required.max_threads = required.max_threads;
  Recommendation& r = v.settings;
  r = required;
  if (floor.pool_size > r.pool_size) {
    // The service's larger pool is kept: its threads and connectionTimeout are sized for it (never below their floors).
    const int kept = floor.pool_size;
    const auto again = sized(z, kept, figures(load, z.draws, z.hold_ms, kept));
    r = again ? *again : required;
    r.pool_size = kept;
    r.max_threads = std::max(r.max_threads, kept);
  }
  const PoolFigures at_required = figures(load, z.draws, z.hold_ms, required.pool_size);
  if (t.p99_ms_max > 0 && at_required.p99_ms > t.p99_ms_max)
    v.why_not.push_back(fmt::format("p99: {} even {}, above the target {}", ms_text(at_required.p99_ms),
                                    z.service_p99_ms > t.p99_ms_max ? "for the critical section alone, with no wait"
                                                                    : fmt::format("with {} connections", required.pool_size),
                                    ms_text(t.p99_ms_max)));
}

}  // namespace

PaperVerdict paper_plan(const StrategyInfo& st, const Load& given, const PaperTargets& t, const Recommendation& floor) {
  PaperVerdict v;
  v.strategy = std::string(st.spec);
  v.holds_connection = st.props.holds_connection_during_call;
  Load load = client_settings(v, given, t, floor);
  lease_settings(v, st, load, t, floor);
  exclusion_check(v, st, load, t);
  pool_settings(v, load, t, floor);
  if (!st.props.lease_ttl) v.recovery_ms = 0;
  describe(v, given, t);
  v.feasible = v.why_not.empty();
  return v;
}

void describe(PaperVerdict& v, const Load& given, const PaperTargets& t) {
  const Recommendation& r = v.settings;
  Load load = given;
  load.read_timeout = r.read_timeout;
  load.attempts = r.attempts;
  const Draws draws = draws_for(load);
  const double service_mean_ms = mean_of(draws.service_ms);
  v.service_p99_ms = quantile_of(draws.service_ms, 0.99);
  v.busy_ms = service_mean_ms;
  v.hold_ms = v.holds_connection ? service_mean_ms : load.db_ms;
  v.erlangs = load.rate_per_s / load.pods * v.hold_ms / 1000;
  v.pool_min_little = static_cast<int>(std::floor(v.erlangs)) + 1;
  const PoolFigures f = figures(load, draws, v.hold_ms, r.pool_size);
  v.wait_probability = f.wait_probability;
  v.wait_mean_ms = f.wait_mean_ms;
  v.p99_ms = f.p99_ms;
  const HorizonFigures h = figures_over(load, v.holds_connection, v.hold_ms, service_mean_ms, r, t.horizon_s);
  v.requests_per_horizon = h.requests;
  v.pool_timeouts_per_horizon = h.pool_timeouts;
  v.probe_failures_per_horizon = h.probe_failures;
  v.rejected_per_horizon = h.rejected;
  v.probe_wait_probability = h.probe_wait_probability;
  v.timeout_share = exceed_share(load.partner, to_ms(r.read_timeout));
  v.ambiguous_per_day = load.rate_per_s * 86400 * load.calls * v.timeout_share;
  const std::string horizon = format_duration(from_s(t.horizon_s));
  const double rate_pod = load.rate_per_s / load.pods;

  v.why.clear();
  const double p999 = quantile_ms(load.partner, 0.999);
  v.why.push_back(fmt::format("read timeout {}: {}; {:.3g} % of calls are slower, about {:.3g} a day given up on "
                              "while the partner may still apply them (ambiguous, whichever lock)",
                              format_duration(r.read_timeout),
                              r.read_timeout > v.required.read_timeout
                                  ? fmt::format("the service's own, kept (the targets need {})",
                                                format_duration(v.required.read_timeout))
                                  : fmt::format("the partner's p99.9 ({}) + {:.0f} %{}", ms_text(p999),
                                                (kReadTimeoutMargin - 1) * 100,
                                                t.ambiguous_per_day_max >= 0 ? ", or more to meet --ambiguous-max" : ""),
                              100 * v.timeout_share, v.ambiguous_per_day));
  if (r.lease_ttl.count() > 0)
    v.why.push_back(fmt::format("lease TTL {}: worst-case critical section {} calls x ({} attempts x (connect {} + "
                                "read {}) + backoffs) = {}, x {:.2f} margin = {}{}; a crashed holder's key is free "
                                "one TTL later",
                                format_duration(r.lease_ttl), load.calls, r.attempts,
                                format_duration(load.connect_timeout), format_duration(r.read_timeout),
                                ms_text(v.window_ms), kTtlMargin, format_duration(v.required.lease_ttl),
                                r.lease_ttl > v.required.lease_ttl ? " (the service's longer TTL kept)" : ""));
  v.why.push_back(fmt::format("Little's law: {:.2f}/s per pod x {} connection hold ({}) = {:.2f} connections busy on "
                              "average, so no pool of {} or fewer keeps up",
                              rate_pod, v.holds_connection ? "the whole critical section's" : "the statements'",
                              ms_text(v.hold_ms), v.erlangs, v.pool_min_little - 1));
  v.why.push_back(fmt::format("pool {}{}: Erlang C (M/M/c) gives P(a request waits) {:.4g}, {} on average; paper p99 "
                              "= {} (the critical section alone: {})",
                              r.pool_size,
                              r.pool_size > v.required.pool_size
                                  ? fmt::format(" (the service's, kept; the paper needs {})", v.required.pool_size)
                                  : "",
                              v.wait_probability, ms_text(v.wait_mean_ms), ms_text(v.p99_ms), ms_text(v.service_p99_ms)));
  v.why.push_back(fmt::format("connectionTimeout {}: in the finite queue (M/M/c/N, c = {}, N = {} threads + {} "
                              "accepted) {:.3g} pool timeouts are expected in {} ({:.3g} requests)",
                              format_duration(r.connection_timeout), std::min(r.pool_size, r.max_threads),
                              r.max_threads, load.accept_count, v.pool_timeouts_per_horizon, horizon,
                              v.requests_per_horizon));
  v.why.push_back(fmt::format("health probe (every {}, timeout {}): it waits behind the requests holding a thread; "
                              "P(its wait > {}) = {:.3g}, so {:.3g} failed probes are expected in {}",
                              format_duration(load.probe_interval), format_duration(load.probe_timeout),
                              format_duration(load.probe_timeout), v.probe_wait_probability,
                              v.probe_failures_per_horizon, horizon));
  v.why.push_back(fmt::format("Tomcat threads {}{} + acceptCount {}: {:.2f}/s x {} per request = {:.1f} busy; "
                              "{:.3g} rejections are expected in {}",
                              r.max_threads,
                              r.max_threads > v.required.max_threads
                                  ? fmt::format(" (the service's, kept; the paper needs {})", v.required.max_threads)
                                  : "",
                              load.accept_count, rate_pod, ms_text(service_mean_ms + f.wait_mean_ms),
                              rate_pod * (service_mean_ms + f.wait_mean_ms) / 1000, v.rejected_per_horizon, horizon));
  v.headroom_per_s = headroom_of(load, draws, v.hold_ms, service_mean_ms, r, t, v.holds_connection);
  v.why.push_back(fmt::format("headroom on paper: these settings hold up to {:.2f}/s in total ({:.0f} % of {:.2f}/s)",
                              v.headroom_per_s, load.rate_per_s > 0 ? 100 * v.headroom_per_s / load.rate_per_s : 0,
                              load.rate_per_s));
}

HorizonFigures horizon_figures(const Load& load, bool holds_connection, double hold_ms, double busy_ms,
                               const Recommendation& r, double horizon_s) {
  return figures_over(load, holds_connection, hold_ms, busy_ms, r, horizon_s);
}

double mmcn_wait_tail(double a, double mu_per_ms, int c, int n_max, double t_ms) {
  return request_wait_tail(pool_queue(a, 1 / mu_per_ms, c, n_max, n_max), t_ms);
}

double headroom_per_s(const PaperVerdict& v, const Load& given, const PaperTargets& t) {
  Load load = given;
  load.read_timeout = v.settings.read_timeout;
  load.attempts = v.settings.attempts;
  const Draws draws = draws_for(load);
  const double service_mean_ms = mean_of(draws.service_ms);
  const double hold_ms = v.holds_connection ? service_mean_ms : load.db_ms;
  return headroom_of(load, draws, hold_ms, service_mean_ms, v.settings, t, v.holds_connection);
}

nlohmann::json to_json(const PaperVerdict& v) {
  const auto finite = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); };
  const Recommendation& r = v.settings;
  return {{"strategy", v.strategy},
          {"feasible", v.feasible},
          {"why_not", v.why_not},
          {"settings",
           {{"maximum-pool-size", r.pool_size},
            {"connection-timeout", format_duration(r.connection_timeout)},
            {"partner-read-timeout", format_duration(r.read_timeout)},
            {"partner-max-attempts", r.attempts},
            {"lease-ttl", r.lease_ttl.count() > 0 ? nlohmann::json(format_duration(r.lease_ttl)) : nlohmann::json(nullptr)},
            {"max-threads", r.max_threads}}},
          {"holds_connection", v.holds_connection},
          {"excludes", v.excludes},
          {"hold_ms", v.hold_ms},
          {"erlangs", v.erlangs},
          {"pool_min_little", v.pool_min_little},
          {"wait_probability", finite(v.wait_probability)},
          {"wait_mean_ms", finite(v.wait_mean_ms)},
          {"p99_ms", finite(v.p99_ms)},
          {"service_p99_ms", v.service_p99_ms},
          {"worst_case_window_ms", v.window_ms},
          {"recovery_ms", v.recovery_ms},
          {"headroom_per_s", v.headroom_per_s},
          {"required",
           {{"maximum-pool-size", v.required.pool_size},
            {"connection-timeout", format_duration(v.required.connection_timeout)},
            {"partner-read-timeout", format_duration(v.required.read_timeout)},
            {"lease-ttl", v.required.lease_ttl.count() > 0 ? nlohmann::json(format_duration(v.required.lease_ttl))
                                                            : nlohmann::json(nullptr)},
            {"max-threads", v.required.max_threads}}},
          {"per_horizon",
           {{"requests", v.requests_per_horizon},
            {"pool_timeouts", v.pool_timeouts_per_horizon},
            {"probe_failures", v.probe_failures_per_horizon},
            {"rejected", v.rejected_per_horizon}}},
          {"probe_wait_probability", v.probe_wait_probability},
          {"read_timeout_share", v.timeout_share},
          {"ambiguous_per_day", v.ambiguous_per_day},
          {"why", v.why}};
}

}  // namespace lockbench::plan

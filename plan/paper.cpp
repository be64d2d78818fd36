// The paper plan: Little's law, Erlang C and a fixed-seed Monte Carlo of the
// critical section (plan/paper.hpp says what each setting is sized by).
#include "plan/paper.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

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
constexpr double kTimeoutTail = 1e-5;      // connectionTimeout: P(wait > it) at most this
constexpr double kThreadWaitShare = 0.01;  // Tomcat: P(a request waits for a thread) at most this
constexpr double kTtlMargin = 1.25;
constexpr double kReadTimeoutMargin = 1.10;

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

// The wait no more than kTimeoutTail of requests exceed (0 when P(wait) is below it).
double wait_tail_ms(const Load& load, double hold_ms, int pool) {
  const double lambda_ms = load.rate_per_s / load.pods / 1000;
  const double drain_ms = pool / hold_ms - lambda_ms;
  const double pw = erlang_c(pool, lambda_ms * hold_ms);
  return pw <= kTimeoutTail ? 0 : std::log(pw / kTimeoutTail) / drain_ms;
}

int threads_for(const Load& load, double busy_ms, int pool) {
  const double a = load.rate_per_s / load.pods * busy_ms / 1000;
  int c = std::max(1, static_cast<int>(std::floor(a)) + 1);
  while (c < kPoolMax && erlang_c(c, a) > kThreadWaitShare) ++c;
  return std::max(c, pool);
}

// Does the plan hold at `rate` with these settings (the headroom's test)?
bool holds_at(Load load, double rate, double hold_ms, const Recommendation& r, const PaperTargets& t,
              const Draws& draws, double busy_ms) {
  load.rate_per_s = rate;
  const PoolFigures f = figures(load, draws, hold_ms, r.pool_size);
  if (!f.stable || (t.p99_ms_max > 0 && f.p99_ms > t.p99_ms_max)) return false;
  if (wait_tail_ms(load, hold_ms, r.pool_size) > to_ms(r.connection_timeout)) return false;
  const double a_threads = rate / load.pods * (busy_ms + f.wait_mean_ms) / 1000;
  return a_threads < r.max_threads && erlang_c(r.max_threads, a_threads) <= kThreadWaitShare * 5;
}

double headroom_of(const Load& load, const Draws& draws, double hold_ms, double service_mean_ms,
                   const Recommendation& r, const PaperTargets& t) {
  const auto ok = [&](double rate) { return holds_at(load, rate, hold_ms, r, t, draws, service_mean_ms); };
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
  }
  return d.cap_ms > 0 ? std::min(v, d.cap_ms) : v;
}

PoolFigures pool_figures(const Load& load, double hold_ms, int pool) {
  return figures(load, draws_for(load), hold_ms, pool);
}

PaperVerdict paper_plan(const StrategyInfo& st, const Load& given, const PaperTargets& t) {
  PaperVerdict v;
  v.strategy = std::string(st.spec);
  v.holds_connection = st.props.holds_connection_during_call;
  Recommendation& r = v.settings;

  // The client first: the read timeout above the partner's p99.9, the attempts as configured.
  Load load = given;
  const double p999 = quantile_ms(load.partner, 0.999);
  r.read_timeout = round_up(p999 * kReadTimeoutMargin, 100);
  r.attempts = load.attempts;
  load.read_timeout = r.read_timeout;
  const auto window_of = [&](int attempts) {
    report::LintInput in;
    in.connect_timeout = load.connect_timeout;
    in.read_timeout = r.read_timeout;
    in.max_attempts = attempts;
    in.backoff_base = load.backoff_base;
    in.backoff_cap = load.backoff_cap;
    return to_ms(worst_case_call(in.retry())) * load.calls + load.db_ms;
  };
  v.why.push_back(fmt::format("read timeout {}: the partner's p99.9 ({}) + {:.0f} %, so a call that slow completes",
                              format_duration(r.read_timeout), ms_text(p999), (kReadTimeoutMargin - 1) * 100));

  // The lease: above the worst case, and (with a recovery target) short enough; fewer attempts if needed.
  if (st.props.lease_ttl) {
    for (;;) {
      v.window_ms = window_of(r.attempts);
      r.lease_ttl = round_up(v.window_ms * kTtlMargin, 1000);
      if (t.recovery_ms_max <= 0 || to_ms(r.lease_ttl) <= t.recovery_ms_max || r.attempts == 1) break;
      --r.attempts;
    }
    load.attempts = r.attempts;
    v.recovery_ms = to_ms(r.lease_ttl);
    v.why.push_back(fmt::format("lease TTL {}: worst-case critical section {} calls x ({} attempts x (connect {} + "
                                "read {}) + backoffs) = {}, x {:.2f} margin, rounded up to a second; a crashed "
                                "holder's key is free one TTL later",
                                format_duration(r.lease_ttl), load.calls, r.attempts,
                                format_duration(load.connect_timeout), format_duration(r.read_timeout),
                                ms_text(v.window_ms), kTtlMargin));
    if (t.recovery_ms_max > 0 && v.recovery_ms > t.recovery_ms_max)
      v.why_not.push_back(fmt::format("recovery: the TTL ({}) must cover the worst case even with 1 attempt, which is "
                                      "above the recovery target ({})",
                                      ms_text(v.recovery_ms), ms_text(t.recovery_ms_max)));
  } else {
    v.window_ms = window_of(r.attempts);
  }

  // Exclusion: a strategy that does not exclude (on these pods) cannot keep the violations at 0.
  v.excludes = !(st.props.exclusion == Exclusion::none || (st.props.exclusion == Exclusion::one_pod && load.pods > 1));
  if (t.no_violations && !v.excludes)
    v.why_not.push_back(fmt::format("violations: its exclusion is '{}'{}: two requests for one key can both call the "
                                    "partner",
                                    exclusion_name(st.props.exclusion), load.pods > 1 ? fmt::format(" on {} pods", load.pods) : ""));

  // The pool: Little's law's floor, then Erlang C upward until the p99 target holds.
  const Draws draws = draws_for(load);
  const double service_mean_ms = mean_of(draws.service_ms);
  v.service_p99_ms = quantile_of(draws.service_ms, 0.99);
  v.hold_ms = v.holds_connection ? service_mean_ms : load.db_ms;
  v.erlangs = load.rate_per_s / load.pods * v.hold_ms / 1000;
  v.pool_min_little = static_cast<int>(std::floor(v.erlangs)) + 1;
  int pool = v.pool_min_little;
  PoolFigures f = figures(load, draws, v.hold_ms, pool);
  // A p99 target the critical section alone breaks is not a pool's to meet: size as without one.
  const bool p99_bounds = t.p99_ms_max > 0 && v.service_p99_ms <= t.p99_ms_max;
  while (pool < kPoolMax && (f.wait_probability > 0.5 || (p99_bounds && f.p99_ms > t.p99_ms_max)))
    f = figures(load, draws, v.hold_ms, ++pool);
  r.pool_size = pool;
  v.wait_probability = f.wait_probability;
  v.wait_mean_ms = f.wait_mean_ms;
  v.p99_ms = f.p99_ms;
  const double rate_pod = load.rate_per_s / load.pods;
  v.why.push_back(fmt::format("Little's law: {:.2f}/s per pod x {} connection hold ({}) = {:.2f} connections busy on "
                              "average, so no pool of {} or fewer keeps up",
                              rate_pod, v.holds_connection ? "the whole critical section's" : "the statements'",
                              ms_text(v.hold_ms), v.erlangs, v.pool_min_little - 1));
  v.why.push_back(fmt::format("Erlang C (M/M/c): with {} connections a request waits with probability {:.4f}, {} on "
                              "average; paper p99 = {} (the critical section alone: {})",
                              pool, v.wait_probability, ms_text(v.wait_mean_ms), ms_text(v.p99_ms),
                              ms_text(v.service_p99_ms)));
  if (t.p99_ms_max > 0 && v.p99_ms > t.p99_ms_max)
    v.why_not.push_back(fmt::format("p99: {} even {}, above the target {}", ms_text(v.p99_ms),
                                    v.service_p99_ms > t.p99_ms_max ? "for the critical section alone, with no wait"
                                                                    : fmt::format("with {} connections", pool),
                                    ms_text(t.p99_ms_max)));

  // connectionTimeout: above the wait's far tail; Tomcat threads for the whole request.
  const double tail = wait_tail_ms(load, v.hold_ms, pool);
  r.connection_timeout = round_up(std::max(250.0, tail), 100);
  v.why.push_back(fmt::format("connectionTimeout {}: P(pool wait > it) <= 1e-5 (that wait: {}), at least 250 ms",
                              format_duration(r.connection_timeout), ms_text(tail)));
  r.max_threads = threads_for(load, service_mean_ms + (std::isfinite(f.wait_mean_ms) ? f.wait_mean_ms : 0), pool);
  v.why.push_back(fmt::format("Tomcat threads {}: {:.2f}/s x {} per request = {:.1f} busy; Erlang C P(wait) <= 1 %",
                              r.max_threads, rate_pod, ms_text(service_mean_ms + f.wait_mean_ms),
                              rate_pod * (service_mean_ms + f.wait_mean_ms) / 1000));
  if (!st.props.lease_ttl) v.recovery_ms = 0;

  // Headroom: the highest rate at which these settings still hold on paper.
  v.headroom_per_s = headroom_of(load, draws, v.hold_ms, service_mean_ms, r, t);
  v.why.push_back(fmt::format("headroom: these settings hold on paper up to {:.2f}/s in total ({:.0f} % of {:.2f}/s)",
                              v.headroom_per_s, load.rate_per_s > 0 ? 100 * v.headroom_per_s / load.rate_per_s : 0,
                              load.rate_per_s));
  v.feasible = v.why_not.empty();
  return v;
}

double headroom_per_s(const PaperVerdict& v, const Load& given, const PaperTargets& t) {
  Load load = given;
  load.read_timeout = v.settings.read_timeout;
  load.attempts = v.settings.attempts;
  const Draws draws = draws_for(load);
  const double service_mean_ms = mean_of(draws.service_ms);
  const double hold_ms = v.holds_connection ? service_mean_ms : load.db_ms;
  return headroom_of(load, draws, hold_ms, service_mean_ms, v.settings, t);
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
          {"why", v.why}};
}

}  // namespace lockbench::plan

// The simulator's confirmation of a paper plan, in rounds of side-by-side runs
// (plan/confirm.hpp describes the rounds).
#include "plan/confirm.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "settings/table.hpp"
#include "base/stats.hpp"
#include "report/fields.hpp"

namespace lockbench::plan {

namespace {

constexpr int kGrowths = 2;
constexpr int kReconfirms = 3;
constexpr int kHeadroomRounds = 4;

enum class Check { targets, steals, recovery };

struct Job {
  std::size_t who = 0;  // index into the strategies
  Settings settings;
  int seeds = 1;
  Check check = Check::targets;
  Evidence* into = nullptr;
  bool at_horizon = false;
};

double number(const nlohmann::json& j, const char* a, const char* b) {
  if (!j.contains(a) || !j[a].is_object() || !j[a].contains(b) || !j[a][b].is_number()) return NAN;
  return j[a][b].get<double>();
}

double count(const nlohmann::json& j, const char* a, const char* b) {
  const double v = number(j, a, b);
  return std::isnan(v) ? 0 : v;
}

// Every kind of event one run counted, as Evidence::events names them.
void add_events(Evidence& e, const nlohmann::json& r, const Settings& s) {
  const report::detail::Violations v = report::detail::violations_of(r);
  double lost_commits = 0;
  for (const auto& [kind, n] : v.note_kinds)
    if (kind == "ambiguous_commit") lost_commits += n;
  e.events["pool_timeouts"] += count(r, "requests", "pool_timeout");
  e.events["rejected"] += count(r, "requests", "rejected");
  e.events["probe_failures"] += count(r, "probe", "failed");
  e.events["probes"] += count(r, "probe", "total");
  e.events["lease_steals"] += count(r, "locks", "lease_steals");
  e.events["violations"] += v.exclusion;
  e.events["ambiguous"] += v.orphan + lost_commits;
  e.requests += count(r, "requests", "total");
  const double stopped_at_s = number(r, "stopped_early", "at_s");
  e.exposure_s += std::isnan(stopped_at_s) ? to_s(s.duration) : std::min(stopped_at_s, to_s(s.duration));
  if (!std::isnan(stopped_at_s)) ++e.stopped_early;
}

// Runs every job over its seeds in one batch; fills each job's Evidence.
void run_jobs(std::vector<Job>& jobs, const ConfirmOptions& o, const Runner& run, const Judge& judge,
              std::vector<Confirmed>& out) {
  std::vector<Settings> batch;
  for (const auto& j : jobs)
    for (int k = 0; k < j.seeds; ++k) {
      Settings s = j.settings;
      s.seed = j.settings.seed + static_cast<std::uint64_t>(k) + (j.at_horizon ? kHorizonSeedOffset : 0);
      batch.push_back(s);
    }
  const bool horizon = std::any_of(jobs.begin(), jobs.end(), [](const Job& j) { return j.at_horizon; });
  const Runner& runner = horizon && o.horizon_run ? o.horizon_run : run;
  // Longest first (requests to simulate as the proxy of a run's cost), so that
  // the batch's last runs are short ones: the cores finish it close together.
  std::vector<std::size_t> order(batch.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&batch](std::size_t a, std::size_t b) {
    return batch[a].expected_requests() > batch[b].expected_requests();
  });
  std::vector<Settings> longest_first;
  for (std::size_t i : order) longest_first.push_back(batch[i]);
  std::vector<nlohmann::json> results(batch.size());
  if (!batch.empty()) {
    std::vector<nlohmann::json> ran = runner(longest_first);
    for (std::size_t k = 0; k < order.size(); ++k) results[order[k]] = std::move(ran.at(k));
  }
  std::size_t at = 0;
  for (auto& j : jobs) {
    Evidence e;
    e.settings = j.settings;
    e.met = true;
    for (int k = 0; k < j.seeds; ++k, ++at) {
      const nlohmann::json& r = results.at(at);
      const Settings& s = batch[at];
      std::vector<std::string> broken;
      const double steals = number(r, "locks", "lease_steals");
      const double recovery = number(r, "faults", "recovery_ms");
      if (j.check == Check::targets) broken = judge(r);
      if (j.check == Check::steals && steals > 0)
        broken.push_back(s.strategy + ": lease_steals = " + std::to_string(static_cast<long long>(steals)) +
                         " with every partner call at the partner's p99.9");
      if (j.check == Check::recovery && (std::isnan(recovery) || recovery > o.recovery_ms_max))
        broken.push_back(s.strategy + ": recovery after the crash " +
                         (std::isnan(recovery) ? std::string("not measured")
                                               : format_duration(from_ms(recovery))) +
                         ", above " + format_duration(from_ms(o.recovery_ms_max)));
      e.met = e.met && broken.empty();
      for (auto& b : broken)
        if (std::find(e.broken.begin(), e.broken.end(), b) == e.broken.end()) e.broken.push_back(std::move(b));
      e.p99_ms.push_back(number(r, "latency_ms", "p99"));
      if (!std::isnan(recovery)) e.recovery_ms.push_back(recovery);
      if (!std::isnan(steals)) e.lease_steals += steals;
      add_events(e, r, s);
      e.at_horizon = j.at_horizon;
      e.run_lines.push_back(run_line(s, j.check == Check::targets ? o.fail_on
                                        : j.check == Check::steals ? std::string("lease_steals>0")
                                                                   : std::string()));
    }
    out[j.who].runs += j.seeds;
    *j.into = std::move(e);
  }
}

// The per-strategy state of the pool search.
struct Search {
  int fail_at = 0;   // the largest pool known to break the targets
  int pass_at = -1;  // the smallest known to meet them (-1 = none yet)
  int next = 0;      // the pool to try next (0 = done)
  int growths = 0;
  Evidence last;     // the last point tried
  Evidence pass;     // the evidence at pass_at
};

}  // namespace

Settings point_settings(const Settings& base, const PaperVerdict& p, int pool_size, double rate_per_s) {
  Settings s = base;
  s.world = "sim";
  s.strategy = p.strategy;
  s.maximum_pool_size = pool_size;
  s.connection_timeout = p.settings.connection_timeout;
  s.partner_read_timeout = p.settings.read_timeout;
  s.partner_max_attempts = p.settings.attempts;
  if (p.settings.lease_ttl.count() > 0) s.lease_ttl = p.settings.lease_ttl;
  s.max_threads = std::max(p.settings.max_threads, 1);
  s.arrival = Arrival::open;
  s.rate_per_s = rate_per_s;
  return s;
}

std::string run_line(const Settings& s, const std::string& fail_on) {
  return run_command(s, fail_on.empty() ? std::vector<std::string>{} : std::vector<std::string>{"--fail-on", fail_on});
}

namespace {

// One confirmation: every strategy's search and its evidence, advanced step by step (plan/confirm.hpp's rounds).
class Confirmation {
 public:
  Confirmation(const Settings& base, const std::vector<PaperVerdict>& paper, const ConfirmOptions& o,
               const Runner& run, const Judge& judge)
      : base_(base), paper_(paper), o_(o), run_(run), judge_(judge), rate_(base.rate_per_s),
        out_(paper.size()), search_(paper.size()), chosen_(paper.size(), 0),
        lo_(paper.size(), base.rate_per_s), hi_(paper.size(), 0) {
    for (std::size_t i = 0; i < paper_.size(); ++i) {
      out_[i].strategy = paper_[i].strategy;
      search_[i].fail_at = std::max(0, paper_[i].pool_min_little - 1);
      search_[i].next = std::max(paper_[i].settings.pool_size, 1);
    }
  }

  void search_pools();
  void confirm_found();
  void horizon_and_headroom();
  std::vector<Confirmed> result() { return std::move(out_); }

 private:
  using Who = std::vector<bool>;  // the strategies a step is for
  // 1b's state, per strategy: the pool its next horizon run tries (0 = none) and its round.
  struct Horizon {
    std::vector<int> pool, round;
    std::vector<Evidence> tried;
  };
  // 5's: the rate its next horizon run tries (0 = none) and its round.
  struct HeadroomHorizon {
    std::vector<double> rate;
    std::vector<int> round;
    std::vector<Evidence> tried;
  };
  Horizon start_horizon() const;
  void horizon_jobs(Horizon& h, std::vector<Job>& jobs) const;
  void judge_horizon(Horizon& h, const std::vector<Job>& jobs);
  void bisect_headroom(const Who& who);
  void confirm_headroom_and_faults(const Who& who);
  void start_headroom_horizon(HeadroomHorizon& h, const Who& who) const;
  void headroom_jobs(HeadroomHorizon& h, std::vector<Job>& jobs) const;
  void judge_headroom(HeadroomHorizon& h, const std::vector<Job>& jobs);

  Settings at(std::size_t i, int pool, double rate) const { return point_settings(base_, paper_[i], pool, rate); }
  Settings at_horizon(std::size_t i, int pool, double rate) const {
    Settings h = at(i, pool, rate);
    h.duration = o_.horizon;
    return h;
  }
  void run(std::vector<Job>& jobs) { run_jobs(jobs, o_, run_, judge_, out_); }

  const Settings& base_;
  const std::vector<PaperVerdict>& paper_;
  const ConfirmOptions& o_;
  const Runner& run_;
  const Judge& judge_;
  const double rate_;
  std::vector<Confirmed> out_;
  std::vector<Search> search_;
  std::vector<int> chosen_;       // the pool each strategy's point has
  std::vector<double> lo_, hi_;   // the headroom's bisection: the highest rate met, the lowest broken
};

// 1. The pool: grow until the targets hold, then bisect; one seed a step.
void Confirmation::search_pools() {
  for (;;) {
    std::vector<Job> jobs;
    for (std::size_t i = 0; i < paper_.size(); ++i)
      if (search_[i].next > 0) jobs.push_back({i, at(i, search_[i].next, rate_), 1, Check::targets, &search_[i].last});
    if (jobs.empty()) break;
    run(jobs);
    for (const auto& j : jobs) {
      Search& sr = search_[j.who];
      const int tried = sr.next;
      if (sr.last.met) {
        sr.pass_at = tried;
        sr.pass = sr.last;
      } else {
        sr.fail_at = std::max(sr.fail_at, tried);
      }
      // An infeasible paper plan gets its one run: more connections do not make a lock exclude.
      if (sr.pass_at < 0 && (!paper_[j.who].feasible || sr.growths >= kGrowths)) {
        sr.next = 0;
      } else if (sr.pass_at < 0) {
        sr.next = static_cast<int>(std::ceil(tried * 1.5)) + 1;
        ++sr.growths;
      } else {
        sr.next = sr.pass_at - sr.fail_at > 1 ? (sr.fail_at + sr.pass_at) / 2 : 0;
      }
    }
  }
}

// 2. The size found, over every seed (one larger when a seed breaks it), and one fewer.
void Confirmation::confirm_found() {
  for (std::size_t i = 0; i < paper_.size(); ++i)
    chosen_[i] = search_[i].pass_at > 0 ? std::max(search_[i].pass_at, o_.pool_floor) : search_[i].pass_at;
  for (int attempt = 0; attempt <= kReconfirms; ++attempt) {
    std::vector<Job> jobs;
    for (std::size_t i = 0; i < paper_.size(); ++i) {
      if (chosen_[i] <= 0 || out_[i].feasible) continue;
      jobs.push_back({i, at(i, chosen_[i], rate_), o_.seeds, Check::targets, &out_[i].chosen});
      if (attempt == 0 && chosen_[i] - 1 >= std::max(1, paper_[i].pool_min_little))
        jobs.push_back({i, at(i, chosen_[i] - 1, rate_), o_.seeds, Check::targets, &out_[i].below});
    }
    if (jobs.empty()) break;
    run(jobs);
    for (std::size_t i = 0; i < paper_.size(); ++i) {
      if (chosen_[i] <= 0 || out_[i].feasible) continue;
      if (out_[i].chosen.met) {
        out_[i].feasible = true;
      } else if (attempt < kReconfirms) {
        out_[i].below = out_[i].chosen;  // that size broke a seed: it is now the one below
        ++chosen_[i];
      }
    }
  }
  for (std::size_t i = 0; i < paper_.size(); ++i)
    if (chosen_[i] <= 0) out_[i].chosen = search_[i].last;  // the closest point tried
  for (std::size_t i = 0; i < out_.size(); ++i)
    if (o_.no_violations && !paper_[i].excludes) out_[i].no_exclusion = true, out_[i].feasible = false;
  for (std::size_t i = 0; i < paper_.size(); ++i)
    if (out_[i].feasible) out_[i].shortest = search_[i].pass;  // the search's own answer, one seed
}

// 1b. The horizon: the larger of the pool found and the paper's, over every seed (new seeds); grow when one breaks.
Confirmation::Horizon Confirmation::start_horizon() const {
  const std::size_t n = paper_.size();
  Horizon h{std::vector<int>(n, 0), std::vector<int>(n, 0), std::vector<Evidence>(n)};
  for (std::size_t i = 0; i < n; ++i)
    if (out_[i].feasible) h.pool[i] = std::max(chosen_[i], paper_[i].settings.pool_size);
  return h;
}

void Confirmation::horizon_jobs(Horizon& h, std::vector<Job>& jobs) const {
  for (std::size_t i = 0; i < paper_.size(); ++i)
    if (h.pool[i] > 0) jobs.push_back({i, at_horizon(i, h.pool[i], rate_), o_.seeds, Check::targets, &h.tried[i], true});
}

// A pool that met the targets is the one chosen; one that broke grows by 1, 2, 4, 8, then the strategy is infeasible.
void Confirmation::judge_horizon(Horizon& h, const std::vector<Job>& jobs) {
  for (const auto& j : jobs) {
    const std::size_t i = j.who;
    out_[i].chosen = h.tried[i];
    if (h.tried[i].met) {
      chosen_[i] = h.pool[i];
      h.pool[i] = 0;
    } else if (h.round[i] < kHorizonGrowths) {
      h.pool[i] += 1 << h.round[i]++;
    } else {
      out_[i].feasible = false;
      h.pool[i] = 0;
    }
  }
}

// 3. The headroom of the feasible ones, by bisection on the rate.
void Confirmation::bisect_headroom(const Who& who) {
  std::vector<Evidence> probe(paper_.size());
  for (std::size_t i = 0; i < paper_.size(); ++i)
    if (who[i]) hi_[i] = std::max(paper_[i].headroom_per_s * 1.25, rate_ * 1.1);
  for (int round = 0; round < kHeadroomRounds; ++round) {
    std::vector<Job> jobs;
    std::vector<double> tried(paper_.size(), 0);
    for (std::size_t i = 0; i < paper_.size(); ++i) {
      if (!who[i] || !out_[i].feasible || out_[i].headroom_at_least) continue;
      tried[i] = round == 0 ? hi_[i] : (lo_[i] + hi_[i]) / 2;
      jobs.push_back({i, at(i, chosen_[i], tried[i]), 1, Check::targets, &probe[i]});
    }
    if (jobs.empty()) break;
    run(jobs);
    for (const auto& j : jobs) {
      const std::size_t i = j.who;
      if (probe[i].met) {
        lo_[i] = tried[i];
        if (round == 0) out_[i].headroom_at_least = true;
      } else {
        hi_[i] = tried[i];
      }
    }
  }
}

// 4. The headroom over every seed, the lease at the partner's p99.9, the crash.
void Confirmation::confirm_headroom_and_faults(const Who& who) {
  std::vector<Job> jobs;
  for (std::size_t i = 0; i < paper_.size(); ++i) {
    if (!who[i]) continue;
    if (out_[i].feasible) {
      out_[i].headroom_per_s = lo_[i];
      jobs.push_back({i, at(i, chosen_[i], lo_[i]), o_.seeds, Check::targets, &out_[i].headroom});
    }
    const Settings point = at(i, std::max(chosen_[i], out_[i].chosen.settings.maximum_pool_size), rate_);
    if (paper_[i].settings.lease_ttl.count() > 0) {
      Settings slow = point;
      slow.partner_latency = Distribution::fixed(quantile_ms(base_.partner_latency, 0.999));
      slow.key_dist = KeyDist::hot;
      jobs.push_back({i, slow, 1, Check::steals, &out_[i].slow_partner});
    }
    if (o_.recovery_ms_max > 0) {
      Settings crash = point;
      crash.crash_at = crash.duration / 2;
      jobs.push_back({i, crash, o_.seeds, Check::recovery, &out_[i].crash});
    }
  }
  run(jobs);
  for (std::size_t i = 0; i < out_.size(); ++i) {
    if (!who[i]) continue;
    Confirmed& c = out_[i];
    // A headroom one seed found and another broke: only the planned rate is confirmed.
    if (c.feasible && !c.headroom.met) {
      c.headroom_per_s = rate_;
      c.headroom_at_least = false;
    }
    if (!c.slow_partner.run_lines.empty() && !c.slow_partner.met) c.feasible = false;
    if (!c.crash.run_lines.empty() && !c.crash.met) c.feasible = false;
  }
}

// 5. The headroom at the horizon: the rate found, then halfway back to the planned rate, then the planned rate.
void Confirmation::start_headroom_horizon(HeadroomHorizon& h, const Who& who) const {
  for (std::size_t i = 0; i < paper_.size(); ++i)
    if (who[i] && out_[i].feasible && out_[i].headroom_per_s > rate_ * 1.0001) {
      h.rate[i] = out_[i].headroom_per_s;
      h.round[i] = 0;
    }
}

void Confirmation::headroom_jobs(HeadroomHorizon& h, std::vector<Job>& jobs) const {
  for (std::size_t i = 0; i < paper_.size(); ++i)
    if (h.rate[i] > 0)
      jobs.push_back({i, at_horizon(i, chosen_[i], h.rate[i]), o_.seeds, Check::targets, &h.tried[i], true});
}

void Confirmation::judge_headroom(HeadroomHorizon& h, const std::vector<Job>& jobs) {
  for (const auto& j : jobs) {
    const std::size_t i = j.who;
    Confirmed& c = out_[i];
    c.headroom = h.tried[i];
    if (h.tried[i].met) {
      c.headroom_per_s = h.rate[i];
      h.rate[i] = 0;
      continue;
    }
    c.headroom_at_least = false;
    if (h.round[i]++ == 0) {
      h.rate[i] = (rate_ + h.rate[i]) / 2;
    } else {
      c.headroom_per_s = rate_;
      h.rate[i] = 0;
    }
  }
}

// 1b to 5. Without a horizon, 2 to 4 follow 1. With one, the horizon's first round at the planned
// rate and 5's first round run side by side, as one batch on every core: 2 to 4 (short runs) go
// first, on the pools 1b's first round tries, as if they met the targets (as they mostly do). A
// strategy whose pool broke there has its evidence from 2 on put back, finishes 1b, and then goes
// through 2 to 5 from the pool chosen: its runs beside are counted, and their evidence dropped.
// Every strategy's evidence is what running the steps one after the other gives (a run depends on
// its settings alone, never on what ran beside it), in less time: a day of 5 no longer waits for
// a day of 1b.
void Confirmation::horizon_and_headroom() {
  const std::size_t n = paper_.size();
  const Who all(n, true);
  if (o_.horizon.count() <= 0) {
    bisect_headroom(all);
    confirm_headroom_and_faults(all);
    return;
  }
  Horizon h = start_horizon();
  HeadroomHorizon hh{std::vector<double>(n, 0), std::vector<int>(n, 0), std::vector<Evidence>(n)};
  const auto finish_horizon = [&] {
    for (;;) {
      std::vector<Job> jobs;
      horizon_jobs(h, jobs);
      if (jobs.empty()) break;
      run(jobs);
      judge_horizon(h, jobs);
    }
  };
  const auto finish_headroom = [&] {
    for (;;) {
      std::vector<Job> jobs;
      headroom_jobs(hh, jobs);
      if (jobs.empty()) break;
      run(jobs);
      judge_headroom(hh, jobs);
    }
  };
  if (!o_.overlap) {
    finish_horizon();
    bisect_headroom(all);
    confirm_headroom_and_faults(all);
    start_headroom_horizon(hh, all);
    finish_headroom();
    return;
  }
  const std::vector<Confirmed> out_before = out_;
  const std::vector<int> chosen_before = chosen_;
  const std::vector<double> lo_before = lo_, hi_before = hi_;
  for (std::size_t i = 0; i < n; ++i)
    if (h.pool[i] > 0) chosen_[i] = h.pool[i];  // what 1b's first round chooses when it meets the targets
  bisect_headroom(all);
  confirm_headroom_and_faults(all);
  start_headroom_horizon(hh, all);

  std::vector<Job> planned, headroom;
  horizon_jobs(h, planned);
  headroom_jobs(hh, headroom);
  std::vector<Job> both = planned;
  both.insert(both.end(), headroom.begin(), headroom.end());
  run(both);
  judge_horizon(h, planned);
  Who again(n, false);
  for (const auto& j : planned) {
    const std::size_t i = j.who;
    if (h.tried[i].met) continue;
    again[i] = true;
    Evidence broke = std::move(out_[i].chosen);
    const int runs = out_[i].runs;
    out_[i] = out_before[i];
    out_[i].chosen = std::move(broke);
    out_[i].runs = runs;
    chosen_[i] = chosen_before[i];
    lo_[i] = lo_before[i];
    hi_[i] = hi_before[i];
    hh.rate[i] = 0;
  }
  std::vector<Job> kept;
  for (const auto& j : headroom)
    if (!again[j.who]) kept.push_back(j);
  judge_headroom(hh, kept);

  finish_horizon();  // only the strategies whose pool broke are left in it
  if (std::any_of(again.begin(), again.end(), [](bool b) { return b; })) {
    bisect_headroom(again);
    confirm_headroom_and_faults(again);
    start_headroom_horizon(hh, again);
  }
  finish_headroom();
}

}  // namespace

std::vector<Confirmed> confirm(const Settings& base, const std::vector<PaperVerdict>& paper,
                               const ConfirmOptions& o, const Runner& run, const Judge& judge) {
  Confirmation c(base, paper, o, run, judge);
  c.search_pools();
  c.confirm_found();
  c.horizon_and_headroom();
  return c.result();
}

double poisson_upper(double k, double confidence) {
  // The mean m at which P(Poisson(m) <= k) = 1 - confidence, by bisection (the CDF falls as m grows).
  const auto cdf = [k](double m) {
    double term = std::exp(-m), sum = term;
    for (int j = 1; j <= static_cast<int>(k); ++j) sum += term *= m / j;
    return sum;
  };
  double lo = 0, hi = k + 10 * std::sqrt(k + 1) + 10;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = (lo + hi) / 2;
    (cdf(mid) > 1 - confidence ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

namespace {

std::string amount_text(double x) {
  if (x >= 1e6) return fmt::format("{:.3g} M", x / 1e6);
  if (x >= 1e4) return fmt::format("{:.3g} k", x / 1e3);
  return fmt::format("{:.3g}", x);
}

std::string span_text(double s) {
  if (s >= 86400) return fmt::format("{:.3g} days", s / 86400);
  if (s >= 3600 * 2) return fmt::format("{:.3g} hours", s / 3600);
  if (s >= 120) return fmt::format("{:.3g} minutes", s / 60);
  return fmt::format("{:.3g} s", s);
}

}  // namespace

std::string bound_text(const Evidence& e, const std::string& kind, const std::string& label, bool per_request) {
  const auto it = e.events.find(kind);
  const double k = it == e.events.end() ? 0 : it->second;
  const double up = poisson_upper(k);
  const std::size_t seeds = e.run_lines.size();
  const std::string in =
      e.stopped_early > 0
          ? fmt::format("{} {} in {} over {} seed(s) ({} stopped once a target broke)", amount_text(k), label,
                        span_text(e.exposure_s), seeds, e.stopped_early)
          : fmt::format("{} {} in {} x {}", amount_text(k), label, seeds, format_duration(e.settings.duration));
  if (per_request)
    return fmt::format("{} ({} requests): rate < 1 per {} requests at 95 %", in, amount_text(e.requests),
                       amount_text(e.requests / up));
  return fmt::format("{}: rate < 1 per {} at 95 %", in, span_text(e.exposure_s / up));
}

std::optional<stats::Summary> p99_summary(const Evidence& e) {
  std::vector<double> v;
  for (double x : e.p99_ms)
    if (std::isfinite(x)) v.push_back(x);
  if (v.empty()) return std::nullopt;
  return stats::summarize(v);
}

nlohmann::json to_json(const Evidence& e) {
  if (e.run_lines.empty()) return nullptr;
  const auto sum = p99_summary(e);
  nlohmann::json p99 = nlohmann::json::array();
  for (double v : e.p99_ms) p99.push_back(std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr));
  nlohmann::json j = {{"met", e.met},
                      {"maximum-pool-size", e.settings.maximum_pool_size},
                      {"rate", e.settings.rate_per_s},
                      {"seeds", e.run_lines.size()},
                      {"broken", e.broken},
                      {"p99_ms", p99},
                      {"p99_ms_summary", sum ? nlohmann::json{{"n", sum->n}, {"mean", sum->mean},
                                                              {"ci95_low", sum->ci95_low}, {"ci95_high", sum->ci95_high}}
                                             : nlohmann::json(nullptr)},
                      {"lease_steals", e.lease_steals},
                      {"runs", e.run_lines}};
  if (!e.recovery_ms.empty()) j["recovery_ms"] = e.recovery_ms;
  j["duration"] = format_duration(e.settings.duration);
  j["at_horizon"] = e.at_horizon;
  j["events"] = e.events;
  j["requests"] = e.requests;
  j["exposure_s"] = e.exposure_s;
  j["stopped_early"] = e.stopped_early;
  if (e.at_horizon) {
    nlohmann::json bounds = nlohmann::json::object();
    for (const auto& [kind, n] : e.events) {
      if (kind == "probes") continue;
      const double up = poisson_upper(n);
      bounds[kind] = {{"seen", n}, {"upper_95", up}, {"per_request_max", e.requests > 0 ? up / e.requests : 0.0},
                      {"per_day_max", e.exposure_s > 0 ? up / e.exposure_s * 86400 : 0.0}};
    }
    j["poisson_95"] = bounds;
  }
  return j;
}

nlohmann::json to_json(const Confirmed& c) {
  return {{"strategy", c.strategy},
          {"feasible", c.feasible},
          {"infeasible_without_exclusion", c.no_exclusion},
          {"chosen", to_json(c.chosen)},
          {"shortest", to_json(c.shortest)},
          {"below", to_json(c.below)},
          {"headroom_per_s", c.feasible ? nlohmann::json(c.headroom_per_s) : nlohmann::json(nullptr)},
          {"headroom_at_least", c.headroom_at_least},
          {"headroom", to_json(c.headroom)},
          {"slow_partner", to_json(c.slow_partner)},
          {"crash", to_json(c.crash)},
          {"simulator_runs", c.runs},
          {"real", c.real.run_lines.empty() ? nlohmann::json(nullptr)
                                            : nlohmann::json{{"time_scale", c.real_time_scale},
                                                            {"counts", c.real_counts},
                                                            {"run", to_json(c.real)}}}};
}

}  // namespace lockbench::plan

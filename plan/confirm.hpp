// `lockbench plan`, in the simulator: the paper's settings confirmed by runs.
//
// Per strategy, in rounds that run every strategy's next point side by side
// (the Runner runs a batch on every core):
//  1. the pool size: the paper's size first; when it fails, larger sizes
//     (x1.5 + 1, twice); then a bisection between the largest size known to
//     fail (at first Little's floor - 1: no pool of floor(erlangs) or fewer
//     keeps up) and the smallest known to meet the targets. Bisection steps run
//     one seed; the size found is then confirmed over every seed (--seeds), and
//     one larger when a seed breaks it, up to three times;
//  1b. the horizon (ConfirmOptions::horizon, --horizon, a day by default):
//     the pool found, or the paper's (which sizes for the horizon and keeps
//     the service's own pool), whichever is larger, runs that long over every
//     seed, on seeds the steps above never used (kHorizonSeedOffset on). When
//     a seed breaks it, the pool grows by 1, 2, 4, 8 (kHorizonGrowths rounds);
//     the point recommended is the one that met the targets at the horizon.
//     Its evidence counts every kind of event over all those seeds, so the
//     plan states an exact Poisson bound on each rate (poisson_upper()). With
//     ConfirmOptions::horizon_run a horizon run that has broken a count target
//     stops there: a point that failed needs no more of its day;
//  2. the headroom: with those settings, the highest rate that still meets the
//     targets, by bisection between the planned rate and the paper's headroom
//     x 1.25 (four rounds, one seed each; the rate found is confirmed over every
//     seed, and when a seed breaks it the headroom is the planned rate), then
//     at the horizon over every seed: when a seed breaks it there, the rate
//     halfway to the planned one is tried at the horizon; when that breaks
//     too, the headroom is the planned rate (confirmed at the horizon in 1b);
//  3. a lease strategy: a run where every partner call takes the partner's
//     p99.9 (fixed latency) on one hot key, judged on lease steals only;
//  4. with a recovery target: a run per seed with --crash-at at half the
//     duration, judged on faults.recovery_ms.
// With a horizon, 2 to 4 (short runs) go before 1b, on the pools 1b's first
// round tries, so that 1b's first round and 2's first horizon round run side
// by side in one batch (ConfirmOptions::overlap): a strategy whose pool breaks
// at the horizon gets 2 to 4 again from the pool 1b then chooses, and its
// runs beside are counted and dropped. The evidence is that of the steps in
// the order above. Every batch runs its longest runs (most requests) first.
// Every run is kept as the `lockbench run` line that reproduces it. A strategy
// that does not exclude on these pods (PaperVerdict::excludes), while violations
// are a target, is never feasible: runs that saw no race do not prove there is none.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/settings.hpp"
#include "base/stats.hpp"
#include "plan/paper.hpp"

namespace lockbench::plan {

// Runs a batch of simulator settings, results in the same order.
using Runner = std::function<std::vector<nlohmann::json>(const std::vector<Settings>&)>;
// The targets a result breaks, one line each (empty: it meets them).
using Judge = std::function<std::vector<std::string>(const nlohmann::json&)>;

// One point (settings) over one or more seeds.
struct Evidence {
  Settings settings;  // the first seed's
  bool met = false;   // every seed met the targets
  std::vector<std::string> broken;  // what the seeds broke
  std::vector<double> p99_ms;       // per seed
  std::vector<double> recovery_ms;  // per seed (crash runs)
  double lease_steals = 0;          // summed over seeds
  std::vector<std::string> run_lines;  // one per seed
  // Counted over every seed: "pool_timeouts", "probe_failures", "rejected",
  // "violations" (exclusion only), "lease_steals", "ambiguous" (effects on one
  // side after a timeout, and lost commits), "probes" (sent).
  std::map<std::string, double> events;
  double requests = 0;    // requests offered, over every seed
  double exposure_s = 0;  // virtual time, over every seed (the arrival window)
  bool at_horizon = false;
  int stopped_early = 0;  // seeds whose run stopped once it had broken a target (ConfirmOptions::horizon_run)
};

// The exact one-sided 95 % upper bound on a Poisson mean, given `k` events
// seen (k = 0: -ln 0.05 = 2.996, the rule of three's exact form).
double poisson_upper(double k, double confidence = 0.95);
// "0 pool timeouts in 3 x 1d (5.18 M requests): rate < 1 per 1.73 M requests at 95 %".
std::string bound_text(const Evidence& e, const std::string& kind, const std::string& label, bool per_request);

struct Confirmed {
  std::string strategy;
  bool feasible = false;  // the chosen point met the targets on every seed
  bool no_exclusion = false;  // infeasible because it does not exclude, whatever the runs saw
  Evidence chosen;        // the point recommended: met the targets at the horizon (or the closest point tried)
  Evidence shortest;      // the smallest pool that met them in the short runs (the search's answer)
  Evidence below;         // one connection fewer, when it was run (empty run_lines otherwise)
  double headroom_per_s = 0;
  bool headroom_at_least = false;  // the highest rate tried still met them
  Evidence headroom;
  Evidence slow_partner;  // lease strategies: every call at the partner's p99.9
  Evidence crash;         // with a recovery target
  int runs = 0;           // simulator runs made for this strategy
  // plan --world real: the chosen point run once in the real world, time-scaled
  // (empty run_lines when it was not run: infeasible in the simulator, or no --world real).
  Evidence real;
  double real_time_scale = 0;
  nlohmann::json real_counts;  // the real run's pool timeouts, violations, failed probes, lease steals
};

struct ConfirmOptions {
  int seeds = 3;
  bool no_violations = true;   // violations are a target
  double recovery_ms_max = 0;  // 0 = no crash runs
  std::string fail_on;         // the targets as --fail-on text, for the run lines
  Duration horizon{};          // 0 = no horizon runs (the short runs decide)
  int pool_floor = 0;          // the current pool (fewest changes): the point chosen is never smaller
  // Runs the horizon's batches (empty: the same Runner as the short runs). The
  // CLI's stops a run as soon as a count it judges has broken its target: a
  // run that has failed need not finish (its evidence then covers the time it ran).
  Runner horizon_run;
  // The horizon's first round and the headroom's first round at the horizon side by side, in one
  // batch (confirm.cpp's horizon_and_headroom). false: the steps one after the other, the order
  // the evidence is defined by; tests compare the two.
  bool overlap = true;
};

inline constexpr std::uint64_t kHorizonSeedOffset = 1000;
inline constexpr int kHorizonGrowths = 4;

// The settings of one strategy's point: the base with the recommendation applied.
Settings point_settings(const Settings& base, const PaperVerdict& paper, int pool_size, double rate_per_s);

// The `lockbench run` line that reproduces a run: every setting that differs
// from Settings{} (settings/table.hpp's run_command), then --fail-on.
std::string run_line(const Settings& s, const std::string& fail_on);

std::vector<Confirmed> confirm(const Settings& base, const std::vector<PaperVerdict>& paper,
                               const ConfirmOptions& options, const Runner& run, const Judge& judge);

// The seeds' p99 as core/stats summarizes it (mean and its 95 % t-interval); none without a finite p99.
std::optional<stats::Summary> p99_summary(const Evidence& e);

nlohmann::json to_json(const Evidence& e);
nlohmann::json to_json(const Confirmed& c);

}  // namespace lockbench::plan

// The knee of a strategy: the highest offered rate at which it still serves
// (ok/s at least 95 % of the requests offered) and keeps its p99 (every
// request, from its intended start) under a target. `sweep --knee-p99 D` finds
// it in the simulator by bisection over the rate; each rate the bisection
// tries runs on every repetition's seed, so the seeds either agree on the knee
// (within the bisection's resolution) or the knee says that they disagree and
// between which rates. knees.json keeps it beside the sweep's results and the
// report shows it.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/units.hpp"

namespace lockbench::report {

inline constexpr double kKneeOkShareMin = 0.95;  // ok/s at least this share of the requests offered
inline constexpr const char* kKneesSchema = "lockbench.knees/2";

// The share of the requests offered that ended ok: ok/s over the arrival window
// against the arrivals the run counted over the same window (requests.ok /
// requests.total). Neither the nominal rate (the arrivals are Poisson: a run
// gets more or fewer than rate x duration) nor the drain after the window
// (when the requests in flight finish) enters it. 0 for a run without requests.
double knee_ok_share(const nlohmann::json& result);
// Whether one run is below the knee: knee_ok_share >= 95 % and p99 <= target.
bool below_knee(const nlohmann::json& result, Duration p99_target);

// One rate the bisection tried: how many of the seeds passed there.
struct KneeProbe {
  double rate_per_s = 0;
  int passed = 0;
};

// A bisection over the rate with every rate run on all seeds.
struct KneeSearch {
  int seeds = 0;
  double knee_per_s = 0;        // the highest rate tried at which every seed passed (0: none did)
  double upper_per_s = 0;       // the highest rate tried at which some seed passed (== knee when they agree)
  double resolution_per_s = 0;  // the width of the last bracket (0 when unbounded)
  bool seeds_agree = true;      // no rate tried passed on some seeds and failed on others
  bool bounded = true;          // false: every seed passed at the highest rate tried
  bool upper_bounded = true;    // false: some seed passed at the highest rate tried
  std::vector<KneeProbe> probes;  // in the order tried, each rate once
};

// passed(rate): how many of the `seeds` pass at that rate (one run each).
// From `start`, the rate doubles (at most `doublings` times) while every seed
// passes; then `steps` halvings of the bracket. Two such bisections run over
// the same probes, one for "every seed passes" (the knee) and one for "some
// seed passes" (the upper end): while no rate splits the seeds they try the
// same rates, so the second costs no run and the knee holds for every seed
// within the resolution. A rate that splits them parts the two, and the
// result says the seeds disagree: the knee lies between knee_per_s and
// upper_per_s, depending on the seed.
KneeSearch find_knee(const std::function<int(double)>& passed, int seeds, double start, int steps, int doublings);

// One strategy's knee over its repetitions' seeds.
struct Knee {
  std::string strategy;
  std::vector<std::uint64_t> seeds;
  KneeSearch search;
};
// {"schema":"lockbench.knees/2","criteria":{...},"method":...,"knees":[{strategy, n, seeds, knee_per_s,
//  upper_per_s, resolution_per_s, seeds_agree, bounded, upper_bounded, probes:[{rate_per_s, passed}]}]}
nlohmann::json knees_json(const std::vector<Knee>& knees, Duration p99_target);
// One knee of knees_json as text, `unit` after its figures: "7.81", "64.00 (above the highest rate
// tried)" or "seeds disagree: knee between 6.69 and 9.06".
std::string knee_figure(const nlohmann::json& knee, const std::string& unit = "");
// The figure with its unit, seeds and resolution: "7.81 /s (n=5, resolution 0.06 /s)",
// "64.00 /s (above the highest rate tried; n=5)".
std::string knee_summary(const nlohmann::json& knee);
// The report's section ("The knee" and a table) from knees_json; "" for null or no knee.
std::string knees_markdown(const nlohmann::json& knees);
std::string knees_html(const nlohmann::json& knees);

}  // namespace lockbench::report

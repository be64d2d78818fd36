// The knee of a strategy: the highest offered rate at which it still serves
// (ok/s within 5 % of offered) and keeps its p99 (every request, from its
// intended start) under a target. `sweep --knee-p99 D` finds it in the
// simulator by bisection over the rate, once per repetition (each with its
// derived seed), so the knee comes with its 95 % interval; knees.json keeps
// it beside the sweep's results and the report shows it.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/units.hpp"

namespace lockbench::report {

inline constexpr double kKneeOkShareMin = 0.95;  // ok/s at least this share of offered

// Whether one run is below the knee: ok/s >= 95 % of offered and p99 <= target.
bool below_knee(const nlohmann::json& result, Duration p99_target);

// Bisection over the rate in (0, hi]: when `passes(hi)`, hi doubles (at most
// `doublings` times) until a rate fails; then `steps` halvings of [lo, hi].
// Returns the highest rate seen to pass (0 when none did); `bounded` is false
// when even the last doubled rate passed (the knee lies above it).
double bisect_knee(const std::function<bool(double)>& passes, double hi, int steps, int doublings, bool& bounded);

// One strategy's knees, one per repetition.
struct Knee {
  std::string strategy;
  std::vector<double> rates_per_s;  // by repetition
  std::vector<std::uint64_t> seeds;
  bool bounded = true;  // false: some repetition passed at the highest rate tried
};
// {"schema":"lockbench.knees/1","criteria":{...},"knees":[{strategy, n, values, seeds, mean, median, stddev,
//  cv, ci95:[lo,hi], bounded}]}
nlohmann::json knees_json(const std::vector<Knee>& knees, Duration p99_target);
// The report's section ("The knee" and a table) from knees_json; "" for null or no knee.
std::string knees_markdown(const nlohmann::json& knees);
std::string knees_html(const nlohmann::json& knees);

}  // namespace lockbench::report

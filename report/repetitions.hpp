// Repetitions of one run, told apart from other runs, and their aggregate.
//
// Results are repetitions of one another when they differ in their seed only:
// same world, scenario, strategy and every other setting (`run` / `sweep
// --repetitions N` makes such sets; a result's "repetition" block says which
// one it is). Every consumer (the CLI's table, the report, compare, validate)
// groups with repetition_groups() and summarizes with core/stats, so their
// figures agree.
//
// The aggregate covers the metrics of aggregated_metrics() (one registry:
// ok/s, p50, p99, pool timeouts, violations) plus every violation kind that
// any result of the group counts under partner.violations. Time-scaled real
// runs are read in configured units (report::detail::configured_view).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/stats.hpp"

namespace lockbench::report {

struct AggregatedMetric {
  std::string_view name;  // in the aggregate: "ok_per_s", "p99_ms", ...
  std::string_view path;  // dotted path in a result (configured units)
  int decimals;           // how "mean ± half-width" prints
};
// ok_per_s, p50_ms, p99_ms, pool_timeouts, violations (the report's total).
const std::vector<AggregatedMetric>& aggregated_metrics();

struct RepetitionGroup {
  std::vector<const nlohmann::json*> runs;  // in the order given
  std::string label;                        // "held-tx:wait (sim)", with the varied settings when asked
};
// Results grouped by everything but their seed, in first-seen order.
std::vector<RepetitionGroup> repetition_groups(const std::vector<nlohmann::json>& results);
// The key two results share when they are repetitions of one another.
std::string repetition_key(const nlohmann::json& result);

// The values of one metric over a group: a dotted path or an aggregated
// metric's name ("violations" sums the report's violation count; a
// partner.violations kind by "violations.<kind>"). Results without it are left out.
std::vector<double> metric_values(const RepetitionGroup& g, std::string_view name);
std::optional<stats::Summary> metric_summary(const RepetitionGroup& g, std::string_view name);

// The summary of `metric` over the set `r` belongs to among `groups` (pointer
// identity); nullopt when r's set has one run only.
std::optional<stats::Summary> summary_over_repetitions(const std::vector<RepetitionGroup>& groups,
                                                       const nlohmann::json* r, std::string_view metric);

// {"schema":"lockbench.aggregate/1","world","scenario","strategy","settings" (without seed),
//  "repetitions":n,"seeds":[...],"metrics":{name:{n,mean,median,stddev,cv,ci95:[lo,hi],values:[...]}}}
nlohmann::json aggregate_json(const RepetitionGroup& g);
// Every group of `results`, as an array of aggregate_json().
nlohmann::json aggregates_json(const std::vector<nlohmann::json>& results);

// "18.70 ± 0.12" (the mean and the 95 % interval's half-width); "18.70" for one run.
std::string plus_minus(const stats::Summary& s, int decimals);

}  // namespace lockbench::report

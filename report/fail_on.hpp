// --fail-on: thresholds a CI job sets on results, like k6's. A comma-separated
// list of METRIC OP VALUE; a run that breaks one makes the command exit 1 with
// one line per broken threshold naming the run, the metric, its value and the
// threshold.
//   metrics  violations (partner checks that are violations; notes such as
//            retry_overlap do not count), pool_timeouts, errors, conflicts,
//            rejected, leaked, lease_steals, probe_failures, ok_per_s,
//            p50, p99, p999, max, ok_p50, ok_p99 (latencies: durations with units)
//   ops      > >= < <= ==
// Time-scaled real runs are judged in configured units (the result's unscaled block).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lockbench::report {

struct Threshold {
  std::string metric;
  std::string op;
  double value = 0;  // latencies in ms
  std::string text;  // as written
};

// Throws SettingError naming --fail-on and what is accepted.
std::vector<Threshold> parse_fail_on(const std::string& spec);
// One line per broken threshold per result ("held-tx:wait (sim): pool_timeouts = 495, fails pool_timeouts>0").
std::vector<std::string> broken_thresholds(const std::vector<Threshold>& thresholds,
                                           const std::vector<nlohmann::json>& results);

}  // namespace lockbench::report

// `lockbench compare A B`: two result sets (files or directories) side by
// side, for "did this change make it worse?". Runs are matched by world,
// scenario, strategy and the headline settings (offered load in configured
// units, arrival model, pods, pool size, injected faults); each pair gets its
// deltas, and a pair is flagged as a regression when B's ok/s fell by more
// than max_ok_drop_pct, B's ok p99 rose by more than max_p99_rise_pct, or B
// counted a violation kind that A did not (violations decided by the
// report's one function: notes such as ambiguous_commit never count).
// Repetitions (runs of a key that differ in their seed only, report/repetitions.hpp)
// are compared by their means, and with repetitions on both sides a shift past a
// threshold is flagged only when a two-sided Mann-Whitney U test gives p < 0.05
// (the p-value is printed); with one run on a side the pair says so and, from the
// observed cv of ok/s, how many repetitions would detect the threshold.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace lockbench::report {

struct CompareOptions {
  double max_ok_drop_pct = 10;   // flag when ok/s fell by more than this
  double max_p99_rise_pct = 20;  // flag when the ok p99 rose by more than this
};

struct ComparedRun {
  std::string key;  // "sim · switch-primary · held-tx:wait · 20/s · pool 10"
  nlohmann::json a, b;  // the two runs' figures: ok_per_s, p99_ms, violations, violation_kinds, pool_timeouts, probes_failed
  double ok_delta_pct = 0;
  double p99_delta_pct = 0;
  // Two-sided Mann-Whitney U p-values of B against A, when both sides have repetitions.
  std::optional<double> ok_p, p99_p;
  std::vector<std::string> regressions;  // one sentence each; empty = no regression
  std::vector<std::string> notes;        // settings that differ beyond the key, duplicates
};

struct Comparison {
  std::vector<ComparedRun> runs;
  std::vector<std::string> only_a, only_b;  // keys without a partner
  bool regressed() const;
};

Comparison compare(const std::vector<nlohmann::json>& a, const std::vector<nlohmann::json>& b,
                   const CompareOptions& options = {});

std::string compare_markdown(const Comparison& c, const CompareOptions& options, const std::string& name_a,
                             const std::string& name_b);
nlohmann::json compare_json(const Comparison& c, const CompareOptions& options, const std::string& name_a,
                            const std::string& name_b);

// Results from a file (an object or an array) or a directory (its *.json
// files, sorted). Throws SettingError naming the path.
std::vector<nlohmann::json> load_result_set(const std::string& path);

// The command: loads both sets, prints Markdown (format "md") or JSON
// ("json") to `out`, returns the exit status: 1 when a regression is flagged,
// else 0. Bad input throws SettingError (the CLI exits 2).
int run_compare(const std::string& a, const std::string& b, const CompareOptions& options,
                const std::string& format, std::ostream& out);

}  // namespace lockbench::report

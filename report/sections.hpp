// Internal: the tables both report.md and report.html show.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/table.hpp"

namespace lockbench::report::detail {

// One row per result: throughput, latency, pool and probe failures, every
// violation kind, lease steals, unlock failures, recovery after a crash.
Table summary_table(const std::vector<nlohmann::json>& results);

// The summary's violation columns: every contract kind, and any other kind
// the partner counted at least once. The rest go into uncounted_kinds_note.
std::vector<std::string> summary_violation_kinds(const std::vector<nlohmann::json>& results);
std::string uncounted_kinds_note(const std::vector<nlohmann::json>& results);

// Little's law and Erlang C beside what was measured.
Table prediction_table(const std::vector<nlohmann::json>& results);

// The seeds' comparison table (002, "Picking the Right Tool") with measured
// values per strategy in place of ticks.
Table comparison_table(const std::vector<nlohmann::json>& results);

// partner.details rows (at most `limit`), naming the requests involved.
Table violation_details_table(const std::vector<nlohmann::json>& results, std::size_t limit);

// What each run was: world, seed, every setting.
Table runs_table(const std::vector<nlohmann::json>& results);

// "All runs: world `sim`, scenario `switch-primary`." (Markdown backticks), or
// "" when both vary.
std::string scope_line(const std::vector<nlohmann::json>& results);

// One sentence about time scaling, or "" when every run is unscaled.
std::string time_scale_note(const std::vector<nlohmann::json>& results);

}  // namespace lockbench::report::detail

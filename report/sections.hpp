// Internal: the tables and the generated text both report.md and report.html
// show. Every function takes configured views (fields.hpp configured_views):
// a time-scaled run is compared in the units it was configured in.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/table.hpp"

namespace lockbench::report::detail {

// The first screen: one row per strategy at the headline setting of each
// world (fields.hpp headline_runs): exclusion held?, pool-safe?, ok/s against
// offered and against the Little's-law ceiling, p99, steals, leaks, orphan
// effects. ✅/❌ follow the numbers.
Table verdict_table(const std::vector<nlohmann::json>& views);

// What the runs show, computed from the headline rows' numbers: which
// strategies held exclusion and the pool, which ran the pool dry and how close
// to the ceiling, which raced and how often, leaks and steals, and how far
// the worlds agree. Markdown (backticks, **bold**), one paragraph per world.
std::string verdict_paragraphs(const std::vector<nlohmann::json>& views);

// Per-run detail: one row per result (numbered as given), with every column
// that tells runs apart: world and time scale, pods, duration, faults, seed,
// the settings that differ between runs; then the figures.
Table detail_table(const std::vector<nlohmann::json>& views);

// Violation kinds the partner checks that no run counted, and the counts that
// are not violations; "" when there is nothing to say.
std::string uncounted_kinds_note(const std::vector<nlohmann::json>& views);

// Little's law and Erlang C beside what was measured.
Table prediction_table(const std::vector<nlohmann::json>& views);

// The seeds' comparison table (002, "Picking the Right Tool") with measured
// values per strategy in place of ticks.
Table comparison_table(const std::vector<nlohmann::json>& views);

// partner.details rows (at most `limit`), naming the requests involved.
Table violation_details_table(const std::vector<nlohmann::json>& views, std::size_t limit);

// What each run was: run number, world, seed, every setting.
Table runs_table(const std::vector<nlohmann::json>& views);

// "All runs: world `sim`, scenario `switch-primary`." (Markdown backticks), or
// "" when both vary.
std::string scope_line(const std::vector<nlohmann::json>& views);

// One sentence about time scaling, or "" when every run is unscaled.
std::string time_scale_note(const std::vector<nlohmann::json>& views);

// "`a`" -> "<code>a</code>", "**b**" -> "<b>b</b>", the rest escaped.
std::string markdown_inline_to_html(const std::string& text);

}  // namespace lockbench::report::detail

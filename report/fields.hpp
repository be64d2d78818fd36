// Internal: typed access to result JSON by dotted path, the list of contract
// fields, and the grouping every part of the report shares.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lockbench::report::detail {

using nlohmann::json;

// Contract fields (docs/reference/result.md), as dotted paths.
const std::vector<std::string>& required_fields();

// The partner violation kinds every report shows a column for, even at 0.
const std::vector<std::string>& contract_violation_kinds();

// Element at "a.b.c", or nullptr when any step is absent.
const json* find(const json& j, std::string_view dotted);

// A number at the path; nullopt when absent, null or not a number.
std::optional<double> num(const json& j, std::string_view dotted);
double num_or(const json& j, std::string_view dotted, double fallback);
std::string str(const json& j, std::string_view dotted, std::string fallback = "");

// "1.5", "12", "0.25": short human numbers; "–" for nullopt.
std::string fmt(std::optional<double> v, int decimals = 1);

// Every key under partner.violations in any result, informational ones
// included: the contract's first, then any extra kinds in name order.
std::vector<std::string> violation_kinds(const std::vector<json>& results);

// What a key under partner.violations means. Any kind not in the two short
// lists below is a violation of exclusion: a new kind from the partner counts
// (and fails a verdict) without a change here.
enum class KindClass {
  exclusion,  // two requests were inside the critical section at once, or its effects disagree
  orphan,     // an external effect the service has no record of (or the reverse)
  note,       // counted, not a violation (ambiguous_commit, retry_overlap, overlap_abandoned, stale_token_rejected)
};
KindClass classify_kind(std::string_view kind);
bool is_count_not_violation(std::string_view kind);  // classify_kind(kind) == note
// The sentence that names overlap_abandoned and its fix; "" when the run counted none.
std::string abandoned_call_fix(const json& result);

// A run's violations, decided once: every section, chart and `compare` reads
// this, so their counts always agree.
struct Violations {
  double total = 0;      // exclusion + orphan
  double exclusion = 0;
  double orphan = 0;
  double notes = 0;
  std::vector<std::pair<std::string, double>> kinds;       // violation kinds counted > 0, largest first
  std::vector<std::pair<std::string, double>> note_kinds;  // informational kinds counted > 0
};
Violations violations_of(const json& result);
double violations_total(const json& result);

// "overlap_person 37, flow_interleaving 21" (the first `limit` kinds; "" for none).
std::string kinds_text(const std::vector<std::pair<std::string, double>>& kinds, std::size_t limit = 99);

// Figures in configured units. A time-scaled real run (time_scale F != 1) ran
// every duration F times as long and every rate 1/F times as fast; its copy
// here has rates multiplied and times divided by F, so it sits beside an
// unscaled run on the same axes. `time_scale` stays as measured; the copy
// gets "units": "configured".
json configured_view(const json& result);
std::vector<json> configured_views(const std::vector<json>& results);

// Whether a run injected faults (crash, pause, clock skew): such a run is not
// a load point and not a headline.
bool has_faults(const json& result);

// The strategy's design facts (result.strategy_info from the registry) when
// present; `holds_connection` falls back to prediction.configured_ceiling_per_s
// (set only for strategies that hold a connection during the call).
std::optional<bool> strategy_fact(const json& result, std::string_view fact);
bool holds_connection(const json& result);
// The Little's-law ceiling every output shows (report, console table, charts):
// pool size / measured mean connection hold (prediction.littles_law_ceiling_per_s),
// for a strategy that holds its connection during the call; nullopt for the
// others. prediction.configured_ceiling_per_s (from the configured hold) is a
// prediction made before the run, shown beside it only as such.
std::optional<double> ceiling_per_s(const json& result);

// Strategy names in first-seen order, each with its results sorted by offered load.
struct StrategyGroup {
  std::string strategy;
  std::vector<const json*> results;
};
std::vector<StrategyGroup> group_by_strategy(const std::vector<json>& results);

// The run each (world, scenario, strategy) is judged by: the headline setting
// of a world is its highest offered load (configured units) among runs
// without faults; a strategy without a run there is shown at its heaviest.
// Ordered by world (first seen), then strategy (first seen).
struct Headline {
  std::string world;
  std::string scenario;
  std::string strategy;
  const json* run = nullptr;
  bool off_headline = false;  // shown at another load than the world's headline
};
std::vector<Headline> headline_runs(const std::vector<json>& views);

// "sim", "real x0.1", with the pod count when > 1.
std::string world_label(const json& result);
// "59.0 s", "250 ms", "–".
std::string duration_text(std::optional<double> ms);

// "held-tx:wait" -> "held-tx".
std::string base_strategy(std::string_view strategy);

// Text safe inside a Markdown table cell / HTML element.
std::string md_cell(std::string_view text);
std::string html_escape(std::string_view text);

}  // namespace lockbench::report::detail

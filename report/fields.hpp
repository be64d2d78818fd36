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

// Contract fields (DESIGN.md "Result contract"), as dotted paths.
const std::vector<std::string>& required_fields();

// The partner violation kinds the contract names, in its order.
const std::vector<std::string>& contract_violation_kinds();

// Element at "a.b.c", or nullptr when any step is absent.
const json* find(const json& j, std::string_view dotted);

// A number at the path; nullopt when absent, null or not a number.
std::optional<double> num(const json& j, std::string_view dotted);
double num_or(const json& j, std::string_view dotted, double fallback);
std::string str(const json& j, std::string_view dotted, std::string fallback = "");

// "1.5", "12", "0.25": short human numbers; "–" for nullopt.
std::string fmt(std::optional<double> v, int decimals = 1);

// Every violation kind present in any result: the contract's first, then any
// extra kinds in name order.
std::vector<std::string> violation_kinds(const std::vector<json>& results);
// Counts the partner reports that are not violations (ambiguous_commit, stale_token_rejected).
bool is_count_not_violation(std::string_view kind);
double violations_total(const json& result);

// Strategy names in first-seen order, each with its results sorted by offered load.
struct StrategyGroup {
  std::string strategy;
  std::vector<const json*> results;
  // The heaviest run (highest offered load, then most requests): the one the
  // per-strategy charts and diagrams speak for.
  const json* representative() const;
};
std::vector<StrategyGroup> group_by_strategy(const std::vector<json>& results);

// "held-tx:wait" -> "held-tx".
std::string base_strategy(std::string_view strategy);

// Text safe inside a Markdown table cell / HTML element.
std::string md_cell(std::string_view text);
std::string html_escape(std::string_view text);

}  // namespace lockbench::report::detail

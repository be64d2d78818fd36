#include "report/fields.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

namespace lockbench::report::detail {

const std::vector<std::string>& required_fields() {
  // Only DESIGN.md's contract is required; the extras (timeline, trace,
  // time_split_ms, faults...) are optional and each consumer says when absent.
  static const std::vector<std::string> fields = {
      "schema", "world", "scenario", "strategy", "seed", "settings", "offered_per_s", "duration_s",
      "requests.total", "requests.ok", "requests.conflict", "requests.pool_timeout", "requests.rejected",
      "requests.error", "throughput_ok_per_s", "latency_ms.p50", "latency_ms.p90", "latency_ms.p99",
      "latency_ms.p999", "latency_ms.max", "pool.size", "pool.active_max", "pool.pending_max",
      "pool.utilization", "pool.wait_ms.p50", "pool.wait_ms.p99", "pool.wait_ms.max", "pool.hold_ms.p50",
      "pool.hold_ms.p99", "pool.hold_ms.max", "pool.timeouts", "pool.leaks", "probe.total", "probe.failed",
      "locks.acquired", "locks.denied", "locks.lease_steals", "locks.version_conflicts",
      "locks.unlock_failures", "locks.leaked", "partner.calls", "partner.violations.overlap_person",
      "partner.violations.flow_interleaving", "partner.violations.person_split",
      "partner.violations.lost_promotion", "partner.violations.identity_lost",
      "partner.violations.identity_duplicated", "partner.violations.double_charge",
      "prediction.littles_law_ceiling_per_s"};
  return fields;
}

const std::vector<std::string>& contract_violation_kinds() {
  static const std::vector<std::string> kinds = {"overlap_person",   "flow_interleaving",   "person_split",
                                                 "lost_promotion",   "identity_lost",       "identity_duplicated",
                                                 "double_charge"};
  return kinds;
}

const json* find(const json& j, std::string_view dotted) {
  const json* at = &j;
  while (!dotted.empty()) {
    const auto dot = dotted.find('.');
    const std::string key(dotted.substr(0, dot));
    if (!at->is_object()) return nullptr;
    const auto it = at->find(key);
    if (it == at->end()) return nullptr;
    at = &*it;
    dotted = dot == std::string_view::npos ? std::string_view{} : dotted.substr(dot + 1);
  }
  return at;
}

std::optional<double> num(const json& j, std::string_view dotted) {
  const json* v = find(j, dotted);
  if (v == nullptr || !v->is_number()) return std::nullopt;
  return v->get<double>();
}

double num_or(const json& j, std::string_view dotted, double fallback) {
  return num(j, dotted).value_or(fallback);
}

std::string str(const json& j, std::string_view dotted, std::string fallback) {
  const json* v = find(j, dotted);
  if (v == nullptr || v->is_null()) return fallback;
  if (v->is_string()) return v->get<std::string>();
  return v->dump();
}

std::string fmt(std::optional<double> v, int decimals) {
  if (!v || !std::isfinite(*v)) return "–";
  const double x = *v;
  // Integers print without decimals: counts stay counts.
  if (x == std::round(x) && std::fabs(x) < 1e15) return fmt::format("{:.0f}", x);
  return fmt::format("{:.{}f}", x, decimals);
}

std::vector<std::string> violation_kinds(const std::vector<json>& results) {
  std::vector<std::string> kinds = contract_violation_kinds();
  std::set<std::string> extra;
  for (const auto& r : results) {
    const json* v = find(r, "partner.violations");
    if (v == nullptr || !v->is_object()) continue;
    for (const auto& [k, _] : v->items())
      if (std::find(kinds.begin(), kinds.end(), k) == kinds.end()) extra.insert(k);
  }
  kinds.insert(kinds.end(), extra.begin(), extra.end());
  return kinds;
}

bool is_count_not_violation(std::string_view kind) {
  // partner-api.md: an ambiguous commit is counted, not a violation; a stale
  // token refused is the fencing doing its job.
  return kind == "ambiguous_commit" || kind == "stale_token_rejected";
}

double violations_total(const json& result) {
  double total = 0;
  const json* v = find(result, "partner.violations");
  if (v == nullptr || !v->is_object()) return 0;
  for (const auto& [kind, n] : v->items())
    if (n.is_number() && !is_count_not_violation(kind)) total += n.get<double>();
  return total;
}

const json* StrategyGroup::representative() const {
  const json* best = nullptr;
  for (const json* r : results) {
    if (best == nullptr) {
      best = r;
      continue;
    }
    const double a = num_or(*r, "offered_per_s", 0), b = num_or(*best, "offered_per_s", 0);
    if (a > b || (a == b && num_or(*r, "requests.total", 0) > num_or(*best, "requests.total", 0))) best = r;
  }
  return best;
}

std::vector<StrategyGroup> group_by_strategy(const std::vector<json>& results) {
  std::vector<StrategyGroup> groups;
  for (const auto& r : results) {
    const std::string s = str(r, "strategy", "?");
    auto it = std::find_if(groups.begin(), groups.end(), [&](const StrategyGroup& g) { return g.strategy == s; });
    if (it == groups.end()) {
      groups.push_back({s, {}});
      it = groups.end() - 1;
    }
    it->results.push_back(&r);
  }
  for (auto& g : groups)
    std::stable_sort(g.results.begin(), g.results.end(), [](const json* a, const json* b) {
      return num_or(*a, "offered_per_s", 0) < num_or(*b, "offered_per_s", 0);
    });
  return groups;
}

std::string base_strategy(std::string_view strategy) {
  return std::string(strategy.substr(0, strategy.find(':')));
}

std::string md_cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else out += c;
  }
  return out;
}

std::string html_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace lockbench::report::detail

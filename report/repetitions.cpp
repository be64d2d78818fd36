#include "report/repetitions.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "report/fields.hpp"

namespace lockbench::report {

using detail::find;
using detail::num;
using nlohmann::json;

const std::vector<AggregatedMetric>& aggregated_metrics() {
  static const std::vector<AggregatedMetric> metrics = {
      {"ok_per_s", "throughput_ok_per_s", 2},    {"p50_ms", "latency_ms.p50", 1},
      {"p99_ms", "latency_ms.p99", 1},           {"pool_timeouts", "requests.pool_timeout", 1},
      {"violations", "", 1},  // violations_of(result).total: the verdict's count
  };
  return metrics;
}

std::string repetition_key(const json& result) {
  json key = result.contains("settings") ? result["settings"] : json::object();
  if (key.is_object()) key.erase("seed");
  key["world"] = result.value("world", "");
  key["scenario"] = result.value("scenario", "");
  key["strategy"] = result.value("strategy", "");
  return key.dump();
}

std::vector<RepetitionGroup> repetition_groups(const std::vector<json>& results) {
  std::vector<RepetitionGroup> groups;
  std::map<std::string, std::size_t> index;
  for (const auto& r : results) {
    const auto [it, fresh] = index.emplace(repetition_key(r), groups.size());
    if (fresh) groups.push_back({{}, fmt::format("{} ({})", r.value("strategy", "?"), detail::world_label(r))});
    groups[it->second].runs.push_back(&r);
  }
  return groups;
}

namespace {

std::optional<double> value_of(const json& r, std::string_view name) {
  const double f = detail::num_or(r, "time_scale", 1.0);
  const bool scaled = f != 1.0 && f > 0;
  json configured;  // a time-scaled real run, in configured units
  if (scaled) configured = detail::configured_view(r);
  const json& v = scaled ? configured : r;
  if (name == "violations") return detail::violations_of(v).total;
  if (name.rfind("violations.", 0) == 0) {
    const json* counts = find(v, "partner.violations");
    if (counts == nullptr || !counts->is_object()) return std::nullopt;
    return detail::num_or(v, "partner.violations." + std::string(name.substr(11)), 0);
  }
  for (const auto& m : aggregated_metrics())
    if (m.name == name) return num(v, m.path);
  return num(v, name);
}

}  // namespace

std::vector<double> metric_values(const RepetitionGroup& g, std::string_view name) {
  std::vector<double> out;
  for (const json* r : g.runs)
    if (const auto v = value_of(*r, name)) out.push_back(*v);
  return out;
}

std::optional<stats::Summary> metric_summary(const RepetitionGroup& g, std::string_view name) {
  const auto values = metric_values(g, name);
  if (values.empty()) return std::nullopt;
  return stats::summarize(values);
}

std::optional<stats::Summary> summary_over_repetitions(const std::vector<RepetitionGroup>& groups, const json* r,
                                                       std::string_view metric) {
  for (const auto& g : groups)
    if (g.runs.size() > 1 && std::find(g.runs.begin(), g.runs.end(), r) != g.runs.end()) return metric_summary(g, metric);
  return std::nullopt;
}

namespace {

json summary_json(const stats::Summary& s, const std::vector<double>& values) {
  return {{"n", s.n},          {"mean", s.mean}, {"median", s.median},
          {"stddev", s.stddev}, {"cv", s.cv},    {"ci95", {s.ci95_low, s.ci95_high}},
          {"values", values}};
}

}  // namespace

json aggregate_json(const RepetitionGroup& g) {
  const json& first = *g.runs.front();
  json settings = first.contains("settings") ? first["settings"] : json::object();
  if (settings.is_object()) settings.erase("seed");
  json seeds = json::array();
  for (const json* r : g.runs) seeds.push_back(r->contains("seed") ? (*r)["seed"] : json());
  json metrics = json::object();
  const auto add = [&](std::string_view name) {
    const auto values = metric_values(g, name);
    if (!values.empty()) metrics[std::string(name)] = summary_json(stats::summarize(values), values);
  };
  for (const auto& m : aggregated_metrics()) add(m.name);
  std::vector<std::string> kinds;
  for (const json* r : g.runs)
    if (const json* v = find(*r, "partner.violations"); v != nullptr && v->is_object())
      for (const auto& [k, _] : v->items())
        if (std::find(kinds.begin(), kinds.end(), k) == kinds.end()) kinds.push_back(k);
  for (const auto& k : kinds) add("violations." + k);
  return {{"schema", "lockbench.aggregate/1"},
          {"world", first.value("world", "")},
          {"scenario", first.value("scenario", "")},
          {"strategy", first.value("strategy", "")},
          {"settings", settings},
          {"repetitions", g.runs.size()},
          {"seeds", seeds},
          {"metrics", metrics}};
}

json aggregates_json(const std::vector<json>& results) {
  json out = json::array();
  for (const auto& g : repetition_groups(results)) out.push_back(aggregate_json(g));
  return out;
}

std::string plus_minus(const stats::Summary& s, int decimals) {
  if (s.n < 2) return fmt::format("{:.{}f}", s.mean, decimals);
  return fmt::format("{:.{}f} ± {:.{}f}", s.mean, decimals, s.half_width(), decimals);
}

}  // namespace lockbench::report

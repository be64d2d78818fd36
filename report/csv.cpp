// summary.csv: one row per result, every contract number in its own column,
// so a spreadsheet or pandas can take over from here. With repetitions, each
// row also carries its repetition and its set's aggregate (mean and 95 %
// interval of every aggregated metric: report/repetitions.hpp).
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "report/repetitions.hpp"

#include "report/fields.hpp"
#include "report/report.hpp"

namespace lockbench::report {

namespace {

std::string csv_quote(const std::string& v) {
  if (v.find_first_of(",\"\n\r") == std::string::npos) return v;
  std::string out = "\"";
  for (char c : v) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// Raw value for a cell: numbers at full precision, null and absent as empty.
std::string cell(const nlohmann::json& r, const std::string& path) {
  const nlohmann::json* v = detail::find(r, path);
  if (v == nullptr || v->is_null()) return "";
  if (v->is_string()) return v->get<std::string>();
  return v->dump();
}

}  // namespace

std::string render_csv(const std::vector<nlohmann::json>& results) {
  std::vector<std::string> columns;
  for (const auto& f : detail::required_fields())
    if (f != "settings" && f.rfind("partner.violations.", 0) != 0) columns.push_back(f);
  for (const auto& k : detail::violation_kinds(results)) columns.push_back("partner.violations." + k);
  for (const char* extra : {"pool.hold_ms.mean", "partner.max_inflight_per_person", "prediction.mean_hold_ms",
                            "prediction.erlang_c_wait_ms", "time_scale", "time_split_ms.queue",
                            "time_split_ms.pool_wait", "time_split_ms.lock_wait", "time_split_ms.partner",
                            "time_split_ms.db", "time_split_ms.held_idle", "faults.crash_at_s",
                            "faults.recovery_ms"})
    columns.push_back(extra);
  std::set<std::string> settings;
  for (const auto& r : results)
    if (const auto* s = detail::find(r, "settings"); s != nullptr && s->is_object())
      for (const auto& [k, _] : s->items()) settings.insert(k);
  // Settings keys are kebab-case and hold no dots, so "settings.<key>" stays a path.
  for (const auto& k : settings) columns.push_back("settings." + k);

  // Only when some result is a repetition: other reports keep their columns.
  const auto groups = repetition_groups(results);
  std::map<const nlohmann::json*, std::string> aggregate_cells;
  std::string aggregate_head;
  if (std::any_of(results.begin(), results.end(), [](const auto& r) { return r.contains("repetition"); })) {
    aggregate_head = ",repetition.index,repetition.of";
    for (const auto& m : aggregated_metrics())
      for (const char* part : {"mean", "ci95_low", "ci95_high"})
        aggregate_head += fmt::format(",repetitions.{}.{}", m.name, part);
    for (const auto& g : groups) {
      std::string cells;
      for (const auto& m : aggregated_metrics()) {
        const auto sm = metric_summary(g, m.name);
        cells += sm ? fmt::format(",{},{},{}", sm->mean, sm->ci95_low, sm->ci95_high) : std::string(",,,");
      }
      for (const auto* r : g.runs)
        aggregate_cells[r] = "," + cell(*r, "repetition.index") + "," + std::to_string(g.runs.size()) + cells;
    }
  }

  std::string out;
  for (std::size_t i = 0; i < columns.size(); ++i) out += (i ? "," : "") + csv_quote(columns[i]);
  out += aggregate_head + "\n";
  for (const auto& r : results) {
    for (std::size_t i = 0; i < columns.size(); ++i) out += (i ? "," : "") + csv_quote(cell(r, columns[i]));
    if (!aggregate_head.empty()) out += aggregate_cells[&r];
    out += "\n";
  }
  return out;
}

}  // namespace lockbench::report

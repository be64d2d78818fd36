// summary.csv: one row per result, every contract number in its own column,
// so a spreadsheet or pandas can take over from here.
#include <set>

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

  std::string out;
  for (std::size_t i = 0; i < columns.size(); ++i) out += (i ? "," : "") + csv_quote(columns[i]);
  out += "\n";
  for (const auto& r : results) {
    for (std::size_t i = 0; i < columns.size(); ++i) out += (i ? "," : "") + csv_quote(cell(r, columns[i]));
    out += "\n";
  }
  return out;
}

}  // namespace lockbench::report

#include "report/compare.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "core/units.hpp"
#include "report/fields.hpp"
#include "report/report.hpp"
#include "report/table.hpp"

namespace lockbench::report {

namespace {

using detail::num;
using detail::num_or;
using detail::str;
using nlohmann::json;

std::string key_of(const json& v) {
  std::string arrival = str(v, "settings.arrival", "open");
  std::string load = arrival == "closed"   ? fmt::format("{} users", str(v, "settings.users", "?"))
                     : arrival == "burst" ? fmt::format("burst {}", str(v, "settings.burst", "?"))
                                          : fmt::format("{}/s", detail::fmt(num(v, "offered_per_s"), 2));
  std::string key = fmt::format("{} · {} · {} · {} · pool {}", str(v, "world", "?"), str(v, "scenario", "?"),
                                str(v, "strategy", "?"), load, str(v, "settings.maximum-pool-size", "?"));
  if (num_or(v, "settings.pods", 1) > 1) key += fmt::format(" · {} pods", str(v, "settings.pods"));
  for (const char* fault : {"crash-at", "pause-at"})
    if (const json* f = detail::find(v, std::string("settings.") + fault); f != nullptr && !f->is_null())
      key += fmt::format(" · {} {}", fault, str(v, std::string("settings.") + fault));
  return key;
}

// One run per key: the one with most requests (a longer run of the same setting).
std::map<std::string, std::pair<const json*, int>> by_key(const std::vector<json>& views) {
  std::map<std::string, std::pair<const json*, int>> out;
  for (const auto& v : views) {
    auto& slot = out[key_of(v)];
    ++slot.second;
    if (slot.first == nullptr || num_or(v, "requests.total", 0) > num_or(*slot.first, "requests.total", 0))
      slot.first = &v;
  }
  return out;
}

std::optional<double> ok_p99(const json& v) {
  if (auto p = num(v, "latency_ok_ms.p99")) return p;
  return num(v, "latency_ms.p99");
}

json figures(const json& v) {
  const detail::Violations viol = detail::violations_of(v);
  json kinds = json::object();
  for (const auto& [k, n] : viol.kinds) kinds[k] = n;
  const auto p99 = ok_p99(v);
  return {{"ok_per_s", num_or(v, "throughput_ok_per_s", 0)},
          {"p99_ms", p99 ? json(*p99) : json(nullptr)},
          {"violations", viol.total},
          {"violation_kinds", kinds},
          {"pool_timeouts", num_or(v, "requests.pool_timeout", 0)},  // requests only: probes have their own
          {"probes_failed", num_or(v, "probe.failed", 0)},
          {"requests", num_or(v, "requests.total", 0)}};
}

double delta_pct(double a, double b) {
  if (a == 0) return b == 0 ? 0 : (b > 0 ? 100 : -100);
  return 100 * (b - a) / a;
}

std::string signed_pct(double x) { return fmt::format("{:+.1f} %", x); }

}  // namespace

bool Comparison::regressed() const {
  return std::any_of(runs.begin(), runs.end(), [](const ComparedRun& r) { return !r.regressions.empty(); });
}

Comparison compare(const std::vector<json>& a_results, const std::vector<json>& b_results,
                   const CompareOptions& options) {
  const auto va = detail::configured_views(a_results), vb = detail::configured_views(b_results);
  const auto ka = by_key(va), kb = by_key(vb);
  Comparison c;
  for (const auto& [key, slot_a] : ka) {
    const auto it = kb.find(key);
    if (it == kb.end()) {
      c.only_a.push_back(key);
      continue;
    }
    const json& a = *slot_a.first;
    const json& b = *it->second.first;
    ComparedRun run{key, figures(a), figures(b), 0, 0, {}, {}};
    run.ok_delta_pct = delta_pct(run.a["ok_per_s"], run.b["ok_per_s"]);
    if (run.a["p99_ms"].is_number() && run.b["p99_ms"].is_number())
      run.p99_delta_pct = delta_pct(run.a["p99_ms"], run.b["p99_ms"]);
    if (-run.ok_delta_pct > options.max_ok_drop_pct)
      run.regressions.push_back(fmt::format("ok/s down {:.1f} % ({:.2f} → {:.2f}), more than {} %",
                                            -run.ok_delta_pct, run.a["ok_per_s"].get<double>(),
                                            run.b["ok_per_s"].get<double>(), options.max_ok_drop_pct));
    if (run.p99_delta_pct > options.max_p99_rise_pct)
      run.regressions.push_back(fmt::format("ok p99 up {:.1f} % ({} → {}), more than {} %", run.p99_delta_pct,
                                            detail::duration_text(run.a["p99_ms"].get<double>()),
                                            detail::duration_text(run.b["p99_ms"].get<double>()),
                                            options.max_p99_rise_pct));
    std::vector<std::pair<std::string, double>> fresh;
    for (const auto& [kind, n] : run.b["violation_kinds"].items())
      if (!run.a["violation_kinds"].contains(kind)) fresh.emplace_back(kind, n.get<double>());
    if (!fresh.empty()) run.regressions.push_back("new violations: " + detail::kinds_text(fresh));
    // Settings outside the key that differ: said, not judged.
    if (const json* sa = detail::find(a, "settings"); sa != nullptr && sa->is_object())
      for (const auto& [k, v] : sa->items()) {
        if (k == "seed" || k == "duration") continue;
        const json* other = detail::find(b, "settings." + k);
        if (other != nullptr && *other == v) continue;
        const auto text = [](const json* x) {
          return x == nullptr ? std::string("absent") : x->is_string() ? x->get<std::string>() : x->dump();
        };
        run.notes.push_back(fmt::format("{} {} → {}", k, text(&v), text(other)));
      }
    if (slot_a.second > 1 || it->second.second > 1)
      run.notes.push_back(fmt::format("{} runs in A and {} in B share this setting: the longest of each is compared",
                                      slot_a.second, it->second.second));
    c.runs.push_back(std::move(run));
  }
  for (const auto& [key, _] : kb)
    if (!ka.count(key)) c.only_b.push_back(key);
  return c;
}

std::string compare_markdown(const Comparison& c, const CompareOptions& options, const std::string& name_a,
                             const std::string& name_b) {
  std::size_t flagged = 0;
  for (const auto& r : c.runs) flagged += !r.regressions.empty();
  std::string md = "# lockbench compare\n\n";
  md += fmt::format("A (baseline): `{}`. B (candidate): `{}`. {} matched runs, matched by world, scenario, strategy "
                    "and headline settings; rates and times in configured units.\n\n",
                    name_a, name_b, c.runs.size());
  md += fmt::format("Flagged as a regression: ok/s down more than {} %, ok p99 up more than {} %, a violation kind "
                    "B counted and A did not.\n\n",
                    options.max_ok_drop_pct, options.max_p99_rise_pct);
  md += flagged == 0 ? "**No regression.**\n\n" : fmt::format("**❌ {} regression{} flagged.**\n\n", flagged,
                                                              flagged == 1 ? "" : "s");
  detail::Table t;
  t.headers = {"run",        "ok /s A",       "ok /s B",       "Δ ok /s",       "ok p99 A", "ok p99 B",
               "Δ p99",      "violations A",  "violations B",  "pool timeouts A → B", "verdict"};
  t.numeric = {false, true, true, true, true, true, true, true, true, true, false};
  for (const auto& r : c.runs) {
    std::string verdict = r.regressions.empty() ? "✅" : "❌";
    for (const auto& s : r.regressions) verdict += " " + s + ";";
    if (!r.regressions.empty()) verdict.pop_back();
    for (const auto& n : r.notes) verdict += " (" + n + ")";
    const auto p99 = [](const json& f) {
      return f["p99_ms"].is_number() ? detail::duration_text(f["p99_ms"].get<double>()) : std::string("–");
    };
    t.rows.push_back({r.key, fmt::format("{:.2f}", r.a["ok_per_s"].get<double>()),
                      fmt::format("{:.2f}", r.b["ok_per_s"].get<double>()), signed_pct(r.ok_delta_pct), p99(r.a),
                      p99(r.b), signed_pct(r.p99_delta_pct), detail::fmt(r.a["violations"].get<double>(), 0),
                      detail::fmt(r.b["violations"].get<double>(), 0),
                      detail::fmt(r.a["pool_timeouts"].get<double>(), 0) + " → " +
                          detail::fmt(r.b["pool_timeouts"].get<double>(), 0),
                      verdict});
  }
  md += t.rows.empty() ? "No run of A has a match in B.\n\n" : t.markdown() + "\n";
  if (!c.only_a.empty()) {
    md += "Only in A (not compared):\n\n";
    for (const auto& k : c.only_a) md += "- " + k + "\n";
    md += "\n";
  }
  if (!c.only_b.empty()) {
    md += "Only in B (not compared):\n\n";
    for (const auto& k : c.only_b) md += "- " + k + "\n";
    md += "\n";
  }
  return md;
}

json compare_json(const Comparison& c, const CompareOptions& options, const std::string& name_a,
                  const std::string& name_b) {
  json runs = json::array();
  for (const auto& r : c.runs)
    runs.push_back({{"key", r.key},
                    {"a", r.a},
                    {"b", r.b},
                    {"delta_pct", {{"ok_per_s", r.ok_delta_pct}, {"p99_ms", r.p99_delta_pct}}},
                    {"regressions", r.regressions},
                    {"notes", r.notes}});
  return {{"schema", "lockbench.compare/1"},
          {"a", name_a},
          {"b", name_b},
          {"thresholds", {{"max_ok_drop_pct", options.max_ok_drop_pct}, {"max_p99_rise_pct", options.max_p99_rise_pct}}},
          {"regressed", c.regressed()},
          {"runs", runs},
          {"only_a", c.only_a},
          {"only_b", c.only_b}};
}

std::vector<json> load_result_set(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(path, ec))
      if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    if (files.empty()) throw SettingError(path + ": the directory holds no .json result files");
    return load_results(files);
  }
  return load_results({path});
}

int run_compare(const std::string& a, const std::string& b, const CompareOptions& options, const std::string& format,
                std::ostream& out) {
  if (format != "md" && format != "json") throw SettingError("--format: '" + format + "' is not md or json");
  if (!(options.max_ok_drop_pct >= 0)) throw SettingError("--max-ok-drop: give a percentage >= 0 (e.g. 10)");
  if (!(options.max_p99_rise_pct >= 0)) throw SettingError("--max-p99-rise: give a percentage >= 0 (e.g. 20)");
  const auto ra = load_result_set(a), rb = load_result_set(b);
  const Comparison c = compare(ra, rb, options);
  // Nothing matched is not "no regression": nothing was compared.
  if (c.runs.empty())
    throw SettingError("compare: 0 runs matched between " + a + " (" + std::to_string(c.only_a.size()) + " runs) and " +
                       b + " (" + std::to_string(c.only_b.size()) +
                       " runs): nothing was compared (runs match by world, scenario, strategy and headline settings)");
  if (format == "json") out << compare_json(c, options, a, b).dump(2) << "\n";
  else out << compare_markdown(c, options, a, b);
  return c.regressed() ? 1 : 0;
}

}  // namespace lockbench::report

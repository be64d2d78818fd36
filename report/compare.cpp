#include "report/compare.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "base/units.hpp"
#include "base/stats.hpp"
#include "report/fields.hpp"
#include "report/repetitions.hpp"
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

// The runs of one key: the repetitions (runs that differ in their seed only) of its run with most requests
// (a longer run of the same setting wins), and how many runs the key had.
struct KeyRuns {
  std::vector<const json*> runs;
  int count = 0;
};
std::map<std::string, KeyRuns> by_key(const std::vector<json>& views) {
  std::map<std::string, std::vector<const json*>> all;
  for (const auto& v : views) all[key_of(v)].push_back(&v);
  std::map<std::string, KeyRuns> out;
  for (const auto& [key, runs] : all) {
    const json* longest = runs.front();
    for (const json* r : runs)
      if (num_or(*r, "requests.total", 0) > num_or(*longest, "requests.total", 0)) longest = r;
    KeyRuns& k = out[key];
    k.count = static_cast<int>(runs.size());
    const std::string rep = repetition_key(*longest);
    for (const json* r : runs)
      if (r == longest || repetition_key(*r) == rep) k.runs.push_back(r);
  }
  return out;
}

std::optional<double> ok_p99(const json& v) {
  if (auto p = num(v, "latency_ok_ms.p99")) return p;
  return num(v, "latency_ms.p99");
}

json figures_of_one(const json& v) {
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

// One run's figures as they are; repetitions' figures are their means, with the values behind
// ok/s and p99 ("ok_per_s_values", "p99_ms_values") and n.
json figures(const std::vector<const json*>& runs) {
  json f = figures_of_one(*runs.front());
  if (runs.size() < 2) return f;
  std::map<std::string, std::vector<double>> values;
  json kinds = json::object();
  for (const json* r : runs) {
    const json one = figures_of_one(*r);
    for (const char* k : {"ok_per_s", "p99_ms", "violations", "pool_timeouts", "probes_failed", "requests"})
      if (one[k].is_number()) values[k].push_back(one[k].get<double>());
    for (const auto& [k, n] : one["violation_kinds"].items()) kinds[k] = kinds.value(k, 0.0) + n.get<double>() / runs.size();
  }
  for (const auto& [k, v] : values) f[k] = stats::summarize(v).mean;
  f["violation_kinds"] = kinds;
  f["n"] = runs.size();
  f["ok_per_s_values"] = values["ok_per_s"];
  f["p99_ms_values"] = values["p99_ms"];
  return f;
}

// The coefficient of variation of a run's ok/s: across repetitions when there are some, else
// estimated from the run's own timeline (the per-interval ok/s's cv over the square root of the
// number of intervals: it takes the intervals as independent, so it is a lower bound).
std::optional<double> ok_cv(const std::vector<const json*>& runs, bool& from_timeline) {
  from_timeline = false;
  if (runs.size() >= 2) {
    std::vector<double> v;
    for (const json* r : runs) v.push_back(num_or(*r, "throughput_ok_per_s", 0));
    return stats::summarize(v).cv;
  }
  const json* tl = detail::find(*runs.front(), "timeline");
  if (tl == nullptr || !tl->is_array() || tl->size() < 3) return std::nullopt;
  std::vector<double> rates;
  for (std::size_t i = 0; i + 1 < tl->size(); ++i) {  // the last interval may be cut short
    const double dt = num_or((*tl)[i], "dt_s", 0);
    if (dt > 0) rates.push_back(num_or((*tl)[i], "ok", 0) / dt);
  }
  if (rates.size() < 2) return std::nullopt;
  from_timeline = true;
  return stats::summarize(rates).cv / std::sqrt(static_cast<double>(rates.size()));
}

// Whether a shift crossed the threshold is noise: with repetitions on both sides, a two-sided
// Mann-Whitney U test must also give p < 0.05; with one run on a side, say so and how many
// repetitions would tell.
void judge_significance(ComparedRun& run, const std::vector<const json*>& ra, const std::vector<const json*>& rb,
                        const CompareOptions& options) {
  const auto values = [](const std::vector<const json*>& runs, bool p99) {
    std::vector<double> v;
    for (const json* r : runs) {
      const auto x = p99 ? ok_p99(*r) : num(*r, "throughput_ok_per_s");
      if (x) v.push_back(*x);
    }
    return v;
  };
  if (ra.size() >= 2 && rb.size() >= 2) {
    const auto oa = values(ra, false), ob = values(rb, false);
    run.ok_p = stats::mann_whitney_u(oa, ob).p;
    const auto pa = values(ra, true), pb = values(rb, true);
    if (!pa.empty() && !pb.empty()) run.p99_p = stats::mann_whitney_u(pa, pb).p;
    return;
  }
  bool timeline_a = false, timeline_b = false;
  const auto cv_a = ok_cv(ra, timeline_a), cv_b = ok_cv(rb, timeline_b);
  const std::optional<double> cv = cv_a && cv_b ? std::optional(std::max(*cv_a, *cv_b)) : cv_a ? cv_a : cv_b;
  std::string note = fmt::format("{} run(s) in A, {} in B: no significance test, noise alone can cross the threshold",
                                 ra.size(), rb.size());
  const bool estimated = ra.size() < 2 && rb.size() < 2;
  if (cv && *cv > 0)
    note += fmt::format("; from the observed cv of ok/s {:.2f} %{}, --repetitions {} on each side would detect a "
                        "{} % drop",
                        100 * *cv, estimated ? " (estimated from the runs' own seconds, taken as independent)" : "",
                        stats::repetitions_to_detect(*cv, options.max_ok_drop_pct / 100), options.max_ok_drop_pct);
  else
    note += "; run both with --repetitions 5 or more to measure the noise";
  run.notes.push_back(note);
}

double delta_pct(double a, double b) {
  if (a == 0) return b == 0 ? 0 : (b > 0 ? 100 : -100);
  return 100 * (b - a) / a;
}

std::string signed_pct(double x) { return fmt::format("{:+.1f} %", x); }

constexpr double kSignificance = 0.05;

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
    const json& a = *slot_a.runs.front();
    const json& b = *it->second.runs.front();
    ComparedRun run{key, figures(slot_a.runs), figures(it->second.runs), 0, 0, std::nullopt, std::nullopt, {}, {}};
    run.ok_delta_pct = delta_pct(run.a["ok_per_s"], run.b["ok_per_s"]);
    if (run.a["p99_ms"].is_number() && run.b["p99_ms"].is_number())
      run.p99_delta_pct = delta_pct(run.a["p99_ms"], run.b["p99_ms"]);
    judge_significance(run, slot_a.runs, it->second.runs, options);
    const auto significant = [](std::optional<double> p) { return !p || *p < kSignificance; };
    const auto p_text = [](std::optional<double> p) { return p ? fmt::format(", p = {:.3g}", *p) : std::string(); };
    if (-run.ok_delta_pct > options.max_ok_drop_pct && significant(run.ok_p))
      run.regressions.push_back(fmt::format("ok/s down {:.1f} % ({:.2f} → {:.2f}{}), more than {} %",
                                            -run.ok_delta_pct, run.a["ok_per_s"].get<double>(),
                                            run.b["ok_per_s"].get<double>(), p_text(run.ok_p), options.max_ok_drop_pct));
    else if (-run.ok_delta_pct > options.max_ok_drop_pct)
      run.notes.push_back(fmt::format("ok/s down {:.1f} % but within noise (Mann-Whitney U p = {:.3g} ≥ {})",
                                      -run.ok_delta_pct, *run.ok_p, kSignificance));
    if (run.p99_delta_pct > options.max_p99_rise_pct && significant(run.p99_p))
      run.regressions.push_back(fmt::format("ok p99 up {:.1f} % ({} → {}{}), more than {} %", run.p99_delta_pct,
                                            detail::duration_text(run.a["p99_ms"].get<double>()),
                                            detail::duration_text(run.b["p99_ms"].get<double>()), p_text(run.p99_p),
                                            options.max_p99_rise_pct));
    else if (run.p99_delta_pct > options.max_p99_rise_pct)
      run.notes.push_back(fmt::format("ok p99 up {:.1f} % but within noise (Mann-Whitney U p = {:.3g} ≥ {})",
                                      run.p99_delta_pct, *run.p99_p, kSignificance));
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
    if (slot_a.count > static_cast<int>(slot_a.runs.size()) || it->second.count > static_cast<int>(it->second.runs.size()))
      run.notes.push_back(fmt::format("{} runs in A and {} in B share this setting: the longest of each (with its "
                                      "repetitions) is compared",
                                      slot_a.count, it->second.count));
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
                    "B counted and A did not. With repetitions on both sides (figures are then means) a shift is "
                    "flagged only when a two-sided Mann-Whitney U test also gives p < {}.\n\n",
                    options.max_ok_drop_pct, options.max_p99_rise_pct, kSignificance);
  md += flagged == 0 ? "**No regression.**\n\n" : fmt::format("**❌ {} regression{} flagged.**\n\n", flagged,
                                                              flagged == 1 ? "" : "s");
  detail::Table t;
  t.headers = {"run",        "ok /s A",       "ok /s B",       "Δ ok /s",       "p (ok /s)", "ok p99 A", "ok p99 B",
               "Δ p99",      "p (p99)", "violations A",  "violations B",  "pool timeouts A → B", "verdict"};
  t.numeric = {false, true, true, true, true, true, true, true, true, true, true, true, false};
  for (const auto& r : c.runs) {
    std::string verdict = r.regressions.empty() ? "✅" : "❌";
    for (const auto& s : r.regressions) verdict += " " + s + ";";
    if (!r.regressions.empty()) verdict.pop_back();
    for (const auto& n : r.notes) verdict += " (" + n + ")";
    const auto p99 = [](const json& f) {
      return f["p99_ms"].is_number() ? detail::duration_text(f["p99_ms"].get<double>()) : std::string("–");
    };
    const auto pv = [](std::optional<double> p) { return p ? fmt::format("{:.3g}", *p) : std::string("–"); };
    const auto ok = [](const json& f) {
      if (!f.contains("ok_per_s_values")) return fmt::format("{:.2f}", f["ok_per_s"].get<double>());
      return plus_minus(stats::summarize(f["ok_per_s_values"].get<std::vector<double>>()), 2) +
             fmt::format(" (n={})", f["n"].get<int>());
    };
    t.rows.push_back({r.key, ok(r.a), ok(r.b), signed_pct(r.ok_delta_pct), pv(r.ok_p), p99(r.a),
                      p99(r.b), signed_pct(r.p99_delta_pct), pv(r.p99_p), detail::fmt(r.a["violations"].get<double>(), 0),
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
                    {"p_value", {{"ok_per_s", r.ok_p ? json(*r.ok_p) : json(nullptr)},
                                 {"p99_ms", r.p99_p ? json(*r.p99_p) : json(nullptr)}}},
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

namespace {
// aggregates.json and knees.json, which run/sweep write beside their results.
bool beside_results(const std::string& name) {
  for (const std::string tail : {"aggregates.json", "knees.json"})
    if (name.size() >= tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0) return true;
  return false;
}
}  // namespace

std::vector<json> load_result_set(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(path, ec))
      if (e.is_regular_file() && e.path().extension() == ".json" && !beside_results(e.path().filename().string()))
        files.push_back(e.path().string());
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

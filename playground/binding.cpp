// The playground's binding: `lockbench run --world sim` compiled to
// WebAssembly, behind four C functions that the page's Web Worker calls with
// JSON text and that answer JSON text.
//
// - Settings arrive by name, as flags without "--" (the URL hash's names), and
//   go through the command line's own table (settings/table.hpp: apply_preset,
//   apply_given, Settings::validate, strategies_of), so a bad value is refused
//   with the line the command line prints ("lockbench: --rate: ...").
// - A result is run_sim's JSON, the object `lockbench run --world sim --json`
//   prints for the same settings (provenance apart: host, time, allocator).
// - The views beside the results are the report's own (report/sections,
//   report/sequence): the verdict row and the sequence diagrams.
// The page draws; it never models. Nothing here keeps state between calls.
#include <emscripten/emscripten.h>

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "settings/table.hpp"
#include "sim/run_sim.hpp"
#include "report/fields.hpp"
#include "report/sections.hpp"
#include "report/sequence.hpp"
#include "scenarios/registry.hpp"
#include "strategies/registry.hpp"

using nlohmann::json;

namespace lockbench::playground {
namespace {

// Names the page takes besides the settings table's rows.
constexpr const char* kPreset = "preset";  // as --preset

// What the command line prints for `--NAME VALUE` when it has no such flag
// (CLI11 lists the arguments it did not take, the value first), so the page's
// line is the command line's.
std::string unknown_setting_line(const std::string& name, const std::string& value) {
  return "lockbench: The following arguments were not expected: " + (value.empty() ? "" : value + " ") + "--" + name +
         " (see lockbench --help)";
}

// The request's "settings" object (name -> text) as Settings, refused the
// command line's way. Throws SettingError (its line without "lockbench: "), or
// std::invalid_argument carrying a whole line for an unknown name.
Settings settings_of(const json& request) {
  const json& given = request.at("settings");
  Settings s;
  std::map<std::string, std::string> values;
  for (const auto& [name, value] : given.items()) {
    const std::string text = value.is_string() ? value.get<std::string>() : value.dump();
    if (name == kPreset) continue;
    if (!find_setting(name)) throw std::invalid_argument(unknown_setting_line(name, text));
    values[name] = text;
  }
  if (given.contains(kPreset)) apply_preset(s, given.at(kPreset).get<std::string>());
  apply_given(s, values);
  if (s.world != "sim") throw SettingError("--world: the playground runs the simulator only (accepted: sim)");
  validate_settings(s);
  return s;
}

// One answer's text, kept until the next call (the worker copies it at once).
const char* answer(const json& j) {
  static std::string text;
  text = j.dump();
  return text.c_str();
}

// Runs `body`; a refusal becomes {"error": the command line's line}.
template <typename Body>
const char* guarded(const char* request, Body body) {
  try {
    return answer(body(json::parse(request)));
  } catch (const SettingError& e) {
    return answer({{"error", std::string("lockbench: ") + e.what()}});
  } catch (const std::invalid_argument& e) {
    return answer({{"error", e.what()}});
  } catch (const std::exception& e) {
    return answer({{"error", std::string("lockbench: ") + e.what()}});
  }
}

}  // namespace
}  // namespace lockbench::playground

using namespace lockbench;
using namespace lockbench::playground;

extern "C" {

// {"settings": {...}} -> {"strategies": ["held-tx", ...], "values": {name: text}}
// or {"error": line}. `values` is every setting as the run will use it (the
// preset's, the given, the defaults), written as the command line reads it:
// what the page's controls show.
EMSCRIPTEN_KEEPALIVE const char* lockbench_plan(const char* request) {
  return guarded(request, [](const json& req) {
    const Settings s = settings_of(req);
    return json{{"strategies", strategies_of(s)}, {"values", settings_values_json(s)}};
  });
}

// {"settings": {...}, "strategy": SPEC} -> {"result": run_sim's result} or {"error": line}.
EMSCRIPTEN_KEEPALIVE const char* lockbench_run(const char* request) {
  return guarded(request, [](const json& req) {
    Settings s = settings_of(req);
    s.strategy = req.at("strategy").get<std::string>();
    return json{{"result", run_sim(s)}};
  });
}

// {"results": [...]} -> the report's views of them: {"verdict": {"headers": [...],
// "rows": [[...]]}, "race_svg": SVG or null, "pool_svg": SVG or null (the
// first result's that has one, as report.md picks), "sequences": [{"strategy",
// "race_svg", "pool_svg"} per result] (so the page can step through any one)}.
EMSCRIPTEN_KEEPALIVE const char* lockbench_views(const char* request) {
  return guarded(request, [](const json& req) {
    const auto views = report::detail::configured_views(req.at("results").get<std::vector<json>>());
    const report::detail::Table t = report::detail::verdict_table(views);
    json out{{"verdict", {{"headers", t.headers}, {"rows", t.rows}}}, {"race_svg", nullptr}, {"pool_svg", nullptr}};
    for (const auto& r : views)  // the first result with a captured race, as report.md picks it
      if (auto svg = report::race_diagram_svg(r, "race-seq")) {
        out["race_svg"] = *svg;
        out["race_strategy"] = r.value("strategy", "");
        break;
      }
    for (const auto& r : views)
      if (auto svg = report::pool_exhaustion_diagram_svg(r, "pool-seq")) {
        out["pool_svg"] = *svg;
        out["pool_strategy"] = r.value("strategy", "");
        break;
      }
    json sequences = json::array();
    for (std::size_t i = 0; i < views.size(); ++i) {
      const auto race = report::race_diagram_svg(views[i], "race-seq");
      const auto pool = report::pool_exhaustion_diagram_svg(views[i], "pool-seq");
      sequences.push_back({{"strategy", views[i].value("strategy", "")},
                           {"race_svg", race ? json(*race) : json(nullptr)},
                           {"pool_svg", pool ? json(*pool) : json(nullptr)}});
    }
    out["sequences"] = sequences;
    return out;
  });
}

// {} -> what the page's controls show, from the registries and the settings
// table: {"settings": [{name, help, group, type, default}], "scenarios":
// [{name, summary}], "strategies": [spec, ...], "presets": [name, ...]}.
EMSCRIPTEN_KEEPALIVE const char* lockbench_settings(const char* request) {
  return guarded(request, [](const json&) {
    json scenarios = json::array();
    for (const auto& sc : scenario_registry())
      scenarios.push_back({{"name", std::string(sc.name)}, {"summary", std::string(sc.summary)}});
    json preset_names = json::array();
    for (const auto& p : presets()) preset_names.push_back(std::string(p.name));
    return json{{"settings", settings_table_json()}, {"scenarios", scenarios}, {"strategies", strategy_specs()},
                {"presets", preset_names}};
  });
}

}  // extern "C"

// What the settings table generates (settings/table.hpp): the flags of a
// child process, the `lockbench run` line, a result's settings block, the
// front ends' table, the arrival rule of apply_given, --strategy's list.
#include <algorithm>
#include <cctype>
#include <sstream>
#include <stdexcept>

#include "scenarios/registry.hpp"
#include "settings/table.hpp"
#include "strategies/registry.hpp"

namespace lockbench {

namespace {

bool listed(const std::vector<std::string_view>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// `v` as one shell word: as it is when every character is plain, else in
// single quotes.
std::string shell_word(const std::string& v) {
  const bool plain = !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("._:=,/+-@").find(c) != std::string_view::npos;
  });
  if (plain) return v;
  std::string q = "'";
  for (char c : v) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

const std::vector<std::string_view>& arrival_settings() {
  static const std::vector<std::string_view> rows = {"rate", "users", "burst"};  // in Arrival's order
  return rows;
}

std::vector<std::string> setting_args(const Settings& s, const std::vector<std::string_view>& leave_out,
                                      const std::vector<std::string_view>& always) {
  const Settings defaults;
  const std::string_view chooser = arrival_settings().at(static_cast<std::size_t>(s.arrival));
  std::vector<std::string> out;
  for (const auto& d : setting_defs()) {
    if (listed(leave_out, d.name)) continue;
    if (!d.show) throw std::logic_error("setting '" + d.name + "' has no show(): it cannot be passed to a child process");
    const bool arrival_row = listed(arrival_settings(), d.name);
    if (arrival_row && d.name != chooser) continue;
    const std::string value = d.show(s);
    if (value == d.show(defaults) && !(arrival_row && s.arrival != defaults.arrival) && !listed(always, d.name)) continue;
    out.push_back("--" + d.name);
    out.push_back(value);
  }
  return out;
}

std::string run_command(const Settings& s, const std::vector<std::string>& extra) {
  std::string line = "lockbench run";
  std::vector<std::string> args = setting_args(s, {}, {"world", "scenario", "strategy"});
  args.insert(args.end(), extra.begin(), extra.end());
  for (std::size_t i = 0; i < args.size(); ++i) line += " " + (i % 2 == 0 ? args[i] : shell_word(args[i]));  // --flag value
  return line;
}

nlohmann::json settings_json(const Settings& s) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& d : setting_defs()) {
    if (d.json) d.json(s, d, j);
    else j[d.name] = d.show(s);
  }
  return j;
}

void validate_settings(const Settings& s) {
  s.check_fields();
  for (const auto& row : setting_defs()) {
    if (!row.longest) continue;
    const Duration d = row.longest(s);
    const double scaled_ns = static_cast<double>(d.count()) * std::max(1.0, s.time_scale);
    if (d > kSettingDurationMax || scaled_ns > static_cast<double>(kSettingDurationMax.count()))
      throw SettingError("--" + row.name + ": '" + format_duration(d) + "'" + (s.time_scale > 1 ? " times --time-scale" : "") +
                         " is too long (" + std::string(kDurationMaxText) + ")");
  }
  s.check_memory();
}

nlohmann::json settings_table_json() {
  const Settings defaults;
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& d : setting_defs())
    rows.push_back({{"name", d.name}, {"help", d.help}, {"group", std::string(d.group)},
                    {"type", std::string(d.type)}, {"default", d.show ? d.show(defaults) : ""}});
  return rows;
}

nlohmann::json settings_values_json(const Settings& s) {
  nlohmann::json values = nlohmann::json::object();
  for (const auto& d : setting_defs())
    if (d.show) values[d.name] = d.show(s);
  return values;
}

void apply_given(Settings& s, const std::map<std::string, std::string>& given) {
  int arrivals = 0;
  for (const auto a : arrival_settings()) arrivals += given.count(std::string(a)) > 0 ? 1 : 0;
  if (arrivals > 1) throw SettingError("--rate, --users, --burst: each chooses the arrival model; give one of them");
  for (const auto& d : setting_defs())
    if (const auto it = given.find(d.name); it != given.end()) d.apply(s, it->second);
}

std::vector<std::string> strategies_of(const Settings& s) {
  std::vector<std::string> out;
  if (s.strategy == "all") {  // every strategy that applies to the scenario
    scenario_info(s.scenario);  // refuses an unknown scenario with the accepted list
    for (const auto& spec : all_strategies()) {
      try {
        check_applies(strategy_info(spec), s.scenario);
        out.push_back(spec);
      } catch (const SettingError&) {
      }
    }
    check_virtual_threads(s);
    return out;
  }
  std::stringstream in(s.strategy);
  std::string one;
  while (std::getline(in, one, ',')) {
    if (one == "all") throw SettingError("--strategy: 'all' stands alone, not inside a list");
    check_applies(strategy_info(one), s.scenario);  // unknown names, and strategies the scenario cannot take
    out.push_back(one);
  }
  if (out.empty()) throw SettingError("--strategy: give a strategy name, a comma-separated list, or all");
  check_virtual_threads(s);
  return out;
}

const std::vector<std::string_view>& setting_groups() {
  static const std::vector<std::string_view> groups = {kGroupWorkload, kGroupPool,   kGroupContainer, kGroupPartner,
                                                       kGroupDatabase, kGroupFaults, kGroupOutput};
  return groups;
}

std::string_view setting_types_help() {
  return "Types: DURATION = a number and a unit (250us, 200ms, 1.5s, 30s, 2m, 1h) or ISO-8601 as Spring writes it "
         "(PT30S); RATE = requests per second (2.5); SHARE = 0..1; DIST = fixed:200ms | uniform:100ms..300ms | "
         "exponential:mean=1.5s | lognormal:p50=1.5s,p99=4s[,cap=10s]; FAULTS = commit_fail:p=P,conn_lost:p=P | none. "
         "The value after = is the default.";
}

}  // namespace lockbench

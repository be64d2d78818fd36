// The one table of settings (settings/table.cpp): each row names a setting
// (kebab-case: the flag without "--", the TOML key, the key in a result's
// `settings` block) and says how it is read (the one function that parses and
// applies it, so a flag, a file key and a URL-hash name mean the same and are
// refused with the same line), shown (its value as the user writes it: --help's
// default is show(Settings{})) and written into a result.
//
// Everything that names settings is generated from it: the command line's
// flags and their --help (cli/main.cpp wires them into CLI11), the TOML reader
// and the presets, a result's `settings` block (settings_json), a pod's flags
// (setting_args: real/pod_protocol), the `lockbench run` line plan prints
// (run_command: plan/confirm), and the playground's table (settings_table_json:
// playground/binding.cpp). tests/layers fails when a list of setting names
// appears anywhere else.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/settings.hpp"

namespace lockbench {

struct SettingDef {
  std::string name;  // kebab-case, as the flag without "--", the TOML key and the result's key
  std::string help;
  std::function<void(Settings&, const std::string&)> apply;  // throws SettingError
  // Where --help lists it (one of setting_groups()), how the user writes it
  // (DURATION, INT, RATE, DIST, ...), and its value as that text: --help's
  // default is show(Settings{}), so a default is typed once, in settings.hpp.
  std::string_view group = {};
  std::string_view type = {};
  std::function<std::string(const Settings&)> show = {};
  // What it writes into a result's `settings` block (settings_json): empty =
  // `name: show(s)`, always; otherwise the row's own keys (a number, null
  // when absent, nothing unless used, so that results of runs without it keep
  // their bytes).
  std::function<void(const Settings&, const SettingDef&, nlohmann::json&)> json = {};
  // A duration row: the longest duration it holds, bounded by
  // kSettingDurationMax before and after --time-scale (validate_settings).
  std::function<Duration(const Settings&)> longest = {};
};

const std::vector<SettingDef>& setting_defs();
const SettingDef* find_setting(std::string_view name);

// --help's groups, in the order it shows them.
inline constexpr std::string_view kGroupWorkload = "Workload";
inline constexpr std::string_view kGroupPool = "Pool (HikariCP)";
inline constexpr std::string_view kGroupContainer = "Container (Tomcat workers, pods, background workers)";
inline constexpr std::string_view kGroupPartner = "Partner and its HTTP client";
inline constexpr std::string_view kGroupDatabase = "Database and locks";
inline constexpr std::string_view kGroupFaults = "Faults";
inline constexpr std::string_view kGroupOutput = "Output";
const std::vector<std::string_view>& setting_groups();
// --help's footer: what the table's types (DURATION, RATE, ...) accept.
std::string_view setting_types_help();

// The rows that choose the arrival model (--rate, --users, --burst): one of
// them at a time.
const std::vector<std::string_view>& arrival_settings();

// ISO-8601 durations as Spring and java.time print them (PT30S, PT1M30S,
// PT0.5S) in lockbench's units ("30000ms"); any other text comes back as it was.
std::string iso8601_duration(const std::string& text);

// Named settings files compiled into the binary: `--preset incident` is
// examples/incident.toml (the article's incident), read at build time
// (settings/presets.cpp.in).
struct Preset {
  std::string_view name;
  std::string_view summary;
  std::string_view toml;
};
const std::vector<Preset>& presets();
// Applies a preset's settings; an unknown name is refused with one line
// listing the accepted presets.
void apply_preset(Settings& s, std::string_view name);

// Applies `name = value` (value as text, the way a flag gives it).
void apply_setting(Settings& s, std::string_view name, const std::string& value);

// Applies the settings a user gave by name (flags without "--": the command
// line's, the playground's URL hash): refuses two arrival models (--rate,
// --users, --burst), then applies each in the table's order. Every name must
// be a row of the table. The caller validates.
void apply_given(Settings& s, const std::map<std::string, std::string>& given);

// The strategy specs a run's --strategy names: one, a comma-separated list,
// or all (every strategy that applies to the scenario). Refuses unknown
// names and strategies the scenario cannot take, in one line.
std::vector<std::string> strategies_of(const Settings& s);

// The settings of `s` as flags ("--name", "value", ...), generated from the
// table so that a new row reaches a child process (real/pod_protocol.hpp: the
// flags of a `lockbench serve` pod) without a line of its own: every row whose
// value differs from Settings{}'s, in the table's order, as its `show` writes
// it (apply_given(show(s)) gives s back); of --rate, --users and --burst only
// the one that chooses s.arrival. `leave_out` names rows passed another way
// (the URLs that may hold a password go in the environment); `always` rows
// are written even at their default. Throws std::logic_error for a row
// without `show`: it could not be passed on.
std::vector<std::string> setting_args(const Settings& s, const std::vector<std::string_view>& leave_out = {},
                                      const std::vector<std::string_view>& always = {});

// The `lockbench run` line that runs `s` again, for a shell: --world,
// --scenario and --strategy always, then setting_args(s) (passwords redacted,
// as show writes the URLs), then `extra` ("--fail-on", "p99>2s", ...); each
// value quoted when the shell would split or expand it.
std::string run_command(const Settings& s, const std::vector<std::string>& extra = {});

// A result's `settings` block: every row's json (make_result takes it in
// RunSummary::settings_json; `serve`'s /lockbench/info and a manifest's hash
// read it too). URLs without their passwords.
nlohmann::json settings_json(const Settings& s);

// The table for a front end (the playground's controls): [{name, help, group,
// type, default}] in the table's order, default = show(Settings{}).
nlohmann::json settings_table_json();
// Every row's value in `s` as show writes it: {name: text}.
nlohmann::json settings_values_json(const Settings& s);

// Throws SettingError naming the first setting out of range: s.check_fields(),
// then every duration row's bound (SettingDef::longest, before and after
// --time-scale: no overflow anywhere downstream), then s.check_memory().
void validate_settings(const Settings& s);

// Applies every key of a TOML scenario file. Unknown keys, unreadable files and
// bad values are refused with one line naming the file and the key.
void apply_toml_file(Settings& s, const std::string& path);

}  // namespace lockbench

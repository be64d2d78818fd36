// Settings from a scenario file (TOML) and flags: one table of setting names,
// each with its help text and the one function that parses and applies it, so
// a flag and a file key mean the same and are refused with the same line.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/settings.hpp"

namespace lockbench::cli {

struct SettingDef {
  std::string name;  // kebab-case, as the flag without "--" and the TOML key
  std::string help;
  std::function<void(Settings&, const std::string&)> apply;  // throws SettingError
  // Where --help lists it (one of setting_groups()), how the user writes it
  // (DURATION, INT, RATE, DIST, ...), and its value as that text: --help's
  // default is show(Settings{}), so a default is typed once, in settings.hpp.
  std::string_view group = {};
  std::string_view type = {};
  std::function<std::string(const Settings&)> show = {};
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

// ISO-8601 durations as Spring and java.time print them (PT30S, PT1M30S,
// PT0.5S) in lockbench's units ("30000ms"); any other text comes back as it was.
std::string iso8601_duration(const std::string& text);

// Named settings files compiled into the binary: `--preset incident` is
// examples/incident.toml (the article's incident), read at build time.
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
// (the URLs that may hold a password go in the environment). Throws
// std::logic_error for a row without `show`: it could not be passed on.
std::vector<std::string> setting_args(const Settings& s, const std::vector<std::string_view>& leave_out = {});

// Applies every key of a TOML scenario file. Unknown keys, unreadable files and
// bad values are refused with one line naming the file and the key.
void apply_toml_file(Settings& s, const std::string& path);

}  // namespace lockbench::cli

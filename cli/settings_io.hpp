// Settings from a scenario file (TOML) and flags: one table of setting names,
// each with its help text and the one function that parses and applies it, so
// a flag and a file key mean the same and are refused with the same line.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/settings.hpp"

namespace lockbench::cli {

struct SettingDef {
  std::string name;  // kebab-case, as the flag without "--" and the TOML key
  std::string help;
  std::function<void(Settings&, const std::string&)> apply;  // throws SettingError
};

const std::vector<SettingDef>& setting_defs();
const SettingDef* find_setting(std::string_view name);

// Applies `name = value` (value as text, the way a flag gives it).
void apply_setting(Settings& s, std::string_view name, const std::string& value);

// Applies every key of a TOML scenario file. Unknown keys, unreadable files and
// bad values are refused with one line naming the file and the key.
void apply_toml_file(Settings& s, const std::string& path);

}  // namespace lockbench::cli

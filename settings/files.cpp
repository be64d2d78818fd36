// The settings' files: TOML scenario files and the presets compiled in, read
// through the table (settings/table.hpp), and ISO-8601 durations as Spring
// writes them.
#include <cctype>
#include <filesystem>
#include <sstream>

#include <toml++/toml.h>

#include "core/files.hpp"
#include "settings/table.hpp"

namespace lockbench {

namespace {

std::string toml_value_text(const toml::node& n, const std::string& where) {
  if (auto v = n.as_string()) return v->get();
  if (auto v = n.as_integer()) return std::to_string(v->get());
  if (auto v = n.as_floating_point()) {
    std::ostringstream o;
    o.precision(17);
    o << v->get();
    return o.str();
  }
  if (auto v = n.as_boolean()) return v->get() ? "true" : "false";
  if (n.is_table() || n.is_array()) {
    std::ostringstream o;
    o << toml::json_formatter{n};
    return o.str();
  }
  throw SettingError(where + ": unsupported value type");
}

// Every key of a parsed TOML table; `where` names the source in each refusal.
void apply_toml_table(Settings& s, const toml::table& table, const std::string& where) {
  for (auto&& [key, node] : table) {
    const std::string name(key.str());
    const SettingDef* d = find_setting(name);
    if (!d) throw SettingError(where + ": unknown setting '" + name + "' (use the flag names without --)");
    try {
      d->apply(s, toml_value_text(node, where + ": " + name));
    } catch (const SettingError& e) {
      throw SettingError(where + ": " + e.what());
    }
  }
}

}  // namespace

void apply_toml_file(Settings& s, const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw SettingError("--config: " + path + " is a directory; give a TOML file (keys are the flag names without --)");
  if (!std::filesystem::exists(path, ec)) throw SettingError("--config: " + path + ": no such file");
  const std::string text = read_file_capped(path, kConfigFileBytesMax, "--config", "a configuration file");
  toml::table table;
  try {
    table = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    std::ostringstream msg;
    msg << "--config: " << path << ": " << e.description() << " (line " << e.source().begin.line << ")";
    throw SettingError(msg.str());
  }
  apply_toml_table(s, table, "--config: " + path);
}

std::string iso8601_duration(const std::string& text) {
  std::string v = text;
  while (!v.empty() && v.front() == ' ') v.erase(v.begin());
  while (!v.empty() && v.back() == ' ') v.pop_back();
  if (v.size() <= 2 || (v[0] != 'P' && v[0] != 'p') || (v[1] != 'T' && v[1] != 't')) return text;
  // PTnHnMn.nS, as java.time.Duration prints it.
  double total_s = 0;
  std::string number;
  for (std::size_t i = 2; i < v.size(); ++i) {
    const char c = static_cast<char>(std::toupper(static_cast<unsigned char>(v[i])));
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      number += c;
      continue;
    }
    if (number.empty() || (c != 'H' && c != 'M' && c != 'S')) return text;  // left to parse_duration to refuse
    char* end = nullptr;
    const double n = std::strtod(number.c_str(), &end);
    if (end != number.c_str() + number.size()) return text;
    total_s += n * (c == 'H' ? 3600 : c == 'M' ? 60 : 1);
    number.clear();
  }
  if (!number.empty()) return text;
  std::ostringstream o;
  o.precision(15);
  o << total_s * 1000 << "ms";
  return o.str();
}

void apply_preset(Settings& s, std::string_view name) {
  std::string accepted;
  for (const Preset& p : presets()) {
    if (p.name == name) {
      toml::table table;
      try {
        table = toml::parse(p.toml);
      } catch (const toml::parse_error& e) {  // a build that compiled in a broken file
        throw SettingError("--preset: " + std::string(name) + ": " + std::string(e.description()));
      }
      apply_toml_table(s, table, "--preset " + std::string(name));
      return;
    }
    accepted += (accepted.empty() ? "" : ", ") + std::string(p.name);
  }
  throw SettingError("--preset: '" + std::string(name) + "' is not accepted (accepted: " + accepted + ")");
}

}  // namespace lockbench

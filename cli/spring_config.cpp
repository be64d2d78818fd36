#include "cli/spring_config.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "cli/k8s_deployment.hpp"
#include "settings/table.hpp"
#include "core/files.hpp"

namespace lockbench::cli {

namespace {

enum class Kind { integer, duration, text };

struct Mapping {
  const char* key;      // relaxed form: lower case, no '-' or '_'
  const char* setting;  // the lockbench setting it feeds
  Kind kind;
};

constexpr Mapping kMappings[] = {
    {"spring.datasource.hikari.maximumpoolsize", "maximum-pool-size", Kind::integer},
    {"spring.datasource.hikari.connectiontimeout", "connection-timeout", Kind::duration},
    {"spring.datasource.hikari.leakdetectionthreshold", "leak-detection-threshold", Kind::duration},
    {"spring.datasource.hikari.maxlifetime", "max-lifetime", Kind::duration},
    {"server.tomcat.threads.max", "max-threads", Kind::integer},
    {"server.tomcat.maxthreads", "max-threads", Kind::integer},
    {"server.tomcat.acceptcount", "accept-count", Kind::integer},
    {"spring.cloud.openfeign.client.config.default.connecttimeout", "partner-connect-timeout", Kind::duration},
    {"spring.cloud.openfeign.client.config.default.readtimeout", "partner-read-timeout", Kind::duration},
    {"feign.client.config.default.connecttimeout", "partner-connect-timeout", Kind::duration},
    {"feign.client.config.default.readtimeout", "partner-read-timeout", Kind::duration},
};

// Spring's relaxed binding: case, '-' and '_' do not matter.
std::string relaxed(const std::string& key) {
  std::string out;
  for (const char c : key)
    if (c != '-' && c != '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string trim_value(std::string s) {
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front()) s = s.substr(1, s.size() - 2);
  return s;
}

// java.util.Properties' escapes: \uXXXX (as UTF-8), \t \n \r \f, and a
// backslash before any other character stands for that character. A \u
// without four hex digits is refused, as Java refuses it ("Malformed \uxxxx").
std::string properties_unescape(const std::string& text, const std::string& where) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out += text[i];
      continue;
    }
    const char c = text[++i];
    if (c == 'u') {
      unsigned code = 0;
      for (int k = 0; k < 4; ++k) {
        const char h = i + 1 < text.size() ? text[++i] : '\0';
        if (!std::isxdigit(static_cast<unsigned char>(h)))
          throw SettingError(where + ": malformed \\uXXXX escape (accepted: \\u and four hex digits, as Java reads it)");
        code = code * 16 + static_cast<unsigned>(std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
      }
      if (code < 0x80) {
        out += static_cast<char>(code);
      } else if (code < 0x800) {
        out += static_cast<char>(0xC0 | (code >> 6));
        out += static_cast<char>(0x80 | (code & 0x3F));
      } else {
        out += static_cast<char>(0xE0 | (code >> 12));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
      }
      continue;
    }
    out += c == 't' ? '\t' : c == 'n' ? '\n' : c == 'r' ? '\r' : c == 'f' ? '\f' : c;
  }
  return out;
}

// A service's configuration is small; a file beyond these caps is an attack or
// a mistake, and gets one line instead of a crash or all of the memory. The
// node count counts every visit, so an alias expanded many times ("billion
// laughs") counts each time; an alias to a node inside itself is a cycle.
constexpr int kYamlDepthMax = 64;
constexpr std::size_t kYamlVisitsMax = 100'000;

struct Flattener {
  const std::string& path;
  std::vector<std::pair<std::string, std::string>>& out;
  std::vector<YAML::Node> open;  // the nodes from the document's root to here
  std::size_t visits = 0;

  [[noreturn]] void refuse(const std::string& why) const { throw SettingError("--from: '" + path + "' " + why); }

  void visit(const YAML::Node& node, const std::string& prefix) {
    if (++visits > kYamlVisitsMax)
      refuse("has more than " + std::to_string(kYamlVisitsMax) + " YAML nodes once its aliases are expanded");
    if (static_cast<int>(open.size()) >= kYamlDepthMax)
      refuse("nests deeper than " + std::to_string(kYamlDepthMax) + " levels");
    if (std::any_of(open.begin(), open.end(), [&](const YAML::Node& n) { return n.is(node); }))
      refuse("has an alias that contains itself (at " + (prefix.empty() ? std::string("the top") : prefix) + ")");
    if (node.IsScalar()) {
      out.emplace_back(prefix, node.as<std::string>());
      return;
    }
    open.push_back(node);
    if (node.IsMap()) {
      for (const auto& kv : node) {
        const std::string key = kv.first.IsScalar() ? kv.first.as<std::string>() : std::string("?");
        visit(kv.second, prefix.empty() ? key : prefix + "." + key);
      }
    } else if (node.IsSequence()) {
      for (std::size_t i = 0; i < node.size(); ++i) visit(node[i], prefix + "[" + std::to_string(i) + "]");
    }
    open.pop_back();
  }
};

std::vector<std::pair<std::string, std::string>> read_pairs(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw SettingError("--from: '" + path + "' is a directory; give the file (application.properties or application.yml)");
  std::vector<std::pair<std::string, std::string>> out;
  const auto dot = path.rfind('.');
  const std::string ext = dot == std::string::npos ? "" : relaxed(path.substr(dot + 1));
  if (ext == "yml" || ext == "yaml") {
    try {
      Flattener flat{path, out, {}, 0};  // one node count for all of the file's documents
      for (const auto& doc : load_yaml_bounded(path, "--from")) flat.visit(doc, "");
    } catch (const YAML::Exception& e) {
      throw SettingError("--from: '" + path + "' is not valid YAML: " + e.what());
    }
    return out;
  }
  if (ext != "properties")
    throw SettingError("--from: '" + path + "' is neither .properties nor .yml/.yaml (accepted: a Spring Boot "
                       "application.properties or application.yml)");
  std::istringstream in(read_file_capped(path, kConfigFileBytesMax, "--from", "a configuration file"));
  std::string line;
  std::size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string t = trim_value(line);
    if (t.empty() || t[0] == '#' || t[0] == '!') continue;
    const auto sep = t.find_first_of("=:");
    if (sep == std::string::npos) continue;
    const std::string where = "--from: '" + path + "' line " + std::to_string(number);
    out.emplace_back(properties_unescape(trim_value(t.substr(0, sep)), where),
                     properties_unescape(trim_value(t.substr(sep + 1)), where));
  }
  return out;
}

}  // namespace

std::string spring_duration(const std::string& value) {
  const std::string v = trim_value(value);
  if (!v.empty() && std::all_of(v.begin(), v.end(), [](unsigned char c) { return std::isdigit(c); })) return v + "ms";
  return iso8601_duration(v);  // PT30S as java.time prints it; 30s, 500ms, 2m are lockbench's own units
}

namespace {
// The two keys behind --delay-connection-acquisition: Hibernate takes the
// connection at the first SQL only when it is told the pool's connections come
// with auto-commit off and they do.
constexpr const char* kDisablesAutocommit = "spring.jpa.properties.hibernate.connection.providerdisablesautocommit";
constexpr const char* kHikariAutoCommit = "spring.datasource.hikari.autocommit";

std::optional<bool> spring_bool(const std::string& key, const std::string& raw,
                                const std::string& feeds = "--delay-connection-acquisition") {
  std::string v;
  for (const char c : trim_value(raw)) v += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v == "true") return true;
  if (v == "false") return false;
  throw SettingError("--from: " + key + " = " + raw + " (for " + feeds + ": true or false)");
}

// A Spring list: "a, b" or a YAML sequence (flattened as key[0], key[1], ...).
void append_list(std::vector<std::string>& out, const std::string& raw) {
  std::stringstream in(raw);
  std::string item;
  while (std::getline(in, item, ','))
    if (const std::string t = trim_value(item); !t.empty()) out.push_back(t);
}

// management.endpoint.health.group.<name>.include|exclude[...]: the group's
// name as the file spells it, and which list; empty when `key` is not one.
std::pair<std::string, std::string> health_group_key(const std::string& key) {
  std::vector<std::string> parts;
  std::stringstream in(key.substr(0, key.find('[')));
  for (std::string p; std::getline(in, p, '.');) parts.push_back(p);
  if (parts.size() != 6 || relaxed(parts[0] + "." + parts[1] + "." + parts[2] + "." + parts[3]) !=
                               "management.endpoint.health.group")
    return {};
  const std::string list = relaxed(parts[5]);
  return list == "include" || list == "exclude" ? std::pair{parts[4], list} : std::pair<std::string, std::string>{};
}

// The actuator's keys lint's check 6 reads (what each health path checks);
// false when `key` is none of them.
bool read_health_key(report::SpringHealth& h, const std::string& key, const std::string& raw) {
  const std::string k = relaxed(key);
  const std::string feeds = "lint's probe check";
  if (k == "management.endpoint.health.probes.enabled" || k == "management.health.probes.enabled")
    h.probes_enabled = spring_bool(key, raw, feeds);
  else if (k == "management.health.db.enabled")
    h.db_enabled = spring_bool(key, raw, feeds);
  else if (k == "management.endpoints.web.basepath")
    h.base_path = trim_value(raw);
  else if (const auto [group, list] = health_group_key(key); !group.empty())
    append_list(list == "include" ? h.groups[group] : h.groups_exclude[group], raw);
  else
    return false;
  return true;
}
}  // namespace

SpringConfig apply_spring_config(Settings& s, const std::string& path) {
  SpringConfig out;
  std::optional<bool> disables_autocommit, auto_commit;
  out.health.file = path;
  for (const auto& [key, raw] : read_pairs(path)) {
    const std::string k = relaxed(key);
    if (read_health_key(out.health, key, raw)) continue;
    if (k == kDisablesAutocommit || k == kHikariAutoCommit) {
      (k == kDisablesAutocommit ? disables_autocommit : auto_commit) = spring_bool(key, raw);
      out.key_of["delay-connection-acquisition"] = key;
      continue;
    }
    std::string setting;
    std::string raw_value = raw;
    Kind kind = Kind::text;
    for (const auto& m : kMappings)
      if (k == m.key) {
        setting = m.setting;
        kind = m.kind;
      }
    if (k == "spring.threads.virtual.enabled") {
      setting = "virtual-threads";
      raw_value = *spring_bool(key, raw, "--virtual-threads") ? "on" : "off";
    }
    if (setting.empty() && k.rfind("resilience4j.retry.instances.", 0) == 0) {
      const std::string leaf = k.substr(k.rfind('.') + 1);
      if (leaf == "maxattempts") setting = "partner-max-attempts", kind = Kind::integer;
      if (leaf == "waitduration") setting = "retry-backoff-base", kind = Kind::duration;
      if (leaf == "exponentialmaxwaitduration") setting = "retry-backoff-cap", kind = Kind::duration;
    }
    if (setting.empty() && k.rfind("lockbench.", 0) == 0) {
      setting = key.substr(key.find('.') + 1);  // lockbench.lease-ttl -> lease-ttl, as the flag is spelled
      if (!find_setting(setting))
        throw SettingError("--from: " + key + ": '" + setting + "' is not a lockbench setting (see lockbench run --help)");
    }
    if (setting.empty()) {
      out.ignored.push_back(key);
      continue;
    }
    const std::string value = kind == Kind::duration ? spring_duration(raw) : raw_value;
    try {
      apply_setting(s, setting, value);
    } catch (const SettingError& e) {
      throw SettingError("--from: " + key + " = " + raw + " (for " + e.what() + ")");
    }
    out.applied.emplace_back(setting, value);
    out.key_of[setting] = key;
  }
  if (disables_autocommit || auto_commit) {
    // Hikari's auto-commit defaults to true, Hibernate's flag to false.
    const bool delayed = disables_autocommit.value_or(false) && !auto_commit.value_or(true);
    s.delay_connection_acquisition = delayed;
    out.applied.emplace_back("delay-connection-acquisition", delayed ? "on" : "off");
    if (disables_autocommit.value_or(false) && auto_commit.value_or(true))
      out.notes.push_back("provider_disables_autocommit=true while spring.datasource.hikari.auto-commit is true: "
                          "Hibernate skips setAutoCommit(false) and every statement commits on its own");
  }
  return out;
}

}  // namespace lockbench::cli

#include "lint_code/render.hpp"

#include <filesystem>
#include <map>
#include <sstream>

namespace lockbench::lint_code {

namespace {

std::string level_prefix(Finding::Level l) {
  switch (l) {
    case Finding::Level::note: return "NOTE";
    case Finding::Level::warn: return "WARN";
    case Finding::Level::flag: return "FLAG";
  }
  return "FLAG";
}

const char* sarif_level(Finding::Level l) {
  switch (l) {
    case Finding::Level::note: return "note";
    case Finding::Level::warn: return "warning";
    case Finding::Level::flag: return "error";
  }
  return "error";
}

const char* rule_text(const std::string& kind) {
  static const std::map<std::string, const char*> texts = {
      {"remote-in-tx", "a remote call inside a transaction holds a pooled connection through it"},
      {"synchronized", "synchronized or a ReentrantLock around a database or remote call excludes within one pod only"},
      {"advisory-lock", "a PostgreSQL advisory lock used so that it can stay on, or miss, a pooled connection"},
      {"orm-lease", "a lease mapped into an ORM entity and written back by save()"},
      {"optimistic-no-version", "a read-modify-write around a partner call without @Version"},
      {"unresolved", "a call path lint could not resolve; nothing is guessed"}};
  const auto it = texts.find(kind);
  return it == texts.end() ? "" : it->second;
}

std::string errors_of(const JavaFile& f) {
  std::string s;
  for (std::size_t i = 0; i < f.error_lines.size() && i < 5; ++i) s += (i ? ", " : "") + std::to_string(f.error_lines[i]);
  if (f.error_lines.size() > 5) s += ", …";
  return s;
}

}  // namespace

std::string scan_summary(const Scan& scan) {
  const ScanCounts& c = scan.counts;
  std::ostringstream o;
  o << "lint --code " << scan.root << ": read " << c.java_files << " Java file" << (c.java_files == 1 ? "" : "s") << " ("
    << (c.bytes + 1023) / 1024 << " KiB)";
  std::string skipped;
  const auto add = [&](int n, const char* what) {
    if (n) skipped += (skipped.empty() ? "" : ", ") + std::to_string(n) + " " + what;
  };
  add(c.not_java, "not Java");
  add(c.too_large, "over 4 MiB");
  add(c.binary, "binary");
  add(c.symlinks, "symbolic links (loops or aliases, not followed)");
  add(c.outside, "symbolic links out of the directory (not read)");
  add(c.unreadable, "unreadable");
  if (!skipped.empty()) o << "; skipped: " << skipped;
  o << "\n";
  for (const auto& f : scan.files)
    if (!f.error_lines.empty())
      o << "note: " << f.path << ": syntax errors at line " << errors_of(f) << "; the rest of the file was read\n";
  return o.str();
}

std::string render_text(const Scan& scan, const std::vector<Finding>& findings) {
  std::ostringstream o;
  o << scan_summary(scan);
  int flags = 0, warns = 0, notes = 0;
  for (const auto& f : findings) {
    (f.level == Finding::Level::flag ? flags : f.level == Finding::Level::warn ? warns : notes)++;
    o << level_prefix(f.level) << " " << f.kind << ": " << f.file << ":" << f.line << ": " << f.message << "\n";
    if (!f.path.empty()) {
      o << "  path:";
      for (std::size_t i = 0; i < f.path.size(); ++i)
        o << (i ? "\n        -> " : " ") << f.path[i].text << " (" << f.path[i].file << ":" << f.path[i].line << ")";
      o << "\n";
    }
    if (!f.family.empty()) o << "  family: " << f.family << " (lockbench explain " << f.family << ")\n";
    if (!f.consequence.empty()) o << "  consequence: " << f.consequence << "\n";
    if (!f.fix.empty()) o << "  fix: " << f.fix << "\n";
    if (!f.reproduce.empty()) o << "  reproduce: " << f.reproduce << "\n";
  }
  o << "code: " << flags << " flagged, " << warns << " warnings, " << notes << " notes\n";
  return o.str();
}

nlohmann::json render_json(const Scan& scan, const std::vector<Finding>& findings) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : findings) {
    nlohmann::json path = nlohmann::json::array();
    for (const auto& p : f.path) path.push_back({{"file", p.file}, {"line", p.line}, {"text", p.text}});
    nlohmann::json j = {{"level", level_name(f.level)}, {"kind", f.kind},     {"file", f.file},
                        {"line", f.line},               {"message", f.message}, {"path", path},
                        {"family", f.family},           {"fix", f.fix}};
    if (f.kind == "remote-in-tx") j["remote_calls"] = f.remote_calls;
    if (f.kind == "synchronized") j["pins_carrier"] = f.pins;
    if (!f.strategy.empty()) j["simulated_strategy"] = f.strategy;
    if (!f.consequence.empty()) j["consequence"] = f.consequence;
    if (!f.reproduce.empty()) j["reproduce"] = f.reproduce;
    out.push_back(std::move(j));
  }
  const ScanCounts& c = scan.counts;
  std::vector<nlohmann::json> errors;
  for (const auto& f : scan.files)
    if (!f.error_lines.empty()) errors.push_back({{"file", f.path}, {"lines", f.error_lines}});
  bool flagged = false;
  for (const auto& f : findings) flagged = flagged || f.level == Finding::Level::flag;
  return {{"verdict", flagged ? "flagged" : "pass"},
          {"directory", scan.root},
          {"files", {{"java", c.java_files},
                     {"bytes", c.bytes},
                     {"skipped_not_java", c.not_java},
                     {"skipped_too_large", c.too_large},
                     {"skipped_binary", c.binary},
                     {"skipped_symlinks", c.symlinks},
                     {"skipped_outside", c.outside},
                     {"unreadable", c.unreadable},
                     {"with_syntax_errors", c.with_syntax_errors}}},
          {"syntax_errors", errors},
          {"findings", out}};
}

nlohmann::json render_sarif(const Scan& scan, const std::vector<Finding>& findings) {
  nlohmann::json rules = nlohmann::json::array();
  for (const auto& k : finding_kinds())
    rules.push_back({{"id", "lockbench/code/" + k},
                     {"name", k},
                     {"shortDescription", {{"text", rule_text(k)}}}});
  // URIs relative to where lint ran (the repository's root, in CI): DIR/file.
  const std::filesystem::path root(scan.root);
  const auto location = [&root](const std::string& file, int line, const std::string& text) {
    const std::string uri = (root / file).lexically_normal().generic_string();
    nlohmann::json l = {{"physicalLocation",
                         {{"artifactLocation", {{"uri", uri}}},
                          {"region", {{"startLine", line > 0 ? line : 1}}}}}};
    if (!text.empty()) l["message"] = {{"text", text}};
    return l;
  };
  nlohmann::json results = nlohmann::json::array();
  for (const auto& f : findings) {
    std::string text = f.message;
    if (!f.consequence.empty()) text += ". Consequence: " + f.consequence;
    if (!f.fix.empty()) text += ". Fix: " + f.fix;
    nlohmann::json r = {{"ruleId", "lockbench/code/" + f.kind},
                        {"level", sarif_level(f.level)},
                        {"message", {{"text", text}}},
                        {"locations", nlohmann::json::array({location(f.file, f.line, "")})}};
    if (!f.path.empty()) {
      nlohmann::json locs = nlohmann::json::array();
      for (const auto& p : f.path) locs.push_back({{"location", location(p.file, p.line, p.text)}});
      r["codeFlows"] = nlohmann::json::array({{{"threadFlows", nlohmann::json::array({{{"locations", locs}}})}}});
    }
    nlohmann::json props = {{"family", f.family}};
    if (!f.reproduce.empty()) props["reproduce"] = f.reproduce;
    r["properties"] = props;
    results.push_back(std::move(r));
  }
  return {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs", nlohmann::json::array({{{"tool", {{"driver", {{"name", "lockbench lint --code"},
                                                                  {"rules", rules}}}}},
                                           {"results", results}}})}};
}

}  // namespace lockbench::lint_code

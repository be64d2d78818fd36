// Reading result files and refusing incomplete ones with one clear line.

#include <algorithm>

#include <fmt/format.h>

#include "base/units.hpp"
#include "core/files.hpp"
#include "report/fields.hpp"
#include "report/report.hpp"

namespace lockbench::report {

using detail::find;
using nlohmann::json;

void validate_result(const json& result, const std::string& source) {
  if (!result.is_object()) throw SettingError(fmt::format("{}: a result must be a JSON object", source));
  const json* schema = find(result, "schema");
  if (schema != nullptr && (!schema->is_string() || schema->get<std::string>() != "lockbench.result/1"))
    throw SettingError(
        fmt::format("{}: schema is {}, expected \"lockbench.result/1\"", source, schema->dump()));
  for (const auto& field : detail::required_fields()) {
    if (find(result, field) == nullptr) throw SettingError(fmt::format("{}: missing field '{}'", source, field));
  }
  // Names go into file names, code spans, SVG and terminal lines: only what
  // lockbench itself writes ("held-tx:wait", "reward-claim:unique") is taken.
  // A newline gave 0-byte SVGs, a backtick broke out of report.md's code spans.
  for (const char* key : {"world", "scenario", "strategy"}) {
    const json* v = find(result, key);
    if (v == nullptr) continue;
    const std::string name = v->is_string() ? v->get<std::string>() : std::string();
    const bool plain = !name.empty() && name.size() <= 100 && std::all_of(name.begin(), name.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
             c == ':' || c == '.' || c == '=' || c == ',';
    });
    if (!plain)
      throw SettingError(fmt::format("{}: {} {} is not a name lockbench writes (accepted: letters, digits and - _ : . = "
                                     ", at most 100)",
                                     source, key, json(v->is_string() ? name.substr(0, 100) : v->dump().substr(0, 100)).dump()));
  }
}

std::vector<json> load_results(const std::vector<std::string>& paths) {
  std::vector<json> results;
  for (const auto& path : paths) {
    json doc = json::parse(read_file_capped(path, kResultFileBytesMax, "report", "a result file"), nullptr,
                           /*allow_exceptions=*/false);
    if (doc.is_discarded()) throw SettingError(fmt::format("{}: not valid JSON", path));
    if (doc.is_array()) {
      if (doc.empty()) throw SettingError(fmt::format("{}: an empty array holds no results", path));
      for (std::size_t i = 0; i < doc.size(); ++i) {
        validate_result(doc[i], fmt::format("{}[{}]", path, i));
        results.push_back(std::move(doc[i]));
      }
    } else {
      validate_result(doc, path);
      results.push_back(std::move(doc));
    }
  }
  return results;
}

}  // namespace lockbench::report

// Reading result files and refusing incomplete ones with one clear line.

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

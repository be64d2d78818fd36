// Compact results: see compact.hpp.
#include "report/compact.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unistd.h>
#include <system_error>

#include "base/units.hpp"
#include "core/files.hpp"

namespace lockbench::report {

namespace fs = std::filesystem;
using json = nlohmann::json;

bool is_result(const json& j) {
  if (!j.is_object()) return false;
  const auto it = j.find("schema");
  return it != j.end() && it->is_string() && it->get<std::string>().rfind("lockbench.result/", 0) == 0;
}

// A sweep's manifest names the build that wrote it ("0.1.0 (COMMIT)", cli/shards.cpp): the
// committed copy keeps the version only, as a compact result's provenance does.
json compact_manifest(json manifest) {
  if (auto v = manifest.find("lockbench_version"); v != manifest.end() && v->is_string()) {
    const std::string version = v->get<std::string>();
    *v = version.substr(0, version.find(" ("));
  }
  return manifest;
}

json compact_result(json result, std::size_t details_max) {
  if (!is_result(result)) return result;
  result.erase("trace");
  result.erase("timeline");
  result.erase("latency_histogram_ms");  // read only by merge, of full runner results
  // No timestamp, commit or host name: a refresh of results/ with unchanged figures changes no file.
  if (auto p = result.find("provenance"); p != result.end() && p->is_object()) {
    p->erase("created_at");
    p->erase("git_commit");
    p->erase("host");
  }
  if (auto p = result.find("partner"); p != result.end() && p->is_object())
    if (auto d = p->find("details"); d != p->end() && d->is_array() && d->size() > details_max)
      d->erase(d->begin() + static_cast<std::ptrdiff_t>(details_max), d->end());
  result["detail"] = "compact";
  return result;
}

std::string compact_dump(const json& result) {
  if (!result.is_object() || result.empty()) return result.dump() + "\n";
  std::string out = "{\n";
  bool first = true;
  for (const auto& [key, value] : result.items()) {
    if (!first) out += ",\n";
    first = false;
    out += json(key).dump() + ":" + value.dump();
  }
  return out + "\n}\n";
}

std::string compact_result_text(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) throw std::runtime_error("not JSON");
  if (j.is_array()) {
    bool any = false;
    for (auto& e : j) any = any || is_result(e);
    if (!any) return text;
    std::string out = "[\n";
    for (std::size_t i = 0; i < j.size(); ++i) {
      std::string one = compact_dump(compact_result(std::move(j[i])));
      one.pop_back();  // the newline
      out += (i ? ",\n" : "") + one;
    }
    return out + "\n]\n";
  }
  if (!is_result(j)) return text;
  return compact_dump(compact_result(std::move(j)));
}

std::vector<CompactPlan> plan_compaction(const fs::path& in, const fs::path& out, bool in_place) {
  std::error_code ec;
  std::vector<CompactPlan> plan;
  const auto refuse_in_place = [&](const fs::path& dir) {
    if (!in_place && same_directory(dir, out))
      throw std::invalid_argument("--out " + out.string() + " is the input's own directory: compacting in place " +
                                  "drops every trace and timeline for good; give another --out, or --force");
  };
  if (fs::is_regular_file(in, ec)) {
    refuse_in_place(in.has_parent_path() ? in.parent_path() : fs::path("."));
    plan.push_back({in, out / in.filename()});
    return plan;
  }
  if (!fs::is_directory(in, ec)) throw std::invalid_argument(in.string() + ": no such file or directory");
  refuse_in_place(in);
  // OUT inside IN: the files already under OUT are output, not input.
  const std::string in_abs = fs::weakly_canonical(in).string() + "/", out_abs = fs::weakly_canonical(out).string() + "/";
  const bool out_inside_in = out_abs.size() > in_abs.size() && out_abs.rfind(in_abs, 0) == 0;
  for (fs::recursive_directory_iterator it(in, ec), end; it != end && !ec; it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    if (!resolves_inside(in, it->path()))
      throw std::invalid_argument(it->path().string() + " is a symlink that leads out of " + in.string() +
                                  "; compact reads only files inside its input");
    if (out_inside_in && fs::weakly_canonical(it->path()).string().rfind(out_abs, 0) == 0) continue;
    plan.push_back({it->path(), out / fs::relative(it->path(), in)});
  }
  if (ec) throw std::invalid_argument(in.string() + ": " + ec.message());
  return plan;
}

namespace {

std::string read_all(const fs::path& p) {
  try {
    return read_file_capped(p, kResultFileBytesMax, "input", "a file compact copies");
  } catch (const SettingError& e) {
    throw std::invalid_argument(e.what());
  }
}

void write_atomically(const fs::path& p, const std::string& text) {
  std::error_code ec;
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  if (ec) throw std::invalid_argument(p.parent_path().string() + ": cannot create: " + ec.message());
  try {
    check_writable_target(p, "--out");
  } catch (const SettingError& e) {
    throw std::invalid_argument(e.what());
  }
  const fs::path tmp = p.string() + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << text;
    f.flush();
    if (!f) {
      fs::remove(tmp, ec);
      throw std::invalid_argument(p.string() + ": cannot write");
    }
  }
  fs::rename(tmp, p, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw std::invalid_argument(p.string() + ": cannot write: " + ec.message());
  }
}

}  // namespace

std::size_t compact_files(const std::vector<CompactPlan>& plan) {
  std::vector<std::string> texts;
  std::size_t compacted = 0;
  texts.reserve(plan.size());
  for (const auto& step : plan) {
    std::string text = read_all(step.from);
    if (step.from.filename() == "lockbench.manifest") {  // a sweep's (cli/shards.hpp kManifestName)
      json m = json::parse(text, nullptr, false);
      if (m.is_object() && m.value("schema", "") == "lockbench.manifest/1") text = compact_manifest(std::move(m)).dump(2) + "\n";
    } else if (step.from.extension() == ".json") {
      try {
        std::string out = compact_result_text(text);
        if (out != text) ++compacted;
        text = std::move(out);
      } catch (const std::runtime_error&) {
        throw std::invalid_argument(step.from.string() + ": not JSON");
      }
    }
    texts.push_back(std::move(text));
  }
  for (std::size_t i = 0; i < plan.size(); ++i) write_atomically(plan[i].to, texts[i]);
  return compacted;
}

}  // namespace lockbench::report

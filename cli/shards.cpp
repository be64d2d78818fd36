#include "cli/shards.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "cli/output.hpp"
#include "core/files.hpp"
#include "settings/table.hpp"
#include "core/result.hpp"
#include "base/units.hpp"
#include "strategies/registry.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace lockbench::cli {

namespace {

constexpr std::size_t kMaxShards = 100000;

// A whole number of digits only ("3", not "+3", "3.0" or "0x3"); nullopt otherwise.
std::optional<std::size_t> whole_number(std::string_view text) {
  std::size_t v = 0;
  if (text.empty() || text.size() > 9) return std::nullopt;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

std::size_t shard_count(std::string_view text, const std::string& flag) {
  const auto n = whole_number(text);
  if (!n || *n < 1 || *n > kMaxShards)
    throw SettingError(flag + ": '" + std::string(text) + "' is not a shard count (accepted: a whole number from 1 to " +
                       std::to_string(kMaxShards) + ")");
  return *n;
}

Shard checked(std::size_t index, std::size_t count, const std::string& flag) {
  if (index >= count)
    throw SettingError(flag + ": index " + std::to_string(index) + " is out of range for " + std::to_string(count) +
                       " shard(s) (accepted: 0 to " + std::to_string(count - 1) + ", as JOB_COMPLETION_INDEX counts)");
  return Shard{index, count};
}

// A result or a manifest, at most `cap` bytes (core/files.hpp).
std::string read_text(const fs::path& p, std::uintmax_t cap = kResultFileBytesMax) {
  std::error_code ec;
  if (!fs::exists(p, ec)) return {};  // missing: the caller names what it needed
  return read_file_capped(p, cap, "merge", cap == kResultFileBytesMax ? "a result file" : "a manifest");
}

std::string hash_of(const std::vector<json>& settings) {
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a, 64 bits: stable across builds and machines
  for (const auto& s : settings)
    for (const unsigned char c : s.dump() + "\n") {
      h ^= c;
      h *= 1099511628211ull;
    }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return std::string("fnv1a64:") + hex;
}

}  // namespace

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  if (slash == std::string::npos)
    throw SettingError("--shard: '" + text + "' is not I/N (e.g. 0/3: the first of 3 shards; I from 0 to N-1)");
  const std::size_t count = shard_count(std::string_view(text).substr(slash + 1), "--shard");
  const auto index = whole_number(std::string_view(text).substr(0, slash));
  if (!index) throw SettingError("--shard: '" + text + "' is not I/N (I a whole number from 0 to N-1)");
  return checked(*index, count, "--shard");
}

Shard shard_from_index(const std::string& count_text, const char* index_text) {
  const std::size_t count = shard_count(count_text, "--shards");
  if (index_text == nullptr)
    throw SettingError("--shards: JOB_COMPLETION_INDEX is not set (a Kubernetes Indexed Job sets it); "
                       "outside one give --shard I/N");
  const auto index = whole_number(index_text);
  if (!index)
    throw SettingError("JOB_COMPLETION_INDEX: '" + std::string(index_text).substr(0, 40) +
                       "' is not a shard index (a whole number from 0 to N-1)");
  return checked(*index, count, "JOB_COMPLETION_INDEX");
}

double run_cost(const Settings& s) {
  const double cost = s.world == "real" ? to_s(s.duration) : s.expected_requests();
  return std::max(1.0, cost);
}

std::vector<std::size_t> shard_slice(const std::vector<double>& costs, Shard s) {
  std::vector<std::size_t> order(costs.size());
  for (std::size_t p = 0; p < order.size(); ++p) order[p] = p;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; });
  std::vector<double> load(s.count, 0);
  std::vector<std::size_t> runs(s.count, 0);
  std::vector<std::size_t> out;
  std::vector<std::size_t> ties;
  for (std::size_t dealt = 0; dealt < order.size(); ++dealt) {
    const std::size_t p = order[dealt];
    ties.clear();
    for (std::size_t k = 0; k < s.count; ++k) {
      if (!ties.empty() && (load[k] > load[ties[0]] || (load[k] == load[ties[0]] && runs[k] > runs[ties[0]]))) continue;
      if (!ties.empty() && (load[k] < load[ties[0]] || runs[k] < runs[ties[0]])) ties.clear();
      ties.push_back(k);
    }
    // Each round of dealing starts one shard further along: equal runs are
    // spread like a Latin square, not in a stride.
    const std::size_t best = ties[(dealt / s.count) % ties.size()];
    load[best] += costs[p];
    ++runs[best];
    if (best == s.index) out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::size_t> shard_slice(const std::vector<Settings>& plan, Shard s) {
  std::vector<double> costs;
  for (const auto& one : plan) costs.push_back(run_cost(one));
  return shard_slice(costs, s);
}

json canonical_settings(json stored) {
  if (stored.is_object() && stored.contains("strategy") && stored["strategy"].is_string()) {
    try {
      stored["strategy"] = std::string(strategy_info(stored["strategy"].get<std::string>()).spec);
    } catch (const SettingError&) {  // a strategy this build does not know: compared as written
    }
  }
  return stored;
}

json canonical_settings(const Settings& s) { return canonical_settings(settings_json(s)); }

std::string settings_hash(const std::vector<Settings>& planned) {
  std::vector<json> all;
  for (const auto& s : planned) all.push_back(canonical_settings(s));
  return hash_of(all);
}

json make_manifest(const std::string& command, const json& grid, const std::vector<Settings>& planned,
                   const std::vector<std::string>& file_names, Shard shard) {
  return {{"schema", "lockbench.manifest/1"},
          {"command", command},
          {"lockbench_version", lockbench_version()},
          {"settings_hash", settings_hash(planned)},
          {"grid", grid.is_null() ? json::object() : grid},
          {"plan", file_names},
          {"shard",
           {{"index", shard.index},
            {"count", shard.count},
            {"slice", shard.text()},
            {"positions", shard_slice(planned, shard)}}}};
}

json read_manifest(const fs::path& dir) {
  const fs::path p = dir / kManifestName;
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return nullptr;
  if (!resolves_inside(dir, p))
    throw SettingError(p.string() + " is a symlink that leads out of " + dir.string() +
                       "; lockbench reads only a manifest inside its directory");
  json m = json::parse(read_text(p, kIndexFileBytesMax), nullptr, false);
  const auto refuse = [&](const std::string& why) {
    return SettingError(p.string() + ": not a lockbench manifest (schema lockbench.manifest/1: " + why +
                        "); remove it or give another directory");
  };
  if (m.is_discarded() || !m.is_object()) throw refuse("not a JSON object");
  if (!m.contains("schema") || m["schema"] != "lockbench.manifest/1") throw refuse("schema is not lockbench.manifest/1");
  if (!m.contains("plan") || !m["plan"].is_array() ||
      !std::all_of(m["plan"].begin(), m["plan"].end(), [](const json& n) { return n.is_string(); }))
    throw refuse("plan is not an array of file names");
  if (!m.contains("shard") || !m["shard"].is_object()) throw refuse("shard is not an object");
  for (const char* key : {"index", "count"})
    if (!m["shard"].contains(key) || !m["shard"][key].is_number_unsigned())
      throw refuse(std::string("shard.") + key + " is not a whole number");
  if (m["shard"].contains("positions")) {
    const json& pos = m["shard"]["positions"];
    if (!pos.is_array() || !std::all_of(pos.begin(), pos.end(), [](const json& n) { return n.is_number_unsigned(); }))
      throw refuse("shard.positions is not an array of whole numbers");
  }
  for (const char* key : {"settings_hash", "lockbench_version"})
    if (m.contains(key) && !m[key].is_string()) throw refuse(std::string(key) + " is not a string");
  if (m["shard"].contains("slice") && !m["shard"]["slice"].is_string()) throw refuse("shard.slice is not a string");
  // Every file name the plan gives stays inside the directory (no .., no absolute path, no symlink out).
  for (const auto& name : m["plan"]) path_inside(dir, name.get<std::string>(), p.string());
  return m;
}

namespace {

struct ShardDir {
  std::string dir;
  json manifest;
  std::size_t index = 0;
};

// A lockbench result file (one result or an array of them), by its schema.
bool is_result_text(const std::string& text) {
  const json doc = json::parse(text, nullptr, false);
  const auto one = [](const json& r) { return r.is_object() && r.value("schema", "").rfind("lockbench.result", 0) == 0; };
  return one(doc) || (doc.is_array() && !doc.empty() && std::all_of(doc.begin(), doc.end(), one));
}

// One line naming what is wrong, as merge refuses.
[[noreturn]] void refuse(const std::string& line) { throw SettingError("merge: " + line); }

std::vector<ShardDir> read_shards(const std::vector<std::string>& dirs) {
  std::vector<ShardDir> shards;
  for (const auto& d : dirs) {
    std::error_code ec;
    if (!fs::is_directory(d, ec)) refuse(d + " is not a directory (give the shards' --out directories)");
    json m = read_manifest(d);
    if (m.is_null()) refuse(d + " holds no " + std::string(kManifestName) + ": not the --out of a sweep");
    shards.push_back({d, m, m["shard"].value("index", std::size_t{0})});
  }
  const ShardDir& first = shards.front();
  const std::size_t count = first.manifest["shard"].value("count", std::size_t{1});
  std::map<std::size_t, const ShardDir*> by_index;
  for (const auto& s : shards) {
    const json& m = s.manifest;
    const std::string slice = m["shard"].value("slice", std::string("?"));
    if (m.value("settings_hash", "") != first.manifest.value("settings_hash", "") || m["plan"] != first.manifest["plan"])
      refuse(s.dir + " (shard " + slice + ") is a shard of another sweep: settings hash " +
             m.value("settings_hash", "?") + ", not " + first.manifest.value("settings_hash", "?") + " as in " +
             first.dir);
    if (m.value("lockbench_version", "") != first.manifest.value("lockbench_version", ""))
      refuse(s.dir + " (shard " + slice + ") was written by lockbench " + m.value("lockbench_version", "?") + ", " +
             first.dir + " by " + first.manifest.value("lockbench_version", "?") + ": one sweep's shards come from one build");
    if (m["shard"].value("count", std::size_t{0}) != count)
      refuse(s.dir + " is shard " + slice + ", " + first.dir + " one of " + std::to_string(count) +
             ": one sweep's shards share N");
    if (s.index >= count) refuse(s.dir + ": shard index " + std::to_string(s.index) + " is out of range for " +
                                 std::to_string(count) + " shard(s)");
    if (const auto [at, fresh] = by_index.emplace(s.index, &s); !fresh)
      refuse("shard " + slice + " is given twice: " + at->second->dir + " and " + s.dir);
  }
  for (std::size_t i = 0; i < count; ++i)
    if (!by_index.count(i))
      refuse("shard " + std::to_string(i) + "/" + std::to_string(count) + " is missing (" +
             std::to_string(shards.size()) + " of " + std::to_string(count) + " shards given)");
  return shards;
}

}  // namespace

int cmd_merge(const std::vector<std::string>& dirs, const std::string& out, const MergeOptions& options,
              std::ostream& log) {
  if (dirs.empty()) refuse("give the shards' directories");
  const std::vector<ShardDir> shards = read_shards(dirs);
  const json& reference = shards.front().manifest;
  const std::vector<std::string> plan = reference["plan"].get<std::vector<std::string>>();
  const std::size_t count = reference["shard"].value("count", std::size_t{1});
  // Every planned result, from the one shard that ran it, complete.
  std::vector<std::string> source(plan.size());
  std::vector<json> settings(plan.size());
  for (const auto& s : shards) {
    for (const std::size_t p : s.manifest["shard"].value("positions", std::vector<std::size_t>{})) {
      if (p >= plan.size() || !source[p].empty())
        refuse(s.dir + " (shard " + Shard{s.index, count}.text() + ") claims plan position " + std::to_string(p + 1) +
               (p < plan.size() ? ", which " + source[p] + " holds too" : ", beyond the plan"));
      const fs::path f = path_inside(s.dir, plan[p], (fs::path(s.dir) / kManifestName).string());
      const json r = json::parse(read_text(f), nullptr, false);
      if (r.is_discarded() || !r.is_object() || !r.contains("settings") || !r.value("complete", true) ||
          r.value("interrupted", false))
        refuse(s.dir + " (shard " + Shard{s.index, count}.text() + ") is incomplete: " + plan[p] +
               " is missing or interrupted; finish it with the same sweep and --resume");
      source[p] = f.string();
      settings[p] = canonical_settings(r["settings"]);
    }
  }
  for (std::size_t p = 0; p < plan.size(); ++p)
    if (source[p].empty()) refuse("no shard holds plan position " + std::to_string(p + 1) + " (" + plan[p] + ")");
  if (hash_of(settings) != reference.value("settings_hash", ""))
    refuse("the shards' results do not match their manifests' settings hash " + reference.value("settings_hash", "?") +
           " (a result file replaced by hand, or by another sweep?)");
  // The merged directory is the unsharded sweep's: its results, its manifest, its report.
  json merged = reference;
  std::vector<std::size_t> all(plan.size());
  for (std::size_t p = 0; p < all.size(); ++p) all[p] = p;
  merged["shard"] = {{"index", 0}, {"count", 1}, {"slice", "0/1"}, {"positions", all}};
  const fs::path dest(out);
  for (const auto& s : shards)
    if (same_directory(s.dir, dest) && !options.force)
      throw SettingError("--out: " + out + " is the shard directory " + s.dir +
                         " itself: merge would replace its input; give another --out, or --force");
  std::error_code ec;
  fs::create_directories(dest, ec);
  if (ec || !fs::is_directory(dest)) throw SettingError("--out: cannot create directory " + out);
  // Another sweep's results there (by its manifest, or result files without one) are not mixed in.
  const json there = read_manifest(dest);
  std::vector<fs::path> results_there;
  for (const auto& e : fs::directory_iterator(dest))
    if (e.is_regular_file() && e.path().extension() == ".json" && resolves_inside(dest, e.path()) &&
        is_result_text(read_text(e.path())))
      results_there.push_back(e.path());
  const bool foreign = there.is_null() ? !results_there.empty() : there != merged;
  if (foreign && !options.force)
    throw SettingError("--out: " + out + " holds results of another sweep" +
                       (there.is_null() ? std::string(" (result files without a manifest)") : std::string()) +
                       "; give --force to replace them, or another --out");
  std::size_t removed = 0;
  if (foreign)
    for (const auto& f : results_there) removed += fs::remove(f, ec) ? 1 : 0;
  if (removed > 0) log << "merge: --force: removed " << removed << " result file(s) of another sweep from " << out << "\n";
  std::vector<std::string> written;
  for (std::size_t p = 0; p < plan.size(); ++p) {
    const fs::path to = path_inside(dest, plan[p], "merge: the manifest's plan");
    write_file_atomically(to, read_text(source[p]));  // byte for byte what the shard wrote
    written.push_back(to.string());
  }
  write_file_atomically(dest / kManifestName, merged.dump(2) + "\n");
  report::ReportOptions ro;
  ro.title = options.title;
  ro.charts = options.charts;
  if (!written.empty()) write_report_atomically(report::load_results(written), out, ro);
  log << "merged " << shards.size() << " shard(s), " << plan.size() << " results into " << out
      << (written.empty() ? "" : " with report.md, report.html, summary.csv") << "\n";
  return 0;
}

void warn_mixed_sweeps(const std::vector<std::string>& inputs, std::ostream& err) {
  std::set<std::string> sweeps;
  std::vector<std::string> dirs;
  for (const auto& in : inputs) {
    std::error_code ec;
    if (!fs::is_directory(in, ec)) continue;
    json m;
    try {
      m = read_manifest(in);
    } catch (const SettingError& e) {
      err << "report: warning: " << e.what() << "\n";
      continue;
    }
    if (m.is_null()) continue;
    sweeps.insert(m.value("settings_hash", "?") + " " + m["shard"].value("slice", std::string()));
    dirs.push_back(in);
    const auto plan = m["plan"].get<std::vector<std::string>>();
    std::size_t strangers = 0;
    for (const auto& e : fs::directory_iterator(in))
      if (e.is_regular_file() && e.path().extension() == ".json" &&
          std::find(plan.begin(), plan.end(), e.path().filename().string()) == plan.end())
        ++strangers;
    if (strangers > 0)
      err << "report: warning: " << in << " holds " << strangers << " result file(s) its sweep's " << kManifestName
          << " does not list (from another sweep?)\n";
  }
  if (sweeps.size() > 1) {
    std::string list;
    for (const auto& d : dirs) list += (list.empty() ? "" : ", ") + d;
    err << "report: warning: these results come from " << sweeps.size()
        << " different sweeps or shards (" << list << "); to put a sharded sweep together use lockbench merge\n";
  }
}

}  // namespace lockbench::cli

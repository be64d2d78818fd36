#include "cli/output.hpp"

#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

#include "settings/table.hpp"
#include "core/files.hpp"
#include "core/prometheus.hpp"
#include "report/repetitions.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace lockbench::cli {

bool isatty_stderr() { return ::isatty(STDERR_FILENO) == 1; }

namespace {
// The signal that asked us to stop (0 = none). Written by the handler only.
volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void on_stop_signal(int sig) { g_stop_signal = sig; }
}  // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool stop_requested() { return g_stop_signal != 0; }
int interrupted_exit_code() { return 128 + static_cast<int>(g_stop_signal); }
const char* stop_signal_name() { return g_stop_signal == SIGINT ? "SIGINT" : "SIGTERM"; }

namespace {

std::string safe_name(std::string s) {
  for (auto& c : s)
    if (c == ':' || c == '/' || c == ' ') c = '_';
  return s;
}

}  // namespace

namespace {

// errno's reason when there is one ("Success" is not a reason).
std::string reason_of(int err) {
  return err != 0 ? std::string(": ") + std::strerror(err) : std::string();
}

// A writable directory, created if need be; a probe file proves it.
void check_writable_directory(const fs::path& dir, const std::string& out) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw SettingError("--out: " + dir.string() + " exists and is not a directory");
  fs::create_directories(dir, ec);
  if (ec) throw SettingError("--out: cannot create directory " + dir.string() + ": " + ec.message());
  const fs::path probe = dir / (".lockbench-write-check-" + std::to_string(::getpid()));
  errno = 0;
  {
    std::ofstream f(probe, std::ios::binary | std::ios::trunc);
    if (!f) throw SettingError("--out: cannot write into " + dir.string() + reason_of(errno) + " (given: " + out + ")");
  }
  fs::remove(probe, ec);
}

}  // namespace

void write_file_atomically(const fs::path& path, const std::string& text, std::string_view flag) {
  const std::string cannot = std::string(flag) + ": cannot write " + path.string();
  if (path == "-") {  // standard output: written, flushed and checked, never renamed over
    std::cout << text;
    std::cout.flush();
    if (!std::cout) throw SettingError(std::string(flag) + ": cannot write to standard output");
    return;
  }
  std::error_code dir_ec;
  if (fs::is_directory(path, dir_ec)) throw SettingError(cannot + ": it is a directory");
  check_writable_target(path, flag);  // a device, FIFO or socket is never replaced by the rename
  const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  remove_stale_temporaries(parent, path.filename().string() + ".tmp-");  // a writer killed by kill -9 left it
  const fs::path tmp = path.string() + ".tmp-" + std::to_string(::getpid());
  {
    errno = 0;
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw SettingError(cannot + reason_of(errno));
    f << text;
    f.flush();
    const int err = errno;  // the failed write's reason (ENOSPC: no space left on device)
    if (!f) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw SettingError(cannot + (err != 0 ? reason_of(err) : std::string(": the write failed")));
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw SettingError(cannot + ": " + ec.message());
  }
}

ResultSink::ResultSink(std::string out, const std::vector<Settings>& planned, const SinkOptions& options)
    : out_(std::move(out)), planned_(planned) {
  const fs::path p(out_);
  single_file_ = p.extension() == ".json";
  if (single_file_) {
    std::error_code ec;
    if (fs::is_directory(p, ec))
      throw SettingError("--out: " + out_ + " is a directory; give a file name ending in .json, or a directory name "
                         "without .json for one file per run");
    check_writable_target(p, "--out");  // a device or FIFO named x.json is neither read nor replaced
    check_writable_directory(p.has_parent_path() ? p.parent_path() : fs::path("."), out_);
    claim_file(options.force);
    written_.assign(planned_.size(), json());
  } else {
    check_writable_directory(p, out_);
    claim_directory(options);
  }
}

namespace {

json read_json_file(const fs::path& p) {
  return json::parse(read_file_capped(p, kResultFileBytesMax, "--out", "a result file"), nullptr, false);
}

bool is_result(const json& r) {
  return r.is_object() && r.value("schema", "").rfind("lockbench.result", 0) == 0 && r.contains("settings");
}

// A file of results (one object or an array of them), as run and sweep write.
bool is_result_file(const json& doc) {
  if (is_result(doc)) return true;
  return doc.is_array() && !doc.empty() && std::all_of(doc.begin(), doc.end(), is_result);
}

std::vector<fs::path> json_files_in(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && e.path().extension() == ".json") {
      if (!resolves_inside(dir, e.path()))
        throw SettingError("--out: " + e.path().string() + " is a symlink that leads out of " + dir.string() +
                           "; lockbench reads and replaces only files inside its --out");
      out.push_back(e.path());
    }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

// A sweep's directory holds this sweep's results (by file name and settings)
// or none: a manifest says whose they are; without one (results written
// before manifests, or by run) every result file is read. A run's directory
// may hold other runs' results (scripts/demo gathers several runs in one),
// but a run never replaces a result of other settings.
void ResultSink::claim_directory(const SinkOptions& o) const {
  const fs::path dir(out_);
  std::vector<std::string> names;
  for (std::size_t i = 0; i < planned_.size(); ++i) names.push_back(path_of(i).filename().string());
  const bool sweep = o.command == "sweep";
  const json mine = make_manifest(o.command, o.grid, planned_, names, o.shard);
  const json found = sweep ? read_manifest(dir) : json();
  std::string foreign;  // what the directory holds that is not ours; "" = nothing
  if (!sweep) {
    std::size_t others = 0;
    for (std::size_t i = 0; i < planned_.size(); ++i) {
      std::error_code ec;
      if (!fs::exists(dir / names[i], ec)) continue;
      const json doc = read_json_file(dir / names[i]);
      if (!is_result(doc) || canonical_settings(doc["settings"]) != canonical_settings(planned_[i])) ++others;
    }
    if (others > 0) foreign = std::to_string(others) + " file(s) of other settings where this run writes";
  } else if (!found.is_null()) {
    if (found.value("settings_hash", "") != mine["settings_hash"])
      foreign = "results of other settings (another sweep's manifest)";
    else if (found.value("shard", json::object()) != mine["shard"])
      foreign = "shard " + found["shard"].value("slice", std::string("?")) + " of this sweep, not " + o.shard.text() +
                " (give each shard an --out of its own)";
  } else {
    std::size_t others = 0;
    for (const auto& f : json_files_in(dir)) {
      const json doc = read_json_file(f);
      if (!is_result_file(doc)) continue;  // not a result: not ours to judge
      const auto at = std::find(names.begin(), names.end(), f.filename().string());
      if (at == names.end() || !doc.is_object() ||
          canonical_settings(doc["settings"]) != canonical_settings(planned_[static_cast<std::size_t>(at - names.begin())]))
        ++others;
    }
    if (others > 0) foreign = std::to_string(others) + " result file(s) of other settings";
  }
  if (!foreign.empty()) {
    if (!o.force)
      throw SettingError("--out: " + out_ + " holds " + foreign +
                         (sweep ? "; --resume finishes only the sweep that wrote them: give --force to replace them, "
                                  "or another --out"
                                : "; give --force to replace them, or another --out"));
    std::size_t removed = 0;
    std::error_code ec;
    if (sweep) {
      for (const auto& f : json_files_in(dir))
        if (is_result_file(read_json_file(f)) && fs::remove(f, ec)) ++removed;
    } else {
      for (const auto& n : names) removed += fs::remove(dir / n, ec) ? 1 : 0;
    }
    if (sweep) fs::remove(dir / kManifestName, ec);
    std::cerr << "lockbench: --force: removed " << removed << " result file(s) of other settings from " << out_ << "\n";
  }
  if (sweep) write_file_atomically(dir / kManifestName, mine.dump(2) + "\n");
}

// An existing --out FILE is rewritten only when it holds results of this plan.
void ResultSink::claim_file(bool force) const {
  std::error_code ec;
  if (force || !fs::exists(out_, ec) || fs::file_size(out_, ec) == 0) return;
  const json doc = read_json_file(out_);
  std::string why;
  if (!is_result_file(doc)) {
    why = "exists and is not a lockbench result file";
  } else {
    std::vector<json> ours;
    for (const auto& s : planned_) ours.push_back(canonical_settings(s));
    for (const auto& r : doc.is_array() ? doc : json::array({doc}))
      if (std::find(ours.begin(), ours.end(), canonical_settings(r["settings"])) == ours.end())
        why = "holds results of other settings";
  }
  if (!why.empty())
    throw SettingError("--out: " + out_ + " " + why + "; give --force to replace it, or another --out");
}

fs::path ResultSink::path_of(std::size_t index) const {
  const Settings& s = planned_.at(index);
  std::string name = s.world + "-" + s.scenario + "-" + safe_name(s.strategy);
  if (planned_.size() > 1) {
    std::ostringstream idx;
    idx << std::setw(3) << std::setfill('0') << index + 1;
    name = idx.str() + "-" + name;
  }
  return fs::path(out_) / (name + ".json");
}

void ResultSink::write(std::size_t index, const json& result) {
  if (!single_file_) return write_file_atomically(path_of(index), result.dump(2) + "\n");
  written_.at(index) = result;
  if (planned_.size() == 1) return write_file_atomically(out_, result.dump(2) + "\n");
  json so_far = json::array();
  for (const auto& r : written_)
    if (!r.is_null()) so_far.push_back(r);
  write_file_atomically(out_, so_far.dump(2) + "\n");
}

// --resume: this point's result written under another spelling of its
// strategy (held-tx and held-tx:wait are one strategy, but the file name keeps
// the spelling given): renamed to this plan's name, so no point gets two files.
fs::path ResultSink::respelled(std::size_t index) const {
  if (!by_settings_) {
    by_settings_.emplace();
    for (const auto& f : json_files_in(out_)) {
      const json doc = read_json_file(f);
      if (is_result(doc)) by_settings_->emplace_back(canonical_settings(doc["settings"]).dump(), f);
    }
  }
  const std::string mine = canonical_settings(planned_.at(index)).dump();
  const fs::path p = path_of(index);
  for (const auto& [settings, f] : *by_settings_) {
    if (settings != mine || f == p) continue;
    std::error_code ec;
    if (!fs::is_regular_file(f, ec)) continue;  // taken by an earlier point already
    fs::rename(f, p, ec);
    if (ec) throw SettingError("--resume: cannot rename " + f.string() + " to " + p.string() + ": " + ec.message());
    std::cerr << "lockbench: --resume: " << f.filename().string() << " holds this point under another spelling of "
              << "its strategy; renamed to " << p.filename().string() << "\n";
    return p;
  }
  return {};
}

json ResultSink::existing(std::size_t index) const {
  if (single_file_) return nullptr;
  fs::path p = path_of(index);
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(p, ec)) && respelled(index).empty()) return nullptr;
  if (!resolves_inside(out_, p))
    throw SettingError("--resume: " + p.string() + " is a symlink that leads out of " + out_ +
                       "; lockbench reads only files inside its --out");
  if (!fs::is_regular_file(p, ec)) return nullptr;
  const json r = json::parse(read_file_capped(p, kResultFileBytesMax, "--resume", "a result file"), nullptr, false);
  if (r.is_discarded() || !r.is_object() || !r.contains("settings")) return nullptr;  // half a file: run again
  if (!r.value("complete", true) || r.value("interrupted", false)) return nullptr;
  // Names compared canonically: the plan may say held-tx, the result held-tx:wait.
  if (canonical_settings(r["settings"]) != canonical_settings(planned_.at(index)))
    throw SettingError("--resume: " + p.string() + " holds a run with other settings; use another --out or remove it");
  return r;
}

void write_results(const std::vector<json>& results, const std::string& out) {
  const fs::path p(out);
  if (p.extension() == ".json") {
    if (p.has_parent_path()) fs::create_directories(p.parent_path());
    write_file_atomically(p, (results.size() == 1 ? results[0] : json(results)).dump(2) + "\n");
    return;
  }
  std::error_code ec;
  fs::create_directories(p, ec);
  if (ec || !fs::is_directory(p)) throw SettingError("--out: cannot create directory " + out);
  // Check every name first, then write: a sweep's files share a prefix.
  std::vector<std::pair<fs::path, std::string>> files;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    std::string name = r.value("world", "x") + "-" + safe_name(r.value("scenario", "x")) + "-" + safe_name(r.value("strategy", "x"));
    if (results.size() > 1) {
      std::ostringstream idx;
      idx << std::setw(3) << std::setfill('0') << i + 1;
      name = idx.str() + "-" + name;
    }
    files.emplace_back(p / (name + ".json"), r.dump(2) + "\n");
  }
  for (const auto& [path, text] : files) write_file_atomically(path, text);
}

void check_metrics_out(const std::string& path) {
  if (path == "-") return;  // standard output
  const fs::path p(path);
  std::error_code ec;
  if (fs::is_directory(p, ec)) throw SettingError("--metrics-out: " + path + " is a directory; give a file name (metrics.prom)");
  check_writable_target(p, "--metrics-out");
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  const fs::path probe = p.string() + ".lockbench-check";
  {
    errno = 0;
    std::ofstream f(probe);
    if (!f) throw SettingError("--metrics-out: cannot write " + path + reason_of(errno));
  }
  fs::remove(probe, ec);
}

static std::vector<HikariPoolMetrics> hikari_pools_of(const std::vector<json>& results) {
  std::vector<HikariPoolMetrics> out;
  for (const auto& r : results) {
    const json& pool = r.value("pool", json::object());
    const json& settings = r.value("settings", json::object());
    const int pods = settings.value("pods", 1);
    HikariPoolMetrics m;
    // The result keeps one pool figure for all pods together.
    m.pool = pods == 1 ? "pod1" : "all";
    m.labels = {{"world", r.value("world", "")}, {"strategy", r.value("strategy", "")}};
    if (pods != 1) m.labels.emplace_back("pods", std::to_string(pods));
    m.total = m.max = m.min = pool.value("size", 0);  // every connection opened at start (minimumIdle = max)
    m.idle = m.total;  // at the end of the run every connection is back in the pool
    m.timeouts = pool.value("timeouts", std::int64_t{0});
    const std::int64_t borrows = pool.value("borrows", std::int64_t{0});
    const auto timer = [&](const char* key) {
      const json& t = pool.value(key, json::object());
      return HikariTimer{borrows, t.value("mean", 0.0) * static_cast<double>(borrows) / 1000.0, t.value("max", 0.0) / 1000.0};
    };
    m.acquire = timer("wait_ms");
    m.usage = timer("hold_ms");
    // The simulator opens its connections at no cost; the real world does not measure it.
    if (r.value("world", "") == "sim") m.creation = HikariTimer{m.total, 0, 0};
    out.push_back(std::move(m));
  }
  return out;
}

void write_metrics(const std::vector<json>& results, const std::string& path) {
  const fs::path p(path);
  if (p != "-" && p.has_parent_path()) {
    std::error_code ec;
    fs::create_directories(p.parent_path(), ec);
  }
  write_file_atomically(p, hikaricp_exposition(hikari_pools_of(results)), "--metrics-out");
}

void write_report_atomically(const std::vector<json>& results, const std::string& out,
                             const report::ReportOptions& options) {
  const fs::path dest(out);
  std::error_code ec;
  fs::create_directories(dest, ec);
  if (ec || !fs::is_directory(dest)) throw SettingError("--out: cannot create directory " + out);
  remove_stale_temporaries(dest, ".report-tmp-");  // a report killed by kill -9 left its temporary directory
  const fs::path tmp = dest / (".report-tmp-" + std::to_string(::getpid()));
  fs::remove_all(tmp, ec);
  try {
    report::write_report(results, tmp, options);
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  try {  // every target checked before the first rename: a FIFO or device named report.md is refused, not replaced
    for (const auto& entry : fs::recursive_directory_iterator(tmp))
      if (entry.is_regular_file()) check_writable_target(dest / fs::relative(entry.path(), tmp), "--out");
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  for (const auto& entry : fs::recursive_directory_iterator(tmp)) {
    const auto rel = fs::relative(entry.path(), tmp);
    if (entry.is_directory()) fs::create_directories(dest / rel);
  }
  for (const auto& entry : fs::recursive_directory_iterator(tmp)) {
    if (!entry.is_regular_file()) continue;
    const auto rel = fs::relative(entry.path(), tmp);
    fs::rename(entry.path(), dest / rel);
  }
  fs::remove_all(tmp, ec);
}

namespace {
// Display columns of UTF-8 text ("±" is one column, two bytes).
std::size_t utf8_width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// aggregates.json and knees.json (and NAME.aggregates.json, NAME.knees.json) sit beside results, are not results.
bool is_aggregates_file(const fs::path& p) {
  const std::string name = p.filename().string();
  const auto ends = [&](std::string_view tail) {
    return name.size() >= tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
  };
  return ends("aggregates.json") || ends("knees.json") || name == "plan.json";
}
}  // namespace

nlohmann::json document_beside_results(const std::vector<std::string>& inputs, const std::string& name,
                                       const std::string& given) {
  std::string path = given, from;
  for (const auto& in : inputs)
    if (path.empty() && fs::is_directory(in) && fs::exists(fs::path(in) / name)) {
      path = (fs::path(in) / name).string();
      from = in;
    }
  if (path.empty()) return nullptr;
  if (!from.empty() && !resolves_inside(from, path))
    throw SettingError("report: " + path + " is a symlink that leads out of " + from +
                       "; lockbench reads only files inside the directories it is given");
  nlohmann::json doc = nlohmann::json::parse(
      read_file_capped(path, kIndexFileBytesMax, given.empty() ? "report" : "--plan", "a document beside results"),
      nullptr, false);
  if (doc.is_discarded()) throw SettingError(path + ": not valid JSON");
  return doc;
}

std::vector<std::string> expand_result_paths(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths) {
    if (fs::is_directory(p)) {
      std::vector<std::string> inside;
      for (const auto& e : fs::directory_iterator(p))
        if (e.is_regular_file() && e.path().extension() == ".json" && !is_aggregates_file(e.path())) {
          if (!resolves_inside(p, e.path()))
            throw SettingError("results: " + e.path().string() + " is a symlink that leads out of " + p +
                               "; lockbench reads only files inside the directories it is given");
          inside.push_back(e.path().string());
        }
      std::sort(inside.begin(), inside.end());
      if (inside.empty()) throw SettingError("results: " + p + " holds no .json files");
      out.insert(out.end(), inside.begin(), inside.end());
    } else {
      out.push_back(p);
    }
  }
  return out;
}

void apply_setting_or_strategy(Settings& s, const std::string& name, const std::string& value) {
  if (name == "strategy") s.strategy = value;
  else apply_setting(s, name, value);
}

void print_aggregate_table(std::ostream& out, const std::vector<json>& results) {
  const auto groups = report::repetition_groups(results);
  if (std::none_of(groups.begin(), groups.end(), [](const auto& g) { return g.runs.size() > 1; })) return;
  const std::vector<std::string> heads = {"strategy", "n", "ok/s", "cv ok/s", "p50 ms", "p99 ms", "pool_to", "violations"};
  std::vector<std::vector<std::string>> rows;
  for (const auto& g : groups) {
    std::vector<std::string> row = {g.label, std::to_string(g.runs.size())};
    const auto cell = [&](std::string_view metric, int decimals) {
      const auto s = report::metric_summary(g, metric);
      return s ? report::plus_minus(*s, decimals) : std::string("-");
    };
    row.push_back(cell("ok_per_s", 2));
    const auto ok = report::metric_summary(g, "ok_per_s");
    std::ostringstream cv;
    cv << std::fixed << std::setprecision(1) << (ok ? 100 * ok->cv : 0) << "%";
    row.push_back(g.runs.size() > 1 ? cv.str() : "-");
    row.push_back(cell("p50_ms", 1));
    row.push_back(cell("p99_ms", 1));
    row.push_back(cell("pool_timeouts", 1));
    row.push_back(cell("violations", 1));
    rows.push_back(std::move(row));
  }
  std::vector<std::size_t> width(heads.size());
  for (std::size_t c = 0; c < heads.size(); ++c) {
    width[c] = heads[c].size();
    for (const auto& row : rows) width[c] = std::max(width[c], utf8_width(row[c]));
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(width[c] - utf8_width(cells[c]), ' ');
      out << (c ? "  " : "") << (c == 0 ? cells[c] + pad : pad + cells[c]);
    }
    out << "\n";
  };
  out << "repetitions: mean ± half-width of the 95 % t-interval over n runs (seeds derived from --seed)\n";
  line(heads);
  for (const auto& row : rows) line(row);
}

void write_beside_results(const json& doc, const std::string& out, const std::string& name) {
  fs::path p(out);
  if (p.extension() == ".json") p.replace_extension("." + name);
  else p /= name;
  write_file_atomically(p, doc.dump(2) + "\n");
}

void write_aggregates(const std::vector<json>& results, const std::string& out) {
  if (out.empty()) return;
  const auto groups = report::repetition_groups(results);
  if (std::none_of(groups.begin(), groups.end(), [](const auto& g) { return g.runs.size() > 1; })) return;
  write_beside_results(report::aggregates_json(results), out, "aggregates.json");
}

void print_repetition_seeds(std::ostream& out, const Settings& base, int repetitions) {
  if (repetitions <= 1) return;
  out << "lockbench: " << repetitions << " repetitions per run, seeds";
  for (int i = 0; i < repetitions; ++i) out << (i ? ", " : " ") << repetition_seed(base.seed, i);
  out << " (repetition 1 keeps --seed, the others are derived from it)\n";
}

}  // namespace lockbench::cli

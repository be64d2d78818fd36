// The results of one real run's N runners as one result (contract in
// runner_merge.hpp), and the CLI around it (run --shard, merge RESULT...).
#include "cli/runner_merge.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "cli/output.hpp"
#include "cli/shards.hpp"
#include "core/files.hpp"
#include "report/report.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace lockbench::cli {

namespace {

[[noreturn]] void refuse_runners(const std::string& line) { throw SettingError("merge: " + line); }

double num(const json& j, const char* key) { return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0; }
std::int64_t count_of(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<std::int64_t>() : 0;
}

// The shards in index order, once each, of one run; refused in one line otherwise.
std::vector<const json*> checked_shards(const std::vector<json>& results) {
  if (results.empty()) refuse_runners("give the runners' result files");
  const json& first = results.front();
  if (!first.is_object() || !first.contains("shard") || !first["shard"].is_object())
    refuse_runners("the results are not the shards of a real run (run --targets ... --shard I/N writes a `shard` block)");
  const auto n = first["shard"].value("count", std::size_t{0});
  std::vector<const json*> by_index(n, nullptr);
  for (const json& r : results) {
    const json sh = r.is_object() ? r.value("shard", json()) : json();
    if (!sh.is_object()) refuse_runners("a result without a `shard` block is not a runner's (run --shard I/N)");
    const std::string slice = sh.value("slice", std::string("?"));
    if (!r.contains("latency_histogram_ms"))  // lockbench compact drops it: the latencies cannot be added up
      refuse_runners("shard " + slice + " is a compact result (no latency_histogram_ms); merge the runners' full results");
    if (sh.value("count", std::size_t{0}) != n) refuse_runners("shard " + slice + " is of " + std::to_string(sh.value("count", 0)) + " runners, not " + std::to_string(n));
    if (sh.value("run", json()) != first["shard"].value("run", json()) ||
        sh.value("start_unix_ms", json()) != first["shard"].value("start_unix_ms", json()))
      refuse_runners("shard " + slice + " is of another run (run " + sh.value("run", json()).dump() + ", start " +
             sh.value("start_unix_ms", json()).dump() + ")");
    if (canonical_settings(r.value("settings", json::object())) != canonical_settings(first.value("settings", json::object())))
      refuse_runners("shard " + slice + " ran other settings than shard " + first["shard"].value("slice", std::string("?")));
    const auto i = sh.value("index", n);
    if (i >= n) refuse_runners("shard " + slice + " is out of range");
    if (by_index[i]) refuse_runners("shard " + slice + " is given twice");
    by_index[i] = &r;
  }
  for (std::size_t i = 0; i < n; ++i)
    if (!by_index[i]) refuse_runners("shard " + std::to_string(i) + "/" + std::to_string(n) + " is missing");
  const json& not_ended = (*by_index[0])["shard"].value("not_ended", json::array());
  if (!not_ended.empty())
    refuse_runners("shard 0 read the partner's checks before shard(s) " + not_ended.dump() + " ended (raise --shard-wait)");
  return by_index;
}

// Log-linear histograms added bucket by bucket (their bounds are fixed: core/metrics.hpp).
json added_histograms(const std::vector<const json*>& shards, const char* which) {
  std::map<std::pair<double, double>, std::int64_t> buckets;
  json out = (*shards[0])["latency_histogram_ms"][which];
  for (const json* r : shards)
    for (const auto& b : (*r)["latency_histogram_ms"][which].value("buckets", json::array()))
      buckets[{b[0].get<double>(), b[1].get<double>()}] += b[2].get<std::int64_t>();
  json list = json::array();
  std::int64_t total = 0;
  for (const auto& [bounds, n] : buckets) {
    list.push_back({bounds.first, bounds.second, n});
    total += n;
  }
  out["buckets"] = list;
  out["count"] = total;
  return out;
}

// latency_ms from the merged histogram: quantiles at their bucket's upper bound (at most the max).
json latency_from(const json& hist, const std::vector<const json*>& shards, const char* block, double scale) {
  double max = 0, weighted = 0;
  std::int64_t n = 0;
  const char* which = std::string(block) == "latency_ok_ms" ? "ok" : "all";
  for (const json* r : shards) {
    const std::int64_t c = count_of((*r)["latency_histogram_ms"][which], "count");
    max = std::max(max, num((*r)[block], "max"));
    weighted += num((*r)[block], "mean") * static_cast<double>(c);
    n += c;
  }
  const auto quantile = [&](double q) {
    const auto want = static_cast<std::int64_t>(std::ceil(q * static_cast<double>(n)));
    std::int64_t seen = 0;
    for (const auto& b : hist["buckets"])
      if ((seen += b[2].get<std::int64_t>()) >= std::max<std::int64_t>(want, 1)) return std::min(b[1].get<double>(), max);
    return max;
  };
  if (n == 0) return (*shards[0])[block];
  return {{"p50", quantile(0.50) * scale},  {"p90", quantile(0.90) * scale}, {"p99", quantile(0.99) * scale},
          {"p999", quantile(0.999) * scale}, {"max", max * scale}, {"mean", weighted / static_cast<double>(n) * scale}};
}

// The timeline's outcome counts added row by row (one start, one step); the pool's columns are shard 0's.
json added_timeline(const std::vector<const json*>& shards) {
  json out = (*shards[0]).value("timeline", json::array());
  for (std::size_t k = 1; k < shards.size(); ++k) {
    const json& other = (*shards[k]).value("timeline", json::array());
    for (std::size_t row = 0; row < other.size(); ++row) {
      if (row >= out.size()) out.push_back(other[row]);
      else
        for (const char* o : {"ok", "conflict", "pool_timeout", "rejected", "error"})
          out[row][o] = count_of(out[row], o) + count_of(other[row], o);
    }
  }
  return out;
}

json time_split(const std::vector<const json*>& shards, std::int64_t total) {
  json out = json::object();
  for (const auto& [k, v] : (*shards[0])["time_split_ms"].items()) {
    double sum = 0;
    for (const json* r : shards) sum += num((*r)["time_split_ms"], k.c_str()) * static_cast<double>(count_of((*r)["requests"], "total"));
    out[k] = total > 0 ? sum / static_cast<double>(total) : v.get<double>();
  }
  return out;
}

json runner_figures(const json& r) {
  return {{"shard", r["shard"]["slice"]},
          {"host", r["provenance"].value("host", json())},
          {"requests", r["requests"]},
          {"throughput_ok_per_s", r["throughput_ok_per_s"]},
          {"requests_not_sent", r.value("real", json::object()).value("requests_not_sent", json())},
          {"pool", r["pool"]},
          {"probe", r["probe"]}};
}

}  // namespace

json merge_runner_results(const std::vector<json>& results) {
  const std::vector<const json*> shards = checked_shards(results);
  json m = *shards[0];
  json requests = json::object();
  for (const char* k : {"total", "ok", "conflict", "pool_timeout", "rejected", "error"}) {
    std::int64_t sum = 0;
    for (const json* r : shards) sum += count_of((*r)["requests"], k);
    requests[k] = sum;
  }
  m["requests"] = requests;
  double duration = 0, offered = 0;
  std::int64_t probes = 0, probe_failures = 0, not_sent = 0;
  bool interrupted = false;
  json runners = json::array();
  for (const json* r : shards) {
    duration = std::max(duration, num(*r, "duration_s"));
    offered += num(*r, "offered_per_s");
    probes += count_of((*r)["probe"], "total");
    probe_failures += count_of((*r)["probe"], "failed");
    not_sent += count_of(r->value("real", json::object()), "requests_not_sent");
    interrupted = interrupted || r->value("interrupted", false);
    runners.push_back(runner_figures(*r));
  }
  m["duration_s"] = duration;
  m["offered_per_s"] = offered;
  m["throughput_ok_per_s"] = static_cast<double>(requests["ok"].get<std::int64_t>()) / std::max(duration, 1e-9);
  m["probe"] = {{"total", probes}, {"failed", probe_failures}};
  if (m.contains("real")) m["real"]["requests_not_sent"] = not_sent;
  m["interrupted"] = interrupted;
  m["complete"] = !interrupted && m["partner"].value("available", false);
  for (const char* which : {"all", "ok"}) m["latency_histogram_ms"][which] = added_histograms(shards, which);
  m["latency_ms"] = latency_from(m["latency_histogram_ms"]["all"], shards, "latency_ms", 1.0);
  m["latency_ok_ms"] = latency_from(m["latency_histogram_ms"]["ok"], shards, "latency_ok_ms", 1.0);
  m["time_split_ms"] = time_split(shards, requests["total"].get<std::int64_t>());
  m["timeline"] = added_timeline(shards);
  const double scale = num(m, "time_scale");
  if (m.contains("unscaled") && scale > 0) {
    m["unscaled"]["throughput_ok_per_s"] = m["throughput_ok_per_s"].get<double>() * scale;
    m["unscaled"]["latency_ms"] = latency_from(m["latency_histogram_ms"]["all"], shards, "latency_ms", 1 / scale);
    m["unscaled"]["latency_ok_ms"] = latency_from(m["latency_histogram_ms"]["ok"], shards, "latency_ok_ms", 1 / scale);
    m["unscaled"]["duration_s"] = duration / scale;
  }
  m["shard"] = {{"index", 0},
                {"count", 1},
                {"slice", "0/1"},
                {"merged_from", shards.size()},
                {"run", m["shard"]["run"]},
                {"start_unix_ms", m["shard"]["start_unix_ms"]},
                {"partner_read", true},
                {"not_ended", json::array()}};
  m["runners"] = runners;
  return m;
}

void apply_runner_shard(Settings& s, Shard shard, const std::string& wait_text) {
  if (!wait_text.empty()) s.shard_wait = parse_duration(wait_text, "--shard-wait");
  if (s.shard_wait <= Duration::zero()) throw SettingError("--shard-wait: must be above 0 (e.g. 60s)");
  if (s.world != "real" || s.targets.empty())
    throw SettingError("--shard: a real run's shards need --world real and --targets (the runners share the services "
                       "under test; with pods of its own every runner would bring its own pools)");
  if (s.strategy == "all") throw SettingError("--shard: give one --strategy (the runners share one run)");
  s.shard_index = static_cast<int>(shard.index);
  s.shard_count = static_cast<int>(shard.count);
}

bool are_runner_results(const std::vector<std::string>& inputs) {
  for (const auto& p : inputs) {
    std::error_code ec;
    if (fs::is_directory(p, ec) || fs::path(p).extension() != ".json") return false;
  }
  return !inputs.empty();
}

int cmd_merge_runners(const std::vector<std::string>& inputs, const std::string& out, const MergeOptions& options,
                      std::ostream& log) {
  std::vector<json> results;
  for (const auto& f : expand_result_paths(inputs)) {
    json doc = json::parse(read_file_capped(f, kResultFileBytesMax, "merge", "a result file"), nullptr, false);
    if (doc.is_discarded()) refuse_runners(f + " is not JSON");
    if (doc.is_array()) {  // run --json writes an array
      for (auto& r : doc) results.push_back(std::move(r));
    } else {
      results.push_back(std::move(doc));
    }
  }
  const json merged = merge_runner_results(results);
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec || !fs::is_directory(out)) throw SettingError("--out: cannot create directory " + out);
  report::ReportOptions ro;
  ro.title = options.title;
  ro.charts = options.charts;
  write_report_atomically({merged}, out, ro);
  write_file_atomically(fs::path(out) / "merged.json", merged.dump(2) + "\n");
  log << "merged " << results.size() << " runner(s) of run " << merged["run_id"].get<std::string>() << " into "
      << (fs::path(out) / "merged.json").string() << " with report.md, report.html, summary.csv\n";
  return 0;
}

}  // namespace lockbench::cli

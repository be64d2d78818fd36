// The committed form of a result (`lockbench compact`, results/ in the
// repository): everything the report's tables, summary.csv, compare and --fail-on
// read, without the bulk that only the charts and the sequence diagrams read.
//   - `trace` (every traced request's steps), `timeline` (the pool's samples
//     over time) and `latency_histogram_ms` (the buckets `merge` adds up for
//     the runners of one real run, which it reads from full results) are dropped;
//   - `partner.details` (the partner's examples of each violation) keeps its
//     first `details_max` (none: the committed reports list them); `partner.details_total` still counts them all;
//   - `provenance.created_at`, `provenance.git_commit` and `provenance.host`
//     are dropped: a refresh of results/ (scripts/demo --update-reference) with
//     unchanged figures changes no committed result;
//   - `detail` is set to "compact", so the result says what it lacks and a
//     second compaction changes nothing.
// A full result has no `detail` field (or "full"). The report reads compact
// results too: the pool timeline and the race's sequence diagram then say that
// no result holds them.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lockbench::report {

inline constexpr std::size_t kCompactDetailsMax = 0;

// True for a lockbench result object (its `schema` names lockbench.result).
bool is_result(const nlohmann::json& j);

// A sweep's manifest (lockbench.manifest) with its lockbench_version cut to the
// version, without the commit ("0.1.0 (abc1234)" -> "0.1.0"); compact_files
// writes it so.
nlohmann::json compact_manifest(nlohmann::json manifest);

// The compact form of one result; anything that is not a result is returned as is.
nlohmann::json compact_result(nlohmann::json result, std::size_t details_max = kCompactDetailsMax);

// A compact result as text: one line per top-level field ("key":value, the
// value on one line), so a diff shows which fields changed and the file stays small.
std::string compact_dump(const nlohmann::json& result);

// A result file's text (an object, or an array of results), compacted; other
// JSON is returned unchanged. Throws std::runtime_error when `text` is not JSON.
std::string compact_result_text(const std::string& text);

// `lockbench compact IN --out OUT`: every file under IN (a directory, walked
// recursively, or one file) is written to the same relative path under OUT:
// result JSON compacted, a sweep's manifest as compact_manifest, other files copied byte for byte. Files are planned
// first and each written atomically; returns how many result files were
// compacted. Throws SettingError-like std::invalid_argument naming IN or OUT
// on bad paths: OUT the same directory as IN (in place: every trace and
// timeline dropped for good) unless `in_place`, and a file under IN that is a
// symlink leading out of IN.
struct CompactPlan {
  std::filesystem::path from, to;
};
std::vector<CompactPlan> plan_compaction(const std::filesystem::path& in, const std::filesystem::path& out,
                                         bool in_place = false);

// Carries out the plan: reads every file first (a file that is not JSON but
// ends in .json is refused before anything is written), then writes each to a
// temporary name and renames it. Returns the number of result files compacted.
std::size_t compact_files(const std::vector<CompactPlan>& plan);

}  // namespace lockbench::report

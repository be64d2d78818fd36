// Sharded sweeps and the manifest of a results directory.
//
// A sweep's run plan (every point of its grid, repetitions included: the plan
// is the expanded list of runs) is cut into N slices of about equal cost. A
// run's cost is estimated from its settings (the simulator's work grows with
// the requests it simulates; a real run takes its duration); runs are dealt,
// dearest first (equal costs in plan order), each to the shard with the least
// cost so far, then the fewest runs; among shards still equal, each round of
// N runs starts one shard further along. So equal runs are spread like a Latin
// square: a stride (p % N) would hand every shard one strategy only when N
// divides the strategy axis. The slices depend on the plan
// alone: any process that builds the same plan gets the same slice, which is
// what a Kubernetes Indexed Job needs (the pod's JOB_COMPLETION_INDEX is I).
//
// Every results directory holds a manifest (`lockbench.manifest`, JSON; not
// *.json, so `report DIR` never takes it for a result): the command, the grid,
// the lockbench version, a hash of every planned run's settings, the file
// names of the whole plan and the positions this directory's shard holds. It
// is what tells sweeps apart: `--out` refuses a directory holding another
// sweep's results, `merge` checks that its shards make up one sweep, and
// `report` warns when it is given results of several sweeps.
#pragma once

#include <cstddef>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/settings.hpp"

namespace lockbench::cli {

struct Shard {
  std::size_t index = 0;  // 0 .. count - 1, as JOB_COMPLETION_INDEX counts
  std::size_t count = 1;
  bool sharded() const { return count > 1; }
  std::string text() const { return std::to_string(index) + "/" + std::to_string(count); }
};

// --shard I/N. Throws SettingError naming --shard and what is accepted.
Shard parse_shard(const std::string& text);
// --shards N without --shard: I from the environment's JOB_COMPLETION_INDEX
// (`index_text`, null when unset). Throws SettingError.
Shard shard_from_index(const std::string& count_text, const char* index_text);

// A run's estimated cost: expected requests in the simulator, duration in
// seconds in the real world (at least 1).
double run_cost(const Settings& s);
// The plan positions shard `s` runs, ascending, for runs of these costs.
std::vector<std::size_t> shard_slice(const std::vector<double>& costs, Shard s);
std::vector<std::size_t> shard_slice(const std::vector<Settings>& plan, Shard s);

// A run's settings as results store them: the strategy by its canonical
// name ("held-tx" is stored as "held-tx:wait"), so that a plan and the
// results it wrote compare equal.
nlohmann::json canonical_settings(const Settings& s);
nlohmann::json canonical_settings(nlohmann::json stored);

// "fnv1a64:<16 hex digits>" over the planned runs' canonical settings, in order.
std::string settings_hash(const std::vector<Settings>& planned);

inline constexpr const char* kManifestName = "lockbench.manifest";

// What a process writes into its --out directory before its first run.
// `grid`: what the command varies (sweep's --vary, or the strategies of run).
nlohmann::json make_manifest(const std::string& command, const nlohmann::json& grid,
                             const std::vector<Settings>& planned, const std::vector<std::string>& file_names,
                             Shard shard);
// The manifest in `dir`, or null when there is none. Throws SettingError for
// a manifest that is not one (bad JSON, wrong schema).
nlohmann::json read_manifest(const std::filesystem::path& dir);

// `lockbench merge DIR... --out OUT`: checks that DIRs are the shards of one
// sweep (same settings hash and version, each index once, none missing, each
// complete), then writes into OUT the result files, the manifest, and the
// report.md, report.html and summary.csv that the unsharded sweep followed by
// `report` would write. Throws SettingError with one line naming the shard.
struct MergeOptions {
  std::string title = "lockbench report";
  bool charts = true;
  bool force = false;
};
int cmd_merge(const std::vector<std::string>& dirs, const std::string& out, const MergeOptions& options,
              std::ostream& log);

// run --shard I/N (real, --targets): the slice and --shard-wait (empty: 60s)
// into `s`. Throws SettingError: a shard needs --world real, --targets and one
// strategy (the runners share the services under test; with pods of its own
// every runner would bring its own pools).
void apply_runner_shard(Settings& s, Shard shard, const std::string& wait_text);

// True when every input is a result file (*.json, not a directory): a real
// run's runners, for cmd_merge_runners; directories are a sweep's shards.
bool are_runner_results(const std::vector<std::string>& inputs);
// `lockbench merge RESULT... --out OUT` for the N results of one real run's
// runners (run --shard I/N): one result (cli/runner_merge.hpp) and its report.
int cmd_merge_runners(const std::vector<std::string>& inputs, const std::string& out, const MergeOptions& options,
                      std::ostream& log);

// `report`: one line per input directory holding results its manifest does
// not list, and one when the inputs come from several sweeps.
void warn_mixed_sweeps(const std::vector<std::string>& inputs, std::ostream& err);

}  // namespace lockbench::cli

// The result contract (docs/reference/result.md, docs/result.schema.json): one JSON object per run, the same from both worlds.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/metrics.hpp"
#include "core/settings.hpp"

namespace lockbench {

inline constexpr const char* kResultSchema = "lockbench.result/1";

struct RunSummary {
  const Settings* settings = nullptr;  // as the user configured them (before time scaling)
  std::string world;
  std::string strategy;  // spec, e.g. "advisory-xact:try"
  bool holds_connection = false;
  int partner_calls = 0;  // partner calls in the critical section
  const Recorder* recorder = nullptr;
  const PoolStats* pool = nullptr;
  const ProbeStats* probe = nullptr;
  // {calls, violations{kind: n}, max_inflight_per_person, details: [{kind, subject, detail, request_ids}]}
  nlohmann::json partner = nlohmann::json::object();
  // World-specific blocks merged into the result (sim{events, wall_ms}, faults{...}).
  nlohmann::json extra = nlohmann::json::object();
  // Versions of the systems under test, when the world knows them ("" = not
  // known: written as null). The real world can ask PostgreSQL
  // (SHOW server_version) and the partner; the simulator models both.
  std::string postgresql_version;
  std::string partner_version;
  std::string run_id;        // real world: unique per run (new_run_id), names its sessions; sim: empty (null)
  bool interrupted = false;  // stopped by SIGINT/SIGTERM: what was measured until then
  // The result's `settings` block: settings_json(*settings) (settings/table.hpp),
  // given by the world's runner, which sits above the settings table.
  nlohmann::json settings_json = nlohmann::json::object();
};

// The result. `complete` is false when the run was interrupted or the
// partner's checks were unavailable (partner.available = false: every
// violation count is null and partner.verdict is "unavailable").
nlohmann::json make_result(const RunSummary& run);

// The result's `faults` block as both worlds write it (docs/result.schema.json
// "faults"): the faults configured (crash_at_s, pause_at_s: null when none;
// pause_for_s, clock_skew_ms) and what a crash left behind: recovery_ms (how
// long the crashed requests' keys stayed blocked; null when no crash struck or
// it was not measured), crashed_requests, keys_held_at_crash. The real world
// adds its runner's measurements (`crash`, `pause`, `skew_pod`; real/faults.hpp).
nlohmann::json faults_block(const Settings& s, nlohmann::json recovery_ms, std::int64_t crashed_requests,
                            std::int64_t keys_held_at_crash);

// Where a result came from: {lockbench_version, git_commit (at configure
// time; "unknown" outside a git checkout), created_at (UTC, ISO 8601), host,
// cores, postgresql_version, partner_version (null when unknown)}.
nlohmann::json provenance(const RunSummary& run);
// "0.1.0 (abc1234)": the version and the commit it was built from (--version).
std::string lockbench_version();
// A run id unique on this machine: process id, start time and a counter, e.g.
// "3f2a-1c9e4b7-1" (hex; no characters special to SQL LIKE).
std::string new_run_id();

// Erlang C: probability that an arrival waits in an M/M/c queue with offered
// load a = lambda / mu (in servers), and the mean wait lambda, mu, c give.
double erlang_c(int servers, double offered_erlangs);
// Mean wait in queue (seconds) for M/M/c; infinity when lambda >= c mu.
double erlang_c_wait_s(int servers, double lambda_per_s, double mean_service_s);

// The violation kinds every result lists (0 included), in report order.
const std::vector<std::string>& violation_kinds();

}  // namespace lockbench

// The simulator's runner: one run in, one result out (implemented in run_sim.cpp).
#pragma once

#include <cstdint>
#include <functional>

#include <nlohmann/json.hpp>

#include "core/run.hpp"
#include "core/settings.hpp"

namespace lockbench {

// `s.strategy` is one spec (not "all"). Returns a result of the contract
// (core/result.hpp); throws SettingError for a bad setting, before any output.
nlohmann::json run_sim(const Settings& s, const RunHooks& hooks = {});

// What a simulated run has counted so far: counts that only grow, so a target
// they break stays broken whatever the rest of the run does.
struct SimCounts {
  Duration at{};  // virtual time
  std::int64_t done = 0;
  std::int64_t pool_timeouts = 0;
  std::int64_t rejected = 0;
  std::int64_t conflicts = 0;
  std::int64_t errors = 0;
  std::int64_t probe_failures = 0;
  std::int64_t lease_steals = 0;
};
// True: the run's verdict is known already (a confirmation that has broken a target).
using SettledFn = std::function<bool(const SimCounts&)>;

// A run that stops as soon as `settled` says so, asked at every event batch (as
// should_stop is): requests in flight end as errors, and the result says
// "stopped_early": {"at_s": virtual time}, "complete": false. Without a stop,
// the result is run_sim's, byte for byte.
nlohmann::json run_sim_until(const Settings& s, const SettledFn& settled);

}  // namespace lockbench

// The simulator's runner: one run in, one result out (implemented in run_sim.cpp).
#pragma once

#include <nlohmann/json.hpp>

#include "core/run.hpp"
#include "core/settings.hpp"

namespace lockbench {

// `s.strategy` is one spec (not "all"). Returns a result of the contract
// (core/result.hpp); throws SettingError for a bad setting, before any output.
nlohmann::json run_sim(const Settings& s, const RunHooks& hooks = {});

}  // namespace lockbench

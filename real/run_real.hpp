// The real world's runner: one run in, one result out (implemented in real_run.cpp).
#pragma once

#include <nlohmann/json.hpp>

#include "core/run.hpp"
#include "core/settings.hpp"

namespace lockbench {

// `s.strategy` is one spec (not "all"). Returns a result of the contract
// (core/result.hpp); throws SettingError for a bad setting or an unreachable
// server, before any output. A partner lost mid-run still gives a result, its
// verdict "unavailable".
nlohmann::json run_real(const Settings& s, const RunHooks& hooks = {});

}  // namespace lockbench

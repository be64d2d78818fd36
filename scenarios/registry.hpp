// The one list of scenarios. A new scenario is one file plus one row in
// registry.cpp; the runner, explain and the strategies' applicability read it.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "core/scenario.hpp"

namespace lockbench {

struct ScenarioInfo {
  std::string_view name;
  std::string_view summary;  // one line
  // The record the lock protects exists before the first request (false: a
  // lock on its row finds nothing, and a lease has no row to live in).
  bool lock_row_exists = true;
  // Its partner calls take an Idempotency-Key (the payments API does; the identity API does not).
  bool takes_idempotency_key = false;
  std::unique_ptr<Scenario> (*make)();
  // A paragraph for `lockbench explain SCENARIO`: what it reproduces, what shows it.
  std::string_view story = {};
  // The service's own path for one request, "{key}" where the key goes
  // (`lockbench serve` answers it beside /ops/NAME/KEY); empty = only /ops.
  std::string_view route = {};
};
const std::vector<ScenarioInfo>& scenario_registry();
const ScenarioInfo& scenario_info(std::string_view name);  // throws SettingError naming --scenario
std::unique_ptr<Scenario> make_scenario(std::string_view name);

}  // namespace lockbench

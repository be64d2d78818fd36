// run_sim: the simulator's entry point for the CLI (core/run.hpp).
#include "core/run.hpp"

#include "sim/sim_world.hpp"
#include "strategies/registry.hpp"

namespace lockbench {

nlohmann::json run_sim(const Settings& settings, const RunHooks& hooks) {
  settings.validate();
  Settings s = settings;
  s.world = "sim";  // virtual time: time_scale does not apply
  check_applies(strategy_info(s.strategy), s.scenario);
  auto strategy = make_strategy(s.strategy);
  auto scenario = make_scenario(s.scenario);
  sim::SimWorld world(s, *strategy, *scenario);
  world.run(hooks);
  return world.result();
}

}  // namespace lockbench

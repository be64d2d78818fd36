// run_sim: the simulator's entry point for the CLI (sim/run_sim.hpp). A stop
// (hooks.should_stop) ends the event loop at its next batch; requests still in
// flight then end as errors and the result is marked interrupted. run_sim_until
// stops the same way when its verdict is settled.
#include "sim/run_sim.hpp"

#include "settings/table.hpp"
#include "sim/sim_world.hpp"
#include "strategies/registry.hpp"

namespace lockbench {

namespace {

nlohmann::json run_one(const Settings& settings, const RunHooks& hooks, const SettledFn& settled) {
  validate_settings(settings);
  Settings s = settings;
  s.world = "sim";  // virtual time: time_scale does not apply
  check_applies(strategy_info(s.strategy), s.scenario);
  check_virtual_threads(s);
  auto strategy = make_strategy(s.strategy);
  auto scenario = make_scenario(s.scenario);
  sim::SimWorld world(s, *strategy, *scenario);
  // The loop asks only while it has more to do: a "stop" answered there is an interruption.
  bool stopped = false;
  RunHooks h = hooks;
  if (hooks.should_stop)
    h.should_stop = [&] {
      stopped = stopped || hooks.should_stop();
      return stopped;
    };
  world.run(h, settled);
  nlohmann::json r = world.result();
  if (stopped) {
    r["interrupted"] = true;
    r["complete"] = false;
  }
  if (const auto at = world.stopped_early()) {
    r["stopped_early"] = {{"at_s", to_s(*at)}};
    r["complete"] = false;
  }
  return r;
}

}  // namespace

nlohmann::json run_sim(const Settings& settings, const RunHooks& hooks) { return run_one(settings, hooks, {}); }

nlohmann::json run_sim_until(const Settings& settings, const SettledFn& settled) {
  return run_one(settings, {}, settled);
}

}  // namespace lockbench

// The one list of strategies. A new strategy is one file (strategies/family.hpp:
// its row, registered there); the runner, results, report, lint and explain read it.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/strategy.hpp"
#include "scenarios/registry.hpp"

namespace lockbench {

struct StrategyInfo {
  std::string_view spec;     // "name" or "name:variant", as --strategy takes it
  std::string_view family;   // "row-lease": what explain groups under one heading
  bool in_all = false;       // run by --strategy all (one variant per family, teaching order)
  bool family_default = false;  // what the bare family name means
  StrategyProps props;
  std::string_view teaches;  // one line: the table in docs/reference/strategies.md and the report
  std::unique_ptr<Strategy> (*make)();
};

std::span<const StrategyInfo> strategy_registry();
// The row for a spec ("row-lease" gives its default variant's row). Throws
// SettingError naming --strategy and the accepted specs.
const StrategyInfo& strategy_info(std::string_view spec);
// Throws SettingError (one line naming both) when the strategy cannot run on
// the scenario: a lease on a record that does not exist yet, an idempotency key
// the partner's API does not take.
void check_applies(const StrategyInfo& strategy, std::string_view scenario);
// Throws SettingError (one line) when --virtual-threads cannot be given: to
// --targets (pods this run does not start), or with a --jdk before virtual
// threads (21). Every strategy runs on them in both worlds; one that holds a
// monitor through the call pins carriers below JDK 24 (sim/pod.cpp, real/carriers.hpp).
void check_virtual_threads(const Settings& s);
// Whether this run's virtual threads pin their carriers: --virtual-threads on a
// JDK below 24 (or not known: every release with virtual threads before 24
// pins; JEP 491 ends it) and a strategy that holds a monitor through the call.
bool pins_carriers(const Settings& s, const StrategyProps& p);
// strategy_info(spec), once check_applies has accepted it on the scenario.
const StrategyInfo& applying_strategy(std::string_view spec, std::string_view scenario);
// The strategy, wrapped in the traffic beside its lock (side_traffic.hpp):
// what every world runs. (StrategyInfo::make alone gives the bare strategy.)
std::unique_ptr<Strategy> make_strategy(std::string_view spec);
// What --strategy all runs, in teaching order.
std::vector<std::string> all_strategies();
// Every accepted spec (families and family:variant).
std::vector<std::string> strategy_specs();
// The result's strategy_info object: the registry row's properties.
nlohmann::json strategy_info_json(const StrategyInfo& info);

std::string_view exclusion_name(Exclusion e);  // "none", "one-pod", "all-pods"
std::string_view lease_store_name(LeaseStoreKind k);  // "redis", "etcd"

// Runs one request through a strategy: the edge where database failures become
// Outcome::error. Records the outcome as the request's last trace event.
Task<Outcome> serve(RequestCtx& cx, Strategy& st, Scenario& sc);
// The end of serve(): the request's outcome as its last trace event; `error`
// is what escaped the strategy ("" when nothing did). Also for a world whose
// own root coroutine does serve's work around Strategy::run (the simulator:
// one coroutine frame fewer per request).
void trace_outcome(RequestCtx& cx, Duration start, Outcome o, const std::string& error);

}  // namespace lockbench

// The strategy interface: how exclusion and transaction boundaries are arranged
// around a scenario's critical section. Each strategy is one short file in
// strategies/, written once as a coroutine over the World interface.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/context.hpp"
#include "core/metrics.hpp"
#include "core/scenario.hpp"

namespace lockbench {

class Strategy {
 public:
  virtual ~Strategy() = default;
  // "name:variant", e.g. "advisory-xact:try".
  virtual std::string spec() const = 0;
  // Does it keep a pooled connection through the partner calls? (Little's law applies.)
  virtual bool holds_connection_during_call() const = 0;
  virtual Task<Outcome> run(RequestCtx& cx, Scenario& sc) = 0;
};

// "row-lease", "advisory-xact:wait", ... Throws SettingError naming --strategy
// and the accepted names for anything unknown.
std::unique_ptr<Strategy> make_strategy(std::string_view spec);
// The default spec of each strategy, in teaching order: what --strategy all runs.
std::vector<std::string> all_strategies();
// Every accepted spec (names and name:variant).
std::vector<std::string> strategy_specs();

// Runs one request through a strategy: the edge where database failures become
// Outcome::error. Records the outcome as the request's last trace event.
Task<Outcome> serve(RequestCtx& cx, Strategy& st, Scenario& sc);

}  // namespace lockbench

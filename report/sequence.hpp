// Mermaid sequence diagrams drawn from a result's captured `trace`: what the
// requests, the pool and the partner did, in the order it happened.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace lockbench::report {

// The double-link race of trace.race: the two interleaved requests (named by
// their ids), their partner calls and DB steps with times since the run's
// start. nullopt when the result captured no race.
std::optional<std::string> race_diagram(const nlohmann::json& result);

// Pool exhaustion: the requests that held every connection while they waited
// on the partner, and one request that timed out waiting for a connection.
// nullopt when the trace holds no pool_timeout outcome.
std::optional<std::string> pool_exhaustion_diagram(const nlohmann::json& result);

}  // namespace lockbench::report

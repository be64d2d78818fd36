// Sequence diagrams drawn from a result's captured `trace`: what the
// requests, the pool and the partner did, in the order it happened. One model
// per diagram, written two ways: Mermaid text for report.md (GitHub draws it)
// and SVG for report.html (drawn here: no script, no network).
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

// The same two diagrams as standalone <svg> elements; `id` prefixes every id
// inside (the arrow marker), so several can share one page.
std::optional<std::string> race_diagram_svg(const nlohmann::json& result, const std::string& id = "race-seq");
std::optional<std::string> pool_exhaustion_diagram_svg(const nlohmann::json& result,
                                                       const std::string& id = "pool-seq");

}  // namespace lockbench::report

// What sim_test's sources read of a simulator result. One header, not a helper
// per source: a unity build compiles several of them as one unit.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

namespace lockbench {

// A kind the partner counted; a kind it never met reads 0.
inline std::int64_t violation_count(const nlohmann::json& r, const char* kind) {
  return r["partner"]["violations"].value(kind, 0);
}

// One of the result's lock counters (core/result.cpp writes every one): a
// missing one throws, so a renamed counter fails its test rather than reading 0.
inline std::int64_t lock_count(const nlohmann::json& r, const char* what) {
  return r.at("locks").at(what).get<std::int64_t>();
}

}  // namespace lockbench

// A strategy's registry row, declared in its own file next to its class: its
// variants (StrategyInfo: spec, properties, maker), the words explain prints,
// and what lint knows. LOCKBENCH_STRATEGY registers it; nothing else names the
// file (strategies/CMakeLists.txt takes the folder and links it in whole).
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "strategies/registry.hpp"

namespace lockbench {

// What `lockbench explain FAMILY` prints about a family, around its variants and
// properties (report/explain.cpp lays it out): plain prose, wrapped at print.
struct StrategyWords {
  std::string_view summary;  // one line for explain's list
  std::string_view how;      // "How it works"
  std::string_view fails;    // "How it fails"
  std::string_view choose;   // "Choose it"
  std::string_view avoid;    // "Do not choose it"
  std::string_view java;     // "In Spring/Java": the shape a reviewer meets, printed as written (lines under 100 columns)
};

// What `lockbench lint` knows of a family beyond its variants' StrategyProps
// (which say what it holds, excludes, leases and pins).
struct StrategyLintFacts {
  // Its transaction takes the connection when it starts, so work before the
  // first SQL (--pre-sql-work) is held time unless --delay-connection-acquisition
  // (lint's acquisition check models it).
  bool holds_pre_sql_work = false;
};

// A strategy's registry row, declared in its own file next to its class.
struct StrategyFamily {
  std::string_view name;  // the family: "row-lease"
  int order = 0;          // teaching order (ascending, unique): --strategy all, explain's list, --help
  StrategyWords words;
  StrategyLintFacts lint = {};
  std::span<const StrategyInfo> variants;  // its --strategy specs, in the order explain lists them
};

// Adds a family to the registry, at static initialization (LOCKBENCH_STRATEGY);
// the registry is read after that. Returns true.
bool register_strategy_family(const StrategyFamily& family);
// In a strategy's file, after its constexpr StrategyFamily: registers it.
// Nothing needs to name the file: strategies/CMakeLists.txt links the whole folder in.
#define LOCKBENCH_STRATEGY(family) \
  [[maybe_unused]] static const bool lockbench_registered_##family = ::lockbench::register_strategy_family(family)

// StrategyInfo::make for a strategy constructed from constants: strategy_maker<RowLease, RowLease::Variant::fenced>.
template <class S, auto... args>
std::unique_ptr<Strategy> strategy_maker() {
  return std::make_unique<S>(args...);
}

// The families, in teaching order.
std::span<const StrategyFamily* const> strategy_families();
// The family's row; throws std::logic_error for a name no file registered.
const StrategyFamily& strategy_family(std::string_view name);

}  // namespace lockbench

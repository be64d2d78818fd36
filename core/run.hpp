// What each world exposes to the CLI: one run in, one result out.
#pragma once

#include <cstdint>
#include <functional>

#include <nlohmann/json.hpp>

#include "core/settings.hpp"

namespace lockbench {

struct RunHooks {
  // Called now and then during a run (a few times per second of wall time at
  // most): requests finished so far, how many of them were ok, and the world's
  // clock since the run began (virtual time in the simulator).
  std::function<void(std::int64_t done, std::int64_t ok, Duration at)> progress;
  // Polled often (at least every ~50 ms of wall time in the real world, every
  // event batch in the simulator): true = stop (SIGINT/SIGTERM). The world then
  // takes no new requests, lets those in flight finish within a bounded grace
  // period, releases what the run holds and returns a result marked
  // "interrupted": true, "complete": false with what was measured.
  std::function<bool()> should_stop;
};

// Both are implemented by their worlds (real/, sim/). `s.strategy` is one spec
// (not "all"). They return a result of the contract (core/result.hpp) and throw
// SettingError for a bad setting or an unreachable server, before any output.
// A partner lost mid-run still gives a result, its verdict "unavailable".
nlohmann::json run_real(const Settings& s, const RunHooks& hooks = {});
nlohmann::json run_sim(const Settings& s, const RunHooks& hooks = {});

}  // namespace lockbench

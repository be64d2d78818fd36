// What both worlds' runners take besides the settings: progress and a stop.
// Each world declares its runner in a header of its own: run_sim in
// sim/run_sim.hpp, run_real in real/run_real.hpp (one run in, one result out).
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

}  // namespace lockbench

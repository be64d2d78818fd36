// LOCKBENCH_ASSERT(cond, what): an invariant of the model, checked in every
// build (release and tests alike; NDEBUG does not turn it off). When cond is
// false it prints "lockbench: invariant broken at FILE:LINE: WHAT (COND)" on
// stderr and aborts: a broken invariant is a bug in lockbench, not an outcome,
// so it must stop the run where it happened rather than become a result (a
// thrown error would be caught at the world's edge and counted as a request's
// `error`). Tests prove each one fires with EXPECT_DEATH (base/assert_test.cpp,
// sim/event_loop_test.cpp, sim/sim_world_test.cpp); the rest of the suite proves
// the model never trips them.
//
// `what` is any expression convertible to std::string_view; it is evaluated
// only on failure. Keep cond cheap: it runs on hot paths of the simulator.
#pragma once

#include <string_view>

namespace lockbench {

[[noreturn]] void assertion_failed(const char* file, int line, const char* cond, std::string_view what) noexcept;

}  // namespace lockbench

#define LOCKBENCH_ASSERT(cond, what)                                                    \
  do {                                                                                  \
    if (!(cond)) [[unlikely]]                                                           \
      ::lockbench::assertion_failed(__FILE__, __LINE__, #cond, std::string_view(what)); \
  } while (false)

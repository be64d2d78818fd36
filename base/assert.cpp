#include "base/assert.hpp"

#include <cstdio>
#include <cstdlib>

namespace lockbench {

void assertion_failed(const char* file, int line, const char* cond, std::string_view what) noexcept {
  std::fprintf(stderr, "lockbench: invariant broken at %s:%d: %.*s (%s)\n", file, line, static_cast<int>(what.size()),
               what.data(), cond);
  std::fflush(stderr);
  std::abort();
}

}  // namespace lockbench

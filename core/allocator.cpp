#include "core/allocator.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace lockbench {

bool keep_freed_memory() {
#if defined(__GLIBC__)
  // Setting M_MMAP_THRESHOLD also stops glibc from moving both thresholds by
  // itself, so the trim threshold set after it stays.
  return mallopt(M_MMAP_THRESHOLD, static_cast<int>(kMmapThreshold)) == 1 &&
         mallopt(M_TRIM_THRESHOLD, static_cast<int>(kTrimThreshold)) == 1;
#else
  return false;
#endif
}

}  // namespace lockbench

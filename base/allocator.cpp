#include "base/allocator.hpp"

#include <cstdint>
#include <cstdlib>

#include <dlfcn.h>

#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#include <malloc.h>
#endif
#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace lockbench {

namespace {
// jemalloc's control interface, found by name: the library that calls this is
// linked without jemalloc (tests keep glibc's malloc), the executables with it.
using Mallctl = int (*)(const char*, void*, std::size_t*, void*, std::size_t);
Mallctl mallctl_fn() {
#if defined(__EMSCRIPTEN__)  // the playground's WebAssembly: no dynamic linking (dlsym aborts), no jemalloc
  return nullptr;
#else
  static const auto fn = reinterpret_cast<Mallctl>(dlsym(RTLD_DEFAULT, "mallctl"));
  return fn;
#endif
}
}  // namespace

bool jemalloc_active() { return mallctl_fn() != nullptr; }

std::string allocator_name() {
  if (const Mallctl ctl = mallctl_fn()) {
    const char* version = nullptr;
    std::size_t len = sizeof version;
    if (ctl("version", &version, &len, nullptr, 0) == 0 && version != nullptr) return std::string("jemalloc ") + version;
    return "jemalloc";
  }
#if defined(__GLIBC__)
  return std::string("glibc ") + gnu_get_libc_version();
#elif defined(__EMSCRIPTEN__)
  return "emscripten dlmalloc";
#else
  return "unknown";
#endif
}

bool keep_freed_memory() {
  if (jemalloc_active()) return true;  // core/jemalloc_conf.cpp's settings keep it
#if defined(__GLIBC__)
  // Setting M_MMAP_THRESHOLD also stops glibc from moving both thresholds by
  // itself, so the trim threshold set after it stays.
  if (mallopt(M_MMAP_THRESHOLD, static_cast<int>(kMmapThreshold)) != 1 ||
      mallopt(M_TRIM_THRESHOLD, static_cast<int>(kTrimThreshold)) != 1)
    return false;
  use_huge_pages();  // a bonus: without it the process is only slower
  return true;
#else
  return false;
#endif
}

bool use_huge_pages() {
  if (jemalloc_active()) return false;  // glibc's arenas only
#if defined(__GLIBC__) && defined(__linux__) && defined(MADV_HUGEPAGE)
  // A block below the mmap threshold is carved from the heap's top, which
  // grows to hold it; nothing of it is touched. Freed, it becomes the free top
  // again (the trim threshold keeps it), and the next allocations are carved
  // from the marked pages.
  const std::size_t mmapped = mallinfo2().hblks;
  void* const block = std::malloc(kHugeHeapBytes);
  if (block == nullptr) return false;
  bool marked = false;
  if (mallinfo2().hblks == mmapped) {  // from the heap, not mmap'd (keep_freed_memory not called)
    constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
    const auto at = reinterpret_cast<std::uintptr_t>(block);
    const std::uintptr_t from = (at + kHuge - 1) & ~(kHuge - 1);
    const std::uintptr_t to = (at + kHugeHeapBytes) & ~(kHuge - 1);
    marked = to > from && madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE) == 0;
  }
  std::free(block);
  return marked;
#else
  return false;
#endif
}

}  // namespace lockbench

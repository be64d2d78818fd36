// core_jemalloc_test links what lockbench and sim_bench link for their
// allocator (lockbench_malloc): jemalloc serves malloc, with the settings of
// core/jemalloc_conf.cpp.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/types.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "base/allocator.hpp"

namespace lockbench {
namespace {

using Mallctl = int (*)(const char*, void*, std::size_t*, void*, std::size_t);

Mallctl mallctl() { return reinterpret_cast<Mallctl>(dlsym(RTLD_DEFAULT, "mallctl")); }

template <class T>
T read_ctl(const char* name) {
  T v{};
  std::size_t len = sizeof v;
  EXPECT_EQ(mallctl()(name, &v, &len, nullptr, 0), 0) << name;
  return v;
}

TEST(Jemalloc, ServesMallocAndSaysSo) {
  ASSERT_TRUE(jemalloc_active());
  EXPECT_EQ(allocator_name().rfind("jemalloc 5.", 0), 0u) << allocator_name();
  // jemalloc counts what this thread allocates: a malloc shows in its count.
  const auto before = read_ctl<std::uint64_t>("thread.allocated");
  void* volatile q = std::malloc(1000);  // volatile: the pair may not be elided
  EXPECT_GE(read_ctl<std::uint64_t>("thread.allocated"), before + 1000) << "malloc did not go through jemalloc";
  std::free(q);
}

// The settings of core/jemalloc_conf.cpp took effect: freed pages are never
// purged, so the next run reuses them (what keep_freed_memory asks of glibc),
// and memory is marked for huge pages (what use_huge_pages does for glibc).
TEST(Jemalloc, KeepsFreedPagesForTheNextRunAndAsksForHugePages) {
  if (const char* env = std::getenv("MALLOC_CONF"); env != nullptr && *env != '\0')
    GTEST_SKIP() << "MALLOC_CONF overrides the compiled-in settings: " << env;
  EXPECT_EQ(read_ctl<ssize_t>("opt.dirty_decay_ms"), -1);
  EXPECT_EQ(read_ctl<ssize_t>("opt.muzzy_decay_ms"), -1);
  EXPECT_STREQ(read_ctl<const char*>("opt.thp"), "always");  // a first run faults in 2 MB at a time
  // glibc's knobs are left alone: nothing to set, nothing to mark.
  EXPECT_TRUE(keep_freed_memory());
  EXPECT_FALSE(use_huge_pages());
}

}  // namespace
}  // namespace lockbench

#include "base/allocator.hpp"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace lockbench {
namespace {

// What a run's large vectors (latency samples, the sort's buffers) get: with
// glibc's defaults an 8 MB block is mmap'd and unmapped again on free, so the
// next run faults its pages in anew.
TEST(Allocator, KeepFreedMemoryServesLargeBlocksFromTheHeapAndKeepsThemAfterFree) {
  ASSERT_TRUE(keep_freed_memory());
  constexpr std::size_t kBlock = std::size_t{8} << 20;
  const struct mallinfo2 before = mallinfo2();
  void* volatile block = std::malloc(kBlock);  // volatile: the pair may not be elided
  ASSERT_NE(block, nullptr);
  std::memset(block, 1, kBlock);
  const struct mallinfo2 during = mallinfo2();
  EXPECT_EQ(during.hblks, before.hblks) << "the block was mmap'd, not taken from the heap";
  std::free(block);
  const struct mallinfo2 after = mallinfo2();
  EXPECT_EQ(after.arena, during.arena) << "the heap was trimmed: the freed block went back to the kernel";
  EXPECT_GE(after.fordblks, kBlock) << "the freed block is not kept as free heap";
}

// The kernel's account of the mapping holding `p`: its /proc/self/smaps block.
std::string smaps_entry_of(const void* p) {
  std::ifstream in("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  std::string line, entry;
  bool inside = false;
  while (std::getline(in, line)) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-' && line.find(':') > line.find(' ')) {
      if (inside) break;  // the next mapping's header
      inside = lo <= at && at < hi;
    }
    if (inside) entry += line + "\n";
  }
  return entry;
}

// A first run's heap faults in 2 MB at a time: the heap is marked for
// transparent huge pages, so the kernel calls it eligible (THPeligible: 1)
// when THP is on at all ("always" or "madvise").
TEST(Allocator, UseHugePagesMarksTheHeapTheNextBlocksComeFrom) {
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  std::getline(thp, mode);
  if (mode.empty() || mode.find("[never]") != std::string::npos) GTEST_SKIP() << "transparent huge pages are off here";
  ASSERT_TRUE(keep_freed_memory());
  ASSERT_TRUE(use_huge_pages());
  // A block as large as a run's sample vectors, from the marked part of the heap.
  constexpr std::size_t kBlock = std::size_t{8} << 20;
  void* volatile block = std::malloc(kBlock);
  ASSERT_NE(block, nullptr);
  const std::string entry = smaps_entry_of(static_cast<char*>(block) + kBlock / 2);
  std::free(block);
  ASSERT_FALSE(entry.empty()) << "no mapping holds the block";
  const auto field = entry.find("THPeligible:");
  ASSERT_NE(field, std::string::npos) << "this kernel's smaps has no THPeligible:\n" << entry;
  EXPECT_EQ(std::stoi(entry.substr(field + 12)), 1) << entry;
}

}  // namespace
}  // namespace lockbench

#include "core/allocator.hpp"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <cstring>

namespace lockbench {
namespace {

// What a run's large vectors (latency samples, the sort's buffers) get: with
// glibc's defaults an 8 MB block is mmap'd and unmapped again on free, so the
// next run faults its pages in anew.
TEST(Allocator, keep_freed_memory_serves_large_blocks_from_the_heap_and_keeps_them_after_free) {
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

}  // namespace
}  // namespace lockbench

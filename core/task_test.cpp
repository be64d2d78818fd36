#include <gtest/gtest.h>

#include <coroutine>
#include <stdexcept>
#include <vector>

#include "core/task.hpp"

using namespace lockbench;

namespace {
Task<int> answer() { co_return 42; }
Task<int> twice() { co_return co_await answer() * 2; }
Task<void> boom() {
  throw std::runtime_error("boom");
  co_return;
}
Task<int> deep(int n) {
  if (n == 0) co_return 0;
  co_return 1 + co_await deep(n - 1);
}

// A suspension point resumed later by hand, like the simulator's event loop.
struct Parked {
  std::vector<std::coroutine_handle<>>* q;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) { q->push_back(h); }
  void await_resume() const noexcept {}
};
Task<int> parked(std::vector<std::coroutine_handle<>>& q) {
  co_await Parked{&q};
  co_return 7;
}
}  // namespace

TEST(Task, SynchronousChainsRunToTheEnd) {
  EXPECT_EQ(run_sync(twice()), 84);
  EXPECT_EQ(run_sync(deep(100000)), 100000);  // symmetric transfer: no stack growth
}

TEST(Task, ExceptionsReachTheAwaiter) { EXPECT_THROW(run_sync(boom()), std::runtime_error); }

TEST(Task, SuspendedTasksFinishWhenResumed) {
  std::vector<std::coroutine_handle<>> q;
  int got = 0;
  spawn(parked(q), [&](std::optional<int> v, std::exception_ptr) { got = *v; });
  EXPECT_EQ(got, 0);
  ASSERT_EQ(q.size(), 1u);
  q.front().resume();
  EXPECT_EQ(got, 7);
}

TEST(FramePool, AFreedFrameIsReusedForTheNextOfItsSizeClass) {
  void* a = detail::FramePool::allocate(200);
  detail::FramePool::deallocate(a, 200);
  void* b = detail::FramePool::allocate(230);  // the same 64-byte class (193..256 bytes)
  EXPECT_EQ(a, b);
  void* c = detail::FramePool::allocate(1000);  // another class: not the frame in use
  EXPECT_NE(b, c);
  detail::FramePool::deallocate(b, 230);
  detail::FramePool::deallocate(c, 1000);
  void* big = detail::FramePool::allocate(std::size_t{1} << 20);  // beyond the classes: the global allocator
  detail::FramePool::deallocate(big, std::size_t{1} << 20);
}

TEST(FramePool, TasksStillRunAfterTheirFramesAreRecycled) {
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(run_sync(deep(i % 50)), i % 50);
}

#include <gtest/gtest.h>

#include <coroutine>
#include <exception>
#include <optional>
#include <stdexcept>
#include <utility>
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

// An awaiter for Task::from_awaiter: ready at once or parked in q; its answer
// is `value`, or it throws when `fail`.
struct Answer {
  std::vector<std::coroutine_handle<>>* q;  // null: ready at once
  int value;
  bool fail;
  bool await_ready() const noexcept { return q == nullptr; }
  void await_suspend(std::coroutine_handle<> h) { q->push_back(h); }
  int await_resume() const {
    if (fail) throw std::runtime_error("answer");
    return value;
  }
};
Task<int> plus_one(Task<int> t) { co_return 1 + co_await std::move(t); }
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

TEST(Task, FromAwaiterReadyAtOnceRunsWithoutSuspending) {
  EXPECT_EQ(run_sync(Task<int>::from_awaiter(Answer{nullptr, 5, false})), 5);
  EXPECT_EQ(run_sync(plus_one(Task<int>::from_awaiter(Answer{nullptr, 5, false}))), 6);
}

TEST(Task, FromAwaiterThatSuspendsFinishesWhenResumed) {
  std::vector<std::coroutine_handle<>> q;
  int got = 0;
  spawn(plus_one(Task<int>::from_awaiter(Answer{&q, 9, false})), [&](std::optional<int> v, std::exception_ptr) {
    got = *v;
  });
  EXPECT_EQ(got, 0);
  ASSERT_EQ(q.size(), 1u);
  q.front().resume();
  EXPECT_EQ(got, 10);
}

TEST(Task, FromAwaiterExceptionsReachTheAwaiter) {
  EXPECT_THROW(run_sync(plus_one(Task<int>::from_awaiter(Answer{nullptr, 0, true}))), std::runtime_error);
  std::vector<std::coroutine_handle<>> q;
  std::exception_ptr error;
  spawn(Task<int>::from_awaiter(Answer{&q, 0, true}), [&](std::optional<int>, std::exception_ptr e) { error = e; });
  ASSERT_EQ(q.size(), 1u);
  q.front().resume();
  EXPECT_THROW(std::rethrow_exception(error), std::runtime_error);
}

TEST(Task, FromAwaiterSurvivesMoves) {
  Task<int> a = Task<int>::from_awaiter(Answer{nullptr, 3, false});
  Task<int> b(std::move(a));  // move construction copies the awaiter
  Task<int> c;
  c = std::move(b);  // and so does move assignment
  EXPECT_EQ(run_sync(std::move(c)), 3);
  Task<int> d = answer();  // assigning over a coroutine Task frees its frame
  d = Task<int>::from_awaiter(Answer{nullptr, 4, false});
  EXPECT_EQ(run_sync(std::move(d)), 4);
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

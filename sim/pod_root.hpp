// A fire-and-forget coroutine whose handle its pod keeps in a slot while it
// runs (a request, a probe, a background worker, a renewal, a kubelet check),
// so a crash can stop resuming it and the run can destroy it at the end. It
// starts suspended (the pod resumes it once its slot holds it) and frees
// itself when done; its frame comes from the thread's FramePool.
#pragma once

#include <coroutine>
#include <cstddef>
#include <exception>

#include "core/task.hpp"

namespace lockbench::sim {

struct PodRoot {
  struct promise_type {
    static void* operator new(std::size_t n) { return detail::FramePool::allocate(n); }
    static void operator delete(void* p, std::size_t n) noexcept { detail::FramePool::deallocate(p, n); }
    PodRoot get_return_object() noexcept { return PodRoot{std::coroutine_handle<promise_type>::from_promise(*this)}; }
    std::suspend_always initial_suspend() noexcept { return {}; }
    std::suspend_never final_suspend() noexcept { return {}; }  // frees itself when done
    void return_void() noexcept {}
    void unhandled_exception() noexcept { std::terminate(); }  // each body turns its errors into outcomes
  };
  std::coroutine_handle<promise_type> handle;
};

}  // namespace lockbench::sim

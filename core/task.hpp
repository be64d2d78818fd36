// Task<T>: the lazy coroutine type every strategy, scenario and world operation returns.
//
// A Task starts when awaited and resumes its awaiter when it finishes (symmetric
// transfer, so deep chains of synchronous completions do not grow the stack).
// In the real world every operation completes synchronously, so awaiting a Task
// simply runs it to the end; in the simulator an operation suspends on the
// event loop and the whole chain resumes when the loop fires the event.
// Exceptions thrown inside a Task propagate to its awaiter.
//
// Coroutine frames come from FramePool: a request in the simulator creates a
// dozen frames (serve, strategy, scenario steps, statements, partner calls),
// so a per-thread free list per size class replaces a malloc/free pair per
// frame (issue 14). Frames are never shared between threads while alive; a
// frame freed on another thread simply joins that thread's list.
//
// An operation that suspends at most once and keeps a few words of state (the
// simulator's pool borrow, partner attempt, SELECT) needs no frame at all:
// Task<T>::from_awaiter wraps such an awaiter, kept inside the Task object
// (which lives in the awaiting coroutine's frame while it waits), and the Task
// then forwards await_ready / await_suspend / await_resume to it. The caller
// cannot tell the two kinds apart.
#pragma once

#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <functional>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

namespace lockbench {

template <class T = void>
class Task;

namespace detail {

// Per-thread free lists of coroutine frames by size class (64-byte steps up to
// 8 KiB; bigger frames go to the global allocator). Bounded: at most
// kKeptBytesMax bytes are kept per thread, the rest is given back at once.
class FramePool {
 public:
  static void* allocate(std::size_t n) {
    const std::size_t c = size_class(n);
    if (c >= kClasses) return ::operator new(n);
    Lists& l = lists();
    if (Node* node = l.head[c]) {
      l.head[c] = node->next;
      l.kept_bytes -= (c + 1) * kStep;
      return node;
    }
    return ::operator new((c + 1) * kStep);
  }
  static void deallocate(void* p, std::size_t n) noexcept {
    const std::size_t c = size_class(n);
    if (c >= kClasses) return ::operator delete(p);
    Lists& l = lists();
    const std::size_t bytes = (c + 1) * kStep;
    if (l.kept_bytes + bytes > kKeptBytesMax) return ::operator delete(p);
    l.head[c] = new (p) Node{l.head[c]};
    l.kept_bytes += bytes;
  }

 private:
  static constexpr std::size_t kStep = 64;
  static constexpr std::size_t kClasses = 128;  // frames up to 8 KiB
  static constexpr std::size_t kKeptBytesMax = std::size_t{16} << 20;
  struct Node {
    Node* next;
  };
  struct Lists {
    Node* head[kClasses] = {};
    std::size_t kept_bytes = 0;
    ~Lists() {
      for (Node*& h : head)
        while (h) ::operator delete(std::exchange(h, h->next));
    }
  };
  static std::size_t size_class(std::size_t n) { return n == 0 ? 0 : (n - 1) / kStep; }
  static Lists& lists() {
    thread_local Lists l;
    return l;
  }
};

struct PromiseBase {
  static void* operator new(std::size_t n) { return FramePool::allocate(n); }
  static void operator delete(void* p, std::size_t n) noexcept { FramePool::deallocate(p, n); }

  std::coroutine_handle<> continuation = std::noop_coroutine();
  std::exception_ptr error;

  std::suspend_always initial_suspend() noexcept { return {}; }
  struct FinalAwaiter {
    bool await_ready() noexcept { return false; }
    template <class P>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) noexcept {
      return h.promise().continuation;
    }
    void await_resume() noexcept {}
  };
  FinalAwaiter final_suspend() noexcept { return {}; }
  void unhandled_exception() noexcept { error = std::current_exception(); }
};

template <class T>
struct Promise : PromiseBase {
  std::optional<T> value;
  Task<T> get_return_object() noexcept;
  template <class U>
    requires std::is_convertible_v<U&&, T>
  void return_value(U&& v) {
    value.emplace(std::forward<U>(v));
  }
  T take() {
    if (error) std::rethrow_exception(error);
    return std::move(*value);
  }
};

template <>
struct Promise<void> : PromiseBase {
  Task<void> get_return_object() noexcept;
  void return_void() noexcept {}
  void take() {
    if (error) std::rethrow_exception(error);
  }
};

// How a Task runs the awaiter it holds in place of a coroutine (Task::from_awaiter).
constexpr std::size_t kInlineAwaiterBytes = 48;
template <class T>
struct InlineAwaiterOps {
  bool (*ready)(void*);
  void (*suspend)(void*, std::coroutine_handle<>);
  T (*resume)(void*);
};
template <class T, class A>
inline constexpr InlineAwaiterOps<T> kInlineAwaiterOps = {
    [](void* a) -> bool { return static_cast<A*>(a)->await_ready(); },
    [](void* a, std::coroutine_handle<> h) { static_cast<A*>(a)->await_suspend(h); },
    [](void* a) -> T { return static_cast<A*>(a)->await_resume(); },
};

}  // namespace detail

template <class T>
class [[nodiscard]] Task {
 public:
  using promise_type = detail::Promise<T>;
  using Handle = std::coroutine_handle<promise_type>;

  Task() = default;
  explicit Task(Handle h) : h_(h) {}
  // A Task without a coroutine frame: awaiting it awaits `a` (see the top of
  // this file). `a` is copied bytewise while the Task moves, so it must be
  // trivially copyable, and small; its await_suspend returns void.
  template <class A>
  static Task from_awaiter(const A& a) {
    static_assert(std::is_trivially_copyable_v<A> && sizeof(A) <= detail::kInlineAwaiterBytes &&
                  alignof(A) <= alignof(std::uint64_t));
    Task t;
    ::new (static_cast<void*>(t.awaiter_)) A(a);
    t.ops_ = &detail::kInlineAwaiterOps<T, A>;
    return t;
  }
  Task(Task&& o) noexcept : h_(std::exchange(o.h_, {})), ops_(std::exchange(o.ops_, nullptr)) {
    if (ops_) std::memcpy(awaiter_, o.awaiter_, sizeof awaiter_);
  }
  Task& operator=(Task&& o) noexcept {
    if (this != &o) {
      if (h_) h_.destroy();
      h_ = std::exchange(o.h_, {});
      ops_ = std::exchange(o.ops_, nullptr);
      if (ops_) std::memcpy(awaiter_, o.awaiter_, sizeof awaiter_);
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() {
    if (h_) h_.destroy();
  }

  bool await_ready() { return ops_ != nullptr && ops_->ready(awaiter_); }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiter) {
    if (ops_) {
      ops_->suspend(awaiter_, awaiter);
      return std::noop_coroutine();
    }
    h_.promise().continuation = awaiter;
    return h_;
  }
  T await_resume() { return ops_ ? ops_->resume(awaiter_) : h_.promise().take(); }

 private:
  Handle h_;
  const detail::InlineAwaiterOps<T>* ops_ = nullptr;  // set: an awaiter in awaiter_, no coroutine
  alignas(std::uint64_t) unsigned char awaiter_[detail::kInlineAwaiterBytes];
};

namespace detail {
template <class T>
Task<T> Promise<T>::get_return_object() noexcept {
  return Task<T>(std::coroutine_handle<Promise<T>>::from_promise(*this));
}
inline Task<void> Promise<void>::get_return_object() noexcept {
  return Task<void>(std::coroutine_handle<Promise<void>>::from_promise(*this));
}

// A fire-and-forget root coroutine: starts at once and frees itself at the end.
struct Detached {
  struct promise_type {
    static void* operator new(std::size_t n) { return FramePool::allocate(n); }
    static void operator delete(void* p, std::size_t n) noexcept { FramePool::deallocate(p, n); }
    Detached get_return_object() noexcept { return {}; }
    std::suspend_never initial_suspend() noexcept { return {}; }
    std::suspend_never final_suspend() noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { std::terminate(); }
  };
};
}  // namespace detail

// Starts `task` now; calls `done(result, error)` when it finishes (error is null
// on success). In the real world this returns only after the task finished; in
// the simulator it returns at the task's first suspension.
template <class T, class Done>
detail::Detached spawn(Task<T> task, Done done) {
  std::exception_ptr error;
  if constexpr (std::is_void_v<T>) {
    try {
      co_await std::move(task);
    } catch (...) {
      error = std::current_exception();
    }
    done(error);
  } else {
    std::optional<T> value;
    try {
      value.emplace(co_await std::move(task));
    } catch (...) {
      error = std::current_exception();
    }
    done(std::move(value), error);
  }
}

// Runs a task that completes without suspending (every real-world task) and
// returns its value, rethrowing its exception. Calls std::terminate when the
// task suspended: that would be a simulated operation used in the real world.
template <class T>
T run_sync(Task<T> task) {
  bool finished = false;
  std::exception_ptr error;
  if constexpr (std::is_void_v<T>) {
    spawn(std::move(task), [&](std::exception_ptr e) {
      error = e;
      finished = true;
    });
    if (!finished) std::terminate();
    if (error) std::rethrow_exception(error);
  } else {
    std::optional<T> out;
    spawn(std::move(task), [&](std::optional<T> v, std::exception_ptr e) {
      out = std::move(v);
      error = e;
      finished = true;
    });
    if (!finished) std::terminate();
    if (error) std::rethrow_exception(error);
    return std::move(*out);
  }
}

}  // namespace lockbench

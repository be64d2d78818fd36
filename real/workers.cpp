#include "real/workers.hpp"

namespace lockbench::real {

WorkerPool::WorkerPool(int max_threads, int accept_count) : accept_count_(accept_count) {
  threads_.reserve(static_cast<std::size_t>(max_threads));
  for (int i = 0; i < max_threads; ++i) threads_.emplace_back([this] { loop(); });
}

WorkerPool::WorkerPool(Unbounded) : accept_count_(0), unbounded_(true) {}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : threads_) t.join();
}

bool WorkerPool::submit(Job job) {
  {
    std::lock_guard lock(mu_);
    // Free workers take jobs at once; beyond them, acceptCount may wait.
    const auto free_workers = static_cast<std::size_t>(static_cast<int>(threads_.size()) - busy_);
    if (unbounded_) {
      if (queue_.size() >= free_workers) threads_.emplace_back([this] { loop(); });
    } else if (queue_.size() >= free_workers + static_cast<std::size_t>(accept_count_)) {
      return false;
    }
    queue_.push_back(std::move(job));
    ++unfinished_;
  }
  work_cv_.notify_one();
  return true;
}

void WorkerPool::wait_idle() {
  std::unique_lock lock(mu_);
  idle_cv_.wait(lock, [&] { return unfinished_ == 0; });
}

void WorkerPool::loop() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mu_);
      work_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      job = std::move(queue_.front());
      queue_.pop_front();
      ++busy_;
    }
    job();
    {
      std::lock_guard lock(mu_);
      --busy_;
      if (--unfinished_ == 0) idle_cv_.notify_all();
    }
  }
}

}  // namespace lockbench::real

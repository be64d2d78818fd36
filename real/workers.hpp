// WorkerPool: a servlet container's request threads (Tomcat names): maxThreads
// workers and a bounded accept queue; a request that finds every worker busy
// and acceptCount requests already waiting is rejected at once.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace lockbench::real {

class WorkerPool {
 public:
  using Job = std::function<void()>;
  WorkerPool(int max_threads, int accept_count);
  ~WorkerPool();  // finishes queued jobs, then joins
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // false = rejected: no free worker and the accept queue is full.
  bool submit(Job job);
  // Blocks until every accepted job has finished.
  void wait_idle();
  int max_threads() const { return static_cast<int>(threads_.size()); }

 private:
  void loop();

  const int accept_count_;
  std::mutex mu_;
  // GUARDED_BY(mu_): queue_, busy_, stopping_, unfinished_.
  std::condition_variable work_cv_;  // a job arrived or stopping
  std::condition_variable idle_cv_;  // unfinished_ reached 0
  std::deque<Job> queue_;
  int busy_ = 0;                 // workers running a job
  std::int64_t unfinished_ = 0;  // accepted and not yet finished
  bool stopping_ = false;
  std::vector<std::thread> threads_;  // written only by the constructor
};

}  // namespace lockbench::real

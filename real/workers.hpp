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
  // Virtual threads (spring.threads.virtual.enabled): a thread for every
  // request, no cap and no accept queue; threads are made as requests need
  // them and reused (a request thread stands for its virtual thread).
  struct Unbounded {};
  explicit WorkerPool(Unbounded);
  ~WorkerPool();  // finishes queued jobs, then joins
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // false = rejected: no free worker and the accept queue is full.
  bool submit(Job job);
  // Blocks until every accepted job has finished.
  void wait_idle();

 private:
  void loop();

  const int accept_count_;
  const bool unbounded_ = false;
  std::mutex mu_;
  // GUARDED_BY(mu_): queue_, busy_, stopping_, unfinished_.
  std::condition_variable work_cv_;  // a job arrived or stopping
  std::condition_variable idle_cv_;  // unfinished_ reached 0
  std::deque<Job> queue_;
  int busy_ = 0;                 // workers running a job
  std::int64_t unfinished_ = 0;  // accepted and not yet finished
  bool stopping_ = false;
  std::vector<std::thread> threads_;  // written by the constructor, and by submit() when unbounded_ (GUARDED_BY(mu_) then)
};

}  // namespace lockbench::real

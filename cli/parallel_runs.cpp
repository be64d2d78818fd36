// run_indexed: a small pool of threads taking run indices in order.
#include "cli/parallel_runs.hpp"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "base/allocator.hpp"
#include "core/settings.hpp"

namespace lockbench::cli {

int default_jobs() { return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 256u)); }

int parse_jobs(const std::string& text) {
  std::size_t used = 0;
  int n = 0;
  try {
    n = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || n < 1 || n > 256)
    throw SettingError("--jobs: '" + text + "' is not accepted (accepted: a whole number of parallel runs, 1..256)");
  return n;
}

void run_indexed(std::size_t count, int jobs, const std::function<nlohmann::json(std::size_t)>& run,
                 const std::function<void(std::size_t, nlohmann::json&&)>& done) {
  if (jobs <= 1 || count <= 1) {
    for (std::size_t i = 0; i < count; ++i) done(i, run(i));
    return;
  }
  std::mutex mu;
  std::condition_variable finished;
  // GUARDED_BY(mu): the four below.
  std::size_t next = 0;                           // the next index to start
  std::vector<std::optional<nlohmann::json>> results(count);
  std::size_t failed_at = count;                  // lowest index that threw
  std::exception_ptr error;

  const auto worker = [&] {
    use_huge_pages();  // this thread's heap: a run's first touch faults 2 MB at once
    for (;;) {
      std::size_t i = 0;
      {
        std::lock_guard lock(mu);
        if (next >= count || failed_at < count) return;
        i = next++;
      }
      try {
        nlohmann::json r = run(i);
        std::lock_guard lock(mu);
        results[i] = std::move(r);
      } catch (...) {
        std::lock_guard lock(mu);
        if (i < failed_at) {
          failed_at = i;
          error = std::current_exception();
        }
      }
      finished.notify_all();
    }
  };
  std::vector<std::jthread> threads;
  const auto n = std::min<std::size_t>(static_cast<std::size_t>(jobs), count);
  for (std::size_t t = 0; t < n; ++t) threads.emplace_back(worker);

  for (std::size_t i = 0; i < count; ++i) {
    std::unique_lock lock(mu);
    finished.wait(lock, [&] { return results[i].has_value() || failed_at <= i; });
    if (!results[i]) break;  // run i failed: what follows it is not handed on
    nlohmann::json r = std::move(*results[i]);
    results[i].reset();
    lock.unlock();
    try {
      done(i, std::move(r));
    } catch (...) {
      lock.lock();
      failed_at = 0;  // start nothing more; the runs going finish as the threads join
      throw;
    }
  }
  threads.clear();  // joins: the runs still going finish first
  if (error) std::rethrow_exception(error);
}

}  // namespace lockbench::cli

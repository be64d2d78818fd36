// One updating status line on stderr while a run or sweep is going:
//   "[ 12.3s] 1,234 requests  118.2 ok/s  ETA 47s"
// Drawn only when the stream is a terminal; silent in CI logs and pipes.
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <mutex>
#include <string>

namespace lockbench::report {

class Progress {
 public:
  using Clock = std::chrono::steady_clock;

  // `planned`: the run's expected length (for the ETA; zero = unknown).
  // `label`: shown first, e.g. "held-tx @ 20/s". Draws on stderr if it is a tty.
  Progress(std::chrono::nanoseconds planned, std::string label = "");
  // For tests and for callers that decide themselves: draws on `out` iff `enabled`.
  Progress(std::chrono::nanoseconds planned, std::string label, std::ostream& out, bool enabled);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Thread-safe and cheap: redraws at most every 100 ms (or when `force`).
  void update(std::uint64_t requests_done, std::uint64_t ok, bool force = false);
  // Draws the last line and ends it with a newline (once; also done by the destructor).
  void finish();

  bool enabled() const { return enabled_; }

  // The line itself, for tests: elapsed, requests, ok/s, ETA ("ETA –" when unknown).
  static std::string format_line(const std::string& label, std::chrono::nanoseconds elapsed,
                                 std::chrono::nanoseconds planned, std::uint64_t done, std::uint64_t ok);

 private:
  void draw_locked(std::uint64_t done, std::uint64_t ok);

  const std::chrono::nanoseconds planned_;
  const std::string label_;
  std::ostream& out_;
  const bool enabled_;
  const Clock::time_point start_;
  std::mutex mu_;  // guards everything below and the writes to out_
  Clock::time_point last_draw_{};
  std::uint64_t last_done_ = 0, last_ok_ = 0;
  std::size_t last_width_ = 0;  // to blank out leftovers of a longer previous line
  bool drawn_ = false, finished_ = false;
};

}  // namespace lockbench::report

// One updating status line on stderr while a run or sweep is going:
//   "[2/6] held-tx:wait  3m20s / 10m virtual  1234 requests, 412 ok  ETA 12s"
// The position in the plan, the strategy as the result table names it (a
// sweep puts the varied value first: "rate=8 held-tx:wait"), the run's own
// clock against its planned duration (virtual time in the simulator,
// configured time in a time-scaled real run), and an ETA in wall time from the
// pace so far. Drawn when the stream is a terminal, or when forced
// (`--progress`); silent in CI logs and pipes otherwise.
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

  struct Plan {
    std::string position;                 // "[2/6]", or "" for a single run
    std::string label;                    // "held-tx:wait", "rate=8 held-tx:wait"
    std::chrono::nanoseconds planned{};   // how long arrivals go on, in the run's clock (zero = unknown)
    std::string clock = "virtual";        // what the run's clock is: "virtual", "configured", "wall"
    double time_scale = 1;                // the run's clock = the world's clock / time_scale
  };

  // Draws on stderr if it is a tty.
  explicit Progress(Plan plan);
  // For tests and for callers that decide themselves: draws on `out` iff `enabled`.
  Progress(Plan plan, std::ostream& out, bool enabled);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Thread-safe and cheap: redraws at most every 100 ms (or when `force`).
  // `world_at`: the world's clock since the run began (virtual in the simulator).
  void update(std::uint64_t requests_done, std::uint64_t ok, std::chrono::nanoseconds world_at, bool force = false);
  // Draws the last line and ends it with a newline (once; also done by the destructor).
  void finish();

  bool enabled() const { return enabled_; }

  // The line itself, for tests. `at` is in the run's clock (already divided by
  // time_scale); `wall` is the wall time the run has taken so far. The ETA is
  // the wall time left at the pace so far: wall x (planned - at) / at;
  // "draining" once arrivals have ended, "ETA –" while nothing is known.
  static std::string format_line(const Plan& plan, std::chrono::nanoseconds wall, std::chrono::nanoseconds at,
                                 std::uint64_t done, std::uint64_t ok);

 private:
  void draw_locked();

  const Plan plan_;
  std::ostream& out_;
  const bool enabled_;
  const Clock::time_point start_;
  std::mutex mu_;  // guards everything below and the writes to out_
  Clock::time_point last_draw_{};
  std::uint64_t last_done_ = 0, last_ok_ = 0;  // GUARDED_BY(mu_)
  std::chrono::nanoseconds last_at_{};         // GUARDED_BY(mu_)
  std::size_t last_width_ = 0;  // to blank out leftovers of a longer previous line
  bool drawn_ = false, finished_ = false;
};

}  // namespace lockbench::report

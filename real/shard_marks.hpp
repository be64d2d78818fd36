// How the N runners of one sharded real run meet (run --targets ... --shard I/N).
//
// The marks live in the run's database, in lockbench.rows under a run number of
// their own (-1 - run: the services' rows have positive run numbers, so no
// scenario, seed or oracle ever sees them), one row per shard (id = index):
//
//   shard 0  removes every old mark of the run, resets the partner and seeds
//            the rows (run_pods does that), then waits until every other shard
//            has a `joined` mark, and writes `ready` with the agreed start: a
//            wall-clock time (Unix ms) kLead ahead. That start is the sharded
//            run's token: the `ended` marks carry it.
//   shard k  upserts its `joined` mark every poll (a mark written before shard
//            0 cleared the old ones is written again) until it sees a `ready`
//            mark whose start is still ahead; an old run's `ready` has a start
//            in the past and is never taken.
//   all      sleep until the start (the machines' clocks must agree, as NTP
//            keeps them), drive their slice, and shard k writes `ended`.
//   shard 0  waits for every `ended` with its token before it reads the pods,
//            the rows and the partner's checks, once, for the whole run.
//
// Every wait is bounded by --shard-wait and ends with one SettingError line.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/units.hpp"

namespace lockbench::real {

class ShardMarks {
 public:
  // How far ahead of the `ready` mark the agreed start lies.
  static constexpr Duration kLead = std::chrono::seconds(1);

  ShardMarks(std::string db_url, std::string application_name, std::int64_t run, int index, int count);

  // Shard 0, before it prepares the run: the run's old marks are removed.
  void clear() const;
  // Shard 0, once prepared: waits (bounded by `wait`) for every other shard's
  // `joined` mark, then writes `ready`. Returns the start (Unix ms).
  std::int64_t announce(Duration wait, const std::function<bool()>& should_stop) const;
  // Shard k > 0: joins and waits (bounded by `wait`) for a start still ahead.
  std::int64_t await_start(Duration wait, const std::function<bool()>& should_stop) const;
  // Shard k > 0, its load over: its `ended` mark with the run's start.
  void ended(std::int64_t start) const;
  // Shard 0: waits (bounded by `wait`) for every `ended` mark carrying `start`;
  // the indexes still missing then.
  std::vector<int> await_ended(std::int64_t start, Duration wait, const std::function<bool()>& should_stop) const;

  // The run number the marks are kept under.
  static std::int64_t marks_run(std::int64_t run) { return -1 - run; }

 private:
  std::string url_, name_;
  std::int64_t run_;
  int index_, count_;
};

// Now on the wall clock, in Unix ms.
std::int64_t unix_ms_now();
// Sleeps until `start` (Unix ms) on the wall clock; false when should_stop() came first.
bool sleep_until_unix_ms(std::int64_t start, const std::function<bool()>& should_stop);

}  // namespace lockbench::real

// What a run measures. Both worlds fill the same structures, so a result means
// the same thing whichever world produced it.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/side_effects.hpp"
#include "base/units.hpp"

namespace lockbench {

// Exact samples (a run holds at most a few hundred thousand): percentiles by
// nearest rank, the value a sorted copy holds at that rank.
class Samples {
 public:
  void add(double v) {
    if (!v_.empty() && v < v_.back()) sorted_ = false;
    v_.push_back(v);
  }
  std::size_t size() const { return v_.size(); }
  // Room for n samples, so that adding them does not copy the ones before.
  void reserve(std::size_t n) { v_.reserve(n); }
  double mean() const;
  double max() const;
  // q in [0, 1]; 0 when empty.
  double quantile(double q) const { return quantiles({q})[0]; }
  // Several at once, in the order asked (a result's p50, p90, p99, p999): two
  // reads of the samples find them all, where sorting read them seven times.
  std::vector<double> quantiles(std::initializer_list<double> qs) const;
  void merge(const Samples& o) {
    if (!o.sorted_ || (!v_.empty() && !o.v_.empty() && o.v_.front() < v_.back())) sorted_ = false;
    v_.insert(v_.end(), o.v_.begin(), o.v_.end());
  }
  const std::vector<double>& values() const { return v_; }

 private:
  mutable std::vector<double> v_;  // sorted by quantiles() only when it cannot select
  // std::is_sorted(v_) kept as values arrive: sorted samples are read by index.
  mutable bool sorted_ = true;
};

// Latency samples as a log-linear histogram (HdrHistogram's layout): every
// power of two above 1 us is cut into 8 equal sub-buckets, so a bucket's
// width is at most 1/8 of its lower bound (12.5 % relative error). The bounds
// depend on nothing but the value, so histograms of two runs merge by adding
// the counts of equal buckets, and compare bucket by bucket. Exported as
//   {"scheme": "log-linear", "unit": "ms", "lowest": 0.001, "sub_buckets": 8,
//    "count": N, "buckets": [[lower, upper, n], ...]}   (non-empty buckets, ascending)
// Bucket k >= 1 holds [lower, upper); bucket 0 holds [0, 0.001).
struct LatencyBucket {
  double lower = 0;
  double upper = 0;
};
constexpr double kHistogramLowestMs = 0.001;
constexpr int kHistogramSubBuckets = 8;
std::size_t histogram_bucket(double value_ms);
LatencyBucket histogram_bounds(std::size_t bucket);
nlohmann::json histogram_json(const Samples& samples);

// The most rows a result's timeline holds: a longer run's one-second samples
// are merged into wider intervals (max and mean per interval), so a 24 h run
// writes a timeline of the same size as a 10 min one.
constexpr std::size_t kTimelinePointsMax = 600;

enum class Outcome { ok, conflict, pool_timeout, rejected, error };
constexpr std::array<Outcome, 5> kOutcomes = {Outcome::ok, Outcome::conflict, Outcome::pool_timeout,
                                              Outcome::rejected, Outcome::error};
std::string_view outcome_name(Outcome);

// Where one request's time went (docs/reference/result.md, measurement rules).
struct TimeSplit {
  Duration queue{};      // waiting for a worker
  Duration pool_wait{};  // waiting for a connection
  Duration lock_wait{};  // lock statements (wait included)
  Duration partner{};    // partner calls, retries and backoff included
  Duration db{};         // every other statement
  Duration held{};       // connections held (sum over borrows)
  Duration held_idle() const { return held > db + lock_wait ? held - db - lock_wait : Duration::zero(); }
};

// Lock counters, incremented by strategies through RequestCtx.
struct LockCounters {
  std::atomic<std::int64_t> acquired{0};
  std::atomic<std::int64_t> denied{0};
  std::atomic<std::int64_t> lease_steals{0};
  std::atomic<std::int64_t> version_conflicts{0};
  std::atomic<std::int64_t> unlock_failures{0};
  std::atomic<std::int64_t> leaked{0};  // set at the end of a run by the world
  // SELECT ... FOR UPDATE found no row, so nothing was locked (a record that does not exist yet).
  std::atomic<std::int64_t> nothing_locked{0};
  // A lease holder's conditional store found the lease taken over: nothing stored.
  std::atomic<std::int64_t> lease_lost{0};
  // Lease renewals (the :renew variants): extended, and found lost (renewal stops).
  std::atomic<std::int64_t> renewals{0};
  std::atomic<std::int64_t> renewal_failures{0};
  // A session advisory lock granted to a request while another request's grant
  // of it was never unlocked: the two shared one session (a lock leaked into
  // the pool and re-entered, or PgBouncer's transaction pooling handing the
  // holder's backend to someone else). Counted by each world's Conn from the
  // ledger below, per process (thread pods and the simulator).
  std::atomic<std::int64_t> handed_to_stranger{0};
  void session_lock_granted(std::int64_t key, std::uint64_t request);
  void session_lock_unlocked(std::int64_t key, std::uint64_t request);
  void session_lock_ended(std::int64_t key);  // the session holding it is gone

  // False conflicts (--key-hash other than `scenario`): an advisory lock denied
  // (busy, or timed out waiting) while the requests holding that lock number
  // all hold it for other business keys, i.e. two keys that hash alike. The
  // advisory strategies tell the ledger below when they hold a lock number,
  // for which business key, and when they let it go; per process (thread pods
  // and the simulator), like handed_to_stranger.
  std::atomic<std::int64_t> false_conflicts{0};
  void advisory_held(std::int64_t lock, std::int64_t business_key);
  void advisory_freed(std::int64_t lock, std::int64_t business_key);
  void advisory_denied(std::int64_t lock, std::int64_t business_key);

 private:
  std::mutex ledger_mu_;
  // GUARDED_BY(ledger_mu_): key -> requests granted it and not unlocked (re-entrant: a count each).
  std::unordered_map<std::int64_t, std::vector<std::uint64_t>> ledger_;
  // GUARDED_BY(ledger_mu_): lock number -> business keys holding it (a count each).
  std::unordered_map<std::int64_t, std::vector<std::int64_t>> holders_;
};

// The pool's own figures, filled by each world's pool.
struct PoolStats {
  int size = 0;
  int active_max = 0;
  int pending_max = 0;
  double busy_conn_s = 0;  // integral of active connections over time
  double pending_s = 0;    // integral of waiting borrowers over time (its mean: pending_s / the run's span)
  Samples wait_ms;         // per successful borrow of a request (probes apart)
  Samples hold_ms;         // per borrow of a request (probes apart: a probe's SELECT 1 is not a request's hold)
  std::int64_t probe_borrows = 0;  // readiness checks that got a connection (in neither sample above)
  std::int64_t timeouts = 0;
  std::int64_t leaks = 0;  // leak-detection warnings
  std::vector<std::string> leak_steps;  // strategy step that held the connection (first few)
};

struct ProbeStats {
  std::int64_t total = 0;
  std::int64_t failed = 0;
};

// One trace event (a step of one request), for race and exhaustion diagrams.
struct TraceEvent {
  std::uint64_t request_id = 0;
  std::string step;  // pool.acquire, lock.acquire, partner.link, outcome, ...
  Duration start{};
  Duration end{};
  int conn = -1;  // -1 = no connection involved
  std::string detail;
};

// A sample of the pool over time (one per timeline interval).
struct PoolSample {
  Duration t{};
  int active = 0;
  int pending = 0;
  int idle = 0;
  // The interval's time-averaged waiters, when the world knows it exactly (the
  // simulator integrates every change); below 0: unknown, and the Recorder
  // averages the interval's samples instead (the real world's sampler).
  double pending_mean = -1;
};

// Collects per-request results. Thread-safe: real-world workers finish
// requests concurrently. The simulator, whose run is one thread, says so
// (Writers::one) and skips the lock: a lock and an unlock per request and per
// trace event, about 1 % of a simulated run.
class Recorder {
 public:
  enum class Writers { threads, one };
  explicit Recorder(Duration timeline_step = std::chrono::seconds(1), std::size_t trace_event_cap = 200000,
                    Writers writers = Writers::threads)
      : timeline_step_(timeline_step), trace_event_cap_(trace_event_cap), one_writer_(writers == Writers::one) {
    // Room for the trace up front (memory counts only once touched): growing
    // it would move every event's strings again at each doubling.
    events_.reserve(std::min<std::size_t>(trace_event_cap_, kTraceReserveMax));
  }

  void finish(std::uint64_t request_id, Outcome o, Duration intended, Duration finished, const TimeSplit& split);
  void trace(TraceEvent e);
  // False once the trace is full: callers skip building an event's strings
  // (trace() would drop it anyway).
  // Expected false (a run traces only its first requests): the compiler moves
  // the string building behind it out of the hot code.
  bool tracing() const { return __builtin_expect(trace_room_.load(std::memory_order_relaxed), 0); }
  void pool_sample(const PoolSample& s);
  // Room for `requests` finished requests' latencies (a world that knows its
  // schedule): the sample vectors then never copy themselves as they grow.
  void reserve(std::size_t requests);

  LockCounters locks;
  SideEffects effects;  // emails, outbox deliveries, injected database faults

  // Every finished request's intended start, latency and outcome, in finish
  // order, when asked for before the run (keep_requests()): what a recovery
  // window (core/recovery.hpp) is measured on. Off by default (memory).
  struct Finished {
    Duration intended{};
    Duration latency{};
    Outcome outcome = Outcome::ok;
  };
  void keep_requests() { keep_requests_ = true; }
  const std::vector<Finished>& finished_requests() const { return finished_; }

  // Read side, after the run (not thread-safe against writers).
  std::int64_t count(Outcome o) const { return counts_[static_cast<int>(o)]; }
  std::int64_t total() const;
  const Samples& latency_ms() const { return latency_ms_; }
  const Samples& latency_ok_ms() const { return latency_ok_ms_; }
  TimeSplit split_sum() const { return split_sum_; }
  Duration last_finish() const { return last_finish_; }
  const std::vector<TraceEvent>& events() const { return events_; }
  // At most `points_max` rows, each {t_s, dt_s, active, active_mean, pending,
  // pending_mean, idle, ok, conflict, pool_timeout, rejected, error}: active
  // and pending are the interval's busiest sample (peaks survive merging),
  // active_mean the mean of each second's busiest, pending_mean the waiters'
  // time average (not a mean of peaks), idle its fewest idle connections,
  // outcomes summed.
  nlohmann::json timeline_json(std::size_t points_max = kTimelinePointsMax) const;
  Duration timeline_step() const { return timeline_step_; }

 private:
  struct Bucket {
    std::array<std::int64_t, 5> done{};
    PoolSample pool;
    bool has_pool = false;
    double pending_sum = 0;  // samples' waiters, for the time average when the world gives none
    int pending_samples = 0;
  };
  Bucket& bucket(Duration t);
  std::unique_lock<std::mutex> guard() const {
    return one_writer_ ? std::unique_lock<std::mutex>(mu_, std::defer_lock) : std::unique_lock<std::mutex>(mu_);
  }

  const Duration timeline_step_;
  const std::size_t trace_event_cap_;
  static constexpr std::size_t kTraceReserveMax = 32768;
  std::atomic<bool> trace_room_{trace_event_cap_ > 0};  // events_.size() < trace_event_cap_
  const bool one_writer_;
  mutable std::mutex mu_;
  // GUARDED_BY(mu_) unless one_writer_: everything below.
  std::array<std::int64_t, 5> counts_{};
  Samples latency_ms_;
  Samples latency_ok_ms_;
  bool keep_requests_ = false;
  std::vector<Finished> finished_;
  TimeSplit split_sum_;
  Duration last_finish_{};
  std::vector<TraceEvent> events_;
  std::vector<Bucket> timeline_;
  std::size_t last_bucket_ = 0;                  // bucket() found last: timeline_[last_bucket_],
  Duration last_bucket_start_{}, last_bucket_end_{};  // for times in [start, end) (empty at first)
};

}  // namespace lockbench

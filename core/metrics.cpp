#include "core/metrics.hpp"

#include "base/stats.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>
#include <utility>

namespace lockbench {

double Samples::mean() const {
  if (v_.empty()) return 0;
  return std::accumulate(v_.begin(), v_.end(), 0.0) / static_cast<double>(v_.size());
}

double Samples::max() const {
  if (v_.empty()) return 0;
  return *std::max_element(v_.begin(), v_.end());
}

namespace {
// Sorts ascending. Latencies are non-negative: for those, a double's bits read as
// an unsigned integer sort in the same order as its value (and equal values have
// equal bits), so an LSD radix sort gives exactly std::sort's result, several
// times faster on a run's hundred thousand samples. Six passes of 11 bits, their
// counts taken in one read of the keys (48 KB of counters, where 16-bit digits
// cleared 512 KB per pass); a pass whose digit every key shares moves nothing
// and is skipped. Anything else (negative, -0.0, NaN) goes to std::sort.
void sort_samples(std::vector<double>& v) {
  constexpr std::size_t kRadixMin = 4096;  // below this, std::sort is as fast
  constexpr int kDigitBits = 11, kPasses = (64 + kDigitBits - 1) / kDigitBits;
  constexpr std::uint64_t kDigitMask = (std::uint64_t{1} << kDigitBits) - 1;
  constexpr std::uint64_t kPositiveInfinityBits = 0x7FF0000000000000;
  if (v.size() < kRadixMin || v.size() > std::numeric_limits<std::uint32_t>::max()) {  // counts are 32-bit
    std::sort(v.begin(), v.end());
    return;
  }
  std::vector<std::uint64_t> keys(v.size());
  std::vector<std::uint32_t> count(std::size_t{kPasses} << kDigitBits);  // [pass][digit]
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::uint64_t bits;
    std::memcpy(&bits, &v[i], sizeof bits);
    // +inf's bits are the largest of a non-negative, non-NaN double; a NaN's and
    // a negative value's (sign bit set) are above them: one compare for both.
    if (bits > kPositiveInfinityBits) {
      std::sort(v.begin(), v.end());
      return;
    }
    keys[i] = bits;
    for (int p = 0; p < kPasses; ++p)
      ++count[(static_cast<std::size_t>(p) << kDigitBits) | ((bits >> (p * kDigitBits)) & kDigitMask)];
  }
  std::vector<std::uint64_t> tmp(keys.size());
  for (int p = 0; p < kPasses; ++p) {
    std::uint32_t* c = count.data() + (static_cast<std::size_t>(p) << kDigitBits);
    const int shift = p * kDigitBits;
    if (c[(keys[0] >> shift) & kDigitMask] == keys.size()) continue;  // every key has this digit: nothing moves
    std::uint32_t sum = 0;
    for (std::size_t d = 0; d <= kDigitMask; ++d) sum += std::exchange(c[d], sum);
    for (auto k : keys) tmp[c[(k >> shift) & kDigitMask]++] = k;
    keys.swap(tmp);
  }
  for (std::size_t i = 0; i < v.size(); ++i) std::memcpy(&v[i], &keys[i], sizeof keys[i]);
}
}  // namespace

std::vector<double> Samples::quantiles(std::initializer_list<double> qs) const {
  std::vector<double> out(qs.size(), 0.0);
  const std::size_t n = v_.size();
  if (n == 0) return out;
  // Selection, not sorting: count the samples by the top 16 bits of their
  // bits (sign, exponent and four mantissa bits: a sixteenth of an octave;
  // for non-negative doubles, bucket order is value order), find the bucket
  // that holds each rank, then gather only those buckets' samples and select
  // within them. Exactly the sorted copy's values. Small, already sorted or
  // signed samples (and NaN) take the sorting path.
  constexpr std::size_t kSelectMin = 4096;   // below this, sorting is as fast
  constexpr std::size_t kMaxTargets = 8;      // buckets gathered in one read
  constexpr int kShift = 48;
  constexpr std::uint64_t kPositiveInfinityBits = 0x7FF0000000000000;
  const auto by_index = [&] {
    if (!sorted_) {
      sort_samples(v_);
      sorted_ = true;
    }
    std::size_t i = 0;
    for (double q : qs) out[i++] = v_[stats::nearest_rank(q, n) - 1];
    return out;
  };
  if (sorted_ || n < kSelectMin || qs.size() > kMaxTargets) return by_index();

  std::vector<std::uint32_t> count(std::size_t{1} << (64 - kShift));
  for (double v : v_) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    if (bits > kPositiveInfinityBits) return by_index();  // negative, -0.0 or NaN
    ++count[bits >> kShift];
  }
  // Each asked rank's bucket and its 0-based rank within the bucket.
  struct Target {
    std::size_t rank;  // 0-based in the whole
    std::size_t bucket = 0;
    std::size_t within = 0;
  };
  std::vector<Target> targets;
  for (double q : qs) targets.push_back({stats::nearest_rank(q, n) - 1});
  std::vector<std::size_t> order(targets.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return targets[a].rank < targets[b].rank; });
  std::size_t below = 0, next = 0;
  for (std::size_t b = 0; b < count.size() && next < order.size(); ++b) {
    while (next < order.size() && targets[order[next]].rank < below + count[b]) {
      auto& t = targets[order[next++]];
      t.bucket = b;
      t.within = t.rank - below;
    }
    below += count[b];
  }
  std::array<std::uint64_t, kMaxTargets> wanted{};
  std::array<std::vector<double>, kMaxTargets> gathered;
  std::size_t buckets = 0;
  for (const auto& t : targets)
    if (std::find(wanted.begin(), wanted.begin() + buckets, t.bucket) == wanted.begin() + buckets) {
      gathered[buckets].reserve(count[t.bucket]);
      wanted[buckets++] = t.bucket;
    }
  for (double v : v_) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    const auto b = bits >> kShift;
    for (std::size_t k = 0; k < buckets; ++k)
      if (wanted[k] == b) {
        gathered[k].push_back(v);
        break;
      }
  }
  // Within a bucket, the ranks in ascending order: a selection leaves the
  // smaller samples before its rank and the larger after it, so the next
  // rank is searched for only after it (p50, p90, p99 and p999 often share
  // one bucket, as a run's many equal timeouts do).
  const auto slot_of = [&](std::size_t bucket) {
    return static_cast<std::size_t>(std::find(wanted.begin(), wanted.begin() + buckets, bucket) - wanted.begin());
  };
  std::sort(order.begin(), order.end(), [&](auto a, auto b) {
    return std::pair(slot_of(targets[a].bucket), targets[a].within) < std::pair(slot_of(targets[b].bucket), targets[b].within);
  });
  std::array<std::size_t, kMaxTargets> searched_to{};  // per bucket: ranks below this are in place
  for (const std::size_t i : order) {
    const std::size_t k = slot_of(targets[i].bucket), w = targets[i].within;
    auto& g = gathered[k];
    if (w >= searched_to[k]) {
      std::nth_element(g.begin() + static_cast<std::ptrdiff_t>(searched_to[k]), g.begin() + static_cast<std::ptrdiff_t>(w),
                       g.end());
      searched_to[k] = w + 1;
    }
    out[i] = g[w];
  }
  return out;
}

std::string_view outcome_name(Outcome o) {
  switch (o) {
    case Outcome::ok: return "ok";
    case Outcome::conflict: return "conflict";
    case Outcome::pool_timeout: return "pool_timeout";
    case Outcome::rejected: return "rejected";
    case Outcome::error: return "error";
  }
  return "?";
}

Recorder::Bucket& Recorder::bucket(Duration t) {
  // Requests finish in about time order: the last bucket's interval is
  // checked first, which spares a division per request.
  if (t >= last_bucket_start_ && t < last_bucket_end_) return timeline_[last_bucket_];
  const auto i = static_cast<std::size_t>(std::max<Duration::rep>(0, t.count() / timeline_step_.count()));
  if (i >= timeline_.size()) timeline_.resize(i + 1);
  last_bucket_ = i;
  last_bucket_start_ = timeline_step_ * static_cast<Duration::rep>(i);
  last_bucket_end_ = last_bucket_start_ + timeline_step_;
  return timeline_[i];
}

void Recorder::finish(std::uint64_t, Outcome o, Duration intended, Duration finished, const TimeSplit& s) {
  const auto lock = guard();
  counts_[static_cast<int>(o)]++;
  latency_ms_.add(to_ms(finished - intended));
  if (o == Outcome::ok) latency_ok_ms_.add(to_ms(finished - intended));
  split_sum_.queue += s.queue;
  split_sum_.pool_wait += s.pool_wait;
  split_sum_.lock_wait += s.lock_wait;
  split_sum_.partner += s.partner;
  split_sum_.db += s.db;
  split_sum_.held += s.held;
  last_finish_ = std::max(last_finish_, finished);
  bucket(finished).done[static_cast<int>(o)]++;
  if (keep_requests_) finished_.push_back({intended, finished - intended, o});
}

void Recorder::reserve(std::size_t requests) {
  const auto lock = guard();
  latency_ms_.reserve(requests);
  latency_ok_ms_.reserve(requests);
}

void Recorder::trace(TraceEvent e) {
  const auto lock = guard();
  if (events_.size() < trace_event_cap_) events_.push_back(std::move(e));
  if (events_.size() >= trace_event_cap_) trace_room_.store(false, std::memory_order_relaxed);
}

void Recorder::pool_sample(const PoolSample& s) {
  const auto lock = guard();
  auto& b = bucket(s.t);
  // keep the busiest sample of the interval: exhaustion shows as peaks
  if (!b.has_pool || s.active + s.pending > b.pool.active + b.pool.pending) b.pool = s;
  b.has_pool = true;
  if (s.pending_mean >= 0) {  // the world's own time average of the interval
    b.pending_sum = s.pending_mean;
    b.pending_samples = -1;
  } else if (b.pending_samples >= 0) {  // evenly spaced samples: their mean is the time average
    b.pending_sum += s.pending;
    ++b.pending_samples;
  }
}

std::int64_t Recorder::total() const {
  std::int64_t t = 0;
  for (auto c : counts_) t += c;
  return t;
}

nlohmann::json Recorder::timeline_json(std::size_t points_max) const {
  const auto lock = guard();
  nlohmann::json out = nlohmann::json::array();
  const std::size_t n = timeline_.size();
  const std::size_t per = std::max<std::size_t>(1, (n + std::max<std::size_t>(points_max, 1) - 1) /
                                                       std::max<std::size_t>(points_max, 1));
  const double step_s = to_s(timeline_step_);
  for (std::size_t first = 0; first < n; first += per) {
    const std::size_t last = std::min(n, first + per);
    int active = 0, pending = 0, idle = 0;
    double active_sum = 0, pending_sum = 0;
    std::size_t sampled = 0;
    std::array<std::int64_t, 5> done{};
    for (std::size_t i = first; i < last; ++i) {
      const auto& b = timeline_[i];
      for (std::size_t o = 0; o < done.size(); ++o) done[o] += b.done[o];
      if (!b.has_pool) continue;
      active = std::max(active, b.pool.active);
      pending = std::max(pending, b.pool.pending);
      idle = sampled == 0 ? b.pool.idle : std::min(idle, b.pool.idle);
      active_sum += b.pool.active;
      pending_sum += b.pending_samples > 0 ? b.pending_sum / b.pending_samples : b.pending_sum;
      ++sampled;
    }
    const double k = sampled > 0 ? static_cast<double>(sampled) : 1;
    // Filled in place and moved: an initializer list builds a pair array per
    // key first, and a run's timeline has thousands of rows.
    nlohmann::json::object_t row;
    row.emplace("t_s", step_s * static_cast<double>(first));
    row.emplace("dt_s", step_s * static_cast<double>(last - first));
    row.emplace("active", active);
    row.emplace("active_mean", active_sum / k);
    row.emplace("pending", pending);
    row.emplace("pending_mean", pending_sum / k);
    row.emplace("idle", idle);
    for (auto o : kOutcomes) row.emplace(outcome_name(o), done[static_cast<int>(o)]);
    out.emplace_back(std::move(row));
  }
  return out;
}

std::size_t histogram_bucket(double v) {
  if (!(v >= kHistogramLowestMs)) return 0;
  const double ratio = v / kHistogramLowestMs;
  static_assert(kHistogramSubBuckets == 8, "the fast path reads three mantissa bits");
  if (std::isfinite(ratio)) {
    // ratio >= 1 is a normal double: its exponent is ilogb(ratio), and (ratio / 2^e - 1) * 8
    // truncated is exactly the top three bits of its mantissa (the general path below, read off the bits).
    std::uint64_t bits;
    std::memcpy(&bits, &ratio, sizeof bits);
    const auto e = static_cast<std::size_t>(((bits >> 52) & 0x7FF) - 1023);
    return 1 + e * kHistogramSubBuckets + static_cast<std::size_t>((bits >> 49) & 7);
  }
  int e = std::ilogb(ratio);  // 2^e <= ratio < 2^(e+1)
  double base = std::ldexp(1.0, e);
  auto sub = static_cast<int>((ratio / base - 1) * kHistogramSubBuckets);
  if (sub >= kHistogramSubBuckets) sub = kHistogramSubBuckets - 1;  // rounding at the top edge
  if (sub < 0) sub = 0;
  return 1 + static_cast<std::size_t>(e) * kHistogramSubBuckets + static_cast<std::size_t>(sub);
}

LatencyBucket histogram_bounds(std::size_t bucket) {
  if (bucket == 0) return {0, kHistogramLowestMs};
  const auto e = static_cast<int>((bucket - 1) / kHistogramSubBuckets);
  const auto sub = static_cast<double>((bucket - 1) % kHistogramSubBuckets);
  const double base = kHistogramLowestMs * std::ldexp(1.0, e);
  return {base * (1 + sub / kHistogramSubBuckets), base * (1 + (sub + 1) / kHistogramSubBuckets)};
}

nlohmann::json histogram_json(const Samples& samples) {
  // Counted by bucket index (finite doubles give at most about 8,200 buckets; a
  // run uses a few hundred); an infinite value's bucket is counted aside.
  constexpr std::size_t kFiniteBuckets = 1 + 1100 * kHistogramSubBuckets;
  std::vector<std::int64_t> counts;
  std::map<std::size_t, std::int64_t> beyond;
  for (double v : samples.values()) {
    const std::size_t k = histogram_bucket(v);
    if (k >= kFiniteBuckets) {
      beyond[k]++;
      continue;
    }
    if (k >= counts.size()) counts.resize(k + 1, 0);
    counts[k]++;
  }
  nlohmann::json buckets = nlohmann::json::array();
  const auto add = [&](std::size_t k, std::int64_t n) {
    const auto b = histogram_bounds(k);
    buckets.push_back({b.lower, b.upper, n});
  };
  for (std::size_t k = 0; k < counts.size(); ++k)
    if (counts[k] != 0) add(k, counts[k]);
  for (const auto& [k, n] : beyond) add(k, n);
  return {{"scheme", "log-linear"},
          {"unit", "ms"},
          {"lowest", kHistogramLowestMs},
          {"sub_buckets", kHistogramSubBuckets},
          {"count", samples.size()},
          {"buckets", buckets}};
}

void LockCounters::session_lock_granted(std::int64_t key, std::uint64_t request) {
  std::lock_guard lock(ledger_mu_);
  auto& holders = ledger_[key];
  for (std::uint64_t h : holders)
    if (h != request) {
      ++handed_to_stranger;
      break;
    }
  holders.push_back(request);
}

void LockCounters::session_lock_unlocked(std::int64_t key, std::uint64_t request) {
  std::lock_guard lock(ledger_mu_);
  auto it = ledger_.find(key);
  if (it == ledger_.end()) return;
  auto& holders = it->second;
  // The caller's own grant if it has one, else the oldest: one count fewer on the session.
  auto own = std::find(holders.begin(), holders.end(), request);
  holders.erase(own != holders.end() ? own : holders.begin());
  if (holders.empty()) ledger_.erase(it);
}

void LockCounters::session_lock_ended(std::int64_t key) {
  std::lock_guard lock(ledger_mu_);
  ledger_.erase(key);
}

void LockCounters::advisory_held(std::int64_t lock, std::int64_t business_key) {
  std::lock_guard guard(ledger_mu_);
  holders_[lock].push_back(business_key);
}

void LockCounters::advisory_freed(std::int64_t lock, std::int64_t business_key) {
  std::lock_guard guard(ledger_mu_);
  auto it = holders_.find(lock);
  if (it == holders_.end()) return;
  auto& keys = it->second;
  if (auto own = std::find(keys.begin(), keys.end(), business_key); own != keys.end()) keys.erase(own);
  if (keys.empty()) holders_.erase(it);
}

void LockCounters::advisory_denied(std::int64_t lock, std::int64_t business_key) {
  std::lock_guard guard(ledger_mu_);
  const auto it = holders_.find(lock);
  // No holder known (granted a moment ago, not yet recorded): not counted either way.
  if (it == holders_.end() || it->second.empty()) return;
  if (std::find(it->second.begin(), it->second.end(), business_key) == it->second.end()) ++false_conflicts;
}

}  // namespace lockbench

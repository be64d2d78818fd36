#include "core/recovery.hpp"

#include <algorithm>
#include <cmath>

namespace lockbench {

namespace {

struct Span {
  std::int64_t requests = 0;
  std::int64_t ok = 0;
  std::int64_t conflict = 0;
  Samples ok_ms;  // ok latencies
  double share(std::int64_t n) const { return requests > 0 ? static_cast<double>(n) / static_cast<double>(requests) : 0; }
  double ok_share() const { return share(ok); }
  double answered_share() const { return share(ok + conflict); }
};

double p99(const Samples& s) { return s.size() > 0 ? s.quantiles({0.99})[0] : 0; }

}  // namespace

nlohmann::json recovery_json(const std::vector<Recorder::Finished>& requests, Duration from,
                             std::optional<Duration> until, Duration arrivals_end) {
  // By intended start, so each window is a contiguous range.
  std::vector<const Recorder::Finished*> by_start;
  by_start.reserve(requests.size());
  for (const auto& r : requests) by_start.push_back(&r);
  std::stable_sort(by_start.begin(), by_start.end(), [](auto* a, auto* b) { return a->intended < b->intended; });
  const auto span_of = [&](Duration a, Duration b) {
    Span s;
    const auto lo = std::lower_bound(by_start.begin(), by_start.end(), a, [](auto* r, Duration t) { return r->intended < t; });
    for (auto it = lo; it != by_start.end() && (*it)->intended < b; ++it) {
      ++s.requests;
      if ((*it)->outcome == Outcome::conflict) ++s.conflict;
      if ((*it)->outcome != Outcome::ok) continue;
      ++s.ok;
      s.ok_ms.add(to_ms((*it)->latency));
    }
    return s;
  };

  nlohmann::json j;
  j["window_from_s"] = to_s(from);
  j["window_until_s"] = until ? nlohmann::json(to_s(*until)) : nlohmann::json(nullptr);
  j["definition"] = "from the window's end until the first 30 s window (by intended start, stepped 1 s) whose ok share is at "
                    "least 90 % of the ok share before the window and whose ok p99 is at most the p99 before it, after which "
                    "every window keeps that ok share";
  const Span before = span_of(Duration::zero(), from);
  const double baseline_p99 = p99(before.ok_ms);
  j["before"] = {{"requests", before.requests},
                 {"ok_share", before.ok_share()},
                 {"answered_share", before.answered_share()},
                 {"p99_ok_ms", baseline_p99}};
  const Span during = span_of(from, until.value_or(arrivals_end));
  j["during"] = {{"requests", during.requests}, {"ok_share", during.ok_share()}};
  j["recovered"] = false;
  j["recovery_s"] = nullptr;
  const auto not_defined = [&](const char* why) {
    j["reason"] = why;
    return j;
  };
  if (!until) return not_defined("the fault window does not end");
  if (before.requests == 0) return not_defined("no request before the window: no baseline");
  if (before.answered_share() < kRecoveryShare)
    return not_defined("not well before the window either (below 90 % answered ok or conflict)");
  const double share_needed = kRecoveryShare * before.ok_share();

  // Each window from `until` on: good or not, and its ok share.
  std::vector<std::pair<bool, bool>> windows;  // {good, ok share held}
  for (Duration t = *until; t + kRecoveryWindow <= arrivals_end; t += kRecoveryStep) {
    const Span w = span_of(t, t + kRecoveryWindow);
    const bool share = w.requests > 0 && w.ok_share() >= share_needed;
    windows.emplace_back(share && p99(w.ok_ms) <= baseline_p99, share);
  }
  // The first good window after which the ok share holds in every later one.
  std::optional<std::size_t> at;
  for (std::size_t i = windows.size(); i-- > 0;) {
    if (!windows[i].second) break;  // every window from here on held its ok share
    if (windows[i].first) at = i;
  }
  if (!at) return not_defined(windows.empty() ? "the arrivals end less than 30 s after the window"
                                              : "not recovered before the arrivals ended");
  j["recovered"] = true;
  j["recovery_s"] = to_s(kRecoveryStep * static_cast<std::int64_t>(*at));
  j["reason"] = nullptr;
  return j;
}

}  // namespace lockbench

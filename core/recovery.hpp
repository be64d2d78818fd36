// Recovery after a fault window (issue 32): how long after the partner is well
// again the service is well again. Measured on requests by their intended
// start (open loop: no coordinated omission), the same in both worlds.
//
//   before    requests intended in [0, from): their ok share, their answered
//             share (ok or conflict: a 409 is an answer), and the p99 of their
//             ok latencies (the baseline)
//   window W(t) = requests intended in [t, t + 30 s), t = until, until + 1 s,
//             ..., while W(t) ends before the arrivals do
//   holds     W(t)'s ok share is at least 90 % of the ok share before: ok/s
//             within 10 % of its value before the window, both as a share of
//             what arrived (a workload with contention answers some requests
//             409 when all is well: "within 10 % of offered" would never hold)
//   good      W(t) holds and the p99 of its ok latencies is at most the baseline's
//   recovered at the first t whose W(t) is good and after which every window
//             holds; recovery_s = t - until
// 30 s windows: at 6 requests/s a 10 s window's ok share and p99 are too noisy
// to say "back" (a p99 of 60 requests is nearly their maximum).
// Not defined (recovery_s null, `reason` says why): no request before the
// window, less than 90 % answered before it (the service was not well before),
// a window that never ends, or no such t before the arrivals end.
#pragma once

#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/metrics.hpp"

namespace lockbench {

inline constexpr Duration kRecoveryWindow = std::chrono::seconds(30);
inline constexpr Duration kRecoveryStep = std::chrono::seconds(1);
inline constexpr double kRecoveryShare = 0.9;  // of the ok share before; answered before

// The `recovery` block: {window_from_s, window_until_s, definition, before{requests,
// ok_share, answered_share, p99_ok_ms}, during{requests, ok_share}, recovered, recovery_s, reason}.
nlohmann::json recovery_json(const std::vector<Recorder::Finished>& requests, Duration from,
                             std::optional<Duration> until, Duration arrivals_end);

}  // namespace lockbench

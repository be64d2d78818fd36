// One real run driven by N runners (run --targets ... --shard I/N): their N
// results made into the one result that a single runner at the full rate
// would have written (docs/shards.md, "Real load from several runners").
//
//   checked    every result is a shard of one run: a `shard` block, one count
//              N, one run number and start, one settings; each index 0..N-1
//              once; shard 0 read the partner's checks after every runner
//              ended (its `not_ended` empty). Otherwise one SettingError line.
//   summed     requests by outcome, probe counts, requests not sent, offered
//              load (each shard offers its slice's share).
//   merged     latency_histogram_ms (all, ok): bucket counts added, never
//              averaged; latency_ms and latency_ok_ms recomputed from them
//              (a quantile is its bucket's upper bound, within 1/8 of a power
//              of two, and never above the largest max), the mean weighted by
//              count; the timeline's outcome counts added row by row (the
//              runners share one start and one step).
//   recomputed duration_s (the longest shard: they started together),
//              throughput_ok_per_s, time_split_ms (weighted by requests), the
//              `unscaled` copies.
//   shard 0's  partner (read once, after the last runner ended), pool, locks,
//              prediction, trace, provenance: the pods' figures are the
//              service's, read by shard 0 last.
//   per runner `runners`: each shard's pool figures, requests, ok/s and host,
//              kept as each runner read them.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

namespace lockbench::cli {

nlohmann::json merge_runner_results(const std::vector<nlohmann::json>& shards);

}  // namespace lockbench::cli

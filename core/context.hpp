// RequestCtx: one request on its way through a strategy. Worlds attribute time
// and trace events to it; strategies count lock events on it.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>

#include "core/metrics.hpp"
#include "base/random.hpp"
#include "core/settings.hpp"
#include "core/workload.hpp"
#include "core/world.hpp"

namespace lockbench {

class RequestCtx {
 public:
  RequestCtx(World& world, Recorder& recorder, const Settings& settings, const Request& request)
      : world_(world),
        recorder_(recorder),
        settings_(settings),
        request_(request) {}

  World& world() { return world_; }
  const Settings& settings() const { return settings_; }
  const Request& request() const { return request_; }
  Key key() const { return request_.key; }
  // Per-request randomness (retry jitter): reproducible for a seed and request id.
  // Seeded when first used: most requests never retry.
  Rng& rng() {
    if (!rng_) rng_.emplace(derive_seed(settings_.seed, "request") ^ request_.id);
    return *rng_;
  }
  // This request's name as a lease owner: "req-<id>". Written when first asked
  // for: only lease strategies ask. (A context is never shared between threads:
  // a renewal gets its own, see World::keep_renewing.)
  const std::string& owner() const {
    if (owner_.empty()) owner_ = owner_name(request_.id);
    return owner_;
  }

  TimeSplit& split() { return split_; }
  LockCounters& locks() { return recorder_.locks; }
  // The run's recorder: side effects (recorder().effects), and for contexts of
  // a strategy's background work derived from this one.
  Recorder& recorder() { return recorder_; }

  void trace(std::string step, Duration start, Duration end, int conn = -1, std::string detail = {}) {
    recorder_.trace({request_.id, std::move(step), start, end, conn, std::move(detail)});
  }

 private:
  // "req-" + std::to_string(id), written in place (one per request: no temporary).
  static std::string owner_name(std::uint64_t id) {
    char buf[4 + 20] = {'r', 'e', 'q', '-'};
    const auto end = std::to_chars(buf + 4, buf + sizeof buf, id).ptr;
    return std::string(buf, end);
  }

  World& world_;
  Recorder& recorder_;
  const Settings& settings_;
  const Request request_;
  std::optional<Rng> rng_;
  mutable std::string owner_;  // "" until owner() is first called
  TimeSplit split_;
};

}  // namespace lockbench

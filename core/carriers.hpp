// Carrier pinning's figures (--virtual-threads below JDK 24), counted the same
// way in both worlds (the simulator's Pod::pin, the real world's Carriers) and
// written as the result's virtual_threads block.
#pragma once

#include <algorithm>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "base/units.hpp"

namespace lockbench {

struct CarrierStats {
  std::int64_t stalls = 0;         // times a pod had every carrier pinned
  Duration stalled{};              // their time, summed over pods
  Duration longest{};
  std::int64_t starts_waited = 0;  // requests that arrived at a stalled pod and waited for a carrier
  int pinned_peak = 0;             // the most carriers pinned at once in one pod

  // A stall of `d` has ended.
  void stall_ended(Duration d) {
    stalled += d;
    longest = std::max(longest, d);
  }
  // Another pod's (process pods report theirs).
  void add(const CarrierStats& o) {
    stalls += o.stalls;
    stalled += o.stalled;
    longest = std::max(longest, o.longest);
    starts_waited += o.starts_waited;
    pinned_peak = std::max(pinned_peak, o.pinned_peak);
  }
};

// {"pinning": false} without pinning; the figures with it (docs/result.schema.json).
inline nlohmann::json carriers_block(bool pinning, int carriers, const CarrierStats& c) {
  nlohmann::json j = {{"pinning", pinning}};
  if (!pinning) return j;
  j["carriers"] = carriers;
  j["pinned_peak"] = c.pinned_peak;
  j["stalls"] = c.stalls;
  j["stalled_s"] = to_s(c.stalled);
  j["longest_stall_s"] = to_s(c.longest);
  j["starts_waited_for_a_carrier"] = c.starts_waited;
  return j;
}

// The figures of a block carriers_block wrote (a process pod's, read back by its runner).
inline CarrierStats carrier_stats_of(const nlohmann::json& j) {
  CarrierStats c;
  c.stalls = j.value("stalls", std::int64_t{0});
  c.stalled = from_s(j.value("stalled_s", 0.0));
  c.longest = from_s(j.value("longest_stall_s", 0.0));
  c.starts_waited = j.value("starts_waited_for_a_carrier", std::int64_t{0});
  c.pinned_peak = j.value("pinned_peak", 0);
  return c;
}

}  // namespace lockbench

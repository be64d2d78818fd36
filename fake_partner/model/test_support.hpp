// Helpers for the partner model's tests: a partner with no latency and a
// clock that moves forward one call at a time.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "fake_partner/model/partner.hpp"

namespace lockbench::partner::testing {

// A config document with zero latency everywhere, merged with `extra`.
inline Config instant_config(const nlohmann::json& extra = nlohmann::json::object()) {
  nlohmann::json doc = {{"latency", {{"*", {{"dist", "fixed"}, {"ms", 0}}}}}};
  doc.merge_patch(extra);
  return Config::from_json(doc);
}

inline Tags op(std::uint64_t op_id, int step = 0) {
  Tags t;
  t.op_id = op_id;
  t.op_step = step;
  return t;
}

inline Tags keyed(std::string key) {
  Tags t;
  t.idempotency_key = std::move(key);
  return t;
}

struct Harness {
  explicit Harness(Config cfg = instant_config(), ResetSpec spec = ResetSpec::persons_with_two_identities(2))
      : partner(std::move(cfg)) {
    spec.orders.push_back({"o1", 2500, "eur"});
    spec.orders.push_back({"o2", 1000, "eur"});
    partner.reset(spec, now);
  }

  // One call from arrival to answer, nothing else in between.
  Reply call(const Call& c, const Tags& t = {}) {
    const Plan p = partner.arrive(c, t, now);
    Reply r = partner.execute(p.call_id, now + p.apply_after);
    partner.complete(p.call_id, now + p.delay);
    now += p.delay + std::chrono::milliseconds(1);
    return r;
  }

  CheckReport check(const CheckInput& in = {}) { return partner.check(now, in); }

  Partner partner;
  Duration now{0};
};

// Three identities for person 1: auth0|u1 (primary), google-oauth2|u1, github|u1.
inline ResetSpec three_identities() {
  ResetSpec r;
  r.persons.push_back({{"auth0|u1", "google-oauth2|u1", "github|u1"}, "auth0|u1"});
  return r;
}

}  // namespace lockbench::partner::testing

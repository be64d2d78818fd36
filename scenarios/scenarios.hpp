// The scenarios, one file each, and what they share. scenarios/registry.cpp
// lists them; nothing else in lockbench names a scenario.
#pragma once

#include <memory>
#include <vector>

#include "core/scenario.hpp"

namespace lockbench {

std::unique_ptr<Scenario> make_switch_primary();
std::unique_ptr<Scenario> make_single_call();
std::unique_ptr<Scenario> make_checkout();

// The identity provider's reset document for persons 1..settings.keys.
nlohmann::json identity_reset(const Settings& s);
// users rows -> {"auth0|u<k>": primary}: the service's primaries for the oracle.
nlohmann::json primaries_of(const std::vector<StoredRow>& rows, Table users);
// A failed call: refused when the partner answered a 4xx (other than 409
// idempotency_key_in_use and 429, which say nothing about the effect), else unknown.
Effect refused_or_unknown(const PartnerReply& r);

}  // namespace lockbench

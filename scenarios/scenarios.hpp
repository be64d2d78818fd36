// The scenarios, one file each, and what they share. scenarios/registry.cpp
// lists them; nothing else in lockbench names a scenario.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/scenario.hpp"

namespace lockbench {

std::unique_ptr<Scenario> make_switch_primary();
std::unique_ptr<Scenario> make_single_call();
std::unique_ptr<Scenario> make_checkout();
std::unique_ptr<Scenario> make_payout();
std::unique_ptr<Scenario> make_reward_claim();         // claims without a unique key
std::unique_ptr<Scenario> make_reward_claim_unique();  // claims with a unique key on the customer

// reward-claim's advisory-lock key: a business string hashed to 64 bits.
using LockHash = std::uint64_t (*)(std::string_view);
std::string reward_lock_string(Key customer);        // "welcome-reward:customer-<k>"
std::uint64_t fnv1a_lock_hash(std::string_view s);   // FNV-1a 64 (base/random.hpp): the hash it uses
// Tests: the scenario with another hash (a deliberately colliding one).
std::unique_ptr<Scenario> make_reward_claim(bool unique, LockHash hash);

// The identity provider's reset document for persons 1..settings.keys.
nlohmann::json identity_reset(const Settings& s);
// users rows -> {"auth0|u<k>": primary}: the service's primaries for the oracle.
nlohmann::json primaries_of(const std::vector<StoredRow>& rows, Table users);
// A failed call: refused when the partner answered a 4xx (other than 409
// idempotency_key_in_use and 429, which say nothing about the effect), else unknown.
Effect refused_or_unknown(const PartnerReply& r);

}  // namespace lockbench

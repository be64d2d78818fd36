// Scenarios: the business operation whose critical section calls the partner.
// A strategy arranges exclusion and transactions around the three parts:
// read (decide, inside exclusion), external (the partner calls), store.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/context.hpp"
#include "core/world.hpp"

namespace lockbench {

struct Plan {
  Key key = 0;
  std::string current;   // primary identity as read from the database
  std::string target;    // identity to promote (switch-primary)
  std::int64_t version = 0;
};

class Scenario {
 public:
  virtual ~Scenario() = default;
  virtual std::string_view name() const = 0;
  // Partner calls in the critical section (for predictions).
  virtual int partner_calls() const = 0;
  // Reads the user's row and decides what the operation will do.
  virtual Task<Plan> read(RequestCtx& cx, Conn& c) = 0;
  // The partner calls. true when the whole external effect succeeded.
  virtual Task<bool> external(RequestCtx& cx, const Plan& p, std::optional<std::uint64_t> fencing_token) = 0;
  // Stores the new state (version + 1).
  virtual Task<void> store(RequestCtx& cx, Conn& c, const Plan& p) = 0;
  // Stores only if the version is still p.version (optimistic locking).
  virtual Task<bool> store_if_version(RequestCtx& cx, Conn& c, const Plan& p) = 0;
};

// switch-primary | single-call; throws SettingError for anything else.
std::unique_ptr<Scenario> make_scenario(std::string_view name);

// The seeded identities of user `key`: "auth0|u<key>" (the initial primary),
// "google-oauth2|u<key>", "github|u<key>", ... (`n` of them).
std::vector<std::string> identities_of(Key key, int n);
// The partner's reset document for keys 1..settings.keys (partner-api.md E).
nlohmann::json partner_reset_doc(const Settings& s);

}  // namespace lockbench

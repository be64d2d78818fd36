// The oracle's verdict: counts of every check kind and the findings behind
// them, and the service's side of the two-sided check (ServiceView).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lockbench::partner {

// Every kind counted by the oracle, in report order. The last four are
// counted but are not violations: retry_overlap (a request's own retry
// overlapping its earlier attempt: the client's retry policy at work),
// overlap_abandoned (a mutation arriving while another operation's call is
// still running although its client had already given up on it: the lock
// held, the client's timeout is shorter than the partner's work; the fix is an
// idempotency key or fencing, not another lock), ambiguous_commit and
// stale_token_rejected. abandoned_effect is a violation: a person found split
// or with its promotion lost after an effect the partner applied past its
// client's timeout (the client had given up, the service rolled back): counted
// instead of person_split / lost_promotion, since no lock could have prevented it.
inline constexpr std::string_view kCheckKinds[] = {
    "user_malformed",  "person_split",       "lost_promotion", "abandoned_effect", "overlap_person",      "flow_interleaving",
    "db_partner_divergence", "double_charge", "order_overlap", "orphan_charge",       "paid_without_charge",
    "overdrawn",       "balance_divergence", "duplicate_reward", "claim_divergence",  "retry_overlap",
    "overlap_abandoned", "ambiguous_commit", "stale_token_rejected"};
// The kinds that are counted but are not violations, each with what it means:
// the one list (the report, the CLI's table and the oracle's totals read it).
struct NoteKind {
  std::string_view kind;
  std::string_view meaning;  // one phrase, for the report's note
};
inline constexpr NoteKind kNoteKinds[] = {
    {"ambiguous_commit", "a commit whose answer was lost"},
    {"retry_overlap", "a request overlapping its own retry"},
    {"overlap_abandoned",
     "a call overlapping another request's call that its client had already abandoned: the lock held, the client's "
     "timeout is shorter than the partner's work; fix with an idempotency key or fencing"},
    {"stale_token_rejected", "fencing refusing a stale holder"}};
// False for the kinds in kNoteKinds (counted but not violations).
bool is_violation_kind(std::string_view kind);

struct Violation {
  std::string kind;     // one of kCheckKinds
  std::string subject;  // person (its seeded primary identity), order, account or customer id
  std::string detail;   // one human sentence
  std::vector<std::uint64_t> request_ids;  // X-Op-Id of the operations involved (0 = untagged)
};

// What the service's database stored, handed to check() for the two-sided verdict.
// Each part is optional: an absent part is not judged.
// JSON: {"primaries": {"auth0|u7": "google-oauth2|u7"},
//        "orders":    {"o1": {"status": "PAID", "charge_id": "ch_000001"}},
//        "balances":  {"a1": 2000},
//        "claims":    {"c1": {"welcome": 1}}}
struct ServiceOrder {
  std::string status;     // "PAID" is the one status the checks read; anything else is not paid
  std::string charge_id;  // "" = none stored
};
struct ServiceView {
  template <class V>
  using Map = std::map<std::string, V, std::less<>>;
  // Person (by its seeded primary identity, or any of its identities) -> the primary the service stored.
  std::optional<Map<std::string>> primaries;
  std::optional<Map<ServiceOrder>> orders;       // order id -> status and charge id
  std::optional<Map<std::int64_t>> balances;     // account id -> balance the service holds
  std::optional<Map<Map<std::int64_t>>> claims;  // customer id -> reward -> claim rows

  // Throws SettingError naming the path ("service.orders.o1.status: ...").
  static ServiceView from_json(const nlohmann::json& doc);
  nlohmann::json to_json() const;
};

// Extra facts the partner cannot see itself, given to check().
struct CheckInput {
  // Orders the service's database holds as paid; when given, a succeeded,
  // unrefunded charge for any other order is an orphan_charge. Superseded by
  // service.orders (which also names the charge); kept for older callers.
  std::optional<std::vector<std::string>> paid_orders;
  std::optional<ServiceView> service;
};

struct CheckReport {
  std::map<std::string, std::int64_t, std::less<>> counts;  // every kind of kCheckKinds, 0 included
  std::int64_t max_inflight_per_person = 0;  // distinct operations mutating one person at once
  std::int64_t episodes = 0;                 // quiet points judged (a person's in-flight set became empty)
  double corrupted_ms_max = 0;    // longest a person stayed split or lost its promotion (model time)
  double corrupted_ms_total = 0;  // summed over persons and stretches; open stretches run to `now`
  std::vector<Violation> violations;  // at most kMaxViolations listed; counts keep counting
  std::vector<Violation> notes;       // retry_overlap, overlap_abandoned, listed with request ids; at most kMaxViolations

  static constexpr std::size_t kMaxViolations = 1000;
  std::int64_t count(std::string_view kind) const;
  // {"counts":{...},"max_inflight_per_person":n,"episodes":n,"corrupted_ms_max":x,"corrupted_ms_total":x,
  //  "violations":[{kind,subject,detail,request_ids}],"notes":[...]}
  nlohmann::json to_json() const;
};

}  // namespace lockbench::partner

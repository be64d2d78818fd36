// The oracle's verdict: counts of every check kind and the violations behind them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace lockbench::partner {

// Every kind counted by the oracle, in report order. ambiguous_commit and
// stale_token_rejected are counted but are not violations of exclusion.
inline constexpr std::string_view kCheckKinds[] = {
    "identity_lost", "identity_duplicated", "user_malformed", "person_split",  "lost_promotion",
    "overlap_person", "flow_interleaving",  "double_charge",  "order_overlap", "orphan_charge",
    "ambiguous_commit", "stale_token_rejected"};

struct Violation {
  std::string kind;     // one of kCheckKinds
  std::string subject;  // person (its seeded primary identity) or order id
  std::string detail;   // one human sentence
  std::vector<std::uint64_t> request_ids;  // X-Op-Id of the operations involved (0 = untagged)
};

// Extra facts the partner cannot see itself, given to check().
struct CheckInput {
  // Orders the service's database holds as paid; when given, a succeeded,
  // unrefunded charge for any other order is an orphan_charge.
  std::optional<std::vector<std::string>> paid_orders;
};

struct CheckReport {
  std::map<std::string, std::int64_t, std::less<>> counts;  // every kind of kCheckKinds, 0 included
  std::int64_t max_inflight_per_person = 0;
  std::vector<Violation> violations;  // at most kMaxViolations listed; counts keep counting

  static constexpr std::size_t kMaxViolations = 1000;
  std::int64_t count(std::string_view kind) const;
  // {"counts":{...},"max_inflight_per_person":n,"violations":[{kind,subject,detail,request_ids}]}
  nlohmann::json to_json() const;
};

}  // namespace lockbench::partner

// The one list of scenarios. A new scenario is one file plus one row here.
#include "scenarios/registry.hpp"

#include "scenarios/scenarios.hpp"

namespace lockbench {

const std::vector<ScenarioInfo>& scenario_registry() {
  static const std::vector<ScenarioInfo> rows = {
      {"switch-primary", "promote an identity at the identity provider: unlink, then link (two calls)", true, false,
       &make_switch_primary},
      {"single-call", "one partner call in the critical section: the M/G/c queue of Little's law", true, false,
       &make_single_call},
      {"checkout", "create the order PAYMENT_PENDING, charge it at the payment provider, mark it PAID", false, true,
       &make_checkout},
  };
  return rows;
}

const ScenarioInfo& scenario_info(std::string_view name) {
  for (const auto& info : scenario_registry())
    if (info.name == name) return info;
  std::string accepted;
  for (const auto& info : scenario_registry()) accepted += (accepted.empty() ? "" : ", ") + std::string(info.name);
  throw SettingError("--scenario: '" + std::string(name) + "' is unknown (accepted: " + accepted + ")");
}

std::unique_ptr<Scenario> make_scenario(std::string_view name) { return scenario_info(name).make(); }

Effect refused_or_unknown(const PartnerReply& r) {
  if (!r.answered()) return Effect::unknown;
  if (r.status >= 400 && r.status < 500 && r.status != 429 && r.error_code != "idempotency_key_in_use")
    return Effect::refused;
  return Effect::unknown;
}

}  // namespace lockbench

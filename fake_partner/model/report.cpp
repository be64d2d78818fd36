// State and metrics documents (admin endpoints; never on the hot path).
#include <set>

#include "fake_partner/model/partner_impl.hpp"

namespace lockbench::partner {

nlohmann::json Partner::state_json() const {
  const auto& m = *impl_;
  nlohmann::json persons = nlohmann::json::array();
  for (int p = 0; p < static_cast<int>(m.persons.size()); ++p) {
    nlohmann::json idents = nlohmann::json::array();
    std::set<std::string> users;
    for (auto id : m.ids.person_identities(p)) {
      idents.push_back(m.ids.key(id));
      users.insert(m.ids.key(m.ids.owner(id)));
    }
    persons.push_back({{"person", m.person_name(p)},
                       {"identities", std::move(idents)},
                       {"users", users},
                       {"split", users.size() > 1},
                       {"inflight", m.persons[p].inflight.size()}});
  }
  nlohmann::json j = m.pay.json();
  j["seed"] = m.seed_in_use;
  j["users"] = m.ids.users_json();
  j["persons"] = std::move(persons);  // touched persons only: untouched range persons are whole
  j["persons_touched"] = m.ids.person_count();
  j["inflight"] = m.inflight.size();
  return j;
}

nlohmann::json Partner::metrics_json() const {
  const auto& m = *impl_;
  nlohmann::json requests = nlohmann::json::object(), faults = nlohmann::json::object(),
                 arrivals = nlohmann::json::object(), violations = nlohmann::json::object();
  for (auto e : kEndpoints) {
    const std::string name(endpoint_name(e));
    const int ei = index_of(e);
    nlohmann::json by_status = nlohmann::json::object();
    for (int s = 0; s < Metrics::kStatuses; ++s)
      if (m.metrics.answers[ei][s] != 0) by_status[s == 0 ? "none" : std::to_string(s)] = m.metrics.answers[ei][s];
    requests[name] = std::move(by_status);
    nlohmann::json by_kind = nlohmann::json::object();
    for (std::size_t k = 1; k < kFaultKindCount; ++k)  // 0 = none
      if (m.metrics.faults[ei][k] != 0)
        by_kind[std::string(fault_kind_name(static_cast<FaultPlan::Kind>(k)))] = m.metrics.faults[ei][k];
    faults[name] = std::move(by_kind);
    arrivals[name] = m.metrics.arrivals[ei];
  }
  for (int k = 0; k < kKindCount; ++k) violations[std::string(kCheckKinds[k])] = m.counts[k] + m.last_fresh[k];
  return {{"arrivals", std::move(arrivals)},
          {"requests", std::move(requests)},
          {"faults", std::move(faults)},
          {"inflight", m.inflight.size()},
          {"max_inflight_per_person", m.max_inflight_per_person},
          {"violations", std::move(violations)}};
}

std::string Partner::metrics_prometheus() const {
  const auto& m = *impl_;
  std::string out;
  const auto line = [&](std::string_view name, std::string labels, std::int64_t v) {
    out += name;
    if (!labels.empty()) out += "{" + labels + "}";
    out += " " + std::to_string(v) + "\n";
  };
  out += "# HELP partner_arrivals_total Calls that arrived, by endpoint.\n# TYPE partner_arrivals_total counter\n";
  for (auto e : kEndpoints)
    line("partner_arrivals_total", "endpoint=\"" + std::string(endpoint_name(e)) + "\"", m.metrics.arrivals[index_of(e)]);
  out += "# HELP partner_requests_total Calls answered, by endpoint and status (none = no HTTP answer).\n"
         "# TYPE partner_requests_total counter\n";
  for (auto e : kEndpoints)
    for (int s = 0; s < Metrics::kStatuses; ++s)
      if (m.metrics.answers[index_of(e)][s] != 0)
        line("partner_requests_total",
             "endpoint=\"" + std::string(endpoint_name(e)) + "\",status=\"" + (s == 0 ? "none" : std::to_string(s)) + "\"",
             m.metrics.answers[index_of(e)][s]);
  out += "# HELP partner_faults_total Faults injected, by endpoint and kind.\n# TYPE partner_faults_total counter\n";
  for (auto e : kEndpoints)
    for (std::size_t k = 1; k < kFaultKindCount; ++k)  // 0 = none
      if (m.metrics.faults[index_of(e)][k] != 0)
        line("partner_faults_total",
             "endpoint=\"" + std::string(endpoint_name(e)) + "\",kind=\"" +
                 std::string(fault_kind_name(static_cast<FaultPlan::Kind>(k))) + "\"",
             m.metrics.faults[index_of(e)][k]);
  out += "# HELP partner_inflight Calls in flight.\n# TYPE partner_inflight gauge\n";
  line("partner_inflight", "", static_cast<std::int64_t>(m.inflight.size()));
  out += "# HELP partner_max_inflight_per_person Most mutations of one person in flight at once since reset.\n"
         "# TYPE partner_max_inflight_per_person gauge\n";
  line("partner_max_inflight_per_person", "", m.max_inflight_per_person);
  out += "# HELP partner_violations_total Oracle findings by kind (state checks as of the last check).\n"
         "# TYPE partner_violations_total counter\n";
  for (int k = 0; k < kKindCount; ++k)
    line("partner_violations_total", "kind=\"" + std::string(kCheckKinds[k]) + "\"", m.counts[k] + m.last_fresh[k]);
  return out;
}

void Partner::reset_metrics() { impl_->metrics = {}; }

std::size_t Partner::persons_touched() const { return impl_->ids.person_count(); }

}  // namespace lockbench::partner

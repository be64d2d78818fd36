#include "real/run_common.hpp"

#include <algorithm>

#include "fake_partner/model/call.hpp"
#include "real/pg_conn.hpp"

namespace lockbench::real {

nlohmann::json partner_config(const Settings& s) {
  nlohmann::json latency = s.partner_latency.to_json();
  latency["apply_at"] = s.apply_at;
  nlohmann::json faults = nlohmann::json::object();
  faults["*"] = s.partner_faults.contains("*") ? s.partner_faults["*"] : nlohmann::json(nullptr);
  for (const auto endpoint : partner::kEndpoints) {
    const std::string e(partner::endpoint_name(endpoint));
    faults[e] = s.partner_faults.contains(e) ? s.partner_faults[e] : nlohmann::json(nullptr);
  }
  for (auto it = s.partner_faults.begin(); it != s.partner_faults.end(); ++it) faults[it.key()] = it.value();
  return {{"seed", s.seed}, {"latency", {{"*", latency}}}, {"faults", faults}, {"fencing", s.fencing}};
}

nlohmann::json partner_block(PartnerHttp& partner, const std::optional<nlohmann::json>& service) {
  const nlohmann::json check = partner.check(service);
  const nlohmann::json metrics = partner.metrics();
  std::int64_t calls = 0;
  if (metrics.contains("arrivals"))
    for (const auto& [endpoint, n] : metrics["arrivals"].items())
      if (n.is_number()) calls += n.get<std::int64_t>();
  const nlohmann::json violations = check.contains("counts") ? check["counts"] : nlohmann::json::object();
  const std::int64_t inflight = std::max(check.value("max_inflight_per_person", std::int64_t{0}),
                                         metrics.value("max_inflight_per_person", std::int64_t{0}));
  nlohmann::json details = nlohmann::json::array();
  if (check.contains("violations"))
    for (const auto& v : check["violations"]) {
      if (details.size() >= 200) break;
      details.push_back(v);
    }
  nlohmann::json out = {{"available", true},
                        {"calls", calls},
                        {"violations", violations},
                        {"max_inflight_per_person", inflight},
                        {"details", details}};
  for (const char* k : {"episodes", "corrupted_ms_max", "corrupted_ms_total", "notes"})
    if (check.contains(k)) out[k] = check[k];
  return out;
}

nlohmann::json partner_unavailable(const std::string& reason) {
  return {{"available", false}, {"unavailable_reason", reason}, {"verdict", "unavailable"}, {"calls", nullptr}};
}

std::string postgresql_version(const std::string& url, const std::string& application_name) {
  try {
    auto c = open_session(url, application_name);
    pqxx::nontransaction tx(*c);
    return tx.exec1("SHOW server_version")[0].as<std::string>();
  } catch (const std::exception&) {
    return "";
  }
}

}  // namespace lockbench::real

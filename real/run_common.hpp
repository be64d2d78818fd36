// What both real-world runners share (run_real: pods as threads; run_pods:
// pods as processes or the user's own services): the partner's configuration
// for a run, the result's partner block from the oracle, and the database's
// version for provenance.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/settings.hpp"
#include "real/partner_http.hpp"

namespace lockbench::real {

// The run's partner configuration as a merge patch (partner-api.md E): its
// latency and apply_at, its faults per endpoint (endpoints without faults this
// run get null, removed), its fencing mode.
nlohmann::json partner_config(const Settings& s);

// The result's partner block: {available: true, calls, violations, max_inflight_per_person, details
// (the first 200), episodes, corrupted_ms_max, corrupted_ms_total, notes}. `service`: what the
// service's database holds (Scenario::service_view); nullopt = the partner's own checks only.
// Throws std::runtime_error when the partner cannot be read.
nlohmann::json partner_block(PartnerHttp& partner, const std::optional<nlohmann::json>& service);

// The block of a run whose partner could not be read: no verdict, and no count pretends to be 0.
nlohmann::json partner_unavailable(const std::string& reason);

// The server's version for the result's provenance; "" when it cannot be read.
std::string postgresql_version(const std::string& url, const std::string& application_name);

}  // namespace lockbench::real

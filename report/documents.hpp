// Internal: report.md and report.html from results and already-drawn charts.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/charts.hpp"
#include "report/report.hpp"

namespace lockbench::report::detail {

// `charts` may be empty: the Markdown then links no images.
std::string markdown(const std::vector<nlohmann::json>& results, const ReportOptions& options,
                     const std::vector<Chart>& charts);
std::string html(const std::vector<nlohmann::json>& results, const ReportOptions& options,
                 const std::vector<Chart>& charts);

// The result a diagram is drawn from: the first with a captured race, the
// first held-tx run whose trace holds a pool timeout.
const nlohmann::json* race_source(const std::vector<nlohmann::json>& results);
const nlohmann::json* exhaustion_source(const std::vector<nlohmann::json>& results);

}  // namespace lockbench::report::detail

// lint --code's outputs: text (one paragraph a finding), JSON, and SARIF 2.1.0
// (one result a finding, on its file and line, the call path as a codeFlow, so
// that GitHub code scanning shows it where it is).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lint_code/findings.hpp"
#include "lint_code/scan.hpp"

namespace lockbench::lint_code {

// "read 12 Java files (34 KiB); skipped: 2 not Java, 1 over 4 MiB, ..."; syntax errors named by file.
std::string scan_summary(const Scan& scan);
std::string render_text(const Scan& scan, const std::vector<Finding>& findings);
nlohmann::json render_json(const Scan& scan, const std::vector<Finding>& findings);
nlohmann::json render_sarif(const Scan& scan, const std::vector<Finding>& findings);

}  // namespace lockbench::lint_code

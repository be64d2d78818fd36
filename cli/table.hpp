// The console table `run` and `sweep` print (cli/table.cpp): one row per
// result. Its counts and ceiling are the report's (report/fields.hpp
// violations_of, ceiling_per_s), so the two never disagree; golden-tested in
// tests/golden.
#pragma once

#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

namespace lockbench::cli {

// One row per result: outcomes, ok/s beside the Little's-law ceiling,
// latency, pool, and what the partner saw; then the footer.
void print_table(std::ostream& out, const std::vector<nlohmann::json>& results);

}  // namespace lockbench::cli

// The report's first screen names false conflicts (--key-hash) when a run counted them.
#include <gtest/gtest.h>

#include "report/report.hpp"
#include "report/test_fixtures.hpp"

namespace lockbench::report {
namespace {

std::string what_the_runs_show(const std::string& md) {
  const auto from = md.find("### What the runs show");
  return md.substr(from, md.find("## Charts") - from);
}

TEST(ReportKeyHash, ARunWithFalseConflictsIsNamedWithItsHash) {
  auto results = fixtures::sweep();
  for (auto& r : results)
    if (r["strategy"] == "advisory-xact:try") {
      r["settings"]["key-hash"] = "hashtext-32";
      r["locks"]["false_conflicts"] = 7;
    }
  const std::string text = what_the_runs_show(render_markdown(results));
  EXPECT_NE(text.find("`advisory-xact:try` denied 7 requests for another key's lock (false conflicts, --key-hash "
                      "hashtext-32)"),
            std::string::npos)
      << text;
}

TEST(ReportKeyHash, NoFalseConflictsNoSentence) {
  auto results = fixtures::sweep();
  for (auto& r : results)
    if (r["strategy"] == "advisory-xact:try") {
      r["settings"]["key-hash"] = "sha256-64";
      r["locks"]["false_conflicts"] = 0;
    }
  EXPECT_EQ(render_markdown(results).find("false conflicts"), std::string::npos);
}

}  // namespace
}  // namespace lockbench::report

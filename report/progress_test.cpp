// Progress: the line's content, and silence when not drawing to a terminal.
#include <gtest/gtest.h>

#include <sstream>

#include "report/progress.hpp"

namespace lockbench::report {
namespace {

using namespace std::chrono_literals;

TEST(Progress, line_shows_elapsed_requests_ok_rate_and_eta) {
  const std::string line = Progress::format_line("held-tx @ 20/s", 10s, 30s, 1234, 500);
  EXPECT_EQ(line, "held-tx @ 20/s [  10.0s] 1234 requests  50.0 ok/s  ETA 20s");
  EXPECT_NE(Progress::format_line("", 10s, 0s, 1, 1).find("ETA –"), std::string::npos);
  EXPECT_NE(Progress::format_line("", 40s, 30s, 1, 1).find("finishing"), std::string::npos);
  EXPECT_NE(Progress::format_line("", 10s, 200s, 1, 1).find("ETA 3m10s"), std::string::npos);
}

TEST(Progress, writes_nothing_when_not_a_terminal) {
  std::ostringstream out;
  {
    Progress p(30s, "x", out, false);
    p.update(10, 5, true);
    p.finish();
  }
  EXPECT_TRUE(out.str().empty());
}

TEST(Progress, redraws_one_line_and_ends_it_once) {
  std::ostringstream out;
  {
    Progress p(30s, "x", out, true);
    p.update(10, 5, true);
    p.update(20, 9, true);
    p.finish();
    p.finish();
  }
  const std::string s = out.str();
  EXPECT_EQ(std::count(s.begin(), s.end(), '\r'), 3);  // two updates and the final draw
  EXPECT_EQ(std::count(s.begin(), s.end(), '\n'), 1);
  EXPECT_NE(s.find("20 requests"), std::string::npos);
}

}  // namespace
}  // namespace lockbench::report

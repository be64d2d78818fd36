// Progress: the line's content, and silence when not drawing to a terminal.
#include <gtest/gtest.h>

#include <sstream>

#include "report/progress.hpp"

namespace lockbench::report {
namespace {

using namespace std::chrono_literals;

Progress::Plan plan(std::string position, std::string label, std::chrono::nanoseconds planned) {
  Progress::Plan p;
  p.position = std::move(position);
  p.label = std::move(label);
  p.planned = planned;
  return p;
}

TEST(Progress, LineShowsPlaceStrategyVirtualTimeAgainstThePlanAndAWallEta) {
  // 2 s of wall time for 2 of 10 virtual minutes: 8 more seconds at that pace.
  const std::string line = Progress::format_line(plan("[2/6]", "held-tx:wait", 10min), 2s, 2min, 1234, 412);
  EXPECT_EQ(line, "[2/6] held-tx:wait  2m00s / 10m00s virtual  1234 requests, 412 ok  ETA 8.0s");
}

TEST(Progress, ASweepShowsTheVariedValueAndARealRunItsConfiguredClock) {
  Progress::Plan p = plan("[3/12]", "rate=8 row-lease", 60s);
  p.clock = "configured (x0.1)";
  const std::string line = Progress::format_line(p, 3s, 30s, 240, 200);
  EXPECT_EQ(line.rfind("[3/12] rate=8 row-lease  30s / 1m00s configured (x0.1)", 0), 0u) << line;
  EXPECT_NE(line.find("ETA 3.0s"), std::string::npos) << line;
}

TEST(Progress, SaysDrainingAfterTheArrivalsAndNothingBeforeTheClockMoved) {
  EXPECT_NE(Progress::format_line(plan("", "x", 30s), 1s, 40s, 1, 1).find("draining"), std::string::npos);
  EXPECT_NE(Progress::format_line(plan("", "x", 30s), 1s, 0s, 0, 0).find("ETA –"), std::string::npos);
  EXPECT_NE(Progress::format_line(plan("", "x", 0s), 1s, 5s, 1, 1).find("ETA –"), std::string::npos);
}

TEST(Progress, DividesTheWorldsClockByTheTimeScale) {
  std::ostringstream out;
  Progress::Plan p = plan("", "row-lease", 60s);
  p.clock = "configured";
  p.time_scale = 0.1;
  {
    Progress pr(p, out, true);
    pr.update(10, 5, 3s, true);  // 3 s of a x0.1 run = 30 s configured
  }
  EXPECT_NE(out.str().find("30s / 1m00s configured"), std::string::npos) << out.str();
}

TEST(Progress, WritesNothingWhenNotATerminal) {
  std::ostringstream out;
  {
    Progress p(plan("", "x", 30s), out, false);
    p.update(10, 5, 1s, true);
    p.finish();
  }
  EXPECT_TRUE(out.str().empty());
}

TEST(Progress, RedrawsOneLineAndEndsItOnce) {
  std::ostringstream out;
  {
    Progress p(plan("", "x", 30s), out, true);
    p.update(10, 5, 1s, true);
    p.update(20, 9, 2s, true);
    p.finish();
    p.finish();
  }
  const std::string s = out.str();
  EXPECT_EQ(std::count(s.begin(), s.end(), '\r'), 3);  // two updates and the final draw
  EXPECT_EQ(std::count(s.begin(), s.end(), '\n'), 1);
  EXPECT_NE(s.find("20 requests, 9 ok"), std::string::npos);
}

}  // namespace
}  // namespace lockbench::report

// The recovery block's definition (core/recovery.hpp) on made-up requests:
// one request every 100 ms (300 in a 30 s window), a window of bad answers, then good ones.
#include "core/recovery.hpp"

#include <gtest/gtest.h>

namespace lockbench {
namespace {

using namespace std::chrono_literals;

// Requests every 100 ms over [0, end): inside [bad_from, bad_until) they fail
// (pool_timeout after 30 s); elsewhere ok in `ok_latency`.
std::vector<Recorder::Finished> made_up(Duration end, Duration bad_from, Duration bad_until, Duration ok_latency = 200ms) {
  std::vector<Recorder::Finished> out;
  for (Duration t = 0s; t < end; t += 100ms) {
    const bool bad = t >= bad_from && t < bad_until;
    out.push_back({t, bad ? 30s : ok_latency, bad ? Outcome::pool_timeout : Outcome::ok});
  }
  return out;
}

TEST(Recovery, IsTheTimeFromTheWindowsEndToTheFirstGoodThirtySecondWindow) {
  // The partner is bad in [60 s, 90 s); the service fails until 97 s.
  const auto r = recovery_json(made_up(180s, 60s, 97s), 60s, 90s, 180s);
  EXPECT_TRUE(r["recovered"]);
  // [94 s, 124 s) holds 30 failures in 300: 90 % of the ok share before, the first such window.
  EXPECT_DOUBLE_EQ(r["recovery_s"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(r["before"]["ok_share"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(r["before"]["p99_ok_ms"].get<double>(), 200.0);
  EXPECT_EQ(r["before"]["requests"], 600);
  EXPECT_LT(r["during"]["ok_share"].get<double>(), 0.01);
}

TEST(Recovery, AllowsTenPercentLessOkThanBeforeButNotAHigherP99) {
  auto reqs = made_up(180s, 60s, 90s);
  for (auto& q : reqs)  // one in ten fails after the window: still "within 10 % of offered"
    if (q.intended >= 90s && (q.intended / 100ms) % 10 == 0) q.outcome = Outcome::error;
  const auto r = recovery_json(reqs, 60s, 90s, 180s);
  EXPECT_TRUE(r["recovered"]);
  EXPECT_DOUBLE_EQ(r["recovery_s"].get<double>(), 0.0);

  auto slower = made_up(180s, 60s, 90s);
  for (auto& q : slower)
    if (q.intended >= 90s && q.intended < 120s) q.latency = 300ms;  // ok, but slower than before until 120 s
  const auto s = recovery_json(slower, 60s, 90s, 180s);
  EXPECT_DOUBLE_EQ(s["recovery_s"].get<double>(), 30.0);
}

TEST(Recovery, ComparesTheOkShareWithTheOneBeforeSoConflictsOfAWellServiceDoNotCount) {
  auto reqs = made_up(180s, 60s, 90s);
  for (auto& q : reqs)  // a quarter of the requests meet a busy key all along: 409, an answer
    if ((q.intended / 100ms) % 4 == 0 && q.outcome == Outcome::ok) q.outcome = Outcome::conflict;
  const auto r = recovery_json(reqs, 60s, 90s, 180s);
  EXPECT_DOUBLE_EQ(r["before"]["ok_share"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(r["before"]["answered_share"].get<double>(), 1.0);
  EXPECT_TRUE(r["recovered"]);
  EXPECT_DOUBLE_EQ(r["recovery_s"].get<double>(), 0.0);
}

TEST(Recovery, AWindowThatRelapsesDoesNotCountAsRecovered) {
  auto reqs = made_up(200s, 60s, 90s);
  for (auto& q : reqs)  // good from 90 s, down again in [130 s, 150 s)
    if (q.intended >= 130s && q.intended < 150s) q.outcome = Outcome::pool_timeout;
  const auto r = recovery_json(reqs, 60s, 90s, 200s);
  EXPECT_TRUE(r["recovered"]);
  EXPECT_DOUBLE_EQ(r["recovery_s"].get<double>(), 57.0);  // from [147 s, 177 s) on (30 failures in 300), not from 90 s
}

TEST(Recovery, IsNotDefinedWhenTheServiceWasNotWellBeforeNeverRecoversOrTheWindowNeverEnds) {
  const auto sick = recovery_json(made_up(180s, 0s, 180s), 60s, 90s, 180s);
  EXPECT_FALSE(sick["recovered"]);
  EXPECT_TRUE(sick["recovery_s"].is_null());
  EXPECT_NE(sick["reason"].get<std::string>().find("not well before"), std::string::npos);

  const auto never = recovery_json(made_up(180s, 60s, 180s), 60s, 90s, 180s);
  EXPECT_FALSE(never["recovered"]);
  EXPECT_NE(never["reason"].get<std::string>().find("not recovered"), std::string::npos);

  const auto endless = recovery_json(made_up(180s, 60s, 180s), 60s, std::nullopt, 180s);
  EXPECT_TRUE(endless["recovery_s"].is_null());
  EXPECT_TRUE(endless["window_until_s"].is_null());

  const auto from_start = recovery_json(made_up(180s, 0s, 30s), 0s, 30s, 180s);
  EXPECT_NE(from_start["reason"].get<std::string>().find("no request before"), std::string::npos);
}

}  // namespace
}  // namespace lockbench

// lint check 6 (check_probes): a liveness probe that checks the database is
// flagged, one that does not is not; readiness with the database warns for a
// strategy that holds a connection through the call.
#include <gtest/gtest.h>

#include "report/lint.hpp"

namespace lockbench::report {
namespace {

using namespace std::chrono_literals;

LintInput incident(const std::string& strategy, const std::string& liveness, const std::string& readiness = "off") {
  LintInput in;
  in.read_timeout = 10s;
  in.strategy = strategy;
  in.pool_size = 30;
  in.rate_per_s = 20;
  in.partner_mean = 1640ms;
  in.partner_p99 = 4s;
  in.liveness = parse_probe(liveness, "--liveness", true);
  in.readiness = parse_probe(readiness, "--readiness", false);
  return in;
}

std::vector<LintFinding> probes(const LintReport& r) {
  std::vector<LintFinding> out;
  for (const auto& f : r.findings)
    if (f.check == "probes") out.push_back(f);
  return out;
}

TEST(LintProbes, FlagsALivenessProbeThatChecksTheDatabase) {
  const LintReport r = lint(incident("held-tx", "on"));
  const auto f = probes(r);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].level, LintFinding::Level::flag);
  EXPECT_NE(f[0].message.find("--liveness db=off"), std::string::npos) << f[0].message;
  EXPECT_NE(f[0].message.find("held-tx, which holds"), std::string::npos) << f[0].message;
  EXPECT_TRUE(r.flagged());
}

TEST(LintProbes, PassesALivenessProbeWithoutTheDatabaseAndSaysNothingWithoutProbes) {
  const auto f = probes(lint(incident("held-tx", "db=off")));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].level, LintFinding::Level::ok);
  EXPECT_TRUE(probes(lint(incident("held-tx", "off"))).empty());
}

TEST(LintProbes, WarnsOfADbReadinessProbeOnlyForAStrategyThatHoldsAConnection) {
  const auto held = probes(lint(incident("held-tx", "db=off", "on")));
  ASSERT_EQ(held.size(), 2u);
  EXPECT_EQ(held[0].level, LintFinding::Level::warn);
  const auto lease = probes(lint(incident("row-lease", "db=off", "on")));
  ASSERT_EQ(lease.size(), 1u);
  EXPECT_EQ(lease[0].level, LintFinding::Level::ok);
}

}  // namespace
}  // namespace lockbench::report

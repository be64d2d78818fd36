// lint check 6 (check_probes): a liveness probe that checks the database is
// flagged, one that does not is not; readiness with the database warns for a
// strategy that holds a connection through the call, and for a timeout shorter
// than the pool's connectionTimeout. A Deployment's probe gets its database
// check from its httpGet path and the Spring file's actuator keys.
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
  LintInput held_in = incident("held-tx", "db=off", "on");
  held_in.pool_connection_timeout = 1s;  // no longer than the probe's timeout: the holding alone
  const auto held = probes(lint(held_in));
  ASSERT_EQ(held.size(), 2u);
  EXPECT_EQ(held[0].level, LintFinding::Level::warn);
  LintInput lease_in = incident("row-lease", "db=off", "on");
  lease_in.pool_connection_timeout = 1s;
  const auto lease = probes(lint(lease_in));
  ASSERT_EQ(lease.size(), 1u);
  EXPECT_EQ(lease[0].level, LintFinding::Level::ok);
}

// The PostHog #46457 shape: the health check waits for a connection up to
// connectionTimeout, kubelet only timeoutSeconds: a busy pod is pulled.
TEST(LintProbes, WarnsOfADbReadinessProbeWhoseTimeoutIsShorterThanTheConnectionTimeout) {
  LintInput in = incident("row-lease", "off", "timeoutSeconds=2");
  in.pool_connection_timeout = 20s;
  const auto f = probes(lint(in));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].level, LintFinding::Level::warn);
  EXPECT_NE(f[0].message.find("connectionTimeout 20s"), std::string::npos) << f[0].message;
  EXPECT_NE(f[0].message.find("timeoutSeconds 2s"), std::string::npos) << f[0].message;
  EXPECT_NE(f[0].message.find("PostHog #46457"), std::string::npos) << f[0].message;
  in.pool_connection_timeout = 2s;  // kubelet waits as long as the check: no finding
  EXPECT_TRUE(probes(lint(in)).empty());
  in.pool_connection_timeout = 20s;
  in.readiness.db = false;  // a readiness probe that does not borrow a connection: none either
  EXPECT_TRUE(probes(lint(in)).empty());
}

// A Deployment's probes: the path decides, read with the Spring file's keys.
LintInput deployed(const std::string& liveness_path, const SpringHealth& health = {}) {
  LintInput in = incident("held-tx", "on");
  in.liveness_source = {"Deployment orders, container app", liveness_path};
  in.health = health;
  return in;
}

TEST(LintProbes, FlagsADeploymentsLivenessProbeOnTheAggregateHealthPath) {
  const auto f = probes(lint(deployed("/actuator/health")));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].level, LintFinding::Level::flag);
  EXPECT_NE(f[0].message.find("Deployment orders, container app: livenessProbe httpGet /actuator/health every 10s"),
            std::string::npos)
      << f[0].message;
  EXPECT_NE(f[0].message.find("the restart cascade"), std::string::npos) << f[0].message;
  EXPECT_NE(f[0].message.find("livenessProbe.httpGet.path: /actuator/health/liveness"), std::string::npos)
      << f[0].message;
}

TEST(LintProbes, PassesALivenessProbeOnTheLivenessGroupAndTheAggregateWithoutTheDbIndicator) {
  SpringHealth h;
  h.probes_enabled = true;
  const auto group = probes(lint(deployed("/actuator/health/liveness", h)));
  ASSERT_EQ(group.size(), 1u);
  EXPECT_EQ(group[0].level, LintFinding::Level::ok);
  EXPECT_NE(group[0].message.find("livenessState alone"), std::string::npos) << group[0].message;
  SpringHealth no_db;
  no_db.db_enabled = false;
  const auto aggregate = probes(lint(deployed("/actuator/health", no_db)));
  ASSERT_EQ(aggregate.size(), 1u);
  EXPECT_EQ(aggregate[0].level, LintFinding::Level::ok) << aggregate[0].message;
}

TEST(LintProbes, FlagsALivenessGroupThatIncludesTheDatabase) {
  SpringHealth h;
  h.groups["liveness"] = {"livenessState", "db"};
  const auto f = probes(lint(deployed("/actuator/health/liveness", h)));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].level, LintFinding::Level::flag);
  EXPECT_NE(f[0].message.find("management.endpoint.health.group.liveness.include=livenessState,db"), std::string::npos)
      << f[0].message;
  EXPECT_NE(f[0].message.find("take db out of management.endpoint.health.group.liveness.include"), std::string::npos)
      << f[0].message;
  // The same group in the Spring file, with no probe given: flagged for whatever probe uses it.
  LintInput no_probe = incident("held-tx", "off");
  no_probe.health = h;
  ASSERT_EQ(probes(lint(no_probe)).size(), 1u);
  EXPECT_EQ(probes(lint(no_probe))[0].level, LintFinding::Level::flag);
  no_probe.health.groups["liveness"] = {"livenessState"};
  EXPECT_TRUE(probes(lint(no_probe)).empty());
}

TEST(LintProbes, FlagsAProbeGroupSpringDoesNotServeAndWarnsOfAPathItDoesNotKnow) {
  SpringHealth off;
  off.probes_enabled = false;
  const auto unserved = probes(lint(deployed("/actuator/health/liveness", off)));
  ASSERT_EQ(unserved.size(), 1u);
  EXPECT_EQ(unserved[0].level, LintFinding::Level::flag);
  EXPECT_NE(unserved[0].message.find("404"), std::string::npos) << unserved[0].message;
  const auto custom = probes(lint(deployed("/healthz")));
  ASSERT_EQ(custom.size(), 1u);
  EXPECT_EQ(custom[0].level, LintFinding::Level::warn);
}

TEST(LintProbes, HealthPathsAsSpringBootServesThem) {
  SpringHealth h;
  EXPECT_TRUE(health_path("/actuator/health", h).db);
  EXPECT_TRUE(health_path("/actuator/health/", h).db);
  EXPECT_FALSE(health_path("/actuator/health/liveness", h).db);
  EXPECT_FALSE(health_path("/livez", h).db);
  EXPECT_TRUE(health_path("/actuator/health/db", h).db);
  EXPECT_FALSE(health_path("/health", h).known);  // not under the base path
  h.base_path = "/manage/";
  EXPECT_TRUE(health_path("/manage/health?x=1", h).db);
  h.groups["readiness"] = {"*"};
  EXPECT_TRUE(health_path("/manage/health/readiness", h).db);
  EXPECT_TRUE(health_path("/readyz", h).db);
  h.groups_exclude["readiness"] = {"db"};
  EXPECT_FALSE(health_path("/manage/health/readiness", h).db);
}

}  // namespace
}  // namespace lockbench::report

#include <gtest/gtest.h>

#include "core/result.hpp"

using namespace lockbench;
using namespace std::chrono_literals;

TEST(Result, HasEveryContractFieldAndTheLittlesLawPrediction) {
  Settings s;
  s.maximum_pool_size = 10;
  Recorder rec;
  PoolStats pool;
  pool.size = 10;
  for (int i = 0; i < 100; ++i) {
    rec.finish(i + 1, Outcome::ok, 0ms, 1500ms + std::chrono::milliseconds(i), {});
    pool.hold_ms.add(1500);
  }
  ProbeStats probe;
  RunSummary run{&s, "sim", "held-tx:wait", true, 2, &rec, &pool, &probe, {}, {}, "", "", {}, false};
  const auto j = make_result(run);
  for (const char* f : {"schema", "world", "scenario", "strategy", "seed", "settings", "offered_per_s", "duration_s",
                        "requests", "throughput_ok_per_s", "latency_ms", "pool", "probe", "locks", "partner",
                        "prediction"})
    EXPECT_TRUE(j.contains(f)) << f;
  EXPECT_EQ(j["schema"], "lockbench.result/1");
  EXPECT_EQ(j["requests"]["ok"], 100);
  for (const char* f : {"p50", "p90", "p99", "p999", "max"}) EXPECT_TRUE(j["latency_ms"].contains(f)) << f;
  for (const auto& k : violation_kinds()) EXPECT_EQ(j["partner"]["violations"][k], 0) << k;
  // the seed's figure: 10 connections / 1.5 s = 6.67 per second
  EXPECT_NEAR(j["prediction"]["littles_law_ceiling_per_s"].get<double>(), 6.667, 0.01);
}

namespace lockbench {
namespace {

TEST(Result, ALostPartnerGivesAnUnavailableVerdictWithNullCountsAndAnIncompleteResult) {
  Settings s;
  Recorder rec;
  PoolStats pool;
  ProbeStats probe;
  rec.finish(1, Outcome::error, 0ms, 10ms, {});
  RunSummary run{&s, "real", "row-lease", false, 2, &rec, &pool, &probe,
                 {{"available", false}, {"unavailable_reason", "cannot read the checks"}}, {}, "", "", {}, false};
  run.run_id = "abc-1";
  const auto j = make_result(run);
  EXPECT_EQ(j["complete"], false);
  EXPECT_EQ(j["interrupted"], false);
  EXPECT_EQ(j["run_id"], "abc-1");
  EXPECT_EQ(j["partner"]["verdict"], "unavailable");
  EXPECT_EQ(j["partner"]["unavailable_reason"], "cannot read the checks");
  for (const auto& k : violation_kinds()) EXPECT_TRUE(j["partner"]["violations"][k].is_null()) << k;
}

TEST(Result, AnInterruptedRunIsMarkedIncompleteAndAnOrdinaryOneComplete) {
  Settings s;
  Recorder rec;
  PoolStats pool;
  ProbeStats probe;
  RunSummary run{&s, "sim", "none", false, 2, &rec, &pool, &probe, {}, {}, "", "", {}, false};
  auto j = make_result(run);
  EXPECT_EQ(j["complete"], true);
  EXPECT_TRUE(j["run_id"].is_null());  // the simulator's result stays byte-identical for a seed
  EXPECT_EQ(j["partner"]["available"], true);
  run.interrupted = true;
  j = make_result(run);
  EXPECT_EQ(j["interrupted"], true);
  EXPECT_EQ(j["complete"], false);
}

TEST(Result, TheSettingsBlockIsTheRunnersWithTheRunsStrategy) {
  Settings s;
  Recorder rec;
  PoolStats pool;
  ProbeStats probe;
  RunSummary run{&s, "sim", "held-tx:wait", false, 2, &rec, &pool, &probe, {}, {}, "", "", {}, false};
  run.settings_json = {{"maximum-pool-size", 7}, {"strategy", "all"}};
  const auto j = make_result(run);
  EXPECT_EQ(j["settings"]["maximum-pool-size"], 7);
  EXPECT_EQ(j["settings"]["strategy"], "held-tx:wait");  // the run's own, not the list it came from
}

}  // namespace
}  // namespace lockbench

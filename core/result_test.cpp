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
  RunSummary run{&s, "sim", "held-tx:wait", true, 2, &rec, &pool, &probe, {}, {}, "", ""};
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

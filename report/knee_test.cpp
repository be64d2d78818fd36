// The knee (report/knee.hpp): its ok/s test against the requests actually
// offered over the arrival window, and its bisection over every seed at each
// rate. Deterministic simulator runs: the same seeds give the same figures.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/settings.hpp"
#include "report/knee.hpp"
#include "sim/run_sim.hpp"

namespace lockbench::report {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// held-tx:wait holding one of 5 connections for each exponential 500 ms call:
// its ceiling is 5 / 0.5 s = 10/s (the and docs/uncertainty.md's workload).
Settings held_tx_5(double rate_per_s, std::uint64_t seed, Duration duration) {
  Settings s;
  s.scenario = "single-call";
  s.strategy = "held-tx:wait";
  s.seed = seed;
  s.maximum_pool_size = 5;
  s.partner_latency = Distribution::exponential(500);
  s.keys = 10000;
  s.key_dist = KeyDist::uniform;
  s.rate_per_s = rate_per_s;
  s.duration = duration;
  s.trace_requests = 0;
  s.check_fields();
  s.check_memory();
  return s;
}

// The seeds of `sweep --repetitions 5` from the default seed.
std::vector<std::uint64_t> five_seeds() {
  std::vector<std::uint64_t> seeds;
  for (int i = 0; i < 5; ++i) seeds.push_back(repetition_seed(1, i));
  return seeds;
}

// The test the knee used to make: ok/s over the whole run (drain included) against the nominal rate.
bool below_knee_by_nominal_rate(const json& r, Duration p99_target) {
  return r["throughput_ok_per_s"].get<double>() >= kKneeOkShareMin * r["offered_per_s"].get<double>() &&
         r["latency_ms"]["p99"].get<double>() <= to_ms(p99_target);
}

// find_knee over the seeds, each rate run on every seed.
KneeSearch knee_over(const std::vector<std::uint64_t>& seeds, const std::function<Settings(double, std::uint64_t)>& at,
                     Duration p99_target, double start, int steps, int doublings) {
  return find_knee(
      [&](double rate) {
        int passed = 0;
        for (const auto seed : seeds) passed += below_knee(run_sim(at(rate, seed)), p99_target) ? 1 : 0;
        return passed;
      },
      static_cast<int>(seeds.size()), start, steps, doublings);
}

json result_with(double total, double ok, double p99_ms) {
  return {{"offered_per_s", 1000.0},  // a nominal rate far above: no longer what ok is compared with
          {"throughput_ok_per_s", 0.001},
          {"requests", {{"total", total}, {"ok", ok}}},
          {"latency_ms", {{"p99", p99_ms}}}};
}

TEST(Knee, ComparesOkWithTheRequestsOfferedNotTheNominalRate) {
  EXPECT_DOUBLE_EQ(knee_ok_share(result_with(200, 190, 10)), 0.95);
  EXPECT_TRUE(below_knee(result_with(200, 190, 10), 1s));
  EXPECT_FALSE(below_knee(result_with(200, 189, 10), 1s));   // under 95 % of the arrivals
  EXPECT_FALSE(below_knee(result_with(200, 200, 1001), 1s));  // p99 over the target
  EXPECT_FALSE(below_knee(result_with(0, 0, 0), 1s));         // no request: nothing served
  EXPECT_FALSE(below_knee(json::object(), 1s));
}

TEST(Knee, HalfLoadPassesOnEverySeedWhereTheNominalRateFailedSome) {
  // 5/s, half the ceiling, for 30 s: about 150 Poisson arrivals (± 12), every one served. The p99
  // target of 5 s leaves the ok/s test alone to decide.
  int old_failed = 0;
  for (const auto seed : five_seeds()) {
    const json r = run_sim(held_tx_5(5, seed, 30s));
    EXPECT_GT(knee_ok_share(r), 0.99) << "seed " << seed;
    EXPECT_TRUE(below_knee(r, 5s)) << "seed " << seed << ": " << r["requests"].dump();
    old_failed += below_knee_by_nominal_rate(r, 5s) ? 0 : 1;
  }
  // The old test failed on 3 of these 5 seeds by chance alone: 134, 137 and 142 arrivals for
  // the nominal 150, over a duration of 30.1 to 30.9 s with the drain.
  EXPECT_GE(old_failed, 2);
}

TEST(Knee, AboveTheCeilingFailsOnEverySeed) {
  for (const auto seed : five_seeds()) {
    const json r = run_sim(held_tx_5(20, seed, 120s));  // twice the ceiling of 10/s
    EXPECT_LT(knee_ok_share(r), 0.8) << "seed " << seed;
    EXPECT_FALSE(below_knee(r, 3s)) << "seed " << seed;
    EXPECT_FALSE(below_knee(r, 1h)) << "seed " << seed;  // ok/s alone already fails
  }
}

// A sharp knee: fixed 500 ms calls on 5 connections serve just under 10/s; above that the
// pool is always busy, ok/s stays there and the rest is refused (Tomcat's 200 threads and
// accept queue of 100 fill), so ok/s >= 95 % of the arrivals holds up to about 10.8/s:
// 10.7 to 10.95/s for these seeds, the arrivals' chance spread over 1000 s.
Settings held_tx_5_fixed(double rate_per_s, std::uint64_t seed) {
  Settings s = held_tx_5(rate_per_s, seed, 1000s);
  s.partner_latency = Distribution::fixed(500);
  s.probe_interval = 0s;  // the probe would borrow too
  s.check_fields();
  s.check_memory();
  return s;
}

TEST(Knee, TheSeedsAgreeOnASharpKneeWithinTheResolution) {
  const auto seeds = five_seeds();
  // From 5/s: doubled to 10/s (passes), 20/s fails, then 3 halvings of [10, 20]: a resolution of 1.25/s.
  const KneeSearch k = knee_over(seeds, held_tx_5_fixed, 1h, 5, 3, 3);
  EXPECT_TRUE(k.seeds_agree);
  EXPECT_TRUE(k.bounded);
  EXPECT_DOUBLE_EQ(k.knee_per_s, k.upper_per_s);
  EXPECT_DOUBLE_EQ(k.resolution_per_s, 1.25);
  EXPECT_DOUBLE_EQ(k.knee_per_s, 10);
  EXPECT_EQ(k.probes.size(), 6u);  // 5, 10, 20, 15, 12.5, 11.25: each tried once, on every seed
  for (const auto& p : k.probes) EXPECT_TRUE(p.passed == 0 || p.passed == 5) << p.rate_per_s << ": " << p.passed;
  // Each seed alone finds its knee in the same bracket.
  for (const auto seed : seeds) {
    const KneeSearch one = knee_over({seed}, held_tx_5_fixed, 1h, 5, 3, 3);
    EXPECT_DOUBLE_EQ(one.knee_per_s, k.knee_per_s) << "seed " << seed;
  }
}

TEST(Knee, SeedsThatDisagreeAreSaidToDisagreeWithTheirRange) {
  // 30 s at exponential 500 ms: the p99 of a few hundred requests near the ceiling depends on the seed.
  const auto seeds = five_seeds();
  const auto at = [](double rate, std::uint64_t seed) { return held_tx_5(rate, seed, 30s); };
  const KneeSearch k = knee_over(seeds, at, 3s, 8, 7, 3);  // sweep --knee-p99's bisection from 8/s
  EXPECT_FALSE(k.seeds_agree);
  EXPECT_TRUE(k.bounded);
  EXPECT_LT(k.knee_per_s + k.resolution_per_s, k.upper_per_s);
  EXPECT_TRUE(std::any_of(k.probes.begin(), k.probes.end(), [](const auto& p) { return p.passed > 0 && p.passed < 5; }));
  // Every seed alone finds its knee in the range the joint bisection gives.
  double lowest = 1e9, highest = 0;
  for (const auto seed : seeds) {
    const KneeSearch one = knee_over({seed}, at, 3s, 8, 7, 3);
    lowest = std::min(lowest, one.knee_per_s);
    highest = std::max(highest, one.knee_per_s);
    EXPECT_GE(one.knee_per_s, k.knee_per_s) << "seed " << seed;
    EXPECT_LT(one.knee_per_s, k.upper_per_s + k.resolution_per_s) << "seed " << seed;
  }
  EXPECT_GT(highest - lowest, k.resolution_per_s);
  const json doc = knees_json({{"held-tx:wait", seeds, k}}, 3s);
  EXPECT_EQ(knee_figure(doc["knees"][0]).rfind("seeds disagree: knee between ", 0), 0u) << knee_figure(doc["knees"][0]);
}

// Seeds by the rate each passes up to (exclusive of it).
std::function<int(double)> thresholds(const std::vector<double>& t, int& calls) {
  return [&t, &calls](double rate) {
    ++calls;
    return static_cast<int>(std::count_if(t.begin(), t.end(), [&](double x) { return rate < x; }));
  };
}

TEST(Knee, TheBisectionTriesEachRateOnceAndAgreesWhenEverySeedTurnsInOneBracket) {
  const std::vector<double> t = {10.32, 10.34, 10.36};  // all in [8 + 37/16, 8 + 38/16)
  int calls = 0;
  const KneeSearch k = find_knee(thresholds(t, calls), 3, 8, 7, 3);
  // 8 passes, 16 fails, then 7 halvings of [8, 16]: the "some seed" bisection tried the same rates.
  EXPECT_EQ(calls, 9);
  EXPECT_EQ(k.probes.size(), 9u);
  EXPECT_TRUE(k.seeds_agree);
  EXPECT_DOUBLE_EQ(k.resolution_per_s, 8.0 / 128);
  EXPECT_DOUBLE_EQ(k.knee_per_s, 8 + 37.0 / 16);
  EXPECT_GE(k.knee_per_s + k.resolution_per_s, 10.36);
  const json doc = knees_json({{"s", {1, 2, 3}, k}}, 1s);
  EXPECT_EQ(knee_figure(doc["knees"][0]), "10.31");
  EXPECT_EQ(knee_summary(doc["knees"][0]), "10.31 /s (n=3, resolution 0.06 /s)");
}

TEST(Knee, TheBisectionSaysWhenTheSeedsDisagreeAndWhereEachEnd) {
  const std::vector<double> t = {6.7, 9.0, 8.1};
  int calls = 0;
  const KneeSearch k = find_knee(thresholds(t, calls), 3, 8, 7, 3);
  EXPECT_FALSE(k.seeds_agree);
  EXPECT_EQ(calls, static_cast<int>(k.probes.size()));
  // Every seed passed at the knee and one failed a resolution above; one passed at the upper end, none above.
  EXPECT_LT(k.knee_per_s, 6.7);
  EXPECT_GE(k.knee_per_s + k.resolution_per_s, 6.7);
  EXPECT_LT(k.upper_per_s, 9.0);
  EXPECT_GE(k.upper_per_s + k.resolution_per_s, 9.0);
}

TEST(Knee, AKneeAboveTheHighestRateTriedIsUnbounded) {
  int calls = 0;
  const std::vector<double> high = {1000, 1000};
  const KneeSearch all = find_knee(thresholds(high, calls), 2, 8, 7, 3);
  EXPECT_TRUE(all.seeds_agree);
  EXPECT_FALSE(all.bounded);
  EXPECT_DOUBLE_EQ(all.knee_per_s, 64);  // 8/s doubled three times
  EXPECT_EQ(calls, 4);
  const json doc = knees_json({{"s", {1, 2}, all}}, 1s);
  EXPECT_EQ(knee_figure(doc["knees"][0]), "64.00 (above the highest rate tried)");
  EXPECT_EQ(knee_summary(doc["knees"][0]), "64.00 /s (above the highest rate tried; n=2)");
  const std::vector<double> split = {5, 1000};
  const KneeSearch some = find_knee(thresholds(split, calls), 2, 8, 7, 3);
  EXPECT_FALSE(some.seeds_agree);
  EXPECT_TRUE(some.bounded);
  EXPECT_FALSE(some.upper_bounded);
  EXPECT_DOUBLE_EQ(some.upper_per_s, 64);
  EXPECT_DOUBLE_EQ(some.knee_per_s, 5 - 8.0 / 128);  // 8/s split them: 7 halvings of [0, 8]
  EXPECT_EQ(knee_figure(knees_json({{"s", {1, 2}, some}}, 1s)["knees"][0]),
            "seeds disagree: knee between 4.94 and 64.00 or above (the highest rate tried)");
}

}  // namespace
}  // namespace lockbench::report

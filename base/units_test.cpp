#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "base/distribution.hpp"
#include "base/random.hpp"
#include "base/units.hpp"

using namespace lockbench;
using namespace std::chrono_literals;

TEST(Units, DurationsParseWithTheirUnits) {
  EXPECT_EQ(parse_duration("200ms", "--x"), 200ms);
  EXPECT_EQ(parse_duration("1.5s", "--x"), 1500ms);
  EXPECT_EQ(parse_duration("30s", "--x"), 30s);
  EXPECT_EQ(parse_duration("2m", "--x"), 120s);
  EXPECT_EQ(parse_duration("250us", "--x"), 250us);
  EXPECT_EQ(parse_duration("0", "--x"), 0s);
}

TEST(Units, ABareNumberOrAnUnknownUnitIsRefusedNamingTheSetting) {
  for (const char* bad : {"5", "5 parsecs", "", "ms", "1.5.2s", "-3s"}) {
    try {
      parse_duration(bad, "--lease-ttl");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const SettingError& e) {
      EXPECT_NE(std::string(e.what()).find("--lease-ttl"), std::string::npos) << e.what();
    }
  }
}

TEST(Units, FormatIsReadableAndRoundTrips) {
  EXPECT_EQ(format_duration(1500ms), "1.5s");
  EXPECT_EQ(format_duration(200ms), "200ms");
  EXPECT_EQ(format_duration(30min), "30m");
  for (auto d : {1500ms, 200ms, 30000ms}) EXPECT_EQ(parse_duration(format_duration(d), "x"), d);
}

TEST(Units, FormatWritesWhatPrintfsPercentPoint6gWrites) {
  // format_duration's number is printf's %.6g (std::to_chars with a precision
  // is defined as that): compared here over every unit, rounding edges
  // (999999.5 and the like) and a spread of values.
  const auto printf_form = [](std::chrono::nanoseconds d) {
    const auto ns = d.count();
    const auto a = ns < 0 ? -ns : ns;
    double v = static_cast<double>(ns);
    const char* unit = "ns";
    if (a >= 3600'000'000'000LL && a % 3600'000'000'000LL == 0) v = ns / 3600e9, unit = "h";
    else if (a >= 60'000'000'000LL && a % 60'000'000'000LL == 0) v = ns / 60e9, unit = "m";
    else if (a >= 1'000'000'000LL) v = ns / 1e9, unit = "s";
    else if (a >= 1'000'000LL) v = ns / 1e6, unit = "ms";
    else if (a >= 1'000LL) v = ns / 1e3, unit = "us";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g%s", v, unit);
    return std::string(buf);
  };
  std::vector<std::int64_t> cases = {1, 7, 999, 1000, 1234, 999'999, 1'000'000, 1'500'000, 999'999'500, 999'999'499,
                                     1'999'999'500, 123'456'789, 3'600'000'000'000, 7'200'000'000'000,
                                     60'000'000'000, 90'000'000'000, 86'400'123'456'789, -1'500'000, -42};
  std::uint64_t x = 0x2545F4914F6CDD1DULL;
  for (int i = 0; i < 20000; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    cases.push_back(static_cast<std::int64_t>(x % (std::uint64_t{1} << (1 + i % 50))));
  }
  for (const auto ns : cases) {
    if (ns == 0) continue;  // "0", no unit
    ASSERT_EQ(format_duration(std::chrono::nanoseconds(ns)), printf_form(std::chrono::nanoseconds(ns))) << ns;
  }
}

TEST(Random, SameSeedSameStreamAndNamedStreamsDiffer) {
  Rng a(42, "x"), b(42, "x"), c(42, "y");
  for (int i = 0; i < 100; ++i) {
    const auto va = a.next();
    EXPECT_EQ(va, b.next());
    EXPECT_NE(va, c.next());
  }
}

TEST(Random, BelowStaysInRangeAndCoversIt) {
  Rng r(7);
  int seen[5] = {};
  for (int i = 0; i < 5000; ++i) {
    const auto v = r.below(5);
    ASSERT_LT(v, 5u);
    seen[v]++;
  }
  for (int s : seen) EXPECT_GT(s, 800);
}

TEST(Distribution, ParsesTheCliFormsAndSamplesTheirMeans) {
  Rng r(3);
  const auto fixed = Distribution::parse("fixed:200ms", "--partner-latency");
  EXPECT_DOUBLE_EQ(fixed.sample_ms(r), 200);
  const auto uni = Distribution::parse("uniform:100ms..300ms", "--partner-latency");
  const auto expo = Distribution::parse("exponential:mean=1.5s", "--partner-latency");
  const auto logn = Distribution::parse("lognormal:p50=1.5s,p99=4s", "--partner-latency");
  double su = 0, se = 0;
  std::vector<double> ln;
  for (int i = 0; i < 20000; ++i) {
    const double u = uni.sample_ms(r);
    ASSERT_GE(u, 100);
    ASSERT_LT(u, 300);
    su += u;
    se += expo.sample_ms(r);
    ln.push_back(logn.sample_ms(r));
  }
  EXPECT_NEAR(su / 20000, 200, 5);
  EXPECT_NEAR(se / 20000, 1500, 60);
  std::sort(ln.begin(), ln.end());
  EXPECT_NEAR(ln[10000], 1500, 60);
  EXPECT_NEAR(ln[19800], 4000, 400);
}

TEST(Distribution, APreparedSamplerDrawsExactlyWhatTheDistributionDraws) {
  for (const auto& d : {Distribution::fixed(3), Distribution::uniform(1, 9), Distribution::exponential(40),
                        Distribution::lognormal(1500, 4000), Distribution::lognormal(20, 900, 100)}) {
    const DistributionSampler sampler(d);
    Rng a(7, "same"), b(7, "same");
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(sampler.sample(a), d.sample(b)) << d.to_string() << " draw " << i;
  }
}

TEST(Distribution, BadSpecsAreRefusedWithTheAcceptedForms) {
  for (const char* bad : {"gauss:1s", "fixed", "uniform:3s..1s", "lognormal:p50=2s", "exponential:1s"}) {
    try {
      Distribution::parse(bad, "--partner-latency");
      ADD_FAILURE() << bad;
    } catch (const SettingError& e) {
      EXPECT_NE(std::string(e.what()).find("--partner-latency"), std::string::npos);
      EXPECT_NE(std::string(e.what()).find("lognormal:p50="), std::string::npos);
    }
  }
}

TEST(Distribution, JsonFormRoundTrips) {
  for (const char* spec : {"fixed:50ms", "uniform:1ms..3ms", "exponential:mean=20ms", "lognormal:p50=300ms,p99=1.2s"}) {
    const auto d = Distribution::parse(spec, "x");
    const auto back = Distribution::from_json(d.to_json(), "x");
    EXPECT_EQ(back.to_string(), d.to_string());
  }
}

// validate --targets replays a service's holds: the sampler gives them in order,
// from the first again after the last; the distribution itself draws one of them.
TEST(Distribution, ASequenceIsReplayedInOrderAndKeepsItsValuesThroughJson) {
  const auto d = Distribution::sequence({200, 640, 205, 210});
  EXPECT_EQ(d.kind, Distribution::Kind::sequence);
  EXPECT_DOUBLE_EQ(d.mean_ms(), 313.75);
  EXPECT_DOUBLE_EQ(d.sequence_quantile_ms(0.99), 640);
  EXPECT_DOUBLE_EQ(d.sequence_quantile_ms(0.5), 205);
  const DistributionSampler sampler(d);
  Rng rng(3, "seq");
  for (double want : {200.0, 640.0, 205.0, 210.0, 200.0, 640.0}) EXPECT_DOUBLE_EQ(sampler.sample_ms(rng), want);
  for (int i = 0; i < 100; ++i) {
    const double v = d.sample_ms(rng);
    EXPECT_TRUE(v == 200 || v == 640 || v == 205 || v == 210) << v;
  }
  const auto back = Distribution::from_json(d.to_json(), "x");
  ASSERT_TRUE(back.values);
  EXPECT_EQ(*back.values, *d.values);
  EXPECT_EQ(back.to_string(), "sequence:4 values,mean=313.75ms");
  const auto twice = d.scaled(2);
  EXPECT_DOUBLE_EQ((*twice.values)[1], 1280);
  EXPECT_DOUBLE_EQ((*d.values)[1], 640);  // the original is not changed
  EXPECT_THROW(Distribution::from_json({{"dist", "sequence"}, {"ms", nlohmann::json::array()}}, "x"), SettingError);
  EXPECT_THROW(Distribution::from_json({{"dist", "sequence"}, {"ms", {1, -2}}}, "x"), SettingError);
}

TEST(Units, LatenciesInTheOverflowRangeAreRefusedByBothParsers) {
  for (const char* bad : {"fixed:100000h", "fixed:10000000000000ms", "exponential:mean=25h",
                          "uniform:1ms..1000h", "lognormal:p50=1ms,p99=30000h", "lognormal:p50=1s,p99=2s,cap=48h"}) {
    EXPECT_THROW(Distribution::parse(bad, "--partner-latency"), SettingError) << bad;
  }
  EXPECT_NO_THROW(Distribution::parse("fixed:24h", "--partner-latency"));
  EXPECT_THROW(Distribution::from_json({{"dist", "fixed"}, {"ms", 1e13}}, "latency"), SettingError);
  EXPECT_THROW(Distribution::from_json({{"dist", "exponential"}, {"mean_ms", 1e300}}, "latency"), SettingError);
}

TEST(Units, ASampleNeverLeavesTheClocksRangeEvenFromTheWidestAcceptedTail) {
  // p50 1 us, p99 24 h: sigma ~ 11, so a tail draw alone would overflow nanoseconds.
  const Distribution d = Distribution::parse("lognormal:p50=1us,p99=24h", "--x").scaled(1000);
  Rng rng(1, "tail");
  double max_ms = 0;
  for (int i = 0; i < 100000; ++i) {
    const double ms = d.sample_ms(rng);
    max_ms = std::max(max_ms, ms);
    EXPECT_GE(d.sample(rng).count(), 0);
  }
  EXPECT_LE(max_ms, kSampleMsMax);
}

// What calibrate writes, read back by the settings parser: every figure, from
// a microsecond to tens of milliseconds, as a duration --db-latency accepts.
#include <gtest/gtest.h>

#include <string>

#include "base/distribution.hpp"
#include "real/calibrate.hpp"

namespace lockbench::real {
namespace {

std::string quoted_value(const std::string& toml, const std::string& key) {
  const auto at = toml.find(key + " = \"");
  if (at == std::string::npos) return "";
  const auto start = at + key.size() + 4;
  return toml.substr(start, toml.find('"', start) - start);
}

TEST(Calibration, EveryFigureIsWrittenAsADurationTheSettingsParserReadsBack) {
  for (const double p99 : {0.0004, 0.17, 8.02, 15.89, 123.456}) {
    StackCosts c;
    c.statement = {"statements", p99 / 4, p99, p99 / 3, 400};
    c.partner_call = {"partner call at 0 ms", p99, p99 * 2, p99, 100};
    c.pool_handoff = {"pool hand-off", 0.07, 0.2, 0.08, 100};
    c.worker_handoff = {"worker hand-off", 0.2, 0.5, 0.25, 100};
    const std::string toml = calibration_toml(c, "a test");
    const std::string db = quoted_value(toml, "db-latency");
    ASSERT_FALSE(db.empty()) << toml;
    EXPECT_EQ(db.find("e+"), std::string::npos) << db;
    const Distribution d = Distribution::parse(db, "db-latency");  // throws on "1.589e+04us"
    EXPECT_NEAR(d.b_ms, std::max(p99, 0.001), std::max(p99, 0.001) * 0.02) << db;  // p99 >= p50 x 1.01
    for (const char* key : {"partner-overhead", "pool-handoff", "worker-handoff"}) {
      const std::string v = quoted_value(toml, key);
      EXPECT_EQ(v.find("e+"), std::string::npos) << key << " = " << v;
      EXPECT_NO_THROW(Distribution::parse("fixed:" + v, key)) << key << " = " << v;
    }
  }
}

}  // namespace
}  // namespace lockbench::real

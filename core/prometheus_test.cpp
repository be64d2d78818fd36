// The Prometheus writer: every family once with its TYPE before its samples,
// pools in order, label values escaped, a timer only where it was measured.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "core/prometheus.hpp"

namespace lockbench {
namespace {

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

HikariPoolMetrics pool(const std::string& name, std::int64_t timeouts) {
  HikariPoolMetrics m;
  m.pool = name;
  m.total = m.max = m.min = 10;
  m.idle = 7;
  m.active = 3;
  m.timeouts = timeouts;
  m.acquire = {4, 2.5, 1.25};
  m.usage = {4, 6.0, 2.0};
  return m;
}

TEST(Prometheus, WritesEachFamilyOnceWithOneSamplePerPoolInOrder) {
  const std::string text = hikaricp_exposition({pool("pod1", 5), pool("pod2", 0)});
  for (const char* family : {"hikaricp_connections_active", "hikaricp_connections_idle", "hikaricp_connections_pending",
                             "hikaricp_connections", "hikaricp_connections_max", "hikaricp_connections_min",
                             "hikaricp_connections_timeout_total", "hikaricp_connections_acquire_seconds",
                             "hikaricp_connections_usage_seconds", "hikaricp_connections_acquire_seconds_max"})
    EXPECT_EQ(count_of(text, "# TYPE " + std::string(family) + " "), 1u) << family;
  EXPECT_NE(text.find("# TYPE hikaricp_connections_timeout_total counter\n"
                      "hikaricp_connections_timeout_total{pool=\"pod1\"} 5\n"
                      "hikaricp_connections_timeout_total{pool=\"pod2\"} 0\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# TYPE hikaricp_connections_acquire_seconds summary\n"
                      "hikaricp_connections_acquire_seconds_count{pool=\"pod1\"} 4\n"
                      "hikaricp_connections_acquire_seconds_sum{pool=\"pod1\"} 2.5\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("hikaricp_connections_usage_seconds_max{pool=\"pod2\"} 2\n"), std::string::npos) << text;
}

TEST(Prometheus, LeavesOutATimerNobodyMeasured) {
  HikariPoolMetrics measured = pool("pod1", 0);
  measured.creation = HikariTimer{10, 0.5, 0.1};
  EXPECT_EQ(hikaricp_exposition({pool("pod1", 0)}).find("creation"), std::string::npos);
  const std::string text = hikaricp_exposition({pool("pod2", 0), measured});
  EXPECT_EQ(count_of(text, "hikaricp_connections_creation_seconds_count{"), 1u) << text;
  EXPECT_NE(text.find("hikaricp_connections_creation_seconds_count{pool=\"pod1\"} 10\n"), std::string::npos);
}

TEST(Prometheus, PutsPoolFirstAndEscapesLabelValues) {
  HikariPoolMetrics m = pool("pod\"1", 0);
  m.labels = {{"strategy", "a\\b\nc"}};
  const std::string text = hikaricp_exposition({m});
  EXPECT_NE(text.find("hikaricp_connections_max{pool=\"pod\\\"1\",strategy=\"a\\\\b\\nc\"} 10\n"), std::string::npos)
      << text;
  // Every line is a comment or a sample ending in a value: no raw newline inside a label.
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    EXPECT_TRUE(line.rfind("# ", 0) == 0 || line.rfind("hikaricp_connections", 0) == 0) << line;
}

TEST(Prometheus, TakesAPodsGaugesAndTimersFromItsPoolFigures) {
  PoolStats st;
  st.timeouts = 3;
  st.wait_ms.add(1000);
  st.wait_ms.add(3000);
  st.hold_ms.add(500);
  const HikariPoolMetrics m = hikari_metrics("pod2", PoolSample{{}, 4, 2, 6}, st, 10);
  EXPECT_EQ(m.active, 4);
  EXPECT_EQ(m.pending, 2);
  EXPECT_EQ(m.idle, 6);
  EXPECT_EQ(m.max, 10);
  EXPECT_EQ(m.timeouts, 3);
  EXPECT_EQ(m.acquire.count, 2);
  EXPECT_DOUBLE_EQ(m.acquire.sum_s, 4.0);
  EXPECT_DOUBLE_EQ(m.acquire.max_s, 3.0);
  EXPECT_EQ(m.usage.count, 1);
  EXPECT_FALSE(m.creation.has_value());
}

}  // namespace
}  // namespace lockbench

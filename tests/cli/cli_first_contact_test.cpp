// First contact with the lockbench command, end to end in the simulator (no
// servers): --help's types, defaults and groups, --preset incident, the
// progress line's content (forced into a pipe), and run --metrics-out's
// Prometheus text with Micrometer's HikariCP names.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "run_command.hpp"

namespace fs = std::filesystem;
using lockbench::testing::run_command;
using lockbench::testing::slurp;
using nlohmann::json;

namespace cli_first_contact_test {
const std::string kBin = LOCKBENCH_BIN;

std::string temp_dir() {
  char name[] = "/tmp/lockbench-first-contact-XXXXXX";
  return mkdtemp(name);
}

// The text exposition format (version 0.0.4), strictly enough for a test: every
// line is a comment (# HELP / # TYPE name type) or `name{label="v",...} value`;
// a family's TYPE comes before its samples and once; the samples of a family
// are not interleaved with another's. Returns (name + labels) -> value; adds a
// failure naming the line otherwise.
std::map<std::string, double> parse_exposition(const std::string& text) {
  static const std::regex sample(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*")(,[a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*")*\})? (-?[0-9.eE+-]+|NaN|[+-]Inf)$)");
  static const std::regex type(R"(^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|summary|histogram|untyped)$)");
  std::map<std::string, double> out;
  std::set<std::string> typed, closed;
  std::string current;  // the family whose samples are being read
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (line.rfind("# HELP ", 0) == 0) continue;
    if (line.rfind("# TYPE ", 0) == 0) {
      EXPECT_TRUE(std::regex_match(line, m, type)) << line;
      EXPECT_TRUE(typed.insert(m[1]).second) << "TYPE twice: " << line;
      if (!current.empty()) closed.insert(current);
      current = m[1];
      continue;
    }
    if (!std::regex_match(line, m, sample)) {
      ADD_FAILURE() << "not a sample line: " << line;
      continue;
    }
    std::string name = m[1];
    std::string family = name;
    for (const char* suffix : {"_count", "_sum"})
      if (!typed.count(family) && family.size() > std::string(suffix).size() &&
          family.compare(family.size() - std::string(suffix).size(), std::string::npos, suffix) == 0)
        family = family.substr(0, family.size() - std::string(suffix).size());
    EXPECT_TRUE(typed.count(family)) << "a sample before its TYPE: " << line;
    EXPECT_EQ(family, current) << "a family's samples interleaved with another's: " << line;
    EXPECT_FALSE(closed.count(family)) << line;
    out[name + m[2].str()] = std::stod(m[m.size() - 1]);
  }
  return out;
}

double value_of(const std::map<std::string, double>& samples, const std::string& name, const std::string& strategy) {
  for (const auto& [key, v] : samples)
    if (key.rfind(name + "{", 0) == 0 && key.find("strategy=\"" + strategy + "\"") != std::string::npos) return v;
  ADD_FAILURE() << "no sample " << name << " for " << strategy;
  return -1;
}

TEST(CliFirstContact, RunHelpShowsEverySettingsTypeAndDefaultInGroups) {
  const auto r = run_command(kBin + " run --help");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* group : {"Workload:", "Pool (HikariCP):", "Container (Tomcat workers", "Partner and its HTTP client:",
                            "Database and locks:", "Faults:", "Output:"})
    EXPECT_NE(r.out.find(group), std::string::npos) << group;
  for (const char* option : {"--connection-timeout DURATION=30s", "--maximum-pool-size INT=10", "--max-threads INT=200",
                             "--accept-count INT=100", "--rate RATE=5", "--partner-latency DIST=fixed:200ms",
                             "--lease-ttl DURATION=30s", "--preset NAME", "--metrics-out FILE"})
    EXPECT_NE(r.out.find(option), std::string::npos) << option;
  EXPECT_EQ(r.out.find(" TEXT "), std::string::npos) << "an option without a type";
  // The scenarios from the registry, not a list typed into the help.
  for (const char* scenario : {"switch-primary", "single-call", "checkout", "payout", "reward-claim"})
    EXPECT_NE(r.out.find(scenario), std::string::npos) << scenario;
  // The other commands that take settings show them the same way.
  for (const char* cmd : {"sweep", "lint", "serve"}) {
    const auto h = run_command(kBin + " " + cmd + " --help");
    EXPECT_NE(h.out.find("--connection-timeout DURATION=30s"), std::string::npos) << cmd;
    EXPECT_NE(h.out.find("Pool (HikariCP):"), std::string::npos) << cmd;
  }
}

TEST(CliFirstContact, PresetIncidentRunsThePoolDryUnderHeldTxAndRowLeaseStaysClean) {
  const auto r = run_command(kBin + " run --preset incident --strategy held-tx,row-lease --duration 2m --quiet --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json results = json::parse(r.out);
  ASSERT_EQ(results.size(), 2u);
  const json& held = results[0];
  EXPECT_EQ(held["strategy"], "held-tx:wait");
  EXPECT_EQ(held["settings"]["maximum-pool-size"], 10);
  EXPECT_GT(held["pool"]["timeouts"].get<int>(), 50);  // pool exhaustion: timeouts and failed health probes
  EXPECT_GT(held["probe"]["failed"].get<int>() * 2, held["probe"]["total"].get<int>());
  EXPECT_LT(held["throughput_ok_per_s"].get<double>(), 0.5 * held["offered_per_s"].get<double>());
  const json& lease = results[1];
  EXPECT_EQ(lease["pool"]["timeouts"], 0);
  EXPECT_EQ(lease["probe"]["failed"], 0);
  // The defaults alone show nothing: that is why the preset exists.
  const auto plain = run_command(kBin + " run --strategy held-tx --duration 2m --quiet --json");
  EXPECT_EQ(json::parse(plain.out)[0]["pool"]["timeouts"], 0);
}

TEST(CliFirstContact, FlagsWinOverThePresetAndAnUnknownPresetIsOneLineAndExit2) {
  const auto r = run_command(kBin + " run --preset incident --strategy held-tx --rate 1 --duration 1m --quiet --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)[0]["settings"]["rate"], 1.0);
  const auto bad = run_command(kBin + " run --preset incidnet --quiet");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--preset: 'incidnet' is not accepted (accepted: incident"), std::string::npos) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
  EXPECT_TRUE(bad.out.empty());
}

TEST(CliFirstContact, TheProgressLineShowsPlaceStrategyVirtualTimeAgainstThePlanAndAnEta) {
  const auto r = run_command(kBin + " run --preset incident --strategy held-tx,row-lease --duration 3m --progress");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("[1/2] held-tx:wait  "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[2/2] row-lease  "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" / 3m00s virtual  "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("ok/s"), std::string::npos) << "no ok/s per wall second: " << r.err;
  EXPECT_TRUE(r.err.find("ETA ") != std::string::npos || r.err.find("draining") != std::string::npos) << r.err;
  // Without --progress, a pipe gets no progress line.
  const auto quiet = run_command(kBin + " run --preset incident --strategy row-lease --duration 1m");
  EXPECT_EQ(quiet.err.find("virtual"), std::string::npos) << quiet.err;
}

TEST(CliFirstContact, ASweepsProgressLineNamesTheVariedValue) {
  const auto r = run_command(kBin + " sweep --world sim --strategy row-lease --vary rate=2,4 --duration 1m --jobs 1 --progress");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("[1/2] rate=2 row-lease  "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[2/2] rate=4 row-lease  "), std::string::npos) << r.err;
}

TEST(CliFirstContact, MetricsOutWritesPrometheusTextWithHikariCpNamesAndTheIncidentsTimeouts) {
  const std::string dir = temp_dir();
  const std::string file = dir + "/metrics.prom";
  const auto r = run_command(kBin + " run --preset incident --strategy held-tx,row-lease --duration 2m --quiet --json " +
                             "--metrics-out " + file);
  ASSERT_EQ(r.status, 0) << r.err;
  const json results = json::parse(r.out);
  const std::string text = slurp(file);
  const auto samples = parse_exposition(text);
  for (const char* family :
       {"hikaricp_connections_active", "hikaricp_connections_idle", "hikaricp_connections_pending",
        "hikaricp_connections_max", "hikaricp_connections_min", "hikaricp_connections_timeout_total",
        "hikaricp_connections_acquire_seconds_count", "hikaricp_connections_acquire_seconds_sum",
        "hikaricp_connections_usage_seconds_count", "hikaricp_connections_usage_seconds_sum",
        "hikaricp_connections_creation_seconds_count"})
    EXPECT_NE(text.find(std::string(family) + "{pool=\"pod1\""), std::string::npos) << family;
  // The values are the results' own.
  EXPECT_EQ(value_of(samples, "hikaricp_connections_max", "held-tx:wait"), 10);
  EXPECT_EQ(value_of(samples, "hikaricp_connections_timeout_total", "held-tx:wait"),
            results[0]["pool"]["timeouts"].get<double>());
  EXPECT_GT(value_of(samples, "hikaricp_connections_timeout_total", "held-tx:wait"), 0);
  EXPECT_EQ(value_of(samples, "hikaricp_connections_timeout_total", "row-lease"), 0);
  const double held_count = value_of(samples, "hikaricp_connections_acquire_seconds_count", "held-tx:wait");
  const double held_sum = value_of(samples, "hikaricp_connections_acquire_seconds_sum", "held-tx:wait");
  EXPECT_GT(held_count, 0);
  EXPECT_GT(held_sum / held_count, 1.0);  // a dry pool: the mean wait is seconds, capped by connectionTimeout
  EXPECT_LE(held_sum / held_count, 30.0);
  EXPECT_LT(value_of(samples, "hikaricp_connections_acquire_seconds_sum", "row-lease") /
                value_of(samples, "hikaricp_connections_acquire_seconds_count", "row-lease"),
            0.1);
  // Usage: held-tx holds its connection through the partner call (seconds), row-lease for a statement.
  EXPECT_GT(value_of(samples, "hikaricp_connections_usage_seconds_sum", "held-tx:wait") /
                value_of(samples, "hikaricp_connections_usage_seconds_count", "held-tx:wait"),
            1.0);
#ifdef LOCKBENCH_PROMTOOL
  const auto check = run_command(std::string(LOCKBENCH_PROMTOOL) + " check metrics < " + file);
  EXPECT_EQ(check.status, 0) << check.out << check.err;
#endif
  fs::remove_all(dir);
}

TEST(CliFirstContact, AMetricsOutThatCannotBeWrittenIsRefusedBeforeAnyRun) {
  const std::string dir = temp_dir();
  const auto r = run_command(kBin + " run --strategy row-lease --quiet --metrics-out " + dir);  // a directory
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--metrics-out"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  fs::remove_all(dir);
}

}  // namespace cli_first_contact_test

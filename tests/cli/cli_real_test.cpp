// `lockbench run --world real` as a user runs it: against the throw-away
// PostgreSQL and fake partner that scripts/test starts.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "run_command.hpp"

namespace fs = std::filesystem;
using lockbench::testing::run_command;
using nlohmann::json;

namespace cli_real_test {
std::string servers() {
  const char* db = std::getenv("LOCKBENCH_TEST_DB");
  const char* partner = std::getenv("LOCKBENCH_TEST_PARTNER");
  if (!db || !*db || !partner || !*partner) return "";
  return std::string(" --db ") + db + " --partner " + partner;
}

TEST(CliReal, ATimeScaledRunWritesOneResultPerStrategyWithBothUnits) {
  const auto srv = servers();
  if (srv.empty()) GTEST_SKIP() << "LOCKBENCH_TEST_DB / LOCKBENCH_TEST_PARTNER not set (scripts/test sets them)";
  const auto dir = fs::temp_directory_path() / ("lockbench-real-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const auto r = run_command(std::string(LOCKBENCH_BIN) + " run --world real --quiet" + srv +
                             " --strategy held-tx,row-lease --scenario switch-primary --time-scale 0.01"
                             " --partner-latency fixed:5s --rate 0.8 --duration 300s --maximum-pool-size 2"
                             " --keys 50 --lease-ttl 60s --partner-read-timeout 30s --out " + dir.string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("held-tx"), std::string::npos) << r.out;
  std::vector<json> results;
  for (const auto& e : fs::directory_iterator(dir)) results.push_back(json::parse(lockbench::testing::slurp(e.path())));
  ASSERT_EQ(results.size(), 2u);
  for (const auto& res : results) {
    EXPECT_EQ(res["world"], "real");
    EXPECT_DOUBLE_EQ(res["time_scale"].get<double>(), 0.01);
    EXPECT_TRUE(res.contains("unscaled"));
    EXPECT_GT(res["requests"]["total"].get<int>(), 100);
    // At time scale 0.01 a 5 s call is 50 ms of wall time. With the default
    // 10 s read timeout (100 ms), a host that delays the partner by 50 ms times
    // a call out; row-lease then gives its lease back at once, and the next
    // request's call can reach the partner while the first is still there. A
    // clean-clone run beside the build counted one overlap here (its result was
    // not kept); at 30 s (300 ms), as with the 60 s TTL, it takes a quarter-second pause.
    EXPECT_EQ(res["partner"]["violations"]["overlap_person"], 0)
        << res["strategy"] << ": requests " << res["requests"].dump() << ", locks " << res["locks"].dump()
        << ", partner " << res["partner"]["details"].dump();
  }
  fs::remove_all(dir);
}

TEST(CliReal, CalibrateWritesTheStacksCostsAsSettingsTheSimulatorRuns) {
  const auto srv = servers();
  if (srv.empty()) GTEST_SKIP() << "LOCKBENCH_TEST_DB / LOCKBENCH_TEST_PARTNER not set (scripts/test sets them)";
  const auto file = fs::temp_directory_path() / ("lockbench-cal-" + std::to_string(::getpid()) + ".toml");
  const auto cal = run_command(std::string(LOCKBENCH_BIN) + " calibrate" + srv + " --out " + file.string());
  ASSERT_EQ(cal.status, 0) << cal.err;
  const std::string text = lockbench::testing::slurp(file.string());
  for (const char* key : {"db-latency = \"lognormal:", "partner-overhead = ", "pool-handoff = ", "worker-handoff = ",
                          "select for update", "lease acquire", "partner call at 0 ms"})
    EXPECT_NE(text.find(key), std::string::npos) << key << " missing from\n" << text;
  const auto sim = run_command(std::string(LOCKBENCH_BIN) + " run --world sim --quiet --json --config " + file.string() +
                               " --strategy held-tx --duration 10s");
  ASSERT_EQ(sim.status, 0) << sim.err;
  const json r = json::parse(sim.out).at(0);
  // The simulator used the measured costs, stated in the result's settings.
  EXPECT_NE(r["settings"]["partner-overhead"].get<std::string>(), "0s");
  EXPECT_EQ(r["settings"]["db-latency"].get<std::string>().rfind("lognormal:", 0), 0u);
  fs::remove(file);
}

TEST(CliReal, RepetitionsInTheRealWorldAreRepeatsEachWithItsOwnRunAndSeed) {
  const auto srv = servers();
  if (srv.empty()) GTEST_SKIP() << "LOCKBENCH_TEST_DB / LOCKBENCH_TEST_PARTNER not set (scripts/test sets them)";
  const auto r = run_command(std::string(LOCKBENCH_BIN) + " run --world real --quiet --json" + srv +
                             " --strategy row-lease --scenario single-call --partner-latency fixed:20ms --rate 10"
                             " --duration 2s --keys 50 --repetitions 2 --seed 3");
  ASSERT_EQ(r.status, 0) << r.err;
  const json results = json::parse(r.out);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_NE(results[0]["run_id"], results[1]["run_id"]);  // fresh rows: a run of its own each time
  EXPECT_EQ(results[0]["seed"], 3);
  EXPECT_NE(results[0]["seed"], results[1]["seed"]);
  for (int i = 0; i < 2; ++i) EXPECT_EQ(results[i]["repetition"]["index"], i);
  EXPECT_NE(r.err.find("mean ± half-width"), std::string::npos) << r.err;  // --json: the tables go to stderr
}

TEST(CliReal, ValidateRunsRepetitionsInBothWorldsAndGivesEachRatioItsInterval) {
  const auto srv = servers();
  if (srv.empty()) GTEST_SKIP() << "LOCKBENCH_TEST_DB / LOCKBENCH_TEST_PARTNER not set (scripts/test sets them)";
  const auto dir = fs::temp_directory_path() / ("lockbench-validate-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  // Calibration given as flags (no measuring), one load: 3 repetitions of 2 s in each world.
  const auto r = run_command(std::string(LOCKBENCH_BIN) + " validate" + srv +
                             " --duration 2s --rate 20 --repetitions 3 --db-latency lognormal:p50=200us,p99=2ms"
                             " --partner-overhead 200us --out " + dir.string());
  ASSERT_TRUE(r.status == 0 || r.status == 1) << r.err;  // matching or not; 2 would be a refusal
  EXPECT_NE(r.out.find("repetitions: 3 per world and load"), std::string::npos) << r.out;
  const auto row = r.out.find("ok-throughput /s");
  ASSERT_NE(row, std::string::npos) << r.out;
  const std::string line = r.out.substr(row, r.out.find('\n', row) - row);
  EXPECT_NE(line.find('['), std::string::npos) << line;
  EXPECT_TRUE(line.find("interval within ±") != std::string::npos ||
              line.find("interval not inside ±") != std::string::npos || line.find("OUTSIDE ±") != std::string::npos)
      << line;
  std::vector<json> results;
  for (const auto& e : fs::directory_iterator(dir)) {
    const json one = json::parse(lockbench::testing::slurp(e.path()));
    if (one.is_array())
      for (const auto& x : one) results.push_back(x);
    else
      results.push_back(one);
  }
  ASSERT_EQ(results.size(), 6u);
  std::map<std::string, std::set<std::uint64_t>> seeds;  // world -> seeds: the same three in both worlds
  for (const auto& x : results) seeds[x["world"].get<std::string>()].insert(x["seed"].get<std::uint64_t>());
  EXPECT_EQ(seeds["real"].size(), 3u);
  EXPECT_EQ(seeds["real"], seeds["sim"]);
  fs::remove_all(dir);
}

}  // namespace cli_real_test

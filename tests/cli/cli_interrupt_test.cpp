// Finished work survives (issue 8), in the simulator (no servers): results are
// written as each run ends, SIGINT/SIGTERM leave a result marked interrupted
// and exit 130/143, and `sweep --resume` skips what is already done.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "run_command.hpp"

namespace fs = std::filesystem;
using namespace lockbench::testing;
using nlohmann::json;
using namespace std::chrono_literals;

namespace cli_interrupt_test {

class Interrupt : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lockbench-int-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  json read(const fs::path& p) { return json::parse(slurp(p.string()), nullptr, false); }
  fs::path dir_;
};

// A sweep whose first run takes well under a second and whose second takes
// about 15 s of wall time (1 M simulated requests): a signal lands in the second.
std::vector<std::string> two_run_sweep(const fs::path& out) {
  return {LOCKBENCH_BIN, "sweep",     "--world", "sim",  "--strategy", "held-tx", "--rate", "1000",
          "--keys",      "1000",      "--partner-latency", "fixed:5ms", "--vary", "duration=2s,1000s",
          "--quiet",     "--out",     out.string()};
}

void interrupt_second_run(const fs::path& out, const fs::path& logs, int sig, int expected_status) {
  const auto p = spawn(two_run_sweep(out), (logs / "out.txt").string(), (logs / "err.txt").string());
  ASSERT_GT(p.pid, 0);
  const fs::path first = out / "001-sim-switch-primary-held-tx.json";
  // The first result is on disk while the second run is still going: written as its run ended.
  ASSERT_TRUE(wait_for([&] { return fs::exists(first); }, 20s)) << slurp(p.err_path);
  std::this_thread::sleep_for(300ms);
  kill(p.pid, sig);
  EXPECT_EQ(wait_exit(p.pid, 30s), expected_status) << slurp(p.err_path);
}

TEST_F(Interrupt, SigintMidSweepKeepsTheFinishedResultAndWritesTheCurrentOneMarkedInterrupted) {
  const fs::path out = dir_ / "out";
  interrupt_second_run(out, dir_, SIGINT, 130);
  const json first = read(out / "001-sim-switch-primary-held-tx.json");
  const json second = read(out / "002-sim-switch-primary-held-tx.json");
  ASSERT_TRUE(first.is_object());
  ASSERT_TRUE(second.is_object()) << "no result for the interrupted run";
  EXPECT_EQ(first["interrupted"], false);
  EXPECT_EQ(first["complete"], true);
  EXPECT_EQ(second["interrupted"], true);
  EXPECT_EQ(second["complete"], false);
  // What was measured until the stop: fewer requests than the 1 M planned, more than none.
  EXPECT_GT(second["requests"]["total"].get<std::int64_t>(), 0);
  EXPECT_LT(second["requests"]["total"].get<std::int64_t>(), 900000);
  EXPECT_NE(slurp((dir_ / "err.txt").string()).find("interrupted"), std::string::npos);
}

TEST_F(Interrupt, SigtermExits143WithAnInterruptedResult) {
  const fs::path out = dir_ / "out";
  interrupt_second_run(out, dir_, SIGTERM, 143);
  const json second = read(out / "002-sim-switch-primary-held-tx.json");
  ASSERT_TRUE(second.is_object());
  EXPECT_EQ(second["interrupted"], true);
}

TEST_F(Interrupt, SweepResumeSkipsCompleteResultsAndRunsTheMissingOnes) {
  const fs::path out = dir_ / "out";
  const std::string base = std::string(LOCKBENCH_BIN) +
                           " sweep --world sim --strategy row-lease --rate 20 --duration 5s --vary keys=5,50,500 --out " +
                           out.string();
  auto r = run_command(base + " --quiet");
  ASSERT_EQ(r.status, 0) << r.err;
  const fs::path second = out / "002-sim-switch-primary-row-lease.json";
  const auto first_time = fs::last_write_time(out / "001-sim-switch-primary-row-lease.json");
  fs::remove(second);
  r = run_command(base + " --resume");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("[1/3] keys=5 row-lease: already done"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[3/3] keys=500 row-lease: already done"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(second));
  EXPECT_EQ(fs::last_write_time(out / "001-sim-switch-primary-row-lease.json"), first_time);
  // An interrupted result is run again.
  json j = read(second);
  j["interrupted"] = true;
  j["complete"] = false;
  std::ofstream(second) << j.dump();
  r = run_command(base + " --resume");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("[2/3] row-lease: already done"), std::string::npos) << r.err;
  EXPECT_EQ(read(second)["complete"], true);
  // Results of another sweep are not taken for this one's.
  r = run_command(base + " --resume --seed 99");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--resume"), std::string::npos) << r.err;
}

}  // namespace cli_interrupt_test

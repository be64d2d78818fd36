// Bad input gets one clear line naming the setting, a non-zero exit, and no
// result file.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "run_command.hpp"

namespace fs = std::filesystem;
using lockbench::testing::run_command;

namespace {

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lockbench-bad-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs lockbench with `args` and --out into the test's directory; checks the
  // refusal is one line naming `setting`, exit non-zero, nothing written.
  void expect_refused(const std::string& args, const std::string& setting) {
    const auto out = (dir_ / "out.json").string();
    const auto r = run_command(std::string(LOCKBENCH_BIN) + " run " + args + " --quiet --out " + out);
    EXPECT_NE(r.status, 0) << args;
    EXPECT_NE(r.err.find(setting), std::string::npos) << args << " said: " << r.err;
    std::size_t lines = 0;
    for (char c : r.err) lines += c == '\n';
    EXPECT_EQ(lines, 1u) << args << " said: " << r.err;
    EXPECT_TRUE(fs::is_empty(dir_)) << args << " left a file behind";
  }

  fs::path dir_;
};

}  // namespace

TEST_F(BadInput, AnUnknownStrategyIsRefusedWithTheAcceptedNames) {
  expect_refused("--world sim --strategy row-leese", "--strategy");
  const auto r = run_command(std::string(LOCKBENCH_BIN) + " run --world sim --strategy row-leese");
  EXPECT_NE(r.err.find("row-lease"), std::string::npos) << r.err;
}

TEST_F(BadInput, APoolSizeOfZeroOrBelowIsRefused) {
  expect_refused("--world sim --maximum-pool-size 0", "--maximum-pool-size");
  expect_refused("--world sim --maximum-pool-size -4", "--maximum-pool-size");
  expect_refused("--world sim --maximum-pool-size ten", "--maximum-pool-size");
}

TEST_F(BadInput, AnUnparsableDurationIsRefused) {
  expect_refused("--world sim --lease-ttl 30", "--lease-ttl");
  expect_refused("--world sim --connection-timeout '3 seconds'", "--connection-timeout");
  expect_refused("--world sim --partner-latency lognormal:p50=2s", "--partner-latency");
}

TEST_F(BadInput, AnUnreachableDatabaseIsRefusedBeforeAnythingIsWritten) {
  expect_refused("--world real --db postgresql://lockbench@127.0.0.1:1/nothing --partner http://127.0.0.1:1 "
                 "--strategy row-lease --duration 1s",
                 "--db");
}

TEST_F(BadInput, RealWorldWithoutServersSaysWhichFlagIsMissing) {
  expect_refused("--world real --strategy row-lease", "--db");
}

TEST_F(BadInput, TwoArrivalModelsAtOnceAreRefused) { expect_refused("--world sim --rate 5 --burst 8", "--burst"); }

TEST_F(BadInput, AnUnknownFlagIsRefused) {
  const auto r = run_command(std::string(LOCKBENCH_BIN) + " run --maximum-pool 4");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("maximum-pool"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST_F(BadInput, AReportOfAResultMissingAFieldIsRefused) {
  const auto bad = (dir_ / "bad.json").string();
  std::ofstream(bad) << R"({"schema":"lockbench.result/1","world":"sim"})";
  const auto r = run_command(std::string(LOCKBENCH_BIN) + " report " + bad + " --out " + (dir_ / "rep").string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("missing field"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "rep" / "report.md"));
}

TEST_F(BadInput, DatabaseFaultsOutsideTheirSyntaxAreRefusedWithTheAcceptedForm) {
  for (const char* bad : {"commit_fail", "commit_fail:p=2", "conn_lost:p=x", "disk_full:p=0.1",
                          "commit_fail:p=0.1,commit_fail:p=0.2"})
    expect_refused(std::string("--world sim --scenario checkout --strategy held-tx --db-faults ") + bad, "--db-faults");
  expect_refused("--world sim --scenario checkout --strategy outbox --outbox-pollers 65", "--outbox-pollers");
}

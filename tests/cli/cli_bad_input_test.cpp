// Bad input gets one clear line naming the setting, a non-zero exit, and no
// result file.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "run_command.hpp"

namespace fs = std::filesystem;
using lockbench::testing::run_command;

namespace cli_bad_input_test {

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
    EXPECT_EQ(r.status, 2) << args;  // every bad setting, from our checks or CLI11's, exits 2
    EXPECT_NE(r.err.find(setting), std::string::npos) << args << " said: " << r.err;
    std::size_t lines = 0;
    for (char c : r.err) lines += c == '\n';
    EXPECT_EQ(lines, 1u) << args << " said: " << r.err;
    EXPECT_TRUE(fs::is_empty(dir_)) << args << " left a file behind";
  }

  fs::path dir_;
};

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

TEST_F(BadInput, VirtualThreadsThatCannotBeGivenAreRefusedBeforeAnyRun) {
  // Pods this run does not start keep their own threads.
  expect_refused("--world real --db postgresql://lockbench@127.0.0.1:1/nothing --partner http://127.0.0.1:1 "
                 "--targets http://127.0.0.1:1 --strategy row-lease --virtual-threads on --duration 1s",
                 "--virtual-threads: --targets");
  // Before JDK 21 there are no virtual threads; a run of several strategies writes none.
  expect_refused("--world sim --strategy row-lease,synchronized --virtual-threads on --jdk 17 --duration 1s",
                 "--jdk: virtual threads are final from JDK 21");
  expect_refused("--world sim --carriers 0 --virtual-threads on --duration 1s", "--carriers");
  // synchronized on JDK 23 pins its carriers (modelled), on 24 it does not: both run.
  for (const char* jdk : {"23", "24"}) {
    const auto ok = run_command(std::string(LOCKBENCH_BIN) + " run --world sim --strategy synchronized --virtual-threads on --jdk " +
                                jdk + " --duration 1s --quiet");
    EXPECT_EQ(ok.status, 0) << jdk << ": " << ok.err;
  }
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

// --- settings the machine cannot serve (issue 8): refused before anything starts ---

TEST_F(BadInput, ADurationTooLongForTheClockOrTheMemoryIsRefusedBeforeAnythingStarts) {
  expect_refused("--world sim --duration 100000h", "--duration");                 // was std::bad_alloc
  expect_refused("--world sim --rate 1000 --duration 1000h", "--duration");       // ~3.6e9 requests: memory
  expect_refused("--world sim --time-scale 1000 --duration 9000h", "--duration");  // overflows once scaled
  expect_refused("--world sim --lease-ttl 9000h", "--lease-ttl");
}

TEST_F(BadInput, LatenciesFromTheOverflowRangeAreRefusedInTheDistributionParser) {
  expect_refused("--world sim --partner-latency fixed:100000h", "--partner-latency");
  expect_refused("--world sim --partner-latency exponential:mean=10000000000000ms", "--partner-latency");
  expect_refused("--world sim --partner-latency lognormal:p50=1ms,p99=30000h", "--partner-latency");
  expect_refused("--world sim --db-latency uniform:1ms..1000h", "--db-latency");
}

TEST_F(BadInput, AConfigThatIsADirectoryIsRefusedNotIgnored) {
  expect_refused("--world sim --config " + dir_.string(), "--config");
}

TEST_F(BadInput, AnOutThatIsAnExistingDirectoryNamedDotJsonIsRefusedWithAReasonAndNoRunStarts) {
  fs::create_directories(dir_ / "x.json");
  const auto r = run_command(std::string(LOCKBENCH_BIN) + " run --world sim --duration 2s --quiet --out " +
                             (dir_ / "x.json").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("is a directory"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("Success"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(dir_ / "x.json"));
  EXPECT_EQ(r.out.find("strategy"), std::string::npos) << "a run started: " << r.out;  // no table: nothing ran
}

TEST_F(BadInput, AnUnwritableOutFailsAtOnceBeforeTheFirstRun) {
  const auto r = run_command(std::string(LOCKBENCH_BIN) + " run --world sim --duration 2s --quiet --out /proc/lockbench/x.json");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--out"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("strategy"), std::string::npos) << "a run started: " << r.out;
}

TEST_F(BadInput, APasswordInABadUrlIsNeverEchoed) {
  const auto r = run_command(std::string(LOCKBENCH_BIN) +
                             " run --world real --db 'host=h password=pw-never-shown' --partner http://127.0.0.1:1 --quiet");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.find("pw-never-shown"), std::string::npos) << r.err;
  const auto r2 = run_command(std::string(LOCKBENCH_BIN) +
                              " run --world real --db postgresql://u:pw-never-shown@127.0.0.1:1/x --partner "
                              "http://127.0.0.1:1 --quiet");
  EXPECT_EQ(r2.status, 2);
  EXPECT_NE(r2.err.find("--db"), std::string::npos) << r2.err;
  EXPECT_EQ(r2.err.find("pw-never-shown"), std::string::npos) << r2.err;
}

TEST(Usage, AMissingSubcommandAndAnUnknownFlagExitTwoWithOneLine) {
  const auto none = run_command(std::string(LOCKBENCH_BIN));
  EXPECT_EQ(none.status, 2) << none.err;
  const auto unknown = run_command(std::string(LOCKBENCH_BIN) + " run --no-such-flag");
  EXPECT_EQ(unknown.status, 2) << unknown.err;
  EXPECT_NE(unknown.err.find("--no-such-flag"), std::string::npos) << unknown.err;
  const auto sub = run_command(std::string(LOCKBENCH_BIN) + " frobnicate");
  EXPECT_EQ(sub.status, 2) << sub.err;
}

TEST(Usage, VersionAndHelpSucceed) {
  const auto v = run_command(std::string(LOCKBENCH_BIN) + " --version");
  EXPECT_EQ(v.status, 0);
  EXPECT_EQ(v.out.rfind("lockbench ", 0), 0u) << v.out;
  const auto h = run_command(std::string(LOCKBENCH_BIN) + " run --help");
  EXPECT_EQ(h.status, 0);
  EXPECT_NE(h.out.find("--maximum-pool-size"), std::string::npos);
}

TEST_F(BadInput, DatabaseFaultsOutsideTheirSyntaxAreRefusedWithTheAcceptedForm) {
  for (const char* bad : {"commit_fail", "commit_fail:p=2", "conn_lost:p=x", "disk_full:p=0.1",
                          "commit_fail:p=0.1,commit_fail:p=0.2"})
    expect_refused(std::string("--world sim --scenario checkout --strategy held-tx --db-faults ") + bad, "--db-faults");
  expect_refused("--world sim --scenario checkout --strategy outbox --outbox-pollers 65", "--outbox-pollers");
}

TEST_F(BadInput, PgBouncerSettingsOutsideTheirValuesAreRefusedWithTheAcceptedOnes) {
  expect_refused("--world sim --pgbouncer statement", "--pgbouncer");
  expect_refused("--world sim --pgbouncer-pool-size 0", "--pgbouncer-pool-size");
  expect_refused("--world sim --statements named", "--statements");
  expect_refused("--world real --db postgresql://u@127.0.0.1:1/x --partner http://127.0.0.1:1 --pgbouncer transaction "
                 "--pod-mode process",
                 "--pgbouncer");
}

TEST_F(BadInput, KeyHashAndConnectionAcquisitionSettingsOutsideTheirValuesAreRefused) {
  expect_refused("--world sim --strategy advisory-xact --key-hash md5", "--key-hash");
  expect_refused("--world sim --strategy advisory-xact --key-hash sha256-64 --key-id-stride 0", "--key-id-stride");
  expect_refused("--world sim --strategy advisory-xact --key-hash int-id --key-id-base -1", "--key-id-base");
  expect_refused("--world sim --strategy held-tx --pre-sql-work soon", "--pre-sql-work");
  expect_refused("--world sim --strategy held-tx --delay-connection-acquisition maybe", "--delay-connection-acquisition");
}

}  // namespace cli_bad_input_test

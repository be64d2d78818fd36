// Input from an attacker or a careless user, and output that cannot be
// written: each gets one printable line and a non-zero exit (2 for bad input,
// 74 for a lost standard output), never a crash, all of the memory, a reason cut
// off at a NUL byte or a 100 kB echo. No server needed.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "run_command.hpp"

namespace fs = std::filesystem;
using lockbench::testing::CommandResult;
using lockbench::testing::run_command;

namespace cli_hostile_input_test {

const std::string kBin = LOCKBENCH_BIN;

class HostileInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lockbench-hostile-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string file(const std::string& name, const std::string& text) const {
    const auto p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  // lint under a 4 GB address-space cap and a 30 s timeout: today's unbounded
  // alias expansion fails the test instead of the machine.
  CommandResult lint_bounded(const std::string& path) const {
    return run_command("bash -c 'ulimit -v 4000000; exec timeout 30 " + kBin + " lint --from " + path + "'");
  }
  static std::size_t lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

  fs::path dir_;
};

TEST_F(HostileInput, ARecursiveYamlAliasIsRefusedInOneLine) {
  const auto r = lint_bounded(file("recursive.yml", "a: &a [*a]\n"));
  EXPECT_EQ(r.status, 2) << r.err;  // was a segfault (139)
  EXPECT_NE(r.err.find("alias that contains itself"), std::string::npos) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
}

TEST_F(HostileInput, ABillionLaughsFileIsRefusedAtTheNodeCap) {
  std::string y = "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  for (char c = 'b'; c <= 'i'; ++c) {
    const char prev = static_cast<char>(c - 1);
    y += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 9; ++i) y += std::string(i ? "," : "") + "*" + prev;
    y += "]\n";
  }
  const auto r = lint_bounded(file("laughs.yml", y));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("YAML nodes once its aliases are expanded"), std::string::npos) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
}

TEST_F(HostileInput, DeeplyNestedYamlIsRefusedInOneLine) {
  std::string y = "a:";
  for (int i = 0; i < 100; ++i) y += " [";
  y += "1";
  for (int i = 0; i < 100; ++i) y += "]";
  const auto r = lint_bounded(file("deep.yml", y + "\n"));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("nests deeper than"), std::string::npos) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
}

TEST_F(HostileInput, LintOnADirectoryIsRefusedWhateverItsName) {
  for (const char* name : {"dir.yml", "dir.properties"}) {
    fs::create_directories(dir_ / name);
    const auto r = run_command(kBin + " lint --from " + (dir_ / name).string());
    EXPECT_EQ(r.status, 2) << name << ": " << r.out << r.err;  // was 1 (basic_filebuf::underflow) and 0 (silent)
    EXPECT_NE(r.err.find("is a directory"), std::string::npos) << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
  }
}

TEST_F(HostileInput, ANulByteInAValueDoesNotCutTheReasonOff) {
  const auto cfg = file("nul.toml", "world = \"si\\u0000m\"\n");
  const auto r = run_command(kBin + " run --quiet --config " + cfg);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("si\\x00m"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(accepted: real, sim)"), std::string::npos) << "the reason was cut off: " << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
}

TEST_F(HostileInput, AHugeBadValueIsCutAndItsReasonKept) {
  const std::string huge(100'000, 'x');
  const auto r = run_command(kBin + " run --quiet --world " + huge);
  EXPECT_EQ(r.status, 2);
  EXPECT_LT(r.err.size(), 400u) << "the value was echoed whole";  // 100 kB given
  EXPECT_NE(r.err.find("--world: 'xxx"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("bytes cut"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(accepted: real, sim)"), std::string::npos) << "the reason was cut off: " << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
}

TEST_F(HostileInput, AHexadecimalRateIsRefused) {
  const auto r = run_command(kBin + " run --world sim --quiet --rate 0x10");
  EXPECT_EQ(r.status, 2) << r.out;  // strtod read it as 16
  EXPECT_NE(r.err.find("--rate: '0x10' is not a number"), std::string::npos) << r.err;
}

TEST_F(HostileInput, EveryTooLongDurationNamesTheSameCap) {
  // 9000h passes the parser and fails validate(); 2e9 s fails the parser: one cap, one wording.
  for (const char* value : {"9000h", "2000000000s"}) {
    const auto r = run_command(kBin + " run --world sim --quiet --lease-ttl " + value);
    EXPECT_EQ(r.status, 2) << value;
    EXPECT_NE(r.err.find("--lease-ttl"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("at most 365 days"), std::string::npos) << value << ": " << r.err;
  }
}

TEST_F(HostileInput, AStandardOutputThatCannotBeWrittenIsAnError) {
  const auto r = run_command(kBin + " run --world sim --strategy none --duration 2s --rate 5 --json --quiet > /dev/full");
  EXPECT_EQ(r.status, 74) << r.err;  // was 0: the results were lost silently
  // The table goes to stderr with --json; the refusal is its last line.
  const std::string last = "lockbench: cannot write to standard output: No space left on device; the output is lost\n";
  ASSERT_GE(r.err.size(), last.size()) << r.err;
  EXPECT_EQ(r.err.substr(r.err.size() - last.size()), last) << r.err;
}

TEST_F(HostileInput, AFailedWriteNamesItsOwnFlagAndTheReason) {
  // A file-size limit stands in for a full disk: the write fails with EFBIG,
  // as it would with ENOSPC, after the up-front check passed.
  const auto metrics = (dir_ / "metrics.prom").string();
  const auto r = run_command("bash -c 'ulimit -f 1; trap \"\" XFSZ; exec " + kBin +
                             " run --world sim --strategy none,held-tx --duration 2s --rate 5 --quiet --metrics-out " +
                             metrics + "'");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--metrics-out: cannot write " + metrics + ": File too large"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(metrics)) << "half a file was left";
}

}  // namespace cli_hostile_input_test

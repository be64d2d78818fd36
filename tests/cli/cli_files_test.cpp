// Paths, writers and readers against hostile files (issue 42, docs/safety.md):
// a path read from a manifest or found in a directory never leads out of it
// (merge, report, compact, --resume); a writer replaces only a regular file
// (a FIFO or a device node is refused, `-` is standard output); every reader
// stops at its cap before parsing, and YAML's node cap holds with little
// memory; a temporary left by kill -9 goes on the next run; compact and merge
// refuse to write over their own input; --resume takes another spelling of a
// strategy as the same point. No server needed.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "run_command.hpp"

namespace fs = std::filesystem;
using lockbench::testing::CommandResult;
using lockbench::testing::run_command;
using lockbench::testing::slurp;
using nlohmann::json;

namespace cli_files_test {

const std::string kBin = LOCKBENCH_BIN;
// Two short simulator points: a sweep of a second.
const std::string kSweep = kBin + " sweep --world sim --quiet --jobs 1 --vary rate=2,4 --strategy held-tx "
                                  "--duration 5s --keys 3 --seed 5";

class Files : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lockbench-files-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string at(const std::string& name) const { return (dir_ / name).string(); }
  std::string file(const std::string& name, const std::string& text) const {
    std::ofstream(at(name), std::ios::binary) << text;
    return at(name);
  }
  // A sharded sweep of kSweep in one shard: a directory merge takes.
  std::string one_shard(const std::string& name) const {
    const auto r = run_command(kSweep + " --shard 0/1 --out " + at(name));
    EXPECT_EQ(r.status, 0) << r.err;
    return at(name);
  }
  // A character device like /dev/null or /dev/full, made here (needs root, as the suite runs).
  bool device(const std::string& name, unsigned minor) const {
    return ::mknod(at(name).c_str(), S_IFCHR | 0666, makedev(1, minor)) == 0;
  }
  static bool is_char_device(const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
  }
  fs::path dir_;
};

void expect_one_line(const CommandResult& r, int status, const std::string& names) {
  EXPECT_EQ(r.status, status) << r.err;
  EXPECT_NE(r.err.find(names), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// The manifest of `dir` with its plan's first name replaced by `name`.
void tamper_plan(const std::string& dir, const std::string& name) {
  const fs::path m = fs::path(dir) / "lockbench.manifest";
  json j = json::parse(slurp(m.string()));
  j["plan"][0] = name;
  std::ofstream(m) << j.dump(2);
}

// ---- paths from files -----------------------------------------------------

TEST_F(Files, MergeRefusesAManifestWhosePlanLeadsOutOfItsDirectory) {
  const std::string shard = one_shard("shard");
  fs::create_directories(dir_ / "victim");
  const std::string victim = file("victim/pwned.json", "precious\n");
  const std::string name0 = json::parse(slurp(shard + "/lockbench.manifest"))["plan"][0];
  fs::copy_file(fs::path(shard) / name0, dir_ / "victim" / "source.json");
  for (const std::string& evil : {std::string("../victim/pwned.json"), victim, std::string("./") + name0}) {
    SCOPED_TRACE(evil);
    tamper_plan(shard, evil);
    const auto r = run_command(kBin + " merge " + shard + " --no-charts --out " + at("merged"));
    expect_one_line(r, 2, "'" + evil + "'");
    EXPECT_EQ(slurp(victim), "precious\n");  // was overwritten, rc 0
    EXPECT_FALSE(fs::exists(dir_ / "merged" / "lockbench.manifest"));
  }
  // A plan name that is a symlink out of the shard directory.
  tamper_plan(shard, "link.json");
  fs::create_symlink(dir_ / "victim" / "source.json", fs::path(shard) / "link.json");
  expect_one_line(run_command(kBin + " merge " + shard + " --no-charts --out " + at("merged")), 2, "symlink");
}

TEST_F(Files, MergeOfAnUntouchedShardStillWorks) {
  const std::string shard = one_shard("shard");
  const auto r = run_command(kBin + " merge " + shard + " --no-charts --out " + at("merged"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "merged" / "lockbench.manifest"));
}

TEST_F(Files, AManifestIndexThatIsNotANumberGetsOneLine) {
  const std::string shard = one_shard("shard");
  const fs::path m = fs::path(shard) / "lockbench.manifest";
  json j = json::parse(slurp(m.string()));
  j["shard"]["index"] = "0";
  std::ofstream(m) << j.dump(2);
  const auto r = run_command(kBin + " merge " + shard + " --no-charts --out " + at("merged"));
  expect_one_line(r, 2, "shard.index is not a whole number");  // was a raw type_error, rc 1
}

TEST_F(Files, ReportRefusesAResultThatIsASymlinkOutOfItsDirectory) {
  ASSERT_EQ(run_command(kSweep + " --out " + at("a")).status, 0);
  fs::create_directories(dir_ / "outside");
  fs::copy_file(dir_ / "a" / "001-sim-switch-primary-held-tx.json", dir_ / "outside" / "x.json");
  fs::create_symlink(dir_ / "outside" / "x.json", dir_ / "a" / "003-link.json");
  // (report first warns that the manifest does not list 003-link.json: two lines)
  const auto linked = run_command(kBin + " report " + at("a") + " --no-charts --out " + at("r"));
  EXPECT_EQ(linked.status, 2) << linked.err;
  EXPECT_NE(linked.err.find("003-link.json is a symlink that leads out of"), std::string::npos) << linked.err;
  EXPECT_FALSE(fs::exists(dir_ / "r" / "report.md"));
  fs::remove(dir_ / "a" / "003-link.json");
  // plan.json beside the results as a symlink out is refused too.
  file("outside/plan.json", "{}");
  fs::create_symlink(dir_ / "outside" / "plan.json", dir_ / "a" / "plan.json");
  const auto plan = run_command(kBin + " report " + at("a") + " --no-charts --out " + at("r"));
  EXPECT_EQ(plan.status, 2) << plan.err;
  EXPECT_NE(plan.err.find("plan.json is a symlink that leads out of"), std::string::npos) << plan.err;
  fs::remove(dir_ / "a" / "plan.json");
  EXPECT_EQ(run_command(kBin + " report " + at("a") + " --no-charts --out " + at("r")).status, 0);
}

TEST_F(Files, CompactRefusesASymlinkOutOfItsInputAndAnInPlaceOutWithoutForce) {
  ASSERT_EQ(run_command(kSweep + " --out " + at("a")).status, 0);
  const std::string first = at("a/001-sim-switch-primary-held-tx.json");
  const auto size = fs::file_size(first);
  // In place: refused without --force (was 92 KB -> 3.8 KB, rc 0), also spelled with a trailing slash.
  for (const std::string& out : {at("a"), at("a") + "/", at("a/../a")}) {
    SCOPED_TRACE(out);
    expect_one_line(run_command(kBin + " compact " + at("a") + " --out " + out), 2, "in place");
    EXPECT_EQ(fs::file_size(first), size);
  }
  expect_one_line(run_command(kBin + " compact " + first + " --out " + at("a")), 2, "in place");
  ASSERT_EQ(run_command(kBin + " compact " + at("a") + " --out " + at("a") + " --force").status, 0);
  EXPECT_LT(fs::file_size(first), size);
  // A symlink under the input that leads out of it.
  file("secret.txt", "secret\n");
  fs::create_symlink(dir_ / "secret.txt", dir_ / "a" / "leak.txt");
  expect_one_line(run_command(kBin + " compact " + at("a") + " --out " + at("c")), 2, "symlink");
  EXPECT_FALSE(fs::exists(dir_ / "c" / "leak.txt"));
}

TEST_F(Files, MergeRefusesToWriteIntoItsOwnShardDirectory) {
  const std::string shard = one_shard("shard");
  expect_one_line(run_command(kBin + " merge " + shard + " --no-charts --out " + shard + "/"), 2, "its input");
}

TEST_F(Files, ResumeRefusesAResultThatIsASymlinkOutOfOut) {
  ASSERT_EQ(run_command(kSweep + " --out " + at("a")).status, 0);
  const fs::path first = dir_ / "a" / "001-sim-switch-primary-held-tx.json";
  fs::rename(first, dir_ / "elsewhere.json");
  fs::create_symlink(dir_ / "elsewhere.json", first);
  expect_one_line(run_command(kSweep + " --resume --out " + at("a")), 2, "symlink");
}

TEST_F(Files, ResumeTakesAnotherSpellingOfTheStrategyAsTheSamePoint) {
  ASSERT_EQ(run_command(kSweep + " --out " + at("a")).status, 0);
  std::string respelled = kSweep;
  respelled.replace(respelled.find("--strategy held-tx"), 18, "--strategy held-tx:wait");
  const auto r = run_command(respelled + " --resume --out " + at("a"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(std::count_if(fs::directory_iterator(dir_ / "a"), fs::directory_iterator{},
                          [](const auto& e) { return e.path().extension() == ".json"; }),
            2)
      << r.err;  // was 4: both points ran again beside the first two
  EXPECT_NE(r.err.find("renamed"), std::string::npos) << r.err;
  // A second resume with the same spelling finds them by name.
  const auto again = run_command(respelled + " --resume --out " + at("a"));
  EXPECT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(again.err.find("renamed"), std::string::npos) << again.err;
}

// ---- writers ------------------------------------------------------------------

TEST_F(Files, WritersRefuseADeviceOrAFifoAndLeaveItAsItWas) {
  ASSERT_TRUE(device("null", 3)) << "mknod needs root";
  ASSERT_EQ(::mkfifo(at("fifo").c_str(), 0600), 0);
  const std::string run = kBin + " run --world sim --quiet --duration 2s --rate 5 --strategy held-tx";
  for (const std::string& node : {at("null"), at("fifo")}) {
    SCOPED_TRACE(node);
    expect_one_line(run_command(run + " --metrics-out " + node), 2, "writes only regular files");
  }
  // --out x.json as a device; report.md as a FIFO.
  ASSERT_TRUE(device("dev.json", 3));
  expect_one_line(run_command(run + " --out " + at("dev.json")), 2, "writes only regular files");
  EXPECT_TRUE(is_char_device(at("null")));  // was replaced by a regular file
  EXPECT_TRUE(is_char_device(at("dev.json")));
  ASSERT_EQ(run_command(run + " --out " + at("res")).status, 0);
  fs::create_directories(dir_ / "rep");
  ASSERT_EQ(::mkfifo(at("rep/report.md").c_str(), 0600), 0);
  expect_one_line(run_command(kBin + " report " + at("res") + " --no-charts --out " + at("rep")), 2,
                  "report.md is a FIFO");
  EXPECT_TRUE(fs::is_fifo(dir_ / "rep" / "report.md"));
  // /dev/full itself: refused before the run, and it stays a device.
  expect_one_line(run_command(run + " --metrics-out /dev/full"), 2, "character device");
  EXPECT_TRUE(is_char_device("/dev/full"));
}

TEST_F(Files, MetricsOutDashIsStandardOutputAndARegularFileStillWorks) {
  const std::string run = kBin + " run --world sim --quiet --duration 2s --rate 5 --strategy held-tx";
  const auto dash = run_command(run + " --metrics-out -");
  ASSERT_EQ(dash.status, 0) << dash.err;
  EXPECT_NE(dash.out.find("hikaricp_connections_max"), std::string::npos);
  EXPECT_FALSE(fs::exists("-"));
  ASSERT_EQ(run_command(run + " --metrics-out " + at("m.prom")).status, 0);
  EXPECT_TRUE(fs::is_regular_file(dir_ / "m.prom"));
  // A full standard output is a failed write: non-zero, never 0.
  EXPECT_NE(run_command(run + " --metrics-out - > /dev/full").status, 0);
}

TEST_F(Files, AReportTemporaryLeftByKillMinus9GoesOnTheNextRun) {
  ASSERT_EQ(run_command(kSweep + " --out " + at("a")).status, 0);
  // A PID that is gone: a child that has exited and been reaped.
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  const fs::path stale = dir_ / "rep" / (".report-tmp-" + std::to_string(gone));
  fs::create_directories(stale);
  file("rep/.report-tmp-" + std::to_string(gone) + "/report.md", std::string(1000, 'x'));
  // One of a live process (this test) stays.
  const fs::path live = dir_ / "rep" / (".report-tmp-" + std::to_string(::getpid()));
  fs::create_directories(live);
  ASSERT_EQ(run_command(kBin + " report " + at("a") + " --no-charts --out " + at("rep")).status, 0);
  EXPECT_FALSE(fs::exists(stale));  // was kept for good
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(dir_ / "rep" / "report.md"));
}

// ---- readers ------------------------------------------------------------------

TEST_F(Files, EveryReaderStopsAtItsCapBeforeParsing) {
  // A sparse result file of 300 MiB: refused by its size, not read.
  { std::ofstream(at("big.json")) << "{"; }
  fs::resize_file(at("big.json"), std::uintmax_t{300} << 20);
  expect_one_line(run_command(kBin + " report " + at("big.json") + " --no-charts --out " + at("r")), 2,
                  "larger than 256 MiB, the cap for a result file");
  // A device that never ends (as /dev/zero) as --config, --from and a result: refused at the cap.
  ASSERT_TRUE(device("zero", 5));
  const auto bounded = [&](const std::string& args) {
    return run_command("bash -c 'ulimit -v 2000000; exec timeout 60 " + kBin + " " + args + "'");
  };
  expect_one_line(bounded("run --config " + at("zero")), 2, "larger than 4 MiB, the cap for a configuration file");
  const std::string props = at("zero.properties");
  ASSERT_EQ(::mknod(props.c_str(), S_IFCHR | 0666, makedev(1, 5)), 0);
  expect_one_line(bounded("lint --from " + props), 2, "larger than 4 MiB");
  const std::string zero_json = at("zero.json");
  ASSERT_EQ(::mknod(zero_json.c_str(), S_IFCHR | 0666, makedev(1, 5)), 0);
  expect_one_line(bounded("report " + zero_json + " --no-charts --out " + at("r")), 2, "larger than 256 MiB");
  // A TOML file under the cap is read as before.
  file("ok.toml", "rate = 3\nduration = \"2s\"\nworld = \"sim\"\n");
  EXPECT_EQ(run_command(kBin + " run --quiet --config " + at("ok.toml")).status, 0);
}

// Peak RSS of a child running `argv` (getrusage of the reaped child), in KiB, and its exit status.
std::pair<long, int> peak_rss_kib(const std::vector<std::string>& argv) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::freopen("/dev/null", "w", stderr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  struct rusage ru {};
  ::wait4(pid, &status, 0, &ru);
  return {ru.ru_maxrss, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

TEST_F(Files, AFourMiBYamlFlowSequenceIsRefusedAtTheNodeCapWithLittleMemory) {
  const std::size_t size = std::size_t{4} << 20;
  std::string y = "a: [";
  while (y.size() + 5 <= size) y += "a,";
  y += "a]\n";
  ASSERT_LE(y.size(), size);
  const std::string path = file("flow.yml", y);
  const auto [rss_kib, status] = peak_rss_kib({kBin, "lint", "--from", path});
  EXPECT_EQ(status, 2);
  EXPECT_LT(rss_kib, 150 * 1024) << "peak RSS " << rss_kib << " KiB";  // was 1.83 GB
  const auto r = run_command(kBin + " lint --from " + path);
  expect_one_line(r, 2, "more than 50000 YAML nodes");
  // As a Kubernetes manifest: the same cap.
  std::string k = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {x: [";
  while (k.size() + 6 <= size) k += "1,";
  k += "1]}\n";
  const auto kr = peak_rss_kib({kBin, "lint", "--from", file("deploy.yaml", k)});
  EXPECT_EQ(kr.second, 2);
  EXPECT_LT(kr.first, 150 * 1024);
}

}  // namespace cli_files_test

namespace cli_files_test {

// ---- closed loop past capacity, input hygiene -----------------------------------------------

TEST_F(Files, AClosedLoopPastThreadsAndQueueBacksOffWithBoundedMemory) {
  // 301 users, one more than max-threads 200 + accept-count 100: was bad_alloc at 2.6 GB after 14 s.
  const auto [rss_kib, status] = peak_rss_kib({kBin, "run", "--world", "sim", "--quiet", "--strategy", "held-tx",
                                               "--users", "301", "--think-time", "0s", "--duration", "5s", "--out",
                                               at("r.json")});
  ASSERT_EQ(status, 0);
  EXPECT_LT(rss_kib, 500 * 1024) << "peak RSS " << rss_kib << " KiB";
  const json r = json::parse(slurp(at("r.json")));
  const auto rejected = r["requests"].value("rejected", 0);
  const auto ok = r["requests"].value("ok", 0);
  EXPECT_GT(rejected, 0);        // the 301st user is turned away ...
  EXPECT_LT(rejected, 301 * 60);  // ... and backs off: at most ~12/s per user, not millions
  EXPECT_GT(ok, 100);  // the service keeps serving the other 300
}

TEST_F(Files, NumbersOnTheCommandLineAreDecimalOnly) {
  for (const std::string& args :
       {std::string("run --world sim --repetitions 0x10"), std::string("sweep --vary rate=2 --repetitions 0b11"),
        std::string("serve --port 0x1f90"), std::string("serve --run-id 0x10"), std::string("serve --pod 0x1"),
        std::string("serve --management-port 0x1f91"),
        std::string("compare a b --max-ok-drop 0x10")}) {
    SCOPED_TRACE(args);
    const auto r = run_command(kBin + " " + args);
    expect_one_line(r, 2, "is not a decimal");
  }
  EXPECT_EQ(run_command(kBin + " run --world sim --quiet --duration 2s --rate 5 --repetitions 2").status, 0);
  // A run id is a 64-bit number: all of its 19 digits are taken (the runner passes its process pods such
  // ids; RealSafetyCli.ProcessPods* failed on one when the rule stopped at 18).
  const auto big = run_command(kBin + " serve --run-id 5228389784938143492 --port 0x1");
  EXPECT_EQ(big.err.find("--run-id"), std::string::npos) << big.err;
}

TEST_F(Files, ControlBytesInDeploymentNamesAndPathsAreEscapedOnTheTerminal) {
  file("d.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: \"evil\\e]0;owned\\a\\e[2J\"\nspec:\n"
                 "  replicas: 2\n  template:\n    spec:\n      containers:\n      - name: app\n"
                 "        livenessProbe:\n          httpGet: {path: \"/x\\e[2J\"}\n");
  const auto r = run_command(kBin + " lint --from " + at("d.yaml"));
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find('\x07'), std::string::npos);
  EXPECT_NE((r.out + r.err).find("\\x1B]0;owned\\x07"), std::string::npos) << r.out << r.err;
  // An error line naming a path with control bytes: escaped too.
  const auto bad = run_command(kBin + " run --config '" + at("no\x1b[2Jsuch.toml") + "'");
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(bad.err.find('\x1b'), std::string::npos) << bad.err;
  EXPECT_TRUE(bad.err.find("\\x1B[2J") != std::string::npos || bad.err.find("\\x1b[2J") != std::string::npos)
      << bad.err;
}

TEST_F(Files, AResultNamingAStrategyWithANewlineOrABacktickIsRefusedAtInput) {
  ASSERT_EQ(run_command(kBin + " run --world sim --quiet --duration 2s --rate 5 --strategy held-tx --out " +
                        at("r.json")).status, 0);
  json r = json::parse(slurp(at("r.json")));
  for (const std::string& evil : {std::string("held-tx\nx"), std::string("held`<img src=x onerror=alert(1)>`")}) {
    SCOPED_TRACE(evil);
    r["strategy"] = evil;
    file("evil.json", r.dump());
    const auto rep = run_command(kBin + " report " + at("evil.json") + " --out " + at("rep"));
    expect_one_line(rep, 2, "is not a name lockbench writes");  // was 0-byte SVGs with rc 0, raw HTML in report.md
    EXPECT_FALSE(fs::exists(dir_ / "rep" / "report.md"));
  }
  EXPECT_EQ(run_command(kBin + " report " + at("r.json") + " --no-charts --out " + at("ok")).status, 0);
}

TEST_F(Files, AMalformedUnicodeEscapeInPropertiesIsRefusedInOneLine) {
  // (the decoding itself: SpringProperties.UnicodeAndBackslashEscapesAreDecodedAsJavaReadsThem)
  file("bad.properties", "spring.datasource.hikari.maximum-pool-size=\\u00G5\n");
  expect_one_line(run_command(kBin + " lint --from " + at("bad.properties")), 2, "malformed \\uXXXX");
  file("good.properties", "spring.datasource.hikari.maximum-pool-size=\\u0031\\u0035\n");
  EXPECT_NE(run_command(kBin + " lint --from " + at("good.properties")).status, 2);
}

}  // namespace cli_files_test

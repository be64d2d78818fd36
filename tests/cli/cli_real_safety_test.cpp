// `lockbench` against the test PostgreSQL and fake partner, as a user runs it
// (issue 8): a password reaches libpq but no artefact, PGPASSWORD works for a
// URL without one, and Ctrl-C leaves an interrupted result and no lease held.
// The role lockbench_pw must prove its password over TCP (scripts/pg).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "run_command.hpp"
#include "tests/real/partner_arrivals.hpp"

namespace fs = std::filesystem;
using namespace lockbench::testing;
using nlohmann::json;
using namespace std::chrono_literals;

namespace cli_real_safety_test {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

const std::string kRole = "lockbench_pw";
const std::string kPassword = "Pw-never-in-an-artefact-7f3a";

// The test server's URL as lockbench_pw (with the password, or without).
std::string role_url(bool with_password) {
  const std::string db = env("LOCKBENCH_TEST_DB");
  const auto at = db.find('@');
  const auto scheme = db.find("://") + 3;
  return db.substr(0, scheme) + kRole + (with_password ? ":" + kPassword : "") + db.substr(at);
}

class RealSafetyCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (env("LOCKBENCH_TEST_DB").empty() || env("LOCKBENCH_TEST_PARTNER").empty())
      GTEST_SKIP() << "LOCKBENCH_TEST_DB / LOCKBENCH_TEST_PARTNER not set (scripts/test sets them)";
    dir_ = fs::temp_directory_path() / ("lockbench-safety-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    pqxx::connection c(env("LOCKBENCH_TEST_DB"));
    pqxx::nontransaction tx(c);
    const bool exists = tx.exec_params1("SELECT count(*) > 0 FROM pg_roles WHERE rolname = $1", kRole)[0].as<bool>();
    tx.exec(std::string(exists ? "ALTER" : "CREATE") + " ROLE " + kRole + " LOGIN SUPERUSER PASSWORD " + tx.quote(kPassword));
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string lockbench() const { return std::string(LOCKBENCH_BIN); }
  std::string partner() const { return env("LOCKBENCH_TEST_PARTNER"); }
  fs::path dir_;
};

std::int64_t leases_held() {
  pqxx::connection c(env("LOCKBENCH_TEST_DB"));
  pqxx::nontransaction tx(c);
  return tx.exec1("SELECT count(*) FROM lockbench.rows WHERE locked_at IS NOT NULL")[0].as<std::int64_t>();
}

TEST_F(RealSafetyCli, ThePasswordReachesTheDatabaseButNoResultReportCalibrationOrMessage) {
  std::string said;  // every stdout and stderr
  const auto run = run_command(lockbench() + " run --world real --quiet --db '" + role_url(true) + "' --partner " +
                               partner() + " --strategy row-lease,none --rate 10 --duration 1s --out " +
                               (dir_ / "results").string());
  ASSERT_EQ(run.status, 0) << run.err;
  said += run.out + run.err;
  const auto rep = run_command(lockbench() + " report " + (dir_ / "results").string() + " --no-charts --out " +
                               (dir_ / "report").string());
  ASSERT_EQ(rep.status, 0) << rep.err;
  said += rep.out + rep.err;
  const auto cal = run_command(lockbench() + " calibrate --db '" + role_url(true) + "' --partner " + partner() +
                               " --out " + (dir_ / "calibration.toml").string());
  ASSERT_EQ(cal.status, 0) << cal.err;
  said += cal.out + cal.err;
  // A failure that names the URL: an unreachable port.
  std::string unreachable = role_url(true);
  unreachable.replace(unreachable.rfind(':'), unreachable.rfind('/') - unreachable.rfind(':'), ":1");
  const auto bad = run_command(lockbench() + " run --world real --quiet --db '" + unreachable + "' --partner " + partner());
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find(kRole + ":***@"), std::string::npos) << bad.err;
  said += bad.out + bad.err;

  EXPECT_EQ(said.find(kPassword), std::string::npos) << said;
  std::size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir_)) {
    if (!e.is_regular_file()) continue;
    ++files;
    EXPECT_EQ(slurp(e.path().string()).find(kPassword), std::string::npos) << e.path();
  }
  EXPECT_GE(files, 6u);  // 2 results, report.md, report.html, summary.csv, calibration.toml
  // The URL itself stays, redacted: the result still says where it ran.
  const json r = json::parse(slurp((dir_ / "results" / "001-real-switch-primary-row-lease.json").string()));
  EXPECT_NE(r["settings"]["db"].get<std::string>().find(kRole + ":***@127.0.0.1"), std::string::npos) << r["settings"];
}

TEST_F(RealSafetyCli, AUrlWithoutAPasswordTakesItFromPgpassword) {
  // Without a password the role is refused (scripts/pg's pg_hba), unless the
  // server was started by an older script that trusts everyone.
  const auto refused = run_command(lockbench() + " run --world real --quiet --db '" + role_url(false) +
                                   "' --partner " + partner() + " --strategy none --rate 5 --duration 1s");
  if (refused.status == 0) GTEST_SKIP() << "the test server trusts " << kRole << " (started before scripts/pg asked for its password)";
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.err.find("password"), std::string::npos) << refused.err;
  const auto ok = run_command("PGPASSWORD='" + kPassword + "' " + lockbench() + " run --world real --quiet --db '" +
                              role_url(false) + "' --partner " + partner() + " --strategy none --rate 5 --duration 1s");
  EXPECT_EQ(ok.status, 0) << ok.err;
}

TEST_F(RealSafetyCli, CtrlCMidRunWritesAResultMarkedInterruptedExits130AndLeavesNoLease) {
  const fs::path out = dir_ / "r.json";
  const auto p = spawn({lockbench(), "run", "--world", "real", "--quiet", "--db", env("LOCKBENCH_TEST_DB"), "--partner",
                        partner(), "--strategy", "row-lease", "--rate", "20", "--duration", "60s", "--partner-latency",
                        "fixed:300ms", "--connection-timeout", "2s", "--out", out.string()},
                       (dir_ / "out.txt").string(), (dir_ / "err.txt").string());
  ASSERT_GT(p.pid, 0);
  // Well inside the 60 s run: a lease held (so its partner reset is behind it, and the arrivals
  // count from there), then 20 calls sent (1 s of its 20/s).
  ASSERT_TRUE(wait_for([] { return leases_held() >= 1; }, 30s)) << slurp(p.err_path);
  ASSERT_TRUE(wait_for([&] { return lockbench::test::partner_arrivals(partner()) >= 20; }, 30s)) << slurp(p.err_path);
  kill(p.pid, SIGINT);
  EXPECT_EQ(wait_exit(p.pid, 60s), 130) << slurp(p.err_path);
  const json r = json::parse(slurp(out.string()), nullptr, false);
  ASSERT_TRUE(r.is_object()) << "no result file";
  EXPECT_EQ(r["interrupted"], true);
  EXPECT_EQ(r["complete"], false);
  EXPECT_GT(r["requests"]["ok"].get<int>(), 10);
  EXPECT_GT(r["real"]["requests_not_sent"].get<int>(), 500);
  EXPECT_EQ(leases_held(), 0);
}

TEST_F(RealSafetyCli, APercentEncodedPasswordKeyReachesTheDatabaseButNoArtefact) {
  // libpq decodes the key: ?%70assword= is password=.
  std::string url = role_url(false);
  url += (url.find('?') == std::string::npos ? "?" : "&") + std::string("%70assword=") + kPassword;
  const auto run = run_command(lockbench() + " run --world real --quiet --db '" + url + "' --partner " + partner() +
                               " --strategy none --rate 5 --duration 1s --out " + (dir_ / "results").string());
  ASSERT_EQ(run.status, 0) << run.err;
  const auto rep = run_command(lockbench() + " report " + (dir_ / "results").string() + " --no-charts --out " +
                               (dir_ / "report").string());
  ASSERT_EQ(rep.status, 0) << rep.err;
  const std::string said = run.out + run.err + rep.out + rep.err;
  EXPECT_EQ(said.find(kPassword), std::string::npos) << said;
  std::size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir_)) {
    if (!e.is_regular_file()) continue;
    ++files;
    EXPECT_EQ(slurp(e.path().string()).find(kPassword), std::string::npos) << e.path();
  }
  EXPECT_GE(files, 4u);  // the result, report.md, report.html, summary.csv
}

TEST_F(RealSafetyCli, AnUnencodedAtSignInThePasswordLeaksNoPieceOfItThroughLibpq) {
  // libpq splits at the first '@': password "Xq9v", host "Zr7w@127.0.0.1", and says so in its error.
  const std::string db = env("LOCKBENCH_TEST_DB");
  const std::string url = db.substr(0, db.find("://") + 3) + kRole + ":Xq9v@Zr7w" + db.substr(db.find('@'));
  const auto r = run_command(lockbench() + " run --world real --quiet --db '" + url + "' --partner " + partner() +
                             " --strategy none --rate 5 --duration 1s");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--db"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("Xq9v"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("Zr7w"), std::string::npos) << r.err;
}

TEST_F(RealSafetyCli, ProcessPodsGetThePasswordInTheirEnvironmentNeverInTheirArgv) {
  const auto p = spawn({lockbench(), "run", "--world", "real", "--quiet", "--db", role_url(true), "--partner", partner(),
                        "--strategy", "row-lease", "--pods", "2", "--pod-mode", "process", "--rate", "10", "--duration",
                        "4s"},
                       (dir_ / "out.txt").string(), (dir_ / "err.txt").string());
  ASSERT_GT(p.pid, 0);
  // The runner's `lockbench serve` children, as `ps` shows them to every local user.
  std::vector<std::string> argvs;
  const auto children = [&] {
    argvs.clear();
    for (const auto& e : fs::directory_iterator("/proc")) {
      const std::string status = slurp((e.path() / "status").string());
      if (status.find("\nPPid:\t" + std::to_string(p.pid) + "\n") == std::string::npos) continue;
      std::string cmdline = slurp((e.path() / "cmdline").string());
      std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
      if (cmdline.find(" serve ") != std::string::npos) argvs.push_back(cmdline);
    }
    return argvs.size() >= 2;
  };
  EXPECT_TRUE(wait_for(children, 15s)) << slurp(p.err_path);
  for (const auto& a : argvs) EXPECT_EQ(a.find(kPassword), std::string::npos) << a;
  EXPECT_EQ(wait_exit(p.pid, 60s), 0) << slurp(p.err_path);  // and the pods still reached the database
}

TEST_F(RealSafetyCli, CalibrateAgainstADeadPartnerSaysWhy) {
  const auto r = run_command(lockbench() + " calibrate --db " + env("LOCKBENCH_TEST_DB") +
                             " --partner http://127.0.0.1:1 --out " + (dir_ / "c.toml").string());
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--partner: calibration failed at http://127.0.0.1:1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cannot connect (nothing listens there"), std::string::npos) << r.err;  // was ": Connection"
  EXPECT_FALSE(fs::exists(dir_ / "c.toml"));
}

}  // namespace cli_real_safety_test

// `lockbench` against the test PostgreSQL and fake partner, as a user runs it
// (issue 8): a password reaches libpq but no artefact, PGPASSWORD works for a
// URL without one, and Ctrl-C leaves an interrupted result and no lease held.
// The role lockbench_pw must prove its password over TCP (scripts/pg).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "run_command.hpp"

namespace fs = std::filesystem;
using namespace lockbench::testing;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

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

}  // namespace

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
  std::this_thread::sleep_for(3s);  // well inside the 60 s run
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

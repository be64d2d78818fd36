// Runs isolated, or told (issue #42): a second run does not silently reset a
// partner a live run is using; the record's heartbeat session comes back after
// it is terminated, and a runner whose record is gone stops with an error;
// long-lived `serve` pods start their pollers again for each run; a pod's 403
// to requests-over is an error. Real runners, PostgreSQL, partners of the test's own.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "real/leftovers.hpp"
#include "real/pg_conn.hpp"
#include "tests/cli/run_command.hpp"
#include "tests/real/child_process.hpp"
#include "tests/real/partner_arrivals.hpp"
#include "tests/real/private_partner.hpp"
#include "tests/real/test_env.hpp"

namespace lockbench {
namespace real_isolation_test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;
using testing::run_command;
using testing::spawn;
using testing::wait_exit;
using testing::wait_for;

std::string record_id_of(pid_t pid) {  // the run id of this runner's record, "" before it has one
  pqxx::connection c(test::test_db());
  pqxx::nontransaction tx(c);
  if (!tx.exec1("SELECT to_regclass('lockbench.runs') IS NOT NULL")[0].as<bool>()) return "";
  const auto r = tx.exec_params("SELECT run_id FROM lockbench.runs WHERE pid = $1", static_cast<int>(pid));
  return r.empty() ? "" : r[0][0].as<std::string>();
}

std::vector<std::string> runner(const std::string& partner, const std::vector<std::string>& more) {
  std::vector<std::string> a = {LOCKBENCH_BIN, "run", "--world", "real", "--quiet", "--db", test::test_db(),
                                "--partner", partner};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

struct TempDir {
  fs::path dir = fs::temp_directory_path() / ("lockbench-isolation-" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(dir); }
  ~TempDir() { fs::remove_all(dir); }
  std::string at(const char* name) const { return (dir / name).string(); }
};

TEST(RunIsolation, ASecondRunOnTheLivePartnerOfAnotherIsRefusedNamingItUnlessForced) {
  LOCKBENCH_NEED_DB();
  test::PrivatePartner partner;
  ASSERT_FALSE(partner.url().empty());
  TempDir tmp;
  const auto live = spawn(runner(partner.url(), {"--strategy", "held-tx", "--scenario", "single-call", "--rate", "10",
                                                 "--duration", "6s", "--keys", "20", "--partner-latency", "fixed:50ms"}),
                          tmp.at("live.out"), tmp.at("live.err"));
  std::string live_id;
  ASSERT_TRUE(wait_for([&] { return !(live_id = record_id_of(live.pid)).empty(); }, 20s)) << testing::slurp(tmp.at("live.err"));
  // Its partner reset and its first calls made (arrivals count from the reset).
  ASSERT_TRUE(wait_for([&] { return test::partner_arrivals(partner.url()) >= 1; }, 20s)) << testing::slurp(tmp.at("live.err"));
  const std::string second = std::string(LOCKBENCH_BIN) + " run --world real --quiet --db " + test::test_db() +
                             " --partner " + partner.url() + " --strategy none --rate 5 --duration 1s --keys 5";
  const auto refused = run_command(second);
  EXPECT_EQ(refused.status, 2) << refused.err;
  EXPECT_NE(refused.err.find("reset refused: run " + live_id), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--force"), std::string::npos) << refused.err;
  const std::size_t at = refused.err.find("reset refused");  // one line: the refusal and its way out
  EXPECT_LT(at, refused.err.find("--force"));
  EXPECT_LT(refused.err.find("--force"), refused.err.find('\n', at)) << refused.err;
  // --force: the user's choice, told.
  const auto forced = run_command(second + " --force");
  EXPECT_EQ(forced.status, 0) << forced.err;
  EXPECT_EQ(wait_exit(live.pid, 60s), 0) << testing::slurp(tmp.at("live.err"));
  // Every run ended says so (POST /admin/run-done): the next run resets at once.
  const auto next = run_command(second);
  EXPECT_EQ(next.status, 0) << next.err;
}

TEST(RunIsolation, TheRecordSessionComesBackAfterItIsTerminatedAndAGoneRecordIsNoticed) {
  LOCKBENCH_NEED_DB();
  {
    auto c = real::open_session(test::test_db());
    real::create_schema(*c);
  }
  const std::int64_t run = test::private_run_id();
  const std::string run_id = "isolation-" + std::to_string(::getpid());
  real::RunRecord record(test::test_db(), run, run_id);
  const auto sessions = [&] {
    pqxx::connection c(test::test_db());
    pqxx::nontransaction tx(c);
    return tx.exec_params1("SELECT count(*) FROM pg_stat_activity WHERE application_name = $1",
                           real::application_name(run_id, "record"))[0]
        .as<int>();
  };
  ASSERT_EQ(sessions(), 1);
  {
    auto c = real::open_session(test::test_db());
    EXPECT_EQ(real::terminate_run_backends(*c, run_id), 1);
  }
  // Issue #42: it never came back, and a runner on another host reclaimed the live run 34 s later.
  EXPECT_TRUE(wait_for([&] { return record.reconnects() >= 1 && sessions() == 1; }, 8s)) << record.reconnects();
  EXPECT_FALSE(record.lost());
  {
    pqxx::connection c(test::test_db());
    pqxx::nontransaction tx(c);
    EXPECT_LT(tx.exec_params1("SELECT extract(epoch FROM now() - heartbeat_at) FROM lockbench.runs WHERE run = $1", run)[0]
                  .as<double>(),
              real::kHeartbeatPeriod.count() * 2.0 + 1);
    tx.exec_params0("DELETE FROM lockbench.runs WHERE run = $1", run);
  }
  EXPECT_TRUE(wait_for([&] { return record.lost(); }, 8s));
}

TEST(RunIsolation, ARunnerWhoseRecordIsDeletedStopsWithAnErrorInsteadOfFinishingComplete) {
  LOCKBENCH_NEED_DB();
  test::PrivatePartner partner;
  ASSERT_FALSE(partner.url().empty());
  TempDir tmp;
  const auto r = spawn(runner(partner.url(), {"--strategy", "none", "--rate", "5", "--duration", "40s", "--keys", "5",
                                              "--json"}),
                       tmp.at("r.out"), tmp.at("r.err"));
  std::string id;
  ASSERT_TRUE(wait_for([&] { return !(id = record_id_of(r.pid)).empty(); }, 20s)) << testing::slurp(tmp.at("r.err"));
  {
    pqxx::connection c(test::test_db());
    pqxx::nontransaction tx(c);
    tx.exec_params0("DELETE FROM lockbench.runs WHERE run_id = $1", id);  // as a wrong reclaim would
  }
  // Today it ran its 40 s and ended rc 0, complete.
  EXPECT_EQ(wait_exit(r.pid, 25s), 1) << testing::slurp(tmp.at("r.err"));
  const std::string err = testing::slurp(tmp.at("r.err"));
  EXPECT_NE(err.find("record in lockbench.runs"), std::string::npos) << err;
  EXPECT_NE(err.find("was deleted while it ran"), std::string::npos) << err;
  EXPECT_EQ(testing::slurp(tmp.at("r.out")).find("\"complete\": true"), std::string::npos);
}

// One `lockbench serve` pod of `run`, with extra environment; killed and reaped with the object.
test::ServePod pod(const std::string& strategy, std::int64_t run, int index, const std::string& partner,
                   std::vector<std::string> env = {}) {
  return test::ServePod({"--scenario", "checkout", "--strategy", strategy, "--db", test::test_db(), "--partner",
                         partner, "--port", "0", "--run-id", std::to_string(run), "--pod", std::to_string(index),
                         "--keys", "100", "--maximum-pool-size", "4", "--pods", "2", "--outbox-pollers", "2"},
                        std::move(env));
}

std::string targets_run(const std::string& partner, const std::string& targets) {
  return std::string(LOCKBENCH_BIN) + " run --world real --quiet --json --db " + test::test_db() + " --partner " +
         partner + " --scenario checkout --strategy outbox --outbox-pollers 2 --keys 100 --rate 10 --duration 1s"
         " --partner-latency fixed:20ms --probe-interval 0s --targets " + targets;
}

TEST(RunIsolation, LongLivedServePodsDeliverEveryOrderOfEachOfThreeRuns) {
  LOCKBENCH_NEED_DB();
  test::PrivatePartner partner;
  ASSERT_FALSE(partner.url().empty());
  const std::int64_t run = test::private_run_id();
  const test::ServePod a = pod("outbox", run, 1, partner.url()), b = pod("outbox", run, 2, partner.url());
  ASSERT_FALSE(a.url().empty() || b.url().empty());
  for (int i = 1; i <= 3; ++i) {
    SCOPED_TRACE("run " + std::to_string(i));
    const auto r = run_command(targets_run(partner.url(), a.url() + "," + b.url()));
    ASSERT_EQ(r.status, 0) << r.err;
    const json result = json::parse(r.out).at(0);
    ASSERT_TRUE(result.contains("outbox")) << result.dump().substr(0, 2000);
    // Issue #42: runs 2 and 3 delivered 14 of 28 and 14 of 42 (the pods' counts add up over their runs).
    EXPECT_GT(result["outbox"]["enqueued"].get<int>(), 0);
    EXPECT_EQ(result["outbox"]["delivered"], result["outbox"]["enqueued"]);
    EXPECT_EQ(result["outbox"]["undelivered"], 0);
  }
}

TEST(RunIsolation, APodsRefusalOfRequestsOverIsAnErrorNotASilentWait) {
  LOCKBENCH_NEED_DB();
  test::PrivatePartner partner;
  ASSERT_FALSE(partner.url().empty());
  const std::int64_t run = test::private_run_id();
  const test::ServePod a = pod("outbox", run, 1, partner.url(), {"LOCKBENCH_CONTROL_TOKEN=the-pods-own"});
  const test::ServePod b = pod("outbox", run, 2, partner.url(), {"LOCKBENCH_CONTROL_TOKEN=the-pods-own"});
  ASSERT_FALSE(a.url().empty() || b.url().empty());
  // The runner has no token (unset below): each pod answers 403. Today: a 20 s wait, rc 0, no warning.
  const auto r = run_command("env -u LOCKBENCH_CONTROL_TOKEN " + targets_run(partner.url(), a.url() + "," + b.url()));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("/lockbench/requests-over refused: " + a.url() + " answered 403"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("LOCKBENCH_CONTROL_TOKEN"), std::string::npos) << r.err;
  // With the token, the same run passes.
  const auto ok = run_command("LOCKBENCH_CONTROL_TOKEN=the-pods-own " + targets_run(partner.url(), a.url() + "," + b.url()));
  EXPECT_EQ(ok.status, 0) << ok.err;
}

}  // namespace real_isolation_test
}  // namespace lockbench

// A runner killed with kill -9 leaves its rows in lockbench.rows and its
// record in lockbench.runs (real/leftovers.hpp); the next run's start reclaims
// them, says so, and leaves a live run's rows alone. Real runners (the
// lockbench executable), real PostgreSQL, partners of the test's own.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "tests/cli/run_command.hpp"
#include "tests/real/private_partner.hpp"
#include "tests/real/test_env.hpp"

namespace lockbench {
namespace real_killed_runner_test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::run_command;
using testing::spawn;
using testing::wait_exit;
using testing::wait_for;

struct RunOf {
  std::int64_t run = 0;
  std::string run_id;
};

// The record of the runner with this pid, once it has one (run 0 otherwise).
RunOf record_of(pid_t pid) {
  pqxx::connection c(test::test_db());
  pqxx::nontransaction tx(c);
  if (!tx.exec1("SELECT to_regclass('lockbench.runs') IS NOT NULL")[0].as<bool>()) return {};
  const auto r = tx.exec_params("SELECT run, run_id FROM lockbench.runs WHERE pid = $1", static_cast<int>(pid));
  if (r.empty()) return {};
  return {r[0][0].as<std::int64_t>(), r[0][1].as<std::string>()};
}

std::int64_t count(const std::string& sql, std::int64_t run) {
  pqxx::connection c(test::test_db());
  pqxx::nontransaction tx(c);
  return tx.exec_params1(sql, run)[0].as<std::int64_t>();
}
std::int64_t rows_of(std::int64_t run) { return count("SELECT count(*) FROM lockbench.rows WHERE run = $1", run); }
std::int64_t records_of(std::int64_t run) { return count("SELECT count(*) FROM lockbench.runs WHERE run = $1", run); }
std::int64_t sessions_of(const std::string& run_id) {
  pqxx::connection c(test::test_db());
  pqxx::nontransaction tx(c);
  return tx.exec_params1("SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE $1",
                         "lockbench/" + run_id + "/%")[0]
      .as<std::int64_t>();
}

std::vector<std::string> runner(const std::string& partner, const std::vector<std::string>& more) {
  std::vector<std::string> a = {LOCKBENCH_BIN, "run", "--world", "real", "--quiet", "--db", test::test_db(),
                                "--partner", partner};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

TEST(KilledRunner, ItsRowsAreReclaimedAtTheNextRunStartAndALiveRunIsUntouched) {
  LOCKBENCH_NEED_DB();
  test::PrivatePartner partner_live, partner_thread, partner_process, partner_next;
  ASSERT_FALSE(partner_next.url().empty());
  const fs::path dir = fs::temp_directory_path() / ("lockbench-killed-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const auto out = [&](const char* name) { return (dir / name).string(); };

  // A live run that outlasts everything below (process pods, row-lease).
  const auto live = spawn(runner(partner_live.url(), {"--strategy", "row-lease", "--pods", "2", "--pod-mode", "process",
                                                      "--rate", "10", "--duration", "14s", "--keys", "20",
                                                      "--partner-latency", "fixed:100ms", "--json"}),
                          out("live.out"), out("live.err"));
  // Two runners to kill mid-run: the held-tx (thread pods) and process pods.
  const auto thread_runner =
      spawn(runner(partner_thread.url(), {"--strategy", "held-tx", "--rate", "20", "--duration", "30s",
                                          "--partner-latency", "fixed:500ms"}),
            out("a.out"), out("a.err"));
  const auto process_runner =
      spawn(runner(partner_process.url(), {"--strategy", "row-lease", "--pods", "2", "--pod-mode", "process", "--rate",
                                           "20", "--duration", "30s", "--keys", "50", "--partner-latency", "fixed:200ms"}),
            out("b.out"), out("b.err"));
  RunOf live_run, a, b;
  ASSERT_TRUE(wait_for(
      [&] {
        live_run = record_of(live.pid), a = record_of(thread_runner.pid), b = record_of(process_runner.pid);
        return live_run.run && a.run && b.run && rows_of(live_run.run) > 0 && rows_of(a.run) > 0 && rows_of(b.run) > 0;
      },
      20s))
      << "the runners never recorded their runs: " << testing::slurp(out("a.err")) << testing::slurp(out("b.err"));
  std::this_thread::sleep_for(1s);  // mid-run: requests in flight, locks and leases held
  ::kill(thread_runner.pid, SIGKILL);
  ::kill(process_runner.pid, SIGKILL);
  EXPECT_EQ(wait_exit(thread_runner.pid, 10s), 128 + SIGKILL);
  EXPECT_EQ(wait_exit(process_runner.pid, 10s), 128 + SIGKILL);
  // What a kill -9 leaves: the rows (1,000 and 50) and the records.
  EXPECT_GE(rows_of(a.run), 1000);
  EXPECT_GT(rows_of(b.run), 0);
  EXPECT_EQ(records_of(a.run) + records_of(b.run), 2);
  // Their sessions end with them (the pods die with their runner: PR_SET_PDEATHSIG).
  EXPECT_TRUE(wait_for([&] { return sessions_of(a.run_id) + sessions_of(b.run_id) == 0; }, 10s));
  const std::int64_t live_rows = rows_of(live_run.run);

  const auto next = run_command(std::string(LOCKBENCH_BIN) + " run --world real --quiet --json --db " +
                                test::test_db() + " --partner " + partner_next.url() +
                                " --strategy none --rate 5 --duration 1s --keys 5");
  ASSERT_EQ(next.status, 0) << next.err;
  EXPECT_NE(next.err.find("lockbench: reclaimed"), std::string::npos) << next.err;
  EXPECT_NE(next.err.find(a.run_id), std::string::npos) << next.err;
  EXPECT_NE(next.err.find(b.run_id), std::string::npos) << next.err;
  const auto result = nlohmann::json::parse(next.out).at(0);
  EXPECT_GE(result["reclaimed_at_start"]["runs"].get<int>(), 2) << result["reclaimed_at_start"];
  EXPECT_GE(result["reclaimed_at_start"]["rows"].get<int>(), 1050) << result["reclaimed_at_start"];
  EXPECT_EQ(rows_of(a.run), 0);
  EXPECT_EQ(rows_of(b.run), 0);
  EXPECT_EQ(records_of(a.run) + records_of(b.run), 0);

  // The live run: still running, its rows and record untouched, and it finishes well.
  int st = 0;
  EXPECT_EQ(::waitpid(live.pid, &st, WNOHANG), 0) << "the live run ended before the check: the test proves nothing";
  EXPECT_EQ(records_of(live_run.run), 1);
  EXPECT_EQ(rows_of(live_run.run), live_rows);
  EXPECT_EQ(wait_exit(live.pid, 60s), 0) << testing::slurp(out("live.err"));
  const auto live_result = nlohmann::json::parse(testing::slurp(out("live.out"))).at(0);
  EXPECT_GT(live_result["requests"]["ok"].get<int>(), 0);
  EXPECT_EQ(live_result["requests"]["error"].get<int>(), 0);
  EXPECT_EQ(rows_of(live_run.run), 0);  // and it cleans up after itself
  EXPECT_EQ(records_of(live_run.run), 0);
  fs::remove_all(dir);
}

}  // namespace real_killed_runner_test
}  // namespace lockbench

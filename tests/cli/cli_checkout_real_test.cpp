// The checkout's database faults and fixes against the throw-away PostgreSQL
// and fake partner (scripts/test sets LOCKBENCH_TEST_DB and
// LOCKBENCH_TEST_PARTNER), time-scaled so that each run takes seconds. The
// fault conn_lost really ends the run's own backend (pg_terminate_backend of
// pg_backend_pid()), and commit_fail rolls back instead of committing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "run_command.hpp"

using lockbench::testing::run_command;
using nlohmann::json;

namespace cli_checkout_real_test {
std::string servers() {
  const char* db = std::getenv("LOCKBENCH_TEST_DB");
  const char* partner = std::getenv("LOCKBENCH_TEST_PARTNER");
  if (!db || !*db || !partner || !*partner) return "";
  return std::string(" --db ") + db + " --partner " + partner;
}

json run_one(const std::string& srv, const std::string& args) {
  const auto r = run_command(std::string(LOCKBENCH_BIN) + " run --world real --quiet --json --scenario checkout" + srv +
                             " --time-scale 0.1 --rate 8 --duration 30s" + args);
  EXPECT_EQ(r.status, 0) << r.err;
  return json::parse(r.out).at(0);
}

int violations(const json& r, const char* kind) { return r["partner"]["violations"].value(kind, 0); }
const std::string kFaults = " --db-faults commit_fail:p=0.05,conn_lost:p=0.02";
const std::string kCharge = " --partner-latency fixed:1.8s";  // the article's charge

TEST(CliCheckoutReal, HeldTxChargesOrphansWhenTheCommitFailsOrTheBackendDiesAfterTheCharge) {
  const auto srv = servers();
  if (srv.empty()) GTEST_SKIP() << "LOCKBENCH_TEST_DB / LOCKBENCH_TEST_PARTNER not set (scripts/test sets them)";
  const auto r = run_one(srv, " --strategy held-tx" + kCharge + kFaults);
  EXPECT_GT(r["db_faults"]["conn_lost"].get<int>() + r["db_faults"]["commit_fail"].get<int>(), 0);
  EXPECT_GT(violations(r, "orphan_charge"), 0);
  // The pool replaced every connection whose backend the fault ended.
  EXPECT_GE(r["real"]["connections_replaced"].get<int>(), r["db_faults"]["conn_lost"].get<int>());
}

TEST(CliCheckoutReal, SplitTxAndOutboxChargeEveryOrderOnceUnderFaultsDuplicatesAndTimeouts) {
  const auto srv = servers();
  if (srv.empty()) GTEST_SKIP() << "LOCKBENCH_TEST_DB / LOCKBENCH_TEST_PARTNER not set (scripts/test sets them)";
  for (const char* strategy : {"split-tx", "outbox"}) {
    const auto r = run_one(srv, std::string(" --strategy ") + strategy + kFaults +
                                    " --outbox-pollers 16 --duplicate-share 0.2"
                                    " --partner-latency uniform:1s..2s --partner-connect-timeout 100ms"
                                    " --partner-read-timeout 1.5s --partner-max-attempts 3"
                                    // Every order charged once, however long the faults make the
                                    // delivery take: at time scale 0.02 the default drain (2 min) is
                                    // 2.4 s of wall time, which a slower machine's reconnections
                                    // outlast (49 undelivered). The run ends once the queue is empty.
                                    " --outbox-drain-limit 10m");
    EXPECT_GT(r["db_faults"]["conn_lost"].get<int>(), 0) << strategy;
    for (const char* kind : {"orphan_charge", "double_charge", "paid_without_charge"})
      EXPECT_EQ(violations(r, kind), 0) << strategy << " " << kind;
    const auto& queue = r[std::string(strategy) == "outbox" ? "outbox" : "reconcile"];
    EXPECT_EQ(queue["undelivered"], 0) << strategy;
  }
}

TEST(CliCheckoutReal, TheOutboxDeliversEveryOrderAndMeasuresItsLag) {
  const auto srv = servers();
  if (srv.empty()) GTEST_SKIP() << "LOCKBENCH_TEST_DB / LOCKBENCH_TEST_PARTNER not set (scripts/test sets them)";
  const auto r = run_one(srv, " --strategy outbox --outbox-pollers 16" + kCharge);
  const auto& o = r["outbox"];
  EXPECT_GT(o["enqueued"].get<int>(), 100);
  EXPECT_EQ(o["delivered"], o["enqueued"]);
  EXPECT_EQ(o["undelivered"], 0);
  EXPECT_GT(o["lag_ms"]["p50"].get<double>(), 0);
  EXPECT_GE(o["lag_ms"]["max"].get<double>(), o["lag_ms"]["p50"].get<double>());
  EXPECT_EQ(violations(r, "orphan_charge"), 0);
}

TEST(CliCheckoutReal, AfterCommitSendsOneEmailPerPaidOrderWhenNoPodDies) {
  const auto srv = servers();
  if (srv.empty()) GTEST_SKIP() << "LOCKBENCH_TEST_DB / LOCKBENCH_TEST_PARTNER not set (scripts/test sets them)";
  const auto r = run_one(srv, " --strategy after-commit --db-faults commit_fail:p=0.1" + kCharge);
  EXPECT_GT(r["emails"]["paid_orders"].get<int>(), 100);
  EXPECT_EQ(r["emails"]["lost"], 0) << r["emails"].dump() << " " << r.value("reconcile", json()).dump();
  EXPECT_EQ(r["emails"]["sent"], r["emails"]["paid_orders"]);
}

}  // namespace cli_checkout_real_test

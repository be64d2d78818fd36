// The checkout and the article's three fixes in the simulated world, end to
// end: the database faults that make @Transactional's orphan charge, split-tx
// and the outbox staying clean under them (with duplicates and partner
// timeouts), the outbox's delivery lag and a partner outage, and the emails
// after-commit loses when a pod dies between the commit and the listener.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run_command.hpp"

using lockbench::testing::run_command;
using nlohmann::json;

namespace cli_checkout_test {
const std::string kBin = LOCKBENCH_BIN;

json run_one(const std::string& args) {
  const auto r = run_command(kBin + " run --world sim --quiet --json --scenario checkout " + args);
  EXPECT_EQ(r.status, 0) << r.err;
  return json::parse(r.out).at(0);
}

int violations(const json& r, const char* kind) { return r["partner"]["violations"].value(kind, 0); }

// 8 checkouts/s, a fifth submitted twice; the article's 1.8 s charge (kCharge) unless kTimeouts says otherwise.
const std::string kLoad = " --rate 8 --duration 60s --duplicate-share 0.2";
const std::string kCharge = " --partner-latency fixed:1.8s";
const std::string kFaults = " --db-faults commit_fail:p=0.05,conn_lost:p=0.02";
// Charges take 1 to 2 s and the client gives up after 1.5 s (plus a 100 ms
// connect timeout), three attempts: about 40 % of the attempts time out after the
// charge happened (apply_at 0.5), and a few requests lose all three.
const std::string kTimeouts =
    " --partner-latency uniform:1s..2s --partner-connect-timeout 100ms --partner-read-timeout 1.5s"
    " --partner-max-attempts 3";

TEST(CliCheckout, DatabaseFaultsAfterTheChargeLeaveHeldTxWithOrphanChargesAndAreListedInTheResult) {
  const auto r = run_one("--strategy held-tx" + kLoad + kCharge + kFaults);
  EXPECT_GT(violations(r, "orphan_charge"), 0);
  EXPECT_GT(r["db_faults"]["commit_fail"].get<int>(), 0);
  EXPECT_GT(r["db_faults"]["conn_lost"].get<int>(), 0);
  EXPECT_EQ(r["settings"]["db-faults"], "commit_fail:p=0.05,conn_lost:p=0.02");
  // Each orphan is a fault that hit after the charge: no more orphans than faults.
  EXPECT_LE(violations(r, "orphan_charge"),
            r["db_faults"]["commit_fail"].get<int>() + r["db_faults"]["conn_lost"].get<int>());
}

TEST(CliCheckout, WithoutDatabaseFaultsHeldTxChargesNoOrphan) {
  const auto r = run_one("--strategy held-tx --rate 4 --duration 60s --partner-latency fixed:1.8s");
  EXPECT_EQ(violations(r, "orphan_charge"), 0);
  EXPECT_EQ(r["db_faults"]["commit_fail"], 0);
  EXPECT_EQ(r["db_faults"]["conn_lost"], 0);
}

TEST(CliCheckout, SplitTxAndOutboxReachTheOfferedLoadWithNoOrphanOrDoubleChargeUnderFaultsDuplicatesAndTimeouts) {
  for (const char* strategy : {"split-tx", "outbox"}) {
    const auto r = run_one(std::string("--strategy ") + strategy + " --outbox-pollers 16" + kLoad + kFaults + kTimeouts);
    EXPECT_GT(r["db_faults"]["conn_lost"].get<int>(), 0) << strategy;
    for (const char* kind : {"orphan_charge", "double_charge", "paid_without_charge"})
      EXPECT_EQ(violations(r, kind), 0) << strategy << " " << kind;
    // 8/s offered plus a fifth resubmitted (split-tx answers an error when all three attempts time out).
    EXPECT_GT(r["throughput_ok_per_s"].get<double>(), 8 * 0.9) << strategy;
    EXPECT_EQ(r["pool"]["timeouts"], 0) << strategy;
  }
}

TEST(CliCheckout, SplitTxWithoutItsReconcilerLeavesOrdersPendingWithTheirChargeWhenEveryAttemptTimesOut) {
  const auto article = run_one("--strategy split-tx:no-reconcile" + kLoad + kTimeouts);
  const auto reconciled = run_one("--strategy split-tx" + kLoad + kTimeouts);
  EXPECT_GT(violations(article, "orphan_charge"), 0);
  EXPECT_EQ(violations(reconciled, "orphan_charge"), 0);
  // The reconciler completed the orders the requests left pending, with the same key: no second charge.
  EXPECT_GT(reconciled["reconcile"]["delivered"].get<int>(), 0);
  EXPECT_EQ(reconciled["reconcile"]["undelivered"], 0);
  EXPECT_EQ(violations(reconciled, "double_charge"), 0);
}

TEST(CliCheckout, APodThatDiesBetweenTheChargeAndThePaidCommitLeavesAnOrphanOnlyWithoutTheReconciler) {
  const std::string common = " --rate 8 --duration 60s --partner-latency fixed:1.8s --crash-at 30s";
  const auto article = run_one("--strategy split-tx:no-reconcile" + common);
  const auto reconciled = run_one("--strategy split-tx" + common);
  EXPECT_GT(violations(article, "orphan_charge"), 0);
  EXPECT_EQ(violations(reconciled, "orphan_charge"), 0);
  EXPECT_EQ(reconciled["reconcile"]["delivered"], violations(article, "orphan_charge"));
}

TEST(CliCheckout, TheOutboxAnswersInMillisecondsAndDeliversEveryOrderLater) {
  const auto r = run_one("--strategy outbox --outbox-pollers 16" + kLoad + kCharge);
  const auto& o = r["outbox"];
  EXPECT_GT(o["enqueued"].get<int>(), 400);
  EXPECT_EQ(o["delivered"], o["enqueued"]);
  EXPECT_EQ(o["undelivered"], 0);
  // The user waits for one short transaction; the charge follows after the lag.
  EXPECT_LT(r["latency_ok_ms"]["p99"].get<double>(), 100);
  EXPECT_GE(o["lag_ms"]["p50"].get<double>(), 1800);
  EXPECT_GE(o["lag_ms"]["max"].get<double>(), o["lag_ms"]["p99"].get<double>());
  EXPECT_EQ(violations(r, "orphan_charge"), 0);
}

TEST(CliCheckout, APartnerOutageGrowsTheOutboxLagWhileRequestsStayFast) {
  const std::string common = "--strategy outbox --outbox-pollers 16" + kLoad + kCharge;
  const auto calm = run_one(common);
  const auto degraded =
      run_one(common + " --partner-faults '{\"stripe.charge\":[{\"kind\":\"error\",\"p\":0.5,\"status\":503}]}'");
  const auto down = run_one(common + " --outbox-drain-limit 20s"
                                     " --partner-faults '{\"stripe.charge\":[{\"kind\":\"error\",\"p\":1,\"status\":503}]}'");
  EXPECT_GT(degraded["outbox"]["lag_ms"]["p99"].get<double>(), 2 * calm["outbox"]["lag_ms"]["p99"].get<double>());
  EXPECT_GT(degraded["outbox"]["attempts"].get<int>(), calm["outbox"]["attempts"].get<int>());
  EXPECT_EQ(degraded["outbox"]["undelivered"], 0);
  // Down for the whole run: nothing delivered, everything counted as undelivered, nobody charged.
  EXPECT_EQ(down["outbox"]["delivered"], 0);
  EXPECT_EQ(down["outbox"]["undelivered"], down["outbox"]["enqueued"]);
  for (const auto* r : {&degraded, &down}) {
    EXPECT_LT((*r)["latency_ok_ms"]["p99"].get<double>(), 100);
    EXPECT_EQ((*r)["requests"]["ok"], (*r)["requests"]["total"]);
    EXPECT_EQ(violations(*r, "orphan_charge"), 0);
    EXPECT_EQ(violations(*r, "double_charge"), 0);
  }
}

TEST(CliCheckout, ACrashedPodsClaimedOutboxRowsAreRedeliveredAfterTheirLease) {
  const auto r = run_one("--strategy outbox --outbox-pollers 16 --crash-at 30s" + kLoad + kCharge);
  EXPECT_EQ(r["outbox"]["undelivered"], 0);
  EXPECT_GT(r["outbox"]["attempts"].get<int>(), r["outbox"]["delivered"].get<int>());  // the crashed pollers' rows, again
  EXPECT_EQ(violations(r, "orphan_charge"), 0);
  EXPECT_EQ(violations(r, "double_charge"), 0);
}

TEST(CliCheckout, AfterCommitLosesEmailsOnlyWhenThePodDiesBetweenCommitAndListener) {
  const std::string common = "--strategy after-commit --email-latency 1s" + kLoad + kCharge;
  // (Orders a crash leaves between the charge and the PAID commit are completed by the
  // reconciler, which publishes no event: their emails are lost too.)
  const auto calm = run_one(common);
  const auto faults = run_one(common + " --db-faults commit_fail:p=0.2");
  const auto crash = run_one(common + " --crash-at 30s");
  EXPECT_EQ(calm["emails"]["lost"], 0);
  EXPECT_GE(calm["emails"]["sent"], calm["emails"]["paid_orders"]);  // a duplicate that also commits PAID sends again
  EXPECT_GT(calm["emails"]["sent"].get<int>(), 400);
  // Failed commits roll back: no event, no email, and none lost.
  EXPECT_GT(faults["db_faults"]["commit_fail"].get<int>(), 0);
  EXPECT_EQ(faults["emails"]["lost"], 0);
  // A crash one second after a commit loses the emails of the orders committed in that second.
  EXPECT_GT(crash["emails"]["lost"].get<int>(), 0);
  EXPECT_LT(crash["emails"]["lost"].get<int>(), 40);
  EXPECT_EQ(violations(crash, "orphan_charge"), 0);
}

}  // namespace cli_checkout_test

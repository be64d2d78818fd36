// A real run harms nothing it did not create and loses nothing it measured
// (issue 8), against the test PostgreSQL and fake partners:
//  - sessions of others (another database, the same database, another
//    lockbench run) survive a run; two runs on one server both complete;
//  - leftovers of earlier runs are reported at start, leases still set at the
//    end are counted as leaked and released;
//  - a stop mid-run and a killed partner each give a result marked
//    incomplete, with no lock and no lease left held.
// Counts and states only; the only waits are bounded sleeps that place an
// event (a kill, a stop) inside a run several seconds long.
#include <unistd.h>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <thread>

#include "real/run_real.hpp"
#include "real/leftovers.hpp"
#include "tests/cli/run_command.hpp"
#include "partner_arrivals.hpp"
#include "private_partner.hpp"
#include "test_env.hpp"

namespace lockbench {
namespace real_safety_test {

using namespace std::chrono_literals;
using nlohmann::json;

// Far above any key a run uses: an unrelated application's lock id.
constexpr std::int64_t kForeignLockId = 900'000'000'001;

Settings base(const std::string& strategy) {
  Settings s;
  s.world = "real";
  s.db_url = test::test_db();
  s.partner_url = test::test_partner();
  s.strategy = strategy;
  s.scenario = "switch-primary";
  s.seed = 11;
  s.max_threads = 32;
  s.probe_interval = 0s;
  s.connection_timeout = 5s;
  s.lock_timeout = 2s;
  s.keys = 50;
  s.arrival = Arrival::open;
  s.rate_per_s = 10;
  s.duration = 2s;
  s.partner_latency = Distribution::fixed(100);
  return s;
}

// A stop `after` the run began sending: the clock starts at the first poll,
// which comes once the run is prepared (a loaded host can take longer than a
// second to reset the schema and open the pools; a clock started before
// run_real then stopped a run that had sent nothing).
std::function<bool()> stop_after(std::chrono::milliseconds after) {
  auto first = std::make_shared<std::optional<std::chrono::steady_clock::time_point>>();
  return [first, after] {
    const auto now = std::chrono::steady_clock::now();
    if (!*first) *first = now;
    return now - **first > after;
  };
}

std::int64_t violations_total(const json& r) {
  std::int64_t n = 0;
  for (const auto& [kind, count] : r["partner"]["violations"].items())
    if (count.is_number()) n += count.get<std::int64_t>();
  return n;
}

// Session advisory locks this connection's backend holds.
std::int64_t my_advisory_locks(pqxx::connection& c) {
  pqxx::nontransaction tx(c);
  return tx.exec1("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = pg_backend_pid()")[0]
      .as<std::int64_t>();
}

std::int64_t lockbench_advisory_locks(const std::string& url) {
  pqxx::connection c(url);
  pqxx::nontransaction tx(c);
  return tx.exec1("SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                  "WHERE l.locktype = 'advisory' AND a.application_name LIKE 'lockbench/%'")[0]
      .as<std::int64_t>();
}

// Leases still set in lockbench.rows, whichever run's rows they are in.
std::int64_t leases_in_table(const std::string& url) {
  pqxx::connection c(url);
  pqxx::nontransaction tx(c);
  return tx.exec1("SELECT count(*) FROM lockbench.rows WHERE locked_at IS NOT NULL")[0].as<std::int64_t>();
}

std::string unique(const std::string& prefix) { return prefix + "_" + std::to_string(::getpid()); }

// run_real on another thread: an exception becomes a failure, not std::terminate.
json run_guarded(const Settings& s, std::string& error) {
  try {
    return run_real(s);
  } catch (const std::exception& e) {
    error = e.what();
    return json();
  }
}

// A thread joined on every path out of the test body.
class Joined {
 public:
  template <class F>
  explicit Joined(F f) : t_(std::move(f)) {}
  ~Joined() { join(); }
  void join() {
    if (t_.joinable()) t_.join();
  }

 private:
  std::thread t_;
};

TEST(RealSafety, UnrelatedSessionsHoldingAdvisoryLocksInAnotherDatabaseAndInThisOneSurviveARun) {
  LOCKBENCH_NEED_PARTNER();
  test::ScratchDatabase other(test::test_db(), unique("lockbench_unrelated"));
  pqxx::connection elsewhere(other.url());  // an application in another database
  pqxx::connection here(test::test_db() + "?application_name=psql");  // a psql in the target database
  for (auto* c : {&elsewhere, &here}) {
    pqxx::nontransaction tx(*c);
    tx.exec_params("SELECT pg_advisory_lock($1)", kForeignLockId);
  }
  const json r = run_real(base("advisory-session:pinned"));
  EXPECT_EQ(r["complete"], true);
  EXPECT_GT(r["requests"]["ok"].get<int>(), 0) << r["requests"].dump();
  // Both sessions are alive and still hold their lock: nothing of theirs was terminated.
  EXPECT_EQ(my_advisory_locks(elsewhere), 1);
  EXPECT_EQ(my_advisory_locks(here), 1);
  // They are not lockbench's: not reported as leftovers of a run.
  EXPECT_EQ(r["leftovers_at_start"]["advisory_locks"], 0);
}

TEST(RealSafety, TwoRealRunsOnOneServerAtTheSameTimeBothCompleteCleanly) {
  LOCKBENCH_NEED_PARTNER();
  test::ScratchDatabase second_db(test::test_db(), unique("lockbench_second"));
  test::PrivatePartner second_partner;
  ASSERT_FALSE(second_partner.url().empty()) << "fake_partner did not start";
  // advisory-session:pinned holds session advisory locks through each partner
  // call: exactly what a cluster-wide "terminate every advisory-lock holder" ended.
  Settings a = base("advisory-session:pinned");
  a.duration = 4s;
  a.partner_latency = Distribution::fixed(200);
  Settings b = a;
  b.db_url = second_db.url();
  b.partner_url = second_partner.url();
  json ra, rb;
  std::string ea, eb;
  // a makes calls of a partner of its own, so that its arrivals say when it holds its locks.
  test::PrivatePartner first_partner;
  ASSERT_FALSE(first_partner.url().empty()) << "fake_partner did not start";
  a.partner_url = first_partner.url();
  std::atomic<bool> a_over{false}, b_over{false};
  bool a_in_calls_when_b_started = false, a_running_at_b_first_call = false;
  std::int64_t a_calls_at_b_first_call = -1;
  {
    Joined first([&] {
      ra = run_guarded(a, ea);
      a_over = true;
    });
    // b prepares while a's sessions hold their locks: once a's first call arrived (a holds a lock
    // through each one), not a fixed time from before a, which a busy host may spend preparing.
    testing::wait_for([&] { return a_over.load() || test::partner_arrivals(first_partner.url()) >= 1; }, 30s);
    a_in_calls_when_b_started = !a_over.load();
    Joined second([&] {
      rb = run_guarded(b, eb);
      b_over = true;
    });
    // The overlap the test is about: b's first call arrives while a still runs.
    testing::wait_for([&] { return b_over.load() || test::partner_arrivals(second_partner.url()) >= 1; }, 30s);
    a_running_at_b_first_call = !a_over.load();
    a_calls_at_b_first_call = test::partner_arrivals(first_partner.url());
  }
  EXPECT_TRUE(a_in_calls_when_b_started) << "a ended before it made a call";
  EXPECT_TRUE(a_running_at_b_first_call) << "the runs did not overlap: a ended before b's first call";
  ASSERT_TRUE(ra.is_object()) << ea;
  EXPECT_GT(test::partner_arrivals(first_partner.url()), a_calls_at_b_first_call);  // a called on beside b
  for (const json* r : {&ra, &rb}) {
    ASSERT_TRUE(r->is_object()) << ea << eb;
    EXPECT_EQ((*r)["complete"], true);
    EXPECT_GT((*r)["requests"]["total"].get<int>(), 20);
    EXPECT_EQ((*r)["requests"]["error"], 0) << (*r)["requests"].dump();
    EXPECT_EQ((*r)["requests"]["pool_timeout"], 0) << (*r)["requests"].dump();
    EXPECT_EQ(violations_total(*r), 0) << (*r)["partner"]["violations"].dump();
    EXPECT_EQ((*r)["locks"]["leaked"], 0);
    EXPECT_EQ((*r)["real"]["backends_terminated"], 0);
  }
  EXPECT_NE(ra["run_id"], rb["run_id"]);
}

TEST(RealSafety, TwoRealRunsInOneDatabaseAtTheSameTimeNeverMeet) {
  LOCKBENCH_NEED_PARTNER();
  test::PrivatePartner second_partner;
  ASSERT_FALSE(second_partner.url().empty()) << "fake_partner did not start";
  // Same database, same keys, the same strategy on a hot key: their rows and
  // advisory keys are apart, so each run sees one lock holder at a time of its own.
  Settings a = base("advisory-xact:try");
  a.duration = 3s;
  a.keys = 5;
  a.partner_latency = Distribution::fixed(100);
  Settings b = a;
  b.partner_url = second_partner.url();
  test::PrivatePartner first_partner;  // a's own: its arrivals say when a is in its calls
  ASSERT_FALSE(first_partner.url().empty()) << "fake_partner did not start";
  a.partner_url = first_partner.url();
  json ra, rb;
  std::string ea, eb;
  std::atomic<bool> a_over{false}, b_over{false};
  bool a_running_at_b_first_call = false;
  {
    Joined first([&] {
      ra = run_guarded(a, ea);
      a_over = true;
    });
    testing::wait_for([&] { return a_over.load() || test::partner_arrivals(first_partner.url()) >= 1; }, 30s);
    Joined second([&] {
      rb = run_guarded(b, eb);
      b_over = true;
    });
    // The runs meet in time (same database, same keys): b's first call arrives while a still runs.
    testing::wait_for([&] { return b_over.load() || test::partner_arrivals(second_partner.url()) >= 1; }, 30s);
    a_running_at_b_first_call = !a_over.load();
  }
  EXPECT_TRUE(a_running_at_b_first_call) << "the runs did not overlap: a ended before b's first call";
  for (const json* r : {&ra, &rb}) {
    ASSERT_TRUE(r->is_object()) << ea << eb;
    EXPECT_EQ((*r)["complete"], true);
    EXPECT_EQ((*r)["requests"]["error"], 0) << (*r)["requests"].dump();
    EXPECT_EQ(violations_total(*r), 0) << (*r)["partner"]["violations"].dump();
    EXPECT_GT((*r)["requests"]["ok"].get<int>(), 0);
  }
  EXPECT_EQ(leases_in_table(test::test_db()), 0);
}

TEST(RealSafety, AnApplicationsOwnUsersTableStaysAsItWas) {
  LOCKBENCH_NEED_PARTNER();
  // public.users with 500 rows: the table the first lockbench truncated and refilled.
  test::ScratchDatabase app(test::test_db(), unique("lockbench_app"));
  pqxx::connection c(app.url());
  {
    pqxx::work tx(c);
    tx.exec("CREATE TABLE public.users (id bigint PRIMARY KEY, email text NOT NULL)");
    tx.exec("INSERT INTO public.users SELECT k, 'user' || k || '@example.com' FROM generate_series(1, 500) AS k");
    tx.commit();
  }
  const auto snapshot = [&] {
    pqxx::nontransaction tx(c);
    const auto cols = tx.exec1("SELECT count(*) FROM information_schema.columns WHERE table_name = 'users'");
    const auto rows = tx.exec1("SELECT count(*), sum(hashtext(email)) FROM public.users");
    return std::to_string(cols[0].as<long>()) + "/" + std::to_string(rows[0].as<long>()) + "/" + rows[1].c_str();
  };
  const std::string before = snapshot();
  Settings s = base("row-lease");
  s.db_url = app.url();
  const json r = run_real(s);
  EXPECT_EQ(r["requests"]["error"], 0);
  EXPECT_GT(r["requests"]["ok"].get<int>(), 0);
  EXPECT_EQ(snapshot(), before);  // the same columns, rows and values
}

TEST(RealSafety, ASchemaNamedLockbenchThatIsNotOursIsRefusedWithOneLineAndLeftAlone) {
  LOCKBENCH_NEED_PARTNER();
  test::ScratchDatabase other(test::test_db(), unique("lockbench_foreign"));
  {
    pqxx::connection c(other.url());
    pqxx::work tx(c);
    tx.exec("CREATE SCHEMA lockbench");
    tx.exec("CREATE TABLE lockbench.invoices (id bigint PRIMARY KEY)");
    tx.commit();
  }
  Settings s = base("none");
  s.db_url = other.url();
  try {
    run_real(s);
    FAIL() << "a foreign lockbench schema was used";
  } catch (const SettingError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("--db: schema lockbench exists and was not made by lockbench", 0), 0u) << what;
    EXPECT_NE(what.find("invoices"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
  pqxx::connection c(other.url());
  pqxx::nontransaction tx(c);
  EXPECT_EQ(tx.exec1("SELECT to_regclass('lockbench.rows') IS NULL")[0].as<bool>(), true);  // nothing added
}

TEST(RealSafety, LeftoversOfAnEarlierRunAreReportedAtStartAndTheirSessionIsNotEnded) {
  LOCKBENCH_NEED_PARTNER();
  // An earlier run's pod, still connected and holding a lock; and three leases
  // its crashed twin never released.
  pqxx::connection old_pod(test::test_db() + "?application_name=lockbench/earlier-run/pod1");
  {
    pqxx::nontransaction tx(old_pod);
    tx.exec_params("SELECT pg_advisory_lock($1)", kForeignLockId);
  }
  run_real(base("none"));  // lockbench.rows exists
  constexpr std::int64_t kCrashedRun = -7;  // rows of a run that died holding three leases
  {
    pqxx::connection c(test::test_db());
    pqxx::nontransaction tx(c);
    tx.exec_params("INSERT INTO lockbench.rows (run, tbl, id, locked_at, lock_owner) "
                   "SELECT $1, 0, k, now(), 'crashed' FROM generate_series(1, 3) AS k",
                   kCrashedRun);
  }
  const json r = run_real(base("row-lease"));
  EXPECT_EQ(r["leftovers_at_start"]["leases"], 3);
  EXPECT_EQ(r["leftovers_at_start"]["advisory_locks"], 1);
  EXPECT_EQ(my_advisory_locks(old_pod), 1);  // reported, never terminated
  EXPECT_EQ(r["locks"]["leaked"], 0);        // this run left none
  EXPECT_EQ(leases_in_table(test::test_db()), 3);  // the other run's rows are its own: untouched
  pqxx::connection c(test::test_db());
  pqxx::nontransaction tx(c);
  tx.exec_params("DELETE FROM lockbench.rows WHERE run = $1", kCrashedRun);
}

TEST(RealSafety, ALeaseLeftSetDuringTheRunIsCountedAsLeakedAndReleasedAtTheEnd) {
  LOCKBENCH_NEED_PARTNER();
  Settings s = base("row-lease");
  s.duration = 3s;
  Joined crashed_pod([&] {
    std::this_thread::sleep_for(1s);  // after the reset: a pod dies holding the lease of key 40
    pqxx::connection c(test::test_db());
    pqxx::nontransaction tx(c);
    // This run's own row of key 40 (lockbench.runs names the run this process
    // is running): rows an earlier test left on this server set stay as they
    // are. Retried until the run has seeded its rows (a loaded host can take
    // longer than the second to prepare).
    for (int attempt = 0; attempt < 100; ++attempt) {
      if (tx.exec_params("UPDATE lockbench.rows SET locked_at = now(), lock_owner = 'pod-that-died' "
                         "WHERE tbl = 0 AND id = 40 AND run = (SELECT max(run) FROM lockbench.runs WHERE pid = $1)",
                         static_cast<int>(::getpid()))
              .affected_rows() > 0)
        return;
      std::this_thread::sleep_for(20ms);
    }
  });
  const json r = run_real(s);
  crashed_pod.join();
  EXPECT_EQ(r["locks"]["leaked"], 1) << r["locks"].dump();
  EXPECT_EQ(r["real"]["leases_released_at_end"], 1);
  pqxx::connection c(test::test_db());
  pqxx::nontransaction tx(c);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM lockbench.rows WHERE lock_owner = 'pod-that-died'")[0].as<int>(), 0);
}

TEST(RealSafety, AStopMidRunGivesAnInterruptedResultAndLeavesNoLockHeld) {
  LOCKBENCH_NEED_PARTNER();
  // Every request holds a session advisory lock through 2 x 2 s of partner
  // calls; the stop comes after 1 s, the grace period is 2 s: the run must end
  // the sessions it still has, and only those.
  Settings s = base("advisory-session:pinned");
  s.duration = 30s;
  s.partner_latency = Distribution::fixed(2000);
  s.connection_timeout = 1s;
  pqxx::connection bystander(test::test_db() + "?application_name=psql");
  {
    pqxx::nontransaction tx(bystander);
    tx.exec_params("SELECT pg_advisory_lock($1)", kForeignLockId);
  }
  RunHooks hooks;
  hooks.should_stop = stop_after(1s);
  const json r = run_real(s, hooks);
  EXPECT_EQ(r["interrupted"], true);
  EXPECT_EQ(r["complete"], false);
  EXPECT_GT(r["requests"]["total"].get<int>(), 0);
  EXPECT_GT(r["real"]["requests_not_sent"].get<int>(), 200);  // ~300 planned, ~10 sent
  EXPECT_GT(r["real"]["backends_terminated"].get<int>(), 0);
  EXPECT_EQ(lockbench_advisory_locks(test::test_db()), 0);
  EXPECT_EQ(my_advisory_locks(bystander), 1);  // not this run's: untouched
}

TEST(RealSafety, AStopWhileRowLeasesAreHeldLeavesNoLeaseInTheTable) {
  LOCKBENCH_NEED_PARTNER();
  Settings s = base("row-lease");
  s.duration = 30s;
  s.partner_latency = Distribution::fixed(2000);
  s.connection_timeout = 1s;
  RunHooks hooks;
  hooks.should_stop = stop_after(1s);
  const json r = run_real(s, hooks);
  EXPECT_EQ(r["interrupted"], true);
  EXPECT_EQ(r["complete"], false);
  // Every request in flight at the stop is still in its 2 x 2 s of partner
  // calls when the grace period ends: its release finds the pool closed and
  // its lease stays set. Counted as leaked, then released.
  EXPECT_GE(r["locks"]["leaked"].get<int>(), 1);
  EXPECT_EQ(r["locks"]["leaked"], r["real"]["leases_released_at_end"]);
  EXPECT_EQ(leases_in_table(test::test_db()), 0);
}

TEST(RealSafety, AKilledPartnerStillGivesAResultWithItsVerdictUnavailableAndNoLeaseHeld) {
  LOCKBENCH_NEED_PARTNER();
  test::PrivatePartner partner;
  ASSERT_FALSE(partner.url().empty()) << "fake_partner did not start";
  Settings s = base("row-lease");
  s.partner_url = partner.url();
  s.rate_per_s = 20;
  s.duration = 3s;
  s.partner_connect_timeout = 200ms;
  s.partner_read_timeout = 500ms;
  // Killed once some requests were ok (a fixed second from before run_real
  // came before the first one on a loaded host).
  std::atomic<std::int64_t> ok_so_far{0};
  RunHooks hooks;
  hooks.progress = [&](std::int64_t, std::int64_t ok, Duration) { ok_so_far = ok; };
  Joined killer([&] {
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (ok_so_far.load() == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
    partner.kill9();
  });
  const json r = run_real(s, hooks);
  killer.join();
  EXPECT_EQ(r["complete"], false);
  EXPECT_EQ(r["interrupted"], false);
  EXPECT_EQ(r["partner"]["available"], false);
  EXPECT_EQ(r["partner"]["verdict"], "unavailable");
  EXPECT_FALSE(r["partner"].value("unavailable_reason", "").empty());
  for (const auto& [kind, n] : r["partner"]["violations"].items()) EXPECT_TRUE(n.is_null()) << kind;
  EXPECT_GT(r["requests"]["ok"].get<int>(), 0);     // before the kill
  EXPECT_GT(r["requests"]["error"].get<int>(), 0);  // after it
  EXPECT_EQ(leases_in_table(test::test_db()), 0);
}

}  // namespace real_safety_test
}  // namespace lockbench

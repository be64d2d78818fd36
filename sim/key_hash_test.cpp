// --key-hash in the simulator: two business ids whose "user:<id>" strings
// PostgreSQL's hashtext() maps to one 32-bit number share an advisory lock, so
// one denies the other (false conflicts); SHA-256's 64 bits and the integer id
// keep them apart. And held-tx's --pre-sql-work with and without
// --delay-connection-acquisition, against Little's law.
#include <gtest/gtest.h>

#include "base/key_hash.hpp"
#include "sim/run_sim.hpp"
#include "sim/test_support.hpp"

namespace lockbench {
namespace {

using namespace std::chrono_literals;

// hashtext('user:70606') = hashtext('user:156495') = -656838246: the first
// collision a birthday search over user:1, user:2, ... meets (docs/explanation/key-hashing.md).
constexpr std::int64_t kIdA = 70606;
constexpr std::int64_t kIdB = 156495;

Settings colliding_pair(const std::string& strategy, KeyHash hash) {
  Settings s;
  s.scenario = "switch-primary";
  s.strategy = strategy;
  s.key_hash = hash;
  s.keys = 2;  // key 1 = id 70606, key 2 = id 156495
  s.key_id_base = kIdA;
  s.key_id_stride = kIdB - kIdA;
  s.key_dist = KeyDist::uniform;
  s.rate_per_s = 20;
  s.duration = 20s;
  s.partner_latency = Distribution::fixed(150);
  s.lock_timeout = 50ms;  // the :wait variants give up well inside a holder's partner calls
  s.trace_requests = 0;
  return s;
}

TEST(KeyHashCollision, ThePairFoundByTheBirthdaySearchCollidesUnderHashtextOnly) {
  EXPECT_EQ(pg_hashtext("user:" + std::to_string(kIdA)), pg_hashtext("user:" + std::to_string(kIdB)));
  EXPECT_NE(sha256_64("user:" + std::to_string(kIdA)), sha256_64("user:" + std::to_string(kIdB)));
}

TEST(KeyHashCollision, HashtextDeniesRequestsOfOneKeyWhileTheOtherKeyHoldsTheLock) {
  for (const char* st : {"advisory-xact:try", "advisory-xact:wait", "advisory-session:pinned"}) {
    const auto r = run_sim(colliding_pair(st, KeyHash::hashtext_32));
    EXPECT_GT(lock_count(r, "false_conflicts"), 0) << st << r["locks"].dump();
    EXPECT_LE(lock_count(r, "false_conflicts"), lock_count(r, "denied")) << st;
    EXPECT_EQ(r["partner"]["violations"]["overlap_person"], 0) << st;  // a false conflict excludes too much, never too little
  }
}

TEST(KeyHashCollision, Sha256AndTheIntegerIdKeepThePairApart) {
  for (const char* st : {"advisory-xact:try", "advisory-xact:wait", "advisory-session:pinned"}) {
    for (KeyHash h : {KeyHash::sha256_64, KeyHash::int_id}) {
      const auto r = run_sim(colliding_pair(st, h));
      EXPECT_EQ(lock_count(r, "false_conflicts"), 0) << st << " " << key_hash_name(h) << r["locks"].dump();
      EXPECT_GT(lock_count(r, "denied"), 0) << st;  // same-key requests still meet: the count is not empty by luck
      EXPECT_EQ(r["partner"]["violations"]["overlap_person"], 0) << st;
    }
  }
}

TEST(KeyHashCollision, HashtextDeniesMoreThanSha256OnTheSameRequests) {
  const auto narrow = run_sim(colliding_pair("advisory-xact:try", KeyHash::hashtext_32));
  const auto wide = run_sim(colliding_pair("advisory-xact:try", KeyHash::sha256_64));
  EXPECT_EQ(narrow["requests"]["total"], wide["requests"]["total"]);
  EXPECT_GT(lock_count(narrow, "denied"), lock_count(wide, "denied")) << narrow["locks"].dump() << wide["locks"].dump();
  EXPECT_LT(narrow["requests"]["ok"].get<int>(), wide["requests"]["ok"].get<int>());
}

TEST(KeyHashCollision, TheDefaultWritesNeitherTheSettingNorTheCount) {
  Settings s = colliding_pair("advisory-xact:try", KeyHash::scenario);
  s.key_id_base = 1;
  s.key_id_stride = 1;
  const auto r = run_sim(s);
  EXPECT_FALSE(r["locks"].contains("false_conflicts"));
  EXPECT_FALSE(r["settings"].contains("key-hash"));
}

// held-tx on single-call: one 200 ms partner call, 200 ms of work before the
// first SQL. The pool holds the connection ~400 ms per request without the
// setting, ~200 ms with it; a pool of 4 then caps at 10 vs 20 requests/s.
Settings pre_sql(bool delayed) {
  Settings s;
  s.scenario = "single-call";
  s.strategy = "held-tx";
  s.maximum_pool_size = 4;
  s.rate_per_s = 15;
  s.keys = 100000;
  s.duration = 60s;
  s.connection_timeout = 2s;
  s.partner_latency = Distribution::fixed(200);
  s.pre_sql_work = 200ms;
  s.delay_connection_acquisition = delayed;
  s.trace_requests = 0;
  return s;
}

TEST(DelayConnectionAcquisition, TheConnectionIsHeldOnlyFromTheFirstStatement) {
  const auto from_start = run_sim(pre_sql(false));
  const auto from_sql = run_sim(pre_sql(true));
  const double hold_start = from_start["prediction"]["mean_hold_ms"].get<double>();
  const double hold_sql = from_sql["prediction"]["mean_hold_ms"].get<double>();
  // The difference is the pre-SQL work (200 ms), within generous margins.
  EXPECT_GT(hold_start - hold_sql, 150) << hold_start << " " << hold_sql;
  EXPECT_LT(hold_start - hold_sql, 250) << hold_start << " " << hold_sql;
  // Little's law: pool / hold. 4 / 0.4 s = 10/s is below the offered 15/s, 4 / 0.2 s = 20/s above it.
  const double ceiling_start = from_start["prediction"]["littles_law_ceiling_per_s"].get<double>();
  const double ceiling_sql = from_sql["prediction"]["littles_law_ceiling_per_s"].get<double>();
  EXPECT_GT(ceiling_sql / ceiling_start, 1.6);
  EXPECT_LT(ceiling_sql / ceiling_start, 2.4);
  EXPECT_GT(from_start["requests"]["pool_timeout"].get<int>(), 0);  // offered above its ceiling
  EXPECT_EQ(from_sql["requests"]["pool_timeout"], 0);
  EXPECT_LT(from_start["throughput_ok_per_s"].get<double>(), 0.8 * from_sql["throughput_ok_per_s"].get<double>());
  EXPECT_EQ(from_start["settings"]["pre-sql-work"], "200ms");
  EXPECT_EQ(from_sql["settings"]["delay-connection-acquisition"], "on");
}

TEST(DelayConnectionAcquisition, WithoutPreSqlWorkTheSettingChangesNothing) {
  Settings a = pre_sql(false), b = pre_sql(true);
  a.pre_sql_work = b.pre_sql_work = 0s;
  const auto ra = run_sim(a), rb = run_sim(b);
  EXPECT_EQ(ra["pool"]["hold_ms"], rb["pool"]["hold_ms"]);
  EXPECT_EQ(ra["requests"], rb["requests"]);
}

}  // namespace
}  // namespace lockbench

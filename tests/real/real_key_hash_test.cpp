// --key-hash and --delay-connection-acquisition against a real PostgreSQL:
// lockbench's own hashtext() and SHA-256 give what the server computes, a
// colliding pair shares one real advisory lock, and held-tx takes its
// connection before or after the work that precedes its first SQL.
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "base/key_hash.hpp"
#include "real/run_real.hpp"
#include "test_env.hpp"

namespace lockbench {
namespace real_key_hash_test {

using namespace std::chrono_literals;
using nlohmann::json;

// A few hundred fixed strings: every tail length of hash_bytes (0..11 after
// whole 12-byte blocks), the lock strings a service would use, UTF-8 beyond ASCII.
std::vector<std::string> fixed_strings() {
  std::vector<std::string> out;
  const std::string alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:-_|";
  for (std::size_t n = 0; n <= 40; ++n) out.push_back(alphabet.substr(0, n));
  for (int i = 1; i <= 200; ++i) out.push_back("user:" + std::to_string(i * 7919));
  for (int i = 1; i <= 30; ++i) out.push_back("welcome-reward:customer-" + std::to_string(i));
  for (int i = 1; i <= 30; ++i) out.push_back("order:settle:ORD-2026-" + std::to_string(900 + i));
  out.push_back("wallet:claim:user_99214");
  out.push_back("Zürich-Genève");
  out.push_back("日本語のキー");
  out.push_back("user:70606");
  out.push_back("user:156495");
  return out;
}

TEST(RealKeyHash, HashtextAndSha256AreWhatTheServerComputes) {
  LOCKBENCH_NEED_DB();
  pqxx::connection c(test::test_db());
  pqxx::nontransaction tx(c);
  const auto strings = fixed_strings();
  ASSERT_GT(strings.size(), 300u);
  for (const auto& s : strings) {
    const pqxx::row r = tx.exec_params1("SELECT hashtext($1), encode(sha256(convert_to($1, 'UTF8')), 'hex')", s);
    EXPECT_EQ(pg_hashtext(s), r[0].as<std::int32_t>()) << "'" << s << "'";
    const auto d = sha256(s);
    std::string hex;
    for (auto b : d) {
      static const char* digits = "0123456789abcdef";
      hex += digits[b >> 4];
      hex += digits[b & 15];
    }
    EXPECT_EQ(hex, r[1].as<std::string>()) << "'" << s << "'";
  }
}

// Eight requests at once over ids 70606 and 156495 (hashtext('user:70606') =
// hashtext('user:156495')); each holds its lock through a 300 ms partner call,
// a waiter gives up after 100 ms.
Settings colliding_burst(KeyHash hash) {
  Settings s;
  s.world = "real";
  s.db_url = test::test_db();
  s.partner_url = test::test_partner();
  s.scenario = "switch-primary";
  s.strategy = "advisory-xact:wait";
  s.key_hash = hash;
  s.keys = 2;
  s.key_id_base = 70606;
  s.key_id_stride = 156495 - 70606;
  s.key_dist = KeyDist::uniform;
  s.arrival = Arrival::burst;
  s.burst = 8;
  s.seed = 11;
  s.duration = 1s;
  s.partner_latency = Distribution::fixed(300);
  s.lock_timeout = 100ms;
  s.probe_interval = 0ms;
  s.connection_timeout = 5s;
  return s;
}

TEST(RealKeyHash, TheCollidingPairSharesOneRealAdvisoryLockUnderHashtext) {
  LOCKBENCH_NEED_PARTNER();
  const json r = run_real(colliding_burst(KeyHash::hashtext_32));
  EXPECT_GT(r["locks"]["false_conflicts"].get<int>(), 0) << r["locks"].dump();
  EXPECT_EQ(r["locks"]["acquired"], 1) << r["locks"].dump();  // one lock number: one holder, seven refused
  EXPECT_EQ(r["partner"]["violations"]["overlap_person"], 0);
}

TEST(RealKeyHash, Sha256AndTheIntegerIdGiveThePairTwoLocks) {
  LOCKBENCH_NEED_PARTNER();
  for (KeyHash h : {KeyHash::sha256_64, KeyHash::int_id}) {
    const json r = run_real(colliding_burst(h));
    EXPECT_EQ(r["locks"]["false_conflicts"], 0) << key_hash_name(h) << r["locks"].dump();
    EXPECT_EQ(r["locks"]["acquired"], 2) << key_hash_name(h) << r["locks"].dump();  // one holder per key
    EXPECT_EQ(r["partner"]["violations"]["overlap_person"], 0);
  }
}

// held-tx with 300 ms of work before its first SQL: the pool's mean hold is
// that much longer when the connection is taken at the transaction's start.
Settings pre_sql(bool delayed) {
  Settings s;
  s.world = "real";
  s.db_url = test::test_db();
  s.partner_url = test::test_partner();
  s.scenario = "single-call";
  s.strategy = "held-tx";
  s.keys = 100;
  s.arrival = Arrival::burst;
  s.burst = 4;
  s.seed = 5;
  s.duration = 1s;
  s.partner_latency = Distribution::fixed(100);
  s.pre_sql_work = 300ms;
  s.delay_connection_acquisition = delayed;
  s.probe_interval = 0ms;
  return s;
}

TEST(RealDelayConnectionAcquisition, HeldTxHoldsItsConnectionThroughThePreSqlWorkOnlyWithoutTheSetting) {
  LOCKBENCH_NEED_PARTNER();
  const json from_start = run_real(pre_sql(false));
  const json from_sql = run_real(pre_sql(true));
  ASSERT_EQ(from_start["requests"]["ok"], 4);
  ASSERT_EQ(from_sql["requests"]["ok"], 4);
  const double a = from_start["prediction"]["mean_hold_ms"].get<double>();
  const double b = from_sql["prediction"]["mean_hold_ms"].get<double>();
  EXPECT_GT(a, b + 150) << a << " vs " << b;  // 300 ms of work, held or not
  EXPECT_GT(b, 90) << b;                     // the partner call is held either way
}

}  // namespace real_key_hash_test
}  // namespace lockbench

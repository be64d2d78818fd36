// Traffic beside the lock (strategies/side_traffic.hpp) in the real world:
// PostgreSQL's rows and the fake partner over HTTP. The second code path's
// save is a real UPDATE of every column from values it read earlier; the
// bypass runs the scenario with no lock. Small counts, time-scaled latency;
// counts and partner verdicts only.
#include <string>

#include "real/run_real.hpp"
#include "test_env.hpp"

namespace lockbench {
namespace real_side_traffic_test {

using namespace std::chrono_literals;
using nlohmann::json;

// Two hot users, a 1 s pair of partner calls, 30 s of configured time at
// time scale 0.1 (3 s of wall clock).
Settings hot(const std::string& strategy) {
  Settings s;
  s.world = "real";
  s.db_url = test::test_db();
  s.partner_url = test::test_partner();
  s.scenario = "switch-primary";
  s.strategy = strategy;
  s.seed = 33;
  s.time_scale = 0.1;
  s.rate_per_s = 8;
  s.keys = 2;
  s.duration = 30s;
  s.partner_latency = Distribution::fixed(500);
  s.probe_interval = 0ms;
  s.lease_ttl = 60s;
  return s;
}

Settings with_orm_writer(const std::string& strategy) {
  Settings s = hot(strategy);
  s.orm_writer_rate = 4;
  s.orm_writer_gap = 200ms;
  return s;
}

std::int64_t violation(const json& r, const char* kind) { return r["partner"]["violations"].value(kind, 0); }
std::int64_t side(const json& r, const char* what) { return r.contains("side_traffic") ? r["side_traffic"].value(what, 0) : 0; }

TEST(RealOrmMappedLease, ASaveOfTheWholeEntityStompsTheLeaseAndTheNextRequestOverlaps) {
  LOCKBENCH_NEED_PARTNER();
  // 60 s as the reference run (6 s of wall time at the time scale): in 30 s a
  // loaded host once saw stomps but no request inside the stomped lease's call.
  Settings s = with_orm_writer("row-lease:orm-mapped");
  s.duration = 60s;
  const json r = run_real(s);
  EXPECT_GT(side(r, "entity_saves"), 30) << r.value("side_traffic", json()).dump();
  EXPECT_GT(side(r, "lock_stomps"), 0);  // 3 to 8 per run here: a count, not a rate to pin
  EXPECT_GT(violation(r, "overlap_person"), 0) << r["partner"].dump();
}

TEST(RealOrmMappedLease, TheSameSecondPathLeavesTheUnmappedLeaseAlone) {
  LOCKBENCH_NEED_PARTNER();
  const json r = run_real(with_orm_writer("row-lease"));
  EXPECT_GT(side(r, "entity_saves"), 30);
  EXPECT_EQ(side(r, "lock_stomps"), 0);
  EXPECT_EQ(violation(r, "overlap_person"), 0) << r["partner"].dump();
  EXPECT_EQ(violation(r, "db_partner_divergence"), 0);
}

TEST(RealBypassShare, RequestsThatIgnoreTheLockOverlapTheLeaseHolders) {
  LOCKBENCH_NEED_PARTNER();
  Settings s = hot("row-lease:fenced");
  s.fencing = "enforce";
  s.bypass_share = 0.3;
  const json r = run_real(s);
  EXPECT_GT(side(r, "bypassed"), 10);
  EXPECT_GT(violation(r, "overlap_person"), 0) << r["partner"].dump();
}

TEST(RealBypassShare, WithoutItTheFencedLeaseStaysClean) {
  LOCKBENCH_NEED_PARTNER();
  Settings s = hot("row-lease:fenced");
  s.fencing = "enforce";
  const json r = run_real(s);
  EXPECT_FALSE(r.contains("side_traffic"));
  EXPECT_EQ(violation(r, "overlap_person"), 0) << r["partner"].dump();
  EXPECT_GT(r["requests"]["ok"].get<std::int64_t>(), 10);
}

}  // namespace real_side_traffic_test
}  // namespace lockbench

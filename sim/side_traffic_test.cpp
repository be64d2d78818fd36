// Traffic beside the lock (strategies/side_traffic.hpp) in the simulator: the
// row-lease article's "not mapped as an entity field" and "advisory, not
// enforced by the database".
#include <gtest/gtest.h>

#include "sim/run_sim.hpp"
#include "sim/test_support.hpp"
#include "sim/sim_world.hpp"
#include "strategies/side_traffic.hpp"

namespace lockbench {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// A few hot users, a 500 ms call: leases are held most of the time.
Settings hot(const std::string& strategy) {
  Settings s;
  s.scenario = "switch-primary";
  s.strategy = strategy;
  s.partner_latency = Distribution::fixed(500);
  s.db_latency = Distribution::fixed(0.5);
  s.rate_per_s = 20;
  s.keys = 20;
  s.duration = 60s;
  s.trace_requests = 0;
  return s;
}

Settings with_orm_writer(const std::string& strategy) {
  Settings s = hot(strategy);
  s.orm_writer_rate = 5;
  s.orm_writer_gap = 100ms;
  return s;
}

std::int64_t side(const json& r, const char* what) { return r.contains("side_traffic") ? r["side_traffic"].value(what, 0) : 0; }

TEST(OrmMappedLease, AnUnrelatedSaveInsideALeaseStompsTheLockAndAThirdRequestEnters) {
  const json r = run_sim(with_orm_writer("row-lease:orm-mapped"));
  EXPECT_GT(side(r, "entity_saves"), 200);
  EXPECT_GT(side(r, "lock_stomps"), 5) << r["side_traffic"].dump();
  EXPECT_GT(violation_count(r, "overlap_person"), 0) << r["partner"].dump();
  // The holder whose lock was stomped finds another owner at its store, or at its release.
  EXPECT_GT(r["locks"]["lease_lost"].get<std::int64_t>() + r["locks"]["unlock_failures"].get<std::int64_t>(), 0);
}

TEST(OrmMappedLease, TheSameSecondPathLeavesAnUnmappedLeaseAlone) {
  const json r = run_sim(with_orm_writer("row-lease"));
  EXPECT_GT(side(r, "entity_saves"), 200);  // the same writer ran, as often
  EXPECT_EQ(side(r, "lock_stomps"), 0);
  EXPECT_EQ(violation_count(r, "overlap_person"), 0) << r["partner"].dump();
  EXPECT_EQ(violation_count(r, "db_partner_divergence"), 0);
  EXPECT_EQ(r["locks"]["lease_lost"], 0);
}

TEST(OrmMappedLease, WithoutASecondPathItExcludesAsRowLeaseDoes) {
  const json mapped = run_sim(hot("row-lease:orm-mapped"));
  const json plain = run_sim(hot("row-lease"));
  EXPECT_FALSE(mapped.contains("side_traffic"));
  EXPECT_EQ(violation_count(mapped, "overlap_person"), 0);
  EXPECT_EQ(mapped["requests"], plain["requests"]);
}

TEST(OrmMappedLease, MoreSavesStompMoreLeases) {
  Settings few = with_orm_writer("row-lease:orm-mapped");
  few.orm_writer_rate = 1;
  Settings many = with_orm_writer("row-lease:orm-mapped");
  many.orm_writer_rate = 10;
  const json a = run_sim(few), b = run_sim(many);
  EXPECT_GT(side(b, "lock_stomps"), 2 * side(a, "lock_stomps"));
  EXPECT_GT(violation_count(b, "overlap_person"), violation_count(a, "overlap_person"));
}

TEST(BypassShare, TakesAboutTheGivenShareOfRequestsReproducibly) {
  Settings s;
  s.bypass_share = 0.05;
  int n = 0;
  for (std::uint64_t id = 1; id <= 10000; ++id) n += SideTraffic::bypasses(s, id) ? 1 : 0;
  EXPECT_GT(n, 400);
  EXPECT_LT(n, 600);
  // Reproducibly: a second Settings with the same seed picks the same requests;
  // another seed picks other ones (same share, different set).
  Settings same = s, other = s;
  other.seed = s.seed + 1;
  int differ = 0;
  for (std::uint64_t id = 1; id <= 10000; ++id) {
    const bool picked = SideTraffic::bypasses(s, id);
    EXPECT_EQ(SideTraffic::bypasses(same, id), picked) << id;
    differ += SideTraffic::bypasses(other, id) != picked ? 1 : 0;
  }
  EXPECT_GT(differ, 400);  // two independent 5 % picks differ on about 9.5 % of the ids
  s.bypass_share = 0;
  for (std::uint64_t id = 1; id <= 100; ++id) EXPECT_FALSE(SideTraffic::bypasses(s, id));
}

// Every strategy that excludes on switch-primary, the fenced leases under an
// enforcing partner included: the bypass sends no token, which an enforcing
// partner (docs/reference/partner-api.md F) does not refuse.
const char* const kExcluding[] = {"held-tx:wait", "advisory-xact:try", "advisory-session:pinned", "row-lease",
                                  "row-lease:renew", "row-lease:fenced", "redis-lease:fenced", "synchronized:wait"};

TEST(BypassShare, AWriterThatIgnoresTheLockOverlapsEveryStrategy) {
  for (const char* st : kExcluding) {
    Settings s = hot(st);
    s.bypass_share = 0.05;
    s.fencing = "enforce";
    const json r = run_sim(s);
    EXPECT_GT(side(r, "bypassed"), 20) << st;
    EXPECT_GT(violation_count(r, "overlap_person"), 0) << st << r["partner"].dump();
  }
}

TEST(BypassShare, WithoutItTheSameStrategiesStayClean) {
  for (const char* st : kExcluding) {
    Settings s = hot(st);
    s.fencing = "enforce";
    const json r = run_sim(s);
    EXPECT_FALSE(r.contains("side_traffic")) << st;
    EXPECT_EQ(violation_count(r, "overlap_person"), 0) << st << r["partner"].dump();
  }
}

}  // namespace
}  // namespace lockbench

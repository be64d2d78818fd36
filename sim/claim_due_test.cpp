// Conn::claim_due in the simulator: the outbox poller's
// SELECT ... ORDER BY id LIMIT n FOR UPDATE SKIP LOCKED, on a table of its own.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "sim/sim_world.hpp"

namespace lockbench {
namespace {

using namespace std::chrono_literals;

// Six jobs, all due at 0 except job 5 (due at 10 s); a scenario with nothing else.
class Jobs final : public Scenario {
 public:
  std::string_view name() const override { return "jobs"; }
  const std::vector<TableSpec>& tables() const override {
    static const std::vector<TableSpec> t = {{"jobs", true, TableSpec::Seed{"job", 0}}};
    return t;
  }
  int partner_calls() const override { return 0; }
  Task<void> read(RequestCtx&, Conn&, Plan&) override { co_return; }
  Task<Effect> external(RequestCtx&, Plan&, const CallOptions&) override { co_return Effect::done; }
  Task<bool> store(RequestCtx&, Conn&, const Plan&, const Guard&) override { co_return true; }
  nlohmann::json partner_reset(const Settings& s) const override {
    return {{"seed", s.seed}, {"persons", nlohmann::json::array()}, {"orders", nlohmann::json::array()}};
  }
  nlohmann::json service_view(const std::vector<StoredRow>&) const override { return {{"orders", nlohmann::json::object()}}; }
};

// Each request: BEGIN; make job 5 due later (first request only); claim two due
// jobs; hold them 100 ms; mark them done (num = -1); COMMIT. Records what it saw.
class Claimer final : public Strategy {
 public:
  struct Seen {
    std::uint64_t request;
    std::vector<Key> keys;
    std::int64_t undone;
  };
  std::vector<Seen> seen;

  Task<Outcome> run(RequestCtx& cx, Scenario&) override {
    ConnHandle c = co_await cx.world().acquire(cx);
    co_await c->begin();
    if (cx.request().id == 1) {
      const Row later{true, "job5", {}, 10000, 0};  // named: g++ 12 frees braced temporaries in co_await twice
      co_await c->update(0, 5, later, Guard::any());
      co_await c->commit();
      co_await c->begin();
    }
    const Claim claim = co_await c->claim_due(0, static_cast<std::int64_t>(to_ms(cx.world().now())), 2);
    Seen s{cx.request().id, {}, claim.undone};
    for (const auto& r : claim.rows) s.keys.push_back(r.key);
    seen.push_back(s);
    co_await cx.world().sleep(cx, 100ms);
    for (const auto& r : claim.rows) {
      const Row done{true, r.row.text, {}, -1, 0};
      co_await c->update(0, r.key, done, Guard::any());
    }
    co_await c->commit();
    co_return Outcome::ok;
  }
};

Settings three_claimers_at_once() {
  Settings s;
  s.strategy = "none";  // the registry row the result names; the strategy object is the test's
  s.arrival = Arrival::burst;
  s.burst = 3;
  s.keys = 6;
  s.duration = 1s;
  s.db_latency = Distribution::fixed(0.5);
  s.probe_interval = 0s;
  return s;
}

TEST(SimClaimDue, SkipsRowsOtherTransactionsHoldAndHandsOutDueRowsInKeyOrder) {
  const Settings s = three_claimers_at_once();
  Jobs jobs;
  Claimer claimer;
  sim::SimWorld w(s, claimer, jobs);
  w.run();
  ASSERT_EQ(claimer.seen.size(), 3u);
  std::vector<Key> all;
  for (const auto& seen : claimer.seen) {
    EXPECT_TRUE(std::is_sorted(seen.keys.begin(), seen.keys.end())) << "request " << seen.request;
    all.insert(all.end(), seen.keys.begin(), seen.keys.end());
  }
  // Three claims at once: nobody waited for anybody, nobody got a row twice,
  // job 5 (not due) went to nobody, and the fifth due job was left over.
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<Key>{1, 2, 3, 4, 6}));
  for (const auto& seen : claimer.seen) EXPECT_EQ(seen.undone, 6) << "request " << seen.request;
  EXPECT_EQ(w.db().waits(), 0);
}

}  // namespace
}  // namespace lockbench

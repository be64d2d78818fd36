// SideTraffic: requests that ignore the lock, and a second code path that
// saves the lock row's entity (side_traffic.hpp).
#include "strategies/side_traffic.hpp"

#include <algorithm>
#include <exception>

#include "core/context.hpp"
#include "core/workload.hpp"

namespace lockbench {

namespace {
using namespace std::chrono_literals;
// The writer sleeps in slices of at most this, so that it notices the end of
// the requests soon after it comes.
constexpr Duration kSlice = 250ms;
}  // namespace

bool SideTraffic::bypasses(const Settings& s, std::uint64_t request_id) {
  if (s.bypass_share <= 0) return false;
  Rng r(derive_seed(s.seed, "side.bypass") ^ request_id);
  return r.uniform01() < s.bypass_share;
}

Task<Outcome> SideTraffic::run(RequestCtx& cx, Scenario& sc) {
  if (bypasses(cx.settings(), cx.request().id)) return bypass(cx, sc);
  return inner_->run(cx, sc);
}

Task<Outcome> SideTraffic::bypass(RequestCtx& cx, Scenario& sc) {
  cx.recorder().effects.bypassed();
  // The admin job's code: the scenario's read, partner calls and store, no lock.
  co_return co_await none_.run(cx, sc);
}

int SideTraffic::background_workers(const Settings& s) const {
  return inner_->background_workers(s) + (s.orm_writer_rate > 0 ? 1 : 0);
}

Task<void> SideTraffic::background(RequestCtx& cx, Scenario& sc) {
  const int inner = inner_->background_workers(cx.settings());
  const int pods = std::max(1, cx.settings().pods);
  // background_request: id = base + worker * pods + pod, so the worker is (id - base) / pods.
  const std::uint64_t base = (std::uint64_t{1} << 40) * static_cast<std::uint64_t>(pods);
  const auto worker = static_cast<int>((cx.request().id - base) / static_cast<std::uint64_t>(pods));
  if (worker < inner) return inner_->background(cx, sc);
  return orm_writer(cx, sc);
}

// The second code path, one per pod: at Poisson arrivals it loads an entity
// (a connection from the pool for one statement), does its own work for
// --orm-writer-gap holding no connection (a detached entity, as a web form's
// edit or a service that calls elsewhere before save()), and saves it with a
// connection borrowed again: one autocommitted UPDATE. One save at a time: an
// arrival that comes while the previous save is under way starts after it.
Task<void> SideTraffic::orm_writer(RequestCtx& cx, Scenario& sc) {
  const Settings& s = cx.settings();
  World& w = cx.world();
  const double mean_s = static_cast<double>(std::max(1, s.pods)) / s.orm_writer_rate;
  Rng rng(derive_seed(s.seed, "side.orm_writer") ^ cx.request().id);
  const KeyChooser keys(s);
  const Table table = sc.lock_table();
  Duration next = w.now() + from_s(rng.exponential(mean_s));
  for (;;) {
    // Asked after a sleep, never before the first: a world may start its
    // background before it has scheduled any request (the simulator does).
    while (w.now() < next) co_await w.sleep(cx, std::min(next - w.now(), kSlice));
    if (w.requests_over()) break;
    next += from_s(rng.exponential(mean_s));
    const Key key = keys.next(rng);
    try {
      Entity e;
      {
        ConnHandle c = co_await w.acquire(cx);
        if (!c) continue;  // no connection in time: this edit is dropped
        e = co_await c->load_entity(table, key);
      }
      if (!e.row.found) continue;
      if (s.orm_writer_gap > Duration::zero()) co_await w.sleep(cx, s.orm_writer_gap);
      ConnHandle c = co_await w.acquire(cx);
      if (!c) continue;
      const EntitySave saved = co_await c->save_entity(table, key, e, lock_in_entity_);
      if (saved.found) cx.recorder().effects.entity_saved(saved.lock_changed);
    } catch (const std::exception&) {
      // a database failure drops this edit; the writer goes on
    }
  }
}

}  // namespace lockbench

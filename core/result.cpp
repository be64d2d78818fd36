#include "core/result.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <ctime>
#include <limits>
#include <thread>
#include <vector>

#include "base/allocator.hpp"

// Set by core/CMakeLists.txt for this file only.
#ifndef LOCKBENCH_VERSION
#define LOCKBENCH_VERSION "unknown"
#endif
#ifndef LOCKBENCH_GIT_COMMIT
#define LOCKBENCH_GIT_COMMIT "unknown"
#endif

namespace lockbench {

namespace {

nlohmann::json trio(const Samples& s) {
  const auto q = s.quantiles({0.50, 0.99});
  return {{"p50", q[0]}, {"p99", q[1]}, {"max", s.max()}, {"mean", s.mean()}};
}

nlohmann::json latency(const Samples& s, double scale) {
  const auto q = s.quantiles({0.50, 0.90, 0.99, 0.999});
  return {{"p50", q[0] * scale},  {"p90", q[1] * scale}, {"p99", q[2] * scale},
          {"p999", q[3] * scale}, {"max", s.max() * scale}, {"mean", s.mean() * scale}};
}

// The race to draw: the first violation naming two or more requests.
nlohmann::json find_race(const nlohmann::json& partner) {
  if (!partner.contains("details")) return nullptr;
  for (const char* kind : {"flow_interleaving", "overlap_person", "person_split", "lost_promotion"}) {
    for (const auto& v : partner["details"]) {
      if (v.value("kind", "") != kind) continue;
      const auto& ids = v.value("request_ids", nlohmann::json::array());
      if (ids.size() >= 2) return {{"kind", kind}, {"person", v.value("subject", "")}, {"request_ids", ids}};
    }
  }
  return nullptr;
}

nlohmann::json trace_sample(const RunSummary& run, const nlohmann::json& race) {
  // The first requests (ids 1..limit), the race's and the first few pool
  // timeouts (exhaustion is what held-tx teaches). A run records up to a
  // hundred thousand events: the few ids beyond the first are a sorted vector.
  const auto limit = static_cast<std::uint64_t>(run.settings->trace_requests);
  std::vector<std::uint64_t> also;
  if (race.is_object())
    for (const auto& id : race["request_ids"])
      if (id.is_number_unsigned() || id.is_number_integer()) also.push_back(id.get<std::uint64_t>());
  int timeouts = 0;
  for (const auto& e : run.recorder->events())
    if (e.step == "outcome" && e.detail.starts_with("pool_timeout") && timeouts++ < 5) also.push_back(e.request_id);
  std::sort(also.begin(), also.end());
  const auto kept = [&](std::uint64_t id) {
    return (id >= 1 && id <= limit) || std::binary_search(also.begin(), also.end(), id);
  };

  std::vector<const TraceEvent*> picked;
  for (const auto& e : run.recorder->events())
    if (kept(e.request_id)) picked.push_back(&e);
  std::stable_sort(picked.begin(), picked.end(), [](auto* a, auto* b) { return a->start < b->start; });
  nlohmann::json events = nlohmann::json::array();
  for (const auto* e : picked) {
    events.push_back({{"request_id", e->request_id},
                      {"step", e->step},
                      {"start_ms", to_ms(e->start)},
                      {"end_ms", to_ms(e->end)},
                      {"conn", e->conn < 0 ? nlohmann::json(nullptr) : nlohmann::json(e->conn)},
                      {"detail", e->detail}});
  }
  return {{"events", events}, {"race", race}};
}

}  // namespace

const std::vector<std::string>& violation_kinds() {
  static const std::vector<std::string> kinds = {
      "overlap_person",        "flow_interleaving", "person_split",     "lost_promotion",
      "user_malformed",        "db_partner_divergence", "double_charge", "order_overlap",
      "orphan_charge",         "paid_without_charge",   "overdrawn",     "balance_divergence",
      "duplicate_reward",      "claim_divergence"};
  return kinds;
}

nlohmann::json provenance(const RunSummary& run) {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32] = {};
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
  const auto known = [](const std::string& v) { return v.empty() ? nlohmann::json(nullptr) : nlohmann::json(v); };
  return {{"lockbench_version", LOCKBENCH_VERSION},
          {"git_commit", LOCKBENCH_GIT_COMMIT},
          {"created_at", stamp},
          {"host", host},
          {"cores", std::thread::hardware_concurrency()},
          {"postgresql_version", known(run.postgresql_version)},
          {"partner_version", known(run.partner_version)},
          {"allocator", allocator_name()}};

}

std::string lockbench_version() { return std::string(LOCKBENCH_VERSION) + " (" + LOCKBENCH_GIT_COMMIT + ")"; }

std::string new_run_id() {
  static std::atomic<unsigned> counter{0};
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  char buf[64];
  std::snprintf(buf, sizeof buf, "%x-%llx-%x", static_cast<unsigned>(::getpid()), static_cast<unsigned long long>(ms),
                ++counter);
  return buf;
}

double erlang_c(int c, double a) {
  if (a <= 0) return 0;
  if (a >= c) return 1;
  // Erlang B by the stable recurrence, then C from B.
  double b = 1;
  for (int k = 1; k <= c; ++k) b = a * b / (k + a * b);
  const double rho = a / c;
  return b / (1 - rho + rho * b);
}

double erlang_c_wait_s(int c, double lambda, double mean_service_s) {
  const double mu = 1 / mean_service_s;
  if (lambda >= c * mu) return std::numeric_limits<double>::infinity();
  return erlang_c(c, lambda / mu) / (c * mu - lambda);
}

namespace {

// make_result's steps, in the order of the result's blocks.

// Who ran what: schema, provenance, world, scenario, strategy, seed, settings.
void add_identity(nlohmann::json& j, const RunSummary& run, double scale) {
  const Settings& s = *run.settings;
  j["schema"] = kResultSchema;
  j["provenance"] = provenance(run);
  j["world"] = run.world;
  j["scenario"] = s.scenario;
  j["strategy"] = run.strategy;
  j["seed"] = s.seed;
  // The real world's (its sessions' application_name); null in the simulator,
  // whose result stays byte-identical for a seed.
  j["run_id"] = run.run_id.empty() ? nlohmann::json(nullptr) : nlohmann::json(run.run_id);
  j["interrupted"] = run.interrupted;
  j["settings"] = run.settings_json;
  j["settings"]["strategy"] = run.strategy;
  if (s.repetitions > 1)  // only then: a result without repetitions stays byte-identical
    j["repetition"] = {{"index", s.repetition}, {"of", s.repetitions}, {"base_seed", s.repetition_base_seed}};
  j["time_scale"] = scale;
}

// What was offered and served: requests by outcome, ok/s and the latencies.
void add_requests(nlohmann::json& j, const Recorder& rec, const Settings& eff, double span_s) {
  j["offered_per_s"] = eff.offered_per_s();
  j["duration_s"] = span_s;
  j["requests"] = {{"total", rec.total()},
                   {"ok", rec.count(Outcome::ok)},
                   {"conflict", rec.count(Outcome::conflict)},
                   {"pool_timeout", rec.count(Outcome::pool_timeout)},
                   {"rejected", rec.count(Outcome::rejected)},
                   {"error", rec.count(Outcome::error)}};
  j["throughput_ok_per_s"] = static_cast<double>(rec.count(Outcome::ok)) / span_s;
  j["latency_ms"] = latency(rec.latency_ms(), 1.0);        // every request, fast refusals included
  j["latency_ok_ms"] = latency(rec.latency_ok_ms(), 1.0);  // requests that finished their effect
  // The same distributions, mergeable across runs (measured units, like latency_ms).
  j["latency_histogram_ms"] = {{"all", histogram_json(rec.latency_ms())}, {"ok", histogram_json(rec.latency_ok_ms())}};
}

nlohmann::json pool_json(const PoolStats& pool, double span_s) {
  const double util = pool.size > 0 ? pool.busy_conn_s / (pool.size * span_s) : 0;
  return {{"size", pool.size},
          {"active_max", pool.active_max},
          {"pending_max", pool.pending_max},          // the peak
          {"pending_mean", pool.pending_s / span_s},  // the time average
          {"utilization", util},
          {"wait_ms", trio(pool.wait_ms)},
          {"hold_ms", trio(pool.hold_ms)},
          {"borrows", pool.hold_ms.size()},  // requests' (hold_ms, wait_ms and the ceiling are theirs)
          {"probe_borrows", pool.probe_borrows},
          {"timeouts", pool.timeouts},
          {"leaks", pool.leaks},
          {"leak_steps", pool.leak_steps}};
}

nlohmann::json locks_json(const Recorder& rec, const Settings& s) {
  nlohmann::json locks = {{"acquired", rec.locks.acquired.load()},
                          {"denied", rec.locks.denied.load()},
                          {"lease_steals", rec.locks.lease_steals.load()},
                          {"version_conflicts", rec.locks.version_conflicts.load()},
                          {"unlock_failures", rec.locks.unlock_failures.load()},
                          {"leaked", rec.locks.leaked.load()},
                          {"nothing_locked", rec.locks.nothing_locked.load()},
                          {"lease_lost", rec.locks.lease_lost.load()},
                          {"handed_to_stranger", rec.locks.handed_to_stranger.load()},
                          {"renewals", rec.locks.renewals.load()},
                          {"renewal_failures", rec.locks.renewal_failures.load()}};
  // With a --key-hash only, so that a result of today's settings keeps its bytes.
  if (s.key_hash != KeyHash::scenario) locks["false_conflicts"] = rec.locks.false_conflicts.load();
  return locks;
}

// The partner's report with every violation kind present (null each when its checks were unavailable).
nlohmann::json partner_json(const RunSummary& run) {
  nlohmann::json partner = run.partner.is_object() ? run.partner : nlohmann::json::object();
  const bool available = partner.value("available", true);
  partner["available"] = available;
  if (!partner.contains("calls")) partner["calls"] = available ? nlohmann::json(0) : nlohmann::json(nullptr);
  if (!partner.contains("violations") || !available) partner["violations"] = nlohmann::json::object();
  // Unavailable: no count pretends to be 0.
  for (const auto& k : violation_kinds())
    if (!partner["violations"].contains(k)) partner["violations"][k] = available ? nlohmann::json(0) : nlohmann::json(nullptr);
  if (!available) partner["verdict"] = "unavailable";
  if (!partner.contains("details")) partner["details"] = nlohmann::json::array();
  return partner;
}

// Prediction beside measurement: Little's law and Erlang C.
nlohmann::json prediction_json(const RunSummary& run, const Settings& eff) {
  const PoolStats& pool = *run.pool;
  nlohmann::json pred;
  const double mean_hold_ms = pool.hold_ms.mean();
  pred["mean_hold_ms"] = mean_hold_ms;
  pred["littles_law_ceiling_per_s"] =
      mean_hold_ms > 0 ? nlohmann::json(pool.size / (mean_hold_ms / 1000)) : nlohmann::json(nullptr);
  const double partner_mean_ms = eff.partner_latency.mean_ms() * run.partner_calls;
  if (run.holds_connection) {
    pred["configured_hold_ms"] = partner_mean_ms;
    pred["configured_ceiling_per_s"] = partner_mean_ms > 0 ? pool.size / (partner_mean_ms / 1000) : 0.0;
  } else {
    pred["configured_hold_ms"] = nullptr;
    pred["configured_ceiling_per_s"] = nullptr;
  }
  if (run.settings->arrival == Arrival::open && mean_hold_ms > 0) {
    const double w = erlang_c_wait_s(pool.size, eff.rate_per_s, mean_hold_ms / 1000);
    pred["erlang_c_wait_ms"] = std::isfinite(w) ? nlohmann::json(w * 1000) : nlohmann::json(nullptr);
    pred["note"] = std::isfinite(w) ? "M/M/c approximation of the pool (Poisson arrivals, measured mean hold)"
                                    : "offered load is above pool / mean hold: the pool queue grows until connectionTimeout";
  } else {
    pred["erlang_c_wait_ms"] = nullptr;
    pred["note"] = "Erlang C applies to open-loop (Poisson) arrivals only";
  }
  return pred;
}

// Where a request's time went, per request on average.
nlohmann::json time_split_json(const Recorder& rec) {
  const auto total = rec.total();
  const double n = total > 0 ? static_cast<double>(total) : 1;
  const TimeSplit sum = rec.split_sum();
  return {{"queue", to_ms(sum.queue) / n},         {"pool_wait", to_ms(sum.pool_wait) / n},
          {"lock_wait", to_ms(sum.lock_wait) / n}, {"partner", to_ms(sum.partner) / n},
          {"db", to_ms(sum.db) / n},               {"held_idle", to_ms(sum.held_idle()) / n}};
}

// A time-scaled run's figures in the configured (unscaled) units.
nlohmann::json unscaled_json(const RunSummary& run, double span_s, double scale) {
  const Recorder& rec = *run.recorder;
  const double mean_hold_ms = run.pool->hold_ms.mean();
  return {{"throughput_ok_per_s", static_cast<double>(rec.count(Outcome::ok)) / span_s * scale},
          {"latency_ms", latency(rec.latency_ms(), 1 / scale)},
          {"latency_ok_ms", latency(rec.latency_ok_ms(), 1 / scale)},
          {"duration_s", span_s / scale},
          {"littles_law_ceiling_per_s",
           mean_hold_ms > 0 ? nlohmann::json(run.pool->size / (mean_hold_ms / 1000) * scale) : nlohmann::json(nullptr)}};
}

// The effects' blocks (db_faults, emails, outbox, reconcile) and the world's own (sim, faults, ...).
void add_effects_and_extra(nlohmann::json& j, const RunSummary& run, double scale) {
  const nlohmann::json effects = run.recorder->effects.json();
  for (auto it = effects.begin(); it != effects.end(); ++it) {
    j[it.key()] = it.value();
    // A delivery queue's lag in configured units too (a time-scaled run measures it scaled).
    if (scale != 1.0 && it.value().contains("lag_ms"))
      for (const char* q : {"p50", "p99", "max"})
        j["unscaled"][it.key() + "_lag_ms"][q] = it.value()["lag_ms"][q].get<double>() / scale;
  }
  for (auto it = run.extra.begin(); it != run.extra.end(); ++it) j[it.key()] = it.value();
}

}  // namespace

nlohmann::json make_result(const RunSummary& run) {
  const Settings& s = *run.settings;
  const Recorder& rec = *run.recorder;
  const double scale = s.world == "real" ? s.time_scale : 1.0;
  const Settings eff = s.world == "real" ? s.scaled() : s;
  const double span_s = std::max(to_s(rec.last_finish()), 1e-9);

  nlohmann::json j;
  add_identity(j, run, scale);
  add_requests(j, rec, eff, span_s);
  j["pool"] = pool_json(*run.pool, span_s);
  j["probe"] = {{"total", run.probe->total}, {"failed", run.probe->failed}};
  j["locks"] = locks_json(rec, s);
  j["partner"] = partner_json(run);
  j["complete"] = !run.interrupted && j["partner"]["available"].get<bool>();
  j["prediction"] = prediction_json(run, eff);
  j["time_split_ms"] = time_split_json(rec);
  j["timeline"] = rec.timeline_json();
  j["trace"] = trace_sample(run, find_race(j["partner"]));
  if (scale != 1.0) j["unscaled"] = unscaled_json(run, span_s, scale);
  add_effects_and_extra(j, run, scale);
  return j;
}

nlohmann::json faults_block(const Settings& s, nlohmann::json recovery_ms, std::int64_t crashed_requests,
                            std::int64_t keys_held_at_crash) {
  nlohmann::json f;
  f["crash_at_s"] = s.crash_at ? nlohmann::json(to_s(*s.crash_at)) : nlohmann::json(nullptr);
  f["pause_at_s"] = s.pause_at ? nlohmann::json(to_s(*s.pause_at)) : nlohmann::json(nullptr);
  f["pause_for_s"] = to_s(s.pause_for);
  f["clock_skew_ms"] = to_ms(s.clock_skew);
  f["recovery_ms"] = std::move(recovery_ms);
  f["crashed_requests"] = crashed_requests;
  f["keys_held_at_crash"] = keys_held_at_crash;
  return f;
}

}  // namespace lockbench

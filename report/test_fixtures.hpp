// Hand-built results following the contract (docs/reference/result.md + the extra fields the
// report reads), shaped like what each strategy produces: a `none` hot-key run
// with a captured race, a `held-tx` run that exhausts its pool, a `row-lease`
// run with stolen leases. Numbers are invented but consistent (ok <= total,
// ceiling = pool / hold).
#pragma once

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace lockbench::report::fixtures {

using nlohmann::json;

// A complete, quiet result: every contract field present, no violation.
inline json base_result(const std::string& strategy, double offered_per_s, double hold_ms, int pool_size = 10) {
  const double duration_s = 30;
  const double ceiling = pool_size / (hold_ms / 1000.0);
  const double ok_rate = std::min(offered_per_s, ceiling);
  const int total = static_cast<int>(offered_per_s * duration_s);
  const int ok = static_cast<int>(ok_rate * duration_s);
  return json{
      {"schema", "lockbench.result/1"},
      {"world", "sim"},
      {"scenario", "switch-primary"},
      {"strategy", strategy},
      {"seed", 42},
      {"settings",
       {{"maximum-pool-size", pool_size},
        {"connection-timeout", "30s"},
        {"partner-latency", "lognormal:p50=600ms,p99=2s"},
        {"rate", offered_per_s},
        {"keys", 1},
        {"key-dist", "hot"},
        {"duration", "30s"},
        {"lease-ttl", "5s"},
        {"time-scale", 1}}},
      {"offered_per_s", offered_per_s},
      {"duration_s", duration_s},
      {"requests",
       {{"total", total}, {"ok", ok}, {"conflict", total - ok}, {"pool_timeout", 0}, {"rejected", 0}, {"error", 0}}},
      {"throughput_ok_per_s", ok_rate},
      {"latency_ms", {{"p50", 1250.0}, {"p90", 1800.5}, {"p99", 2400.0}, {"p999", 3100.0}, {"max", 3500.0}}},
      {"pool",
       {{"size", pool_size},
        {"active_max", 4},
        {"pending_max", 0},
        {"utilization", 0.2},
        {"wait_ms", {{"p50", 0.1}, {"p99", 0.5}, {"max", 1.0}}},
        {"hold_ms", {{"p50", hold_ms}, {"p99", hold_ms * 2}, {"max", hold_ms * 3}, {"mean", hold_ms}}},
        {"timeouts", 0},
        {"leaks", 0}}},
      {"probe", {{"total", 30}, {"failed", 0}}},
      {"locks",
       {{"acquired", ok},
        {"denied", total - ok},
        {"lease_steals", 0},
        {"version_conflicts", 0},
        {"unlock_failures", 0},
        {"leaked", 0}}},
      {"partner",
       {{"calls", ok * 2},
        {"violations",
         {{"overlap_person", 0},
          {"flow_interleaving", 0},
          {"person_split", 0},
          {"lost_promotion", 0},
          {"double_charge", 0}}},
        {"max_inflight_per_person", 1},
        {"details", json::array()}}},
      {"prediction",
       {{"littles_law_ceiling_per_s", ceiling},
        {"mean_hold_ms", hold_ms},
        {"erlang_c_wait_ms", nullptr},
        {"configured_ceiling_per_s", nullptr},  // set by core for strategies that hold a connection
        {"note", "ceiling = pool / mean hold"}}},
      {"time_scale", 1.0},
      {"time_split_ms",
       {{"queue", 0.2}, {"pool_wait", 0.1}, {"lock_wait", 0.0}, {"partner", 1200.0}, {"db", 3.0}, {"held_idle", 0.0}}},
  };
}

inline json event(const std::string& id, const std::string& step, double start_ms, double end_ms,
                  json conn = nullptr, const std::string& detail = "") {
  return json{{"request_id", id}, {"step", step}, {"start_ms", start_ms}, {"end_ms", end_ms},
              {"conn", std::move(conn)}, {"detail", detail}};
}

// Two promotions of person p-1 with no exclusion: r-17 and r-18 interleave
// their unlink/link calls. r-18 starts 40 ms after r-17.
inline json none_hot_with_race() {
  json r = base_result("none", 4, 6);
  r["requests"]["conflict"] = 0;
  r["requests"]["ok"] = r["requests"]["total"];
  r["throughput_ok_per_s"] = 4.0;
  r["partner"]["violations"]["overlap_person"] = 37;
  r["partner"]["violations"]["flow_interleaving"] = 21;
  r["partner"]["violations"]["person_split"] = 3;
  r["partner"]["violations"]["lost_promotion"] = 5;
  r["partner"]["max_inflight_per_person"] = 4;
  r["partner"]["details"] = json::array(
      {{{"kind", "person_split"}, {"subject", "p-1"}, {"detail", "identities under 2 users"},
        {"request_ids", {"r-17", "r-18"}}},
       {{"kind", "overlap_person"}, {"subject", "p-1"}, {"detail", "link while unlink in flight"},
        {"request_ids", {"r-17", "r-18"}}}});
  json events = json::array();
  for (const auto& [id, t0] : {std::pair{std::string("r-17"), 1000.0}, std::pair{std::string("r-18"), 1040.0}}) {
    const int conn = id == "r-17" ? 3 : 4;
    events.push_back(event(id, "queue", t0, t0));
    events.push_back(event(id, "pool.acquire", t0, t0 + 0.2, conn));
    events.push_back(event(id, "db.begin", t0 + 0.2, t0 + 1.0, conn, "read current primary auth0|u1"));
    events.push_back(event(id, "pool.release", t0 + 1.0, t0 + 1.0, conn));
    events.push_back(event(id, "partner.unlink", t0 + 1.1, t0 + 601.1, nullptr,
                           id == "r-17" ? "unlink google-oauth2|u1 from auth0|u1" : "unlink github|u1 from auth0|u1"));
    events.push_back(event(id, "partner.link", t0 + 601.2, t0 + 1201.2, nullptr,
                           id == "r-17" ? "link auth0|u1 under google-oauth2|u1" : "link auth0|u1 under github|u1"));
    events.push_back(event(id, "pool.acquire", t0 + 1201.3, t0 + 1201.4, conn));
    events.push_back(event(id, "db.write", t0 + 1201.4, t0 + 1203.0, conn, "store new primary"));
    events.push_back(event(id, "db.commit", t0 + 1203.0, t0 + 1204.0, conn));
    events.push_back(event(id, "pool.release", t0 + 1204.0, t0 + 1204.0, conn));
    events.push_back(event(id, "outcome", t0, t0 + 1204.1, nullptr, "ok"));  // spans the request, as core writes it
  }
  r["trace"] = {{"events", events}, {"race", {{"person", "p-1"}, {"request_ids", {"r-17", "r-18"}}}}};
  r["time_split_ms"]["partner"] = 1200.0;
  r["time_split_ms"]["db"] = 4.0;
  return r;
}

// held-tx at `offered_per_s` on a pool of 10 with a 1.5 s hold: ceiling 6.67/s.
inline json held_tx(double offered_per_s) {
  json r = base_result("held-tx:wait", offered_per_s, 1500);
  const double ceiling = 10 / 1.5;
  r["prediction"]["configured_ceiling_per_s"] = ceiling;
  if (offered_per_s > ceiling) {
    const int total = r["requests"]["total"];
    const int ok = static_cast<int>(ceiling * 30 * 0.95);
    r["requests"]["ok"] = ok;
    r["requests"]["conflict"] = 0;
    r["requests"]["pool_timeout"] = total - ok;
    r["throughput_ok_per_s"] = ok / 30.0;
    r["latency_ms"] = {{"p50", 12000.0}, {"p90", 28000.0}, {"p99", 30100.0}, {"p999", 30200.0}, {"max", 30300.0}};
    r["pool"]["active_max"] = 10;
    r["pool"]["pending_max"] = 45;
    r["pool"]["utilization"] = 1.0;
    r["pool"]["timeouts"] = total - ok;
    r["pool"]["wait_ms"] = {{"p50", 10500.0}, {"p99", 30000.0}, {"max", 30000.0}};
    r["probe"]["failed"] = 22;
    r["prediction"]["erlang_c_wait_ms"] = nullptr;
  } else {
    r["requests"]["conflict"] = 0;
    r["requests"]["ok"] = r["requests"]["total"];
    r["throughput_ok_per_s"] = offered_per_s;
    r["pool"]["utilization"] = offered_per_s / ceiling;
    r["prediction"]["erlang_c_wait_ms"] = 150.0 * offered_per_s;
  }
  r["time_split_ms"] = {{"queue", 0.5},     {"pool_wait", offered_per_s > ceiling ? 10500.0 : 20.0},
                        {"lock_wait", 900.0}, {"partner", 1500.0},
                        {"db", 4.0},         {"held_idle", 1500.0}};
  json timeline = json::array();
  for (int t = 0; t <= 30; ++t) {
    const bool saturated = offered_per_s > ceiling && t >= 2;
    timeline.push_back({{"t_s", t}, {"active", saturated ? 10 : std::min(10, t * 3)},
                        {"pending", saturated ? std::min(45, (t - 1) * 4) : 0}, {"idle", saturated ? 0 : 4},
                        {"ok", 6}, {"conflict", 0}, {"pool_timeout", saturated && t > 3 ? 3 : 0}, {"error", 0},
                        {"rejected", 0}});
  }
  r["timeline"] = timeline;
  if (offered_per_s > ceiling) {
    // Ten holders idle in transaction, then r-40 times out after 30 s.
    json events = json::array();
    for (int i = 0; i < 10; ++i) {
      const std::string id = "r-" + std::to_string(30 + i);
      const double t0 = 100.0 * i;
      events.push_back(event(id, "pool.acquire", t0, t0 + 0.3, i));
      events.push_back(event(id, "db.begin", t0 + 0.3, t0 + 1.0, i, "BEGIN"));
      events.push_back(event(id, "lock.acquire", t0 + 1.0, t0 + 2.0, i, "SELECT ... FOR UPDATE"));
      events.push_back(event(id, "partner.unlink", t0 + 2.0, t0 + 15002.0, nullptr));
      events.push_back(event(id, "partner.link", t0 + 15002.0, t0 + 31002.0, nullptr));
      events.push_back(event(id, "db.commit", t0 + 31002.0, t0 + 31003.0, i, "UPDATE; COMMIT"));
      events.push_back(event(id, "pool.release", t0 + 31003.0, t0 + 31003.0, i));
      events.push_back(event(id, "outcome", t0, t0 + 31003.0, nullptr, "ok"));
    }
    events.push_back(event("r-40", "queue", 1000.0, 1000.0));
    events.push_back(event("r-40", "pool.acquire", 1000.0, 31000.0, nullptr, "connection-timeout 30s"));
    events.push_back(event("r-40", "outcome", 1000.0, 31000.0, nullptr, "pool_timeout after 30s"));
    r["trace"] = {{"events", events}, {"race", nullptr}};
  }
  return r;
}

// row-lease with a TTL shorter than the worst case: a few leases stolen, and
// the steals show up as overlaps at the partner. A crash was injected.
inline json row_lease(double offered_per_s) {
  json r = base_result("row-lease", offered_per_s, 4);
  r["locks"]["lease_steals"] = 2;
  r["partner"]["violations"]["overlap_person"] = 2;
  r["partner"]["violations"]["stale_fencing_token"] = 0;  // an extra kind: reported as its own column
  r["faults"] = {{"crash_at_s", 10.0}, {"pause_at_s", nullptr}, {"pause_for_s", nullptr}, {"clock_skew_ms", 0},
                 {"recovery_ms", 5000.0}};
  r["time_split_ms"] = {{"queue", 0.3}, {"pool_wait", 0.2}, {"lock_wait", 0.0}, {"partner", 1250.0},
                        {"db", 5.0},    {"held_idle", 0.0}};
  json timeline = json::array();
  for (int t = 0; t <= 30; ++t)
    timeline.push_back({{"t_s", t}, {"active", t % 3 == 0 ? 1 : 0}, {"pending", 0}, {"idle", 9}, {"ok", 1},
                        {"conflict", 3}, {"pool_timeout", 0}, {"error", 0}, {"rejected", 0}});
  r["timeline"] = timeline;
  return r;
}

// A run on 2 pods with Kubernetes' probes acting (a 60 s run): readiness pulls
// pod 2 at 10 s, liveness kills it at 30 s, kubelet starts it again at once, its
// application listens at 40 s and readiness returns it at 45 s; pod 1 stays ready.
// pods.events as core/kubelet.hpp writes them.
inline json with_pod_events(json r) {
  r["duration_s"] = 60;
  r["settings"]["pods"] = 2;
  const std::string probe = "period=10s,timeout=1s,failure-threshold=3,success-threshold=1,initial-delay=0,db=on";
  r["pods"] = {{"readiness", {{"probe", probe}, {"total", 12}, {"failed", 4}, {"pulled", 1}, {"returned", 1}}},
               {"liveness", {{"probe", probe}, {"total", 12}, {"failed", 3}, {"kills", 1}}},
               {"restarts", 1},
               {"requests_by_pod", {30, 20}},
               {"requests_lost", 5},
               {"unavailable_s", 0},
               {"events", {{10.0, 2, "pulled"}, {30.0, 2, "killed"}, {30.0, 2, "started"}, {40.0, 2, "listening"},
                           {45.0, 2, "returned"}}}};
  return r;
}

// A small sweep: held-tx, advisory-xact:try and row-lease at four loads, and
// the `none` race: what `lockbench sweep` + `report` would see.
inline std::vector<json> sweep() {
  std::vector<json> all;
  for (double rate : {2.0, 5.0, 10.0, 20.0}) all.push_back(held_tx(rate));
  for (double rate : {2.0, 5.0, 10.0, 20.0}) {
    json a = base_result("advisory-xact:try", rate, 1480);
    a["prediction"]["configured_ceiling_per_s"] = 10 / 1.48;
    if (rate > 10 / 1.48) {
      a["requests"]["pool_timeout"] = 40;
      a["probe"]["failed"] = 9;
      a["latency_ms"]["p99"] = 30050.0;
    }
    all.push_back(a);
  }
  for (double rate : {2.0, 5.0, 10.0, 20.0}) all.push_back(row_lease(rate));
  all.push_back(none_hot_with_race());
  return all;
}

}  // namespace lockbench::report::fixtures

#include "report/sections.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "report/fields.hpp"

namespace lockbench::report::detail {

namespace {

std::string count(const json& r, std::string_view path) { return fmt(num(r, path), 0); }

// Sum of one field over a strategy's results.
double sum(const StrategyGroup& g, std::string_view path) {
  double total = 0;
  for (const json* r : g.results) total += num_or(*r, path, 0);
  return total;
}

std::optional<double> mean_hold_ms(const json& r) {
  if (auto v = num(r, "pool.hold_ms.mean")) return v;
  return num(r, "prediction.mean_hold_ms");
}

// What the seeds' table says for rows that are design facts, not measurements.
struct DesignFacts {
  std::string non_existent;  // protects records that do not exist yet
  std::string crash;         // expected clean-up on crash
};

DesignFacts facts_for(const std::string& base) {
  if (base == "none") return {"N/A: nothing to protect with", "N/A: nothing is held"};
  if (base == "held-tx") return {"❌ No: needs the row to lock", "✅ rollback frees the row when the session ends"};
  if (base == "advisory-xact")
    return {"✅ Yes: the key is any number", "✅ freed at rollback when the session ends"};
  if (base == "advisory-session")
    return {"✅ Yes: the key is any number", "⚠️ freed only when the session ends (pooled: never)"};
  if (base == "row-lease") return {"❌ No: needs the row", "⚠️ after the lease TTL"};
  if (base == "optimistic") return {"❌ No: needs the row and its version", "✅ nothing is held"};
  return {"?", "?"};
}

}  // namespace

std::vector<std::string> summary_violation_kinds(const std::vector<json>& results) {
  std::vector<std::string> kinds;
  const auto& contract = contract_violation_kinds();
  for (const auto& k : violation_kinds(results)) {
    bool counted = std::find(contract.begin(), contract.end(), k) != contract.end();
    for (const auto& r : results) counted = counted || num_or(r, "partner.violations." + k, 0) > 0;
    if (counted) kinds.push_back(k);
  }
  return kinds;
}

std::string uncounted_kinds_note(const std::vector<json>& results) {
  const auto shown = summary_violation_kinds(results);
  std::string left;
  for (const auto& k : violation_kinds(results))
    if (std::find(shown.begin(), shown.end(), k) == shown.end()) left += (left.empty() ? "" : ", ") + k;
  return left.empty() ? "" : "Other kinds the partner checks, counted 0 in every run: " + left + ".";
}

static bool uniform(const std::vector<json>& results, std::string_view field) {
  for (const auto& r : results)
    if (str(r, field) != str(results.front(), field)) return false;
  return true;
}

Table summary_table(const std::vector<json>& results) {
  Table t;
  // World and scenario get columns only when they differ between runs (the
  // report's first line names them otherwise): the table is wide enough.
  const bool one_world = uniform(results, "world"), one_scenario = uniform(results, "scenario");
  t.headers = {"strategy"};
  if (!one_world) t.headers.push_back("world");
  if (!one_scenario) t.headers.push_back("scenario");
  const std::size_t names = t.headers.size();
  // Latency of ok requests (what a served user waited) and of every request
  // (fast refusals included) side by side: one alone misleads.
  for (const char* h : {"offered /s", "ok /s", "ok p50 ms", "ok p99 ms", "all p99 ms"}) t.headers.push_back(h);
  // Time-scaled real runs also get their figures in the configured units.
  bool scaled = false;
  for (const auto& r : results) scaled = scaled || find(r, "unscaled") != nullptr;
  if (scaled)
    for (const char* h : {"ok /s unscaled", "ok p99 ms unscaled"}) t.headers.push_back(h);
  for (const char* h : {"conflicts", "pool timeouts", "probe failures"}) t.headers.push_back(h);
  const auto kinds = summary_violation_kinds(results);
  for (const auto& k : kinds) t.headers.push_back(k);
  for (const char* h : {"lease steals", "unlock failures", "locks leaked", "recovery after crash ms"})
    t.headers.push_back(h);
  t.numeric.assign(t.headers.size(), true);
  for (std::size_t i = 0; i < names; ++i) t.numeric[i] = false;
  for (const auto& g : group_by_strategy(results)) {
    for (const json* rp : g.results) {
      const json& r = *rp;
      std::vector<std::string> row = {g.strategy};
      if (!one_world) row.push_back(str(r, "world"));
      if (!one_scenario) row.push_back(str(r, "scenario"));
      // Results written before latency_ok_ms existed fall back to every request's figures.
      const auto ok_lat = [&](const std::string& prefix, const char* q) {
        const auto v = num(r, prefix + "latency_ok_ms." + q);
        return v ? v : num(r, prefix + "latency_ms." + q);
      };
      row.insert(row.end(), {fmt(num(r, "offered_per_s")), fmt(num(r, "throughput_ok_per_s")), fmt(ok_lat("", "p50")),
                             fmt(ok_lat("", "p99")), fmt(num(r, "latency_ms.p99"))});
      if (scaled)
        row.insert(row.end(), {fmt(num(r, "unscaled.throughput_ok_per_s")), fmt(ok_lat("unscaled.", "p99"))});
      row.insert(row.end(), {count(r, "requests.conflict"), count(r, "requests.pool_timeout"), count(r, "probe.failed")});
      // A partner lost mid-run has no verdict: "unavailable", never 0.
      const bool unavailable = str(r, "partner.available") == "false";
      for (const auto& k : kinds) row.push_back(unavailable ? "unavailable" : fmt(num(r, "partner.violations." + k), 0));
      row.push_back(count(r, "locks.lease_steals"));
      row.push_back(count(r, "locks.unlock_failures"));
      row.push_back(count(r, "locks.leaked"));
      row.push_back(num(r, "faults.recovery_ms") ? fmt(num(r, "faults.recovery_ms")) : "not measured");
      t.rows.push_back(std::move(row));
    }
  }
  return t;
}

Table prediction_table(const std::vector<json>& results) {
  Table t;
  t.headers = {"strategy",       "offered /s",          "pool size",       "mean hold ms",
               "Little's-law ceiling /s", "measured ok /s", "ok / ceiling", "Erlang-C wait ms",
               "measured pool wait p50 ms", "note"};
  t.numeric = {false, true, true, true, true, true, true, true, true, false};
  for (const auto& g : group_by_strategy(results)) {
    for (const json* rp : g.results) {
      const json& r = *rp;
      const auto ceiling = num(r, "prediction.littles_law_ceiling_per_s");
      const auto ok = num(r, "throughput_ok_per_s");
      std::string ratio = "–";
      if (ceiling && ok && *ceiling > 0) ratio = fmt::format("{:.0f}%", 100.0 * *ok / *ceiling);
      t.rows.push_back({g.strategy, fmt(num(r, "offered_per_s")), count(r, "pool.size"), fmt(mean_hold_ms(r)),
                        fmt(ceiling), fmt(ok), ratio, fmt(num(r, "prediction.erlang_c_wait_ms")),
                        fmt(num(r, "pool.wait_ms.p50")), str(r, "prediction.note")});
    }
  }
  return t;
}

Table comparison_table(const std::vector<json>& results) {
  const auto groups = group_by_strategy(results);
  Table t;
  t.headers = {"Requirement"};
  for (const auto& g : groups) t.headers.push_back(g.strategy);
  t.numeric.assign(t.headers.size(), false);

  std::vector<std::string> excl = {"Exclusion across workers (clustered): measured partner violations"};
  std::vector<std::string> nonexist = {"Protects non-existent records (by design)"};
  std::vector<std::string> infra = {"External infrastructure"};
  std::vector<std::string> crash = {"Auto clean-up on crash"};
  std::vector<std::string> slow = {"Safe with slow HTTP I/O: measured pool timeouts and failed probes"};
  std::vector<std::string> capacity = {"Throughput at the heaviest load (ok /s of offered /s)"};
  std::vector<std::string> overhead = {"Connection held per request (mean ms)"};
  std::vector<std::string> refused = {"Requests refused (409 conflict)"};

  for (const auto& g : groups) {
    const std::string base = base_strategy(g.strategy);
    // Exclusion is judged on runs without injected faults: a pod that crashes
    // between unlink and link splits a person whatever the lock did.
    double violations = 0, calls = 0, steals = 0, unlock_failures = 0;
    int fault_runs = 0, unavailable_runs = 0;
    for (const json* r : g.results) {
      if (find(*r, "faults") != nullptr) {
        ++fault_runs;
        continue;
      }
      if (str(*r, "partner.available") == "false") {  // no verdict to count
        ++unavailable_runs;
        continue;
      }
      violations += violations_total(*r);
      calls += num_or(*r, "partner.calls", 0);
      steals += num_or(*r, "locks.lease_steals", 0);
      unlock_failures += num_or(*r, "locks.unlock_failures", 0);
    }
    std::string cell = violations == 0
                           ? fmt::format("✅ 0 violations in {} partner calls", fmt(calls, 0))
                           : fmt::format("❌ {} violations in {} partner calls", fmt(violations, 0), fmt(calls, 0));
    if (steals > 0) cell += fmt::format(", {} leases stolen", fmt(steals, 0));
    if (unlock_failures > 0) cell += fmt::format(", {} failed unlocks", fmt(unlock_failures, 0));
    if (fault_runs > 0) cell += fmt::format(" ({} crash/pause runs not counted here)", fault_runs);
    if (unavailable_runs > 0) cell += fmt::format(" ({} runs with the partner's checks unavailable)", unavailable_runs);
    if (unavailable_runs > 0 && unavailable_runs + fault_runs == static_cast<int>(g.results.size()))
      cell = "unavailable: the partner's checks could not be read";
    excl.push_back(cell);

    const DesignFacts facts = facts_for(base);
    nonexist.push_back(facts.non_existent);
    infra.push_back("None (uses the existing PostgreSQL)");

    // Crash recovery is measured only when a run injected a crash.
    std::optional<double> recovery;
    for (const json* r : g.results)
      if (auto v = num(*r, "faults.recovery_ms")) recovery = std::max(recovery.value_or(0), *v);
    if (recovery)
      crash.push_back(fmt::format("{} key free again {} ms after the crash", *recovery <= 1000 ? "✅" : "⚠️",
                                  fmt(recovery)));
    else
      crash.push_back("not measured (expected: " + facts.crash + ")");

    const double timeouts = sum(g, "requests.pool_timeout");
    const double probes_failed = sum(g, "probe.failed");
    slow.push_back(timeouts + probes_failed == 0
                       ? "✅ 0 pool timeouts, 0 failed probes"
                       : fmt::format("❌ {} pool timeouts, {} failed probes", fmt(timeouts, 0),
                                     fmt(probes_failed, 0)));

    const json& heavy = *g.representative();
    std::string cap = fmt::format("{} of {}", fmt(num(heavy, "throughput_ok_per_s")),
                                  fmt(num(heavy, "offered_per_s")));
    if (auto ceiling = num(heavy, "prediction.littles_law_ceiling_per_s"))
      cap += fmt::format(" (ceiling {})", fmt(ceiling));
    capacity.push_back(cap);
    overhead.push_back(fmt(mean_hold_ms(heavy)));
    refused.push_back(fmt(sum(g, "requests.conflict"), 0));
  }
  t.rows = {excl, nonexist, infra, crash, slow, capacity, overhead, refused};
  return t;
}

Table violation_details_table(const std::vector<json>& results, std::size_t limit) {
  Table t;
  t.headers = {"strategy", "kind", "subject", "detail", "requests"};
  t.numeric.assign(t.headers.size(), false);
  for (const auto& r : results) {
    const json* details = find(r, "partner.details");
    if (details == nullptr || !details->is_array()) continue;
    for (const auto& d : *details) {
      if (t.rows.size() >= limit) return t;
      std::string ids;
      if (d.contains("request_ids") && d["request_ids"].is_array())
        for (const auto& id : d["request_ids"]) ids += (ids.empty() ? "" : ", ") + str(id, "");
      t.rows.push_back({str(r, "strategy"), str(d, "kind"), str(d, "subject"), str(d, "detail"), ids});
    }
  }
  return t;
}

Table runs_table(const std::vector<json>& results) {
  Table t;
  t.headers = {"strategy", "world", "scenario", "seed", "offered /s", "duration s", "requests", "time scale",
               "settings"};
  t.numeric = {false, false, false, true, true, true, true, true, false};
  for (const auto& r : results) {
    std::string settings;
    if (const json* s = find(r, "settings"); s != nullptr && s->is_object())
      for (const auto& [k, v] : s->items())
        settings += (settings.empty() ? "" : ", ") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
    t.rows.push_back({str(r, "strategy"), str(r, "world"), str(r, "scenario"), str(r, "seed"),
                      fmt(num(r, "offered_per_s")), fmt(num(r, "duration_s")), count(r, "requests.total"),
                      fmt(num(r, "time_scale"), 3), settings});
  }
  return t;
}

std::string scope_line(const std::vector<json>& results) {
  if (results.empty()) return "";
  std::string line;
  if (uniform(results, "world")) line += "world `" + str(results.front(), "world") + "`";
  if (uniform(results, "scenario"))
    line += (line.empty() ? "" : ", ") + std::string("scenario `") + str(results.front(), "scenario") + "`";
  return line.empty() ? "" : "All runs: " + line + ".";
}

std::string time_scale_note(const std::vector<json>& results) {
  for (const auto& r : results) {
    const auto scale = num(r, "time_scale");
    if (scale && *scale != 1.0)
      return "Some runs were time-scaled (see the time scale column of Runs): every configured duration was "
             "multiplied by the scale, and the times shown are the measured wall times; the \"unscaled\" "
             "columns give them back in the configured units.";
  }
  return "";
}

}  // namespace lockbench::report::detail

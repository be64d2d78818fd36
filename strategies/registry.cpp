// The one list of strategies, as their files registered them (each file's
// StrategyFamily row, LOCKBENCH_STRATEGY): lookups, checks and the result's
// strategy_info. The request edge (serve) lives here too.
#include "strategies/registry.hpp"

#include <algorithm>
#include <exception>
#include <stdexcept>

#include "strategies/family.hpp"
#include "strategies/side_traffic.hpp"

namespace lockbench {

namespace {

// The families as their files registered them (in link order), until the
// registry is first read; then sorted once into the table below.
struct Registered {
  std::vector<const StrategyFamily*> families;
  bool read = false;
};

Registered& registered() {
  static Registered r;  // built on first use: safe from any file's static initialization
  return r;
}

struct RegistryTable {
  std::vector<const StrategyFamily*> families;  // teaching order
  std::vector<StrategyInfo> rows;               // every family's variants
};

// A registry that two files fill with one name, or with one order, is a bug
// of the build: it stops at the first read, naming both.
RegistryTable build_registry_table() {
  Registered& reg = registered();
  reg.read = true;
  RegistryTable t;
  t.families = reg.families;
  std::sort(t.families.begin(), t.families.end(),
            [](const StrategyFamily* a, const StrategyFamily* b) { return a->order < b->order; });
  for (std::size_t i = 0; i < t.families.size(); ++i) {
    const StrategyFamily& f = *t.families[i];
    if (f.variants.empty()) throw std::logic_error("strategy family '" + std::string(f.name) + "' has no variant");
    for (std::size_t j = 0; j < i; ++j)
      if (t.families[j]->name == f.name || t.families[j]->order == f.order)
        throw std::logic_error("strategy families '" + std::string(t.families[j]->name) + "' and '" +
                               std::string(f.name) + "' share a name or an order (" + std::to_string(f.order) + ")");
    for (const StrategyInfo& row : f.variants) {
      if (row.family != f.name)
        throw std::logic_error("strategy " + std::string(row.spec) + " is in family '" + std::string(f.name) +
                               "' but its row says '" + std::string(row.family) + "'");
      t.rows.push_back(row);
    }
  }
  return t;
}

const RegistryTable& registry_table() {
  static const RegistryTable t = build_registry_table();
  return t;
}

}  // namespace

bool register_strategy_family(const StrategyFamily& family) {
  Registered& reg = registered();
  if (reg.read)
    throw std::logic_error("strategy family '" + std::string(family.name) +
                           "' registered after the registry was read (a static initializer read it)");
  reg.families.push_back(&family);
  return true;
}

std::span<const StrategyFamily* const> strategy_families() { return registry_table().families; }

const StrategyFamily& strategy_family(std::string_view name) {
  for (const StrategyFamily* f : strategy_families())
    if (f->name == name) return *f;
  throw std::logic_error("no strategy family '" + std::string(name) + "' is registered");
}

std::string_view lease_store_name(LeaseStoreKind k) { return k == LeaseStoreKind::etcd ? "etcd" : "redis"; }

std::string_view exclusion_name(Exclusion e) {
  switch (e) {
    case Exclusion::none: return "none";
    case Exclusion::one_pod: return "one-pod";
    case Exclusion::all_pods: return "all-pods";
  }
  return "?";
}

std::span<const StrategyInfo> strategy_registry() { return registry_table().rows; }

const StrategyInfo& strategy_info(std::string_view spec) {
  for (const auto& row : strategy_registry())
    if (row.spec == spec || (row.family_default && row.family == spec)) return row;
  std::string accepted;
  for (const auto& s : strategy_specs()) accepted += (accepted.empty() ? "" : ", ") + s;
  throw SettingError("--strategy: '" + std::string(spec) + "' is unknown (accepted: all, " + accepted + ")");
}

void check_applies(const StrategyInfo& st, std::string_view scenario) {
  const ScenarioInfo& sc = scenario_info(scenario);
  const std::string pair = std::string(st.spec) + " does not apply to scenario " + std::string(sc.name);
  if (st.props.refuses_missing_row && !sc.lock_row_exists)
    throw SettingError("--strategy: " + pair +
                       ": its lock lives in the record's row, which does not exist before the first request "
                       "(use advisory-xact, which locks a key, not a row)");
  if (st.props.needs_idempotency && !sc.takes_idempotency_key)
    throw SettingError("--strategy: " + pair +
                       ": it relies on an Idempotency-Key, which this scenario's partner API does not take");
}

void check_virtual_threads(const Settings& s) {
  if (!s.virtual_threads) return;
  if (s.world == "real" && !s.targets.empty())
    throw SettingError("--virtual-threads: --targets are pods this run did not start; give their own lockbench "
                       "serve --virtual-threads on instead");
  if (s.jdk != 0 && s.jdk < 21)
    throw SettingError("--jdk: virtual threads are final from JDK 21 (JEP 444); give 21 or later, or unknown, "
                       "with --virtual-threads on");
}

bool pins_carriers(const Settings& s, const StrategyProps& p) {
  return s.virtual_threads && (s.jdk == 0 || s.jdk < 24) && p.monitor_during_call;
}

const StrategyInfo& applying_strategy(std::string_view spec, std::string_view scenario) {
  const StrategyInfo& info = strategy_info(spec);
  check_applies(info, scenario);
  return info;
}

std::unique_ptr<Strategy> make_strategy(std::string_view spec) {
  const StrategyInfo& info = strategy_info(spec);
  // Every strategy runs with the traffic beside its lock (side_traffic.hpp);
  // without --bypass-share and --orm-writer-rate it adds nothing.
  return std::make_unique<SideTraffic>(info.make(), info.props.lock_in_entity);
}

std::vector<std::string> all_strategies() {
  std::vector<std::string> out;
  for (const auto& row : strategy_registry())
    if (row.in_all) out.emplace_back(row.spec);
  return out;
}

std::vector<std::string> strategy_specs() {
  std::vector<std::string> out;
  for (const auto& row : strategy_registry()) {
    if (row.family_default && row.family != row.spec) out.emplace_back(row.family);
    out.emplace_back(row.spec);
  }
  return out;
}

nlohmann::json strategy_info_json(const StrategyInfo& info) {
  const StrategyProps& p = info.props;
  nlohmann::json j = {{"family", info.family},
                      {"holds_connection_during_call", p.holds_connection_during_call},
                      {"exclusion", exclusion_name(p.exclusion)},
                      {"excludes_across_pods", p.exclusion == Exclusion::all_pods},
                      {"crash_safe", p.crash_safe},
                      {"needs_existing_row", p.needs_existing_row},
                      {"needs_idempotency_key", p.needs_idempotency},
                      {"needs_lease_store", p.needs_lease_store}};
  if (p.needs_lease_store && p.lease_store != LeaseStoreKind::redis) j["lease_store"] = lease_store_name(p.lease_store);
  return j;
}

Task<Outcome> serve(RequestCtx& cx, Strategy& st, Scenario& sc) {
  const Duration start = cx.world().now();
  Outcome o = Outcome::error;
  std::string detail;
  try {
    o = co_await st.run(cx, sc);
  } catch (const std::exception& e) {
    // DbError and driver errors that escaped the world: the 500 a service returns.
    o = Outcome::error;
    detail = e.what();
  }
  trace_outcome(cx, start, o, detail);
  co_return o;
}

void trace_outcome(RequestCtx& cx, Duration start, Outcome o, const std::string& error) {
  if (cx.recorder().tracing())  // a full trace drops the event: build no strings for it
    cx.trace("outcome", start, cx.world().now(), -1, std::string(outcome_name(o)) + (error.empty() ? "" : ": " + error));
}

}  // namespace lockbench

// The one list of strategies: names, variants, properties. A new strategy is
// one file plus one row here. The request edge (serve) lives here too.
#include "strategies/registry.hpp"

#include <exception>

#include "strategies/side_traffic.hpp"
#include "strategies/strategies.hpp"

namespace lockbench {

namespace {

template <class S, class... A>
std::unique_ptr<Strategy> make(A... a) {
  return std::make_unique<S>(a...);
}

// Each strategy's properties (core/strategy.hpp's StrategyProps), by field
// name: what a row leaves out is false / none.
constexpr StrategyProps kNone{.holds_connection_during_call = false, .exclusion = Exclusion::none, .crash_safe = false};
constexpr StrategyProps kHeldTx{.holds_connection_during_call = true,
                                .exclusion = Exclusion::all_pods,
                                .crash_safe = true,
                                .needs_existing_row = true,
                                .lock_table = LockTableUse::per_connection};
constexpr StrategyProps kAdvisoryXact{.holds_connection_during_call = true,
                                      .exclusion = Exclusion::all_pods,
                                      .crash_safe = true,
                                      .lock_table = LockTableUse::per_connection};
constexpr StrategyProps kSessionPinned{.holds_connection_during_call = true,
                                       .exclusion = Exclusion::all_pods,
                                       .crash_safe = true,
                                       .lock_table = LockTableUse::per_connection};
// Its failed unlocks leave session locks on pooled connections: up to one per key.
constexpr StrategyProps kSessionPooled{.holds_connection_during_call = false,
                                       .exclusion = Exclusion::none,
                                       .crash_safe = false,
                                       .lock_table = LockTableUse::per_key};
constexpr StrategyProps kRowLease{.holds_connection_during_call = false,
                                  .exclusion = Exclusion::all_pods,
                                  .crash_safe = true,
                                  .needs_existing_row = true,
                                  .refuses_missing_row = true,
                                  .lease_ttl = true};
constexpr StrategyProps kRowLeaseRenew{.holds_connection_during_call = false,
                                       .exclusion = Exclusion::all_pods,
                                       .crash_safe = true,
                                       .needs_existing_row = true,
                                       .refuses_missing_row = true,
                                       .lease_ttl = true,
                                       .renews_lease = true};
// The article's lease: the expiry compares the database's clock with the
// application's, and the release clears whoever holds the lease.
constexpr StrategyProps kRowLeaseArticle{.holds_connection_during_call = false,
                                         .exclusion = Exclusion::none,
                                         .crash_safe = true,
                                         .needs_existing_row = true,
                                         .refuses_missing_row = true,
                                         .lease_ttl = true};
// The lease, with its columns mapped into the ORM entity: an unrelated save()
// from stale state stomps the lock, so it does not exclude once that path runs.
constexpr StrategyProps kRowLeaseOrmMapped{.holds_connection_during_call = false,
                                           .exclusion = Exclusion::none,
                                           .crash_safe = true,
                                           .needs_existing_row = true,
                                           .refuses_missing_row = true,
                                           .lease_ttl = true,
                                           .lock_in_entity = true};
constexpr StrategyProps kOptimistic{.holds_connection_during_call = false,
                                    .exclusion = Exclusion::none,
                                    .crash_safe = false,
                                    .needs_existing_row = true};
constexpr StrategyProps kSplitTx{.holds_connection_during_call = false,
                                 .exclusion = Exclusion::none,
                                 .crash_safe = false,
                                 .needs_idempotency = true};
constexpr StrategyProps kAfterCommit{.holds_connection_during_call = false,
                                     .exclusion = Exclusion::none,
                                     .crash_safe = false,
                                     .needs_idempotency = true};
// A poller that dies leaves its claimed row, which is due again after the claim lease.
constexpr StrategyProps kOutbox{.holds_connection_during_call = false,
                                .exclusion = Exclusion::none,
                                .crash_safe = true,
                                .needs_idempotency = true};
// A lease in Redis: excludes while the TTL holds, the store cannot check it.
constexpr StrategyProps kRedisLease{.holds_connection_during_call = false,
                                    .exclusion = Exclusion::all_pods,
                                    .crash_safe = true,
                                    .needs_lease_store = true,
                                    .lease_ttl = true};
constexpr StrategyProps kRedisLeaseRenew{.holds_connection_during_call = false,
                                         .exclusion = Exclusion::all_pods,
                                         .crash_safe = true,
                                         .needs_lease_store = true,
                                         .lease_ttl = true,
                                         .renews_lease = true};
// A lease in etcd: the same guarantees as Redis's, from a store that loses no acknowledged write.
constexpr StrategyProps kEtcdLease{.holds_connection_during_call = false,
                                   .exclusion = Exclusion::all_pods,
                                   .crash_safe = true,
                                   .needs_lease_store = true,
                                   .lease_ttl = true,
                                   .lease_store = LeaseStoreKind::etcd};
constexpr StrategyProps kEtcdLeaseRenew{.holds_connection_during_call = false,
                                        .exclusion = Exclusion::all_pods,
                                        .crash_safe = true,
                                        .needs_lease_store = true,
                                        .lease_ttl = true,
                                        .lease_store = LeaseStoreKind::etcd,
                                        .renews_lease = true};
// An in-process lock: nothing held in the database, gone with its pod.
constexpr StrategyProps kSynchronized{.holds_connection_during_call = false,
                                      .exclusion = Exclusion::one_pod,
                                      .crash_safe = true};
// Waiting for the lock is Java's synchronized (key.intern()) { ... }: a monitor.
constexpr StrategyProps kSynchronizedWait{.holds_connection_during_call = false,
                                          .exclusion = Exclusion::one_pod,
                                          .crash_safe = true,
                                          .monitor_during_call = true};

// The table: one row per strategy, in teaching order (--strategy all runs the
// in_all rows in this order). Constant-initialized: no order of static
// initialization to mind.
using V = RowLease::Variant;
constexpr StrategyInfo kRegistry[] = {
    {.spec = "none",
     .family = "none",
     .in_all = true,
     .family_default = true,
     .props = kNone,
     .teaches = "the race itself",
     .make = [] { return make<None>(); }},
    {.spec = "held-tx:wait",
     .family = "held-tx",
     .in_all = true,
     .family_default = true,
     .props = kHeldTx,
     .teaches = "pool exhaustion (@Transactional around HTTP)",
     .make = [] { return make<HeldTx>(false); }},
    {.spec = "held-tx:nowait",
     .family = "held-tx",
     .props = kHeldTx,
     .teaches = "pool exhaustion; a busy row answers 409 at once",
     .make = [] { return make<HeldTx>(true); }},
    {.spec = "advisory-xact:try",
     .family = "advisory-xact",
     .in_all = true,
     .family_default = true,
     .props = kAdvisoryXact,
     .teaches = "correct exclusion, crash-safe, still pins the pool",
     .make = [] { return make<AdvisoryXact>(false); }},
    {.spec = "advisory-xact:wait",
     .family = "advisory-xact",
     .props = kAdvisoryXact,
     .teaches = "correct exclusion with a bounded wait (lock_timeout)",
     .make = [] { return make<AdvisoryXact>(true); }},
    {.spec = "advisory-session:pinned",
     .family = "advisory-session",
     .family_default = true,
     .props = kSessionPinned,
     .teaches = "correct while the connection stays pinned",
     .make = [] { return make<AdvisorySession>(true, false); }},
    {.spec = "advisory-session:pooled",
     .family = "advisory-session",
     .in_all = true,
     .props = kSessionPooled,
     .teaches = "the pooled-connection trap: failed unlocks, locks leaked into the pool",
     .make = [] { return make<AdvisorySession>(false, false); }},
    {.spec = "advisory-session:pinned-wait",
     .family = "advisory-session",
     .props = kSessionPinned,
     .teaches = "pinned, waiting for the lock",
     .make = [] { return make<AdvisorySession>(true, true); }},
    {.spec = "advisory-session:pooled-wait",
     .family = "advisory-session",
     .props = kSessionPooled,
     .teaches = "pooled, waiting for the lock",
     .make = [] { return make<AdvisorySession>(false, true); }},
    {.spec = "row-lease",
     .family = "row-lease",
     .in_all = true,
     .family_default = true,
     .props = kRowLease,
     .teaches = "a lease row: no connection held; stolen when the TTL is shorter than the call",
     .make = [] { return make<RowLease>(V::db_clock); }},
    {.spec = "row-lease:app-clock",
     .family = "row-lease",
     .props = kRowLease,
     .teaches = "lease times from the application's clock",
     .make = [] { return make<RowLease>(V::app_clock); }},
    {.spec = "row-lease:fenced",
     .family = "row-lease",
     .props = kRowLease,
     .teaches = "sends a fencing token that an enforcing partner checks",
     .make = [] { return make<RowLease>(V::fenced); }},
    {.spec = "row-lease:article",
     .family = "row-lease",
     .props = kRowLeaseArticle,
     .teaches = "the first article's SQL: mixed clocks and an unowned release",
     .make = [] { return make<RowLease>(V::article); }},
    {.spec = "row-lease:renew",
     .family = "row-lease",
     .props = kRowLeaseRenew,
     .teaches = "extends its lease every TTL/3 during the call (ShedLock's extend): short TTL, no steals",
     .make = [] { return make<RowLease>(V::renew); }},
    {.spec = "row-lease:orm-mapped",
     .family = "row-lease",
     .props = kRowLeaseOrmMapped,
     .teaches = "lock columns mapped in the ORM entity: another save() writes back a stale lock",
     .make = [] { return make<RowLease>(V::orm_mapped); }},
    // Not in --strategy all: a real run needs a Redis (--redis).
    {.spec = "redis-lease",
     .family = "redis-lease",
     .family_default = true,
     .props = kRedisLease,
     .teaches = "SET NX PX in Redis: stolen when the TTL is below the call; the store is unguarded",
     .make = [] { return make<KvLease>(KvLease::Variant::plain); }},
    {.spec = "redis-lease:fenced",
     .family = "redis-lease",
     .props = kRedisLease,
     .teaches = "sends the INCR fencing token; a failover can hand a token out twice",
     .make = [] { return make<KvLease>(KvLease::Variant::fenced); }},
    {.spec = "redis-lease:renew",
     .family = "redis-lease",
     .props = kRedisLeaseRenew,
     .teaches = "extends its lease every TTL/3 during the call (Redisson's watchdog)",
     .make = [] { return make<KvLease>(KvLease::Variant::renew); }},
    // Not in --strategy all: a real run needs an etcd (--etcd).
    {.spec = "etcd-lease",
     .family = "etcd-lease",
     .family_default = true,
     .props = kEtcdLease,
     .teaches = "a txn bound to an etcd lease: stolen when the TTL is below the call; no loss at a leader change",
     .make = [] { return make<KvLease>(KvLease::Variant::plain); }},
    {.spec = "etcd-lease:fenced",
     .family = "etcd-lease",
     .props = kEtcdLease,
     .teaches = "sends the key's mod_revision as the fencing token: it never goes back",
     .make = [] { return make<KvLease>(KvLease::Variant::fenced); }},
    {.spec = "etcd-lease:renew",
     .family = "etcd-lease",
     .props = kEtcdLeaseRenew,
     .teaches = "keeps its lease alive every TTL/3 during the call (an etcd Session's keep-alive)",
     .make = [] { return make<KvLease>(KvLease::Variant::renew); }},
    {.spec = "optimistic",
     .family = "optimistic",
     .in_all = true,
     .family_default = true,
     .props = kOptimistic,
     .teaches = "detects the conflict only after the side effect",
     .make = [] { return make<Optimistic>(); }},
    {.spec = "split-tx",
     .family = "split-tx",
     .in_all = true,
     .family_default = true,
     .props = kSplitTx,
     .teaches = "short transactions around an idempotent call; a reconciler completes what stays pending",
     .make = [] { return make<SplitTx>(true); }},
    {.spec = "split-tx:no-reconcile",
     .family = "split-tx",
     .props = kSplitTx,
     .teaches = "the article's code: an unknown outcome leaves the order pending, charged",
     .make = [] { return make<SplitTx>(false); }},
    {.spec = "after-commit",
     .family = "after-commit",
     .in_all = true,
     .family_default = true,
     .props = kAfterCommit,
     .teaches = "the email after COMMIT: never for a rollback, lost when the pod dies first",
     .make = [] { return make<AfterCommit>(); }},
    {.spec = "outbox",
     .family = "outbox",
     .in_all = true,
     .family_default = true,
     .props = kOutbox,
     .teaches = "order + outbox row in one transaction; pollers deliver at least once, charge once",
     .make = [] { return make<Outbox>(); }},
    {.spec = "synchronized:wait",
     .family = "synchronized",
     .family_default = true,
     .props = kSynchronizedWait,
     .teaches = "an in-process lock per key: excludes within one pod, nothing across pods",
     .make = [] { return make<Synchronized>(true); }},
    {.spec = "synchronized:try",
     .family = "synchronized",
     .props = kSynchronized,
     .teaches = "ReentrantLock.tryLock(): a busy key answers 409 at once, within one pod only",
     .make = [] { return make<Synchronized>(false); }},
};

}  // namespace

std::string_view lease_store_name(LeaseStoreKind k) { return k == LeaseStoreKind::etcd ? "etcd" : "redis"; }

std::string_view exclusion_name(Exclusion e) {
  switch (e) {
    case Exclusion::none: return "none";
    case Exclusion::one_pod: return "one-pod";
    case Exclusion::all_pods: return "all-pods";
  }
  return "?";
}

std::span<const StrategyInfo> strategy_registry() { return kRegistry; }

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

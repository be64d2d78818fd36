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

constexpr StrategyProps kNone{false, Exclusion::none, false, false, false, false};
constexpr StrategyProps kHeldTx{true, Exclusion::all_pods, true, true, false, false, false, LockTableUse::per_connection};
constexpr StrategyProps kAdvisoryXact{true,  Exclusion::all_pods, true,  false, false,
                                      false, false,               LockTableUse::per_connection};
constexpr StrategyProps kSessionPinned{true,  Exclusion::all_pods, true,  false, false,
                                       false, false,               LockTableUse::per_connection};
// Its failed unlocks leave session locks on pooled connections: up to one per key.
constexpr StrategyProps kSessionPooled{false, Exclusion::none, false, false, false, false, false, LockTableUse::per_key};
constexpr StrategyProps kRowLease{false, Exclusion::all_pods, true, true, true, false, false, LockTableUse::none, true};
// The article's lease: the expiry compares the database's clock with the
// application's, and the release clears whoever holds the lease.
constexpr StrategyProps kRowLeaseArticle{false, Exclusion::none, true, true, true, false, false, LockTableUse::none, true};
// The lease, with its columns mapped into the ORM entity: an unrelated save()
// from stale state stomps the lock, so it does not exclude once that path runs.
constexpr StrategyProps kRowLeaseOrmMapped{false, Exclusion::none, true, true, true, false, false, LockTableUse::none, true, true};
constexpr StrategyProps kOptimistic{false, Exclusion::none, false, true, false, false};
constexpr StrategyProps kSplitTx{false, Exclusion::none, false, false, false, true};
constexpr StrategyProps kAfterCommit{false, Exclusion::none, false, false, false, true};
// A poller that dies leaves its claimed row, which is due again after the claim lease.
constexpr StrategyProps kOutbox{false, Exclusion::none, true, false, false, true};
// A lease in Redis: excludes while the TTL holds, the store cannot check it.
constexpr StrategyProps kRedisLease{false, Exclusion::all_pods, true, false, false, false, true, LockTableUse::none, true};
// A lease in etcd: the same guarantees as Redis's, from a store that loses no acknowledged write.
constexpr StrategyProps kEtcdLease{false, Exclusion::all_pods, true,  false, false, false,
                                  true,  LockTableUse::none, true, LeaseStoreKind::etcd};
// An in-process lock: nothing held in the database, gone with its pod.
constexpr StrategyProps kSynchronized{false, Exclusion::one_pod, true, false, false, false};

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

const std::vector<StrategyInfo>& strategy_registry() {
  using V = RowLease::Variant;
  static const std::vector<StrategyInfo> rows = {
      {"none", "none", true, true, kNone, "the race itself", [] { return make<None>(); }},
      {"held-tx:wait", "held-tx", true, true, kHeldTx, "pool exhaustion (@Transactional around HTTP)",
       [] { return make<HeldTx>(false); }},
      {"held-tx:nowait", "held-tx", false, false, kHeldTx, "pool exhaustion; a busy row answers 409 at once",
       [] { return make<HeldTx>(true); }},
      {"advisory-xact:try", "advisory-xact", true, true, kAdvisoryXact,
       "correct exclusion, crash-safe, still pins the pool", [] { return make<AdvisoryXact>(false); }},
      {"advisory-xact:wait", "advisory-xact", false, false, kAdvisoryXact,
       "correct exclusion with a bounded wait (lock_timeout)", [] { return make<AdvisoryXact>(true); }},
      {"advisory-session:pinned", "advisory-session", false, true, kSessionPinned,
       "correct while the connection stays pinned", [] { return make<AdvisorySession>(true, false); }},
      {"advisory-session:pooled", "advisory-session", true, false, kSessionPooled,
       "the pooled-connection trap: failed unlocks, locks leaked into the pool",
       [] { return make<AdvisorySession>(false, false); }},
      {"advisory-session:pinned-wait", "advisory-session", false, false, kSessionPinned,
       "pinned, waiting for the lock", [] { return make<AdvisorySession>(true, true); }},
      {"advisory-session:pooled-wait", "advisory-session", false, false, kSessionPooled,
       "pooled, waiting for the lock", [] { return make<AdvisorySession>(false, true); }},
      {"row-lease", "row-lease", true, true, kRowLease,
       "a lease row: no connection held; stolen when the TTL is shorter than the call",
       [] { return make<RowLease>(V::db_clock); }},
      {"row-lease:app-clock", "row-lease", false, false, kRowLease, "lease times from the application's clock",
       [] { return make<RowLease>(V::app_clock); }},
      {"row-lease:fenced", "row-lease", false, false, kRowLease,
       "sends a fencing token that an enforcing partner checks", [] { return make<RowLease>(V::fenced); }},
      {"row-lease:article", "row-lease", false, false, kRowLeaseArticle,
       "the first article's SQL: mixed clocks and an unowned release", [] { return make<RowLease>(V::article); }},
      {"row-lease:renew", "row-lease", false, false, kRowLease,
       "extends its lease every TTL/3 during the call (ShedLock's extend): short TTL, no steals",
       [] { return make<RowLease>(V::renew); }},
      {"row-lease:orm-mapped", "row-lease", false, false, kRowLeaseOrmMapped,
       "lock columns mapped in the ORM entity: another save() writes back a stale lock",
       [] { return make<RowLease>(V::orm_mapped); }},
      // Not in --strategy all: a real run needs a Redis (--redis).
      {"redis-lease", "redis-lease", false, true, kRedisLease,
       "SET NX PX in Redis: stolen when the TTL is below the call; the store is unguarded",
       [] { return make<RedisLease>(RedisLease::Variant::plain); }},
      {"redis-lease:fenced", "redis-lease", false, false, kRedisLease,
       "sends the INCR fencing token; a failover can hand a token out twice",
       [] { return make<RedisLease>(RedisLease::Variant::fenced); }},
      {"redis-lease:renew", "redis-lease", false, false, kRedisLease,
       "extends its lease every TTL/3 during the call (Redisson's watchdog)",
       [] { return make<RedisLease>(RedisLease::Variant::renew); }},
      // Not in --strategy all: a real run needs an etcd (--etcd).
      {"etcd-lease", "etcd-lease", false, true, kEtcdLease,
       "a txn bound to an etcd lease: stolen when the TTL is below the call; no loss at a leader change",
       [] { return make<EtcdLease>(EtcdLease::Variant::plain); }},
      {"etcd-lease:fenced", "etcd-lease", false, false, kEtcdLease,
       "sends the key's mod_revision as the fencing token: it never goes back",
       [] { return make<EtcdLease>(EtcdLease::Variant::fenced); }},
      {"etcd-lease:renew", "etcd-lease", false, false, kEtcdLease,
       "keeps its lease alive every TTL/3 during the call (an etcd Session's keep-alive)",
       [] { return make<EtcdLease>(EtcdLease::Variant::renew); }},
      {"optimistic", "optimistic", true, true, kOptimistic, "detects the conflict only after the side effect",
       [] { return make<Optimistic>(); }},
      {"split-tx", "split-tx", true, true, kSplitTx,
       "short transactions around an idempotent call; a reconciler completes what stays pending",
       [] { return make<SplitTx>(true); }},
      {"split-tx:no-reconcile", "split-tx", false, false, kSplitTx,
       "the article's code: an unknown outcome leaves the order pending, charged",
       [] { return make<SplitTx>(false); }},
      {"after-commit", "after-commit", true, true, kAfterCommit,
       "the email after COMMIT: never for a rollback, lost when the pod dies first",
       [] { return make<AfterCommit>(); }},
      {"outbox", "outbox", true, true, kOutbox,
       "order + outbox row in one transaction; pollers deliver at least once, charge once",
       [] { return make<Outbox>(); }},
      {"synchronized:wait", "synchronized", false, true, kSynchronized,
       "an in-process lock per key: excludes within one pod, nothing across pods",
       [] { return make<Synchronized>(true); }},
      {"synchronized:try", "synchronized", false, false, kSynchronized,
       "ReentrantLock.tryLock(): a busy key answers 409 at once, within one pod only",
       [] { return make<Synchronized>(false); }},
  };
  return rows;
}

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

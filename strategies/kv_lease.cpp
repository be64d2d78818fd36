// redis-lease and etcd-lease: one strategy, two stores. The lock lives in a
// key-value store beside the database, reached through World::kv_lease_*;
// which store each world opens is the registry row's (StrategyProps::lease_store).
// No connection and no transaction is held during the partner calls. The TTL
// is the crash net, as with row-lease: a lease whose TTL passed is free again,
// even when its owner is only slow (a steal). Unlike row-lease, the store
// cannot check the lease: the lock and the data live in two systems, so a
// holder whose lease expired stores over its successor's work (only the
// release notices: unlock_failures). Only fencing at the resource protects it.
//   Redis: SET lease owner NX PX ttl takes it (with an INCR on the key's
//   counter for a fencing token, in one Lua script); the owner-checked release
//   is one Lua script too (GET == owner ? DEL). After a failover the counter
//   can go back, so a token is handed out twice.
//   etcd: ONE txn bound to a fresh lease (lease/grant first): IF
//   create_revision(lock key) == 0 THEN put lock key = owner with the lease;
//   the key's mod_revision is the fencing token. Release is one txn too (IF
//   value == owner THEN delete), then the lease is revoked. A write is
//   acknowledged by a quorum, so a leader change pauses the store and loses
//   nothing, and the revision only grows: a token is never handed out twice.
//   :fenced  sends the token with every partner call (X-Fencing-Token)
//   :renew   extends the lease every TTL/3 while the partner call runs
//            (Redis: owner-checked PEXPIRE, Redisson's watchdog; etcd:
//            lease/keepalive, the keep-alive of clientv3's concurrency.Session)
#include <exception>
#include <string>

#include "strategies/family.hpp"

namespace lockbench {

// redis-lease and etcd-lease: the same code on the store the registry row names.
class KvLease final : public Strategy {
 public:
  enum class Variant { plain, fenced, renew };
  explicit KvLease(Variant v) : v_(v) {}
  Task<Outcome> run(RequestCtx& cx, Scenario& sc) override;

 private:
  Variant v_;
};

namespace {

// One renewal: the owner-checked PEXPIRE. Runs beside the request, on its own context.
Task<bool> extend_lease(RequestCtx& rc, Key key, const std::string& owner_ref, Duration ttl) {
  const std::string owner = owner_ref;
  const bool ok = co_await rc.world().kv_lease_extend(rc, key, owner, ttl);
  (ok ? rc.locks().renewals : rc.locks().renewal_failures)++;
  co_return ok;  // lost: renewal stops
}

}  // namespace

Task<Outcome> KvLease::run(RequestCtx& cx, Scenario& sc) {
  World& w = cx.world();
  const Duration ttl = cx.settings().lease_ttl;
  const Key key = cx.key();
  const LeaseResult lease = co_await w.kv_lease_acquire(cx, key, cx.owner(), ttl);
  if (!lease.acquired) {
    cx.locks().denied++;
    co_return Outcome::conflict;  // the 409 "another operation is in progress"
  }
  cx.locks().acquired++;
  if (lease.took_over_expired) cx.locks().lease_steals++;
  CallOptions opt;
  if (v_ == Variant::fenced) opt.fencing_token = lease.token;

  Plan plan;
  std::exception_ptr failure;
  {
    ConnHandle c = co_await w.acquire(cx);
    if (!c) {
      co_await w.kv_lease_release(cx, key, cx.owner());
      co_return Outcome::pool_timeout;
    }
    try {
      co_await sc.read(cx, *c, plan);
    } catch (...) {
      failure = std::current_exception();
    }
  }  // connection back to the pool: only the store says we hold the lock
  if (failure || plan.noop) {
    co_await w.kv_lease_release(cx, key, cx.owner());
    if (failure) std::rethrow_exception(failure);
    co_return Outcome::ok;
  }

  std::unique_ptr<Renewal> renewal;
  if (v_ == Variant::renew) {
    const std::string owner = cx.owner();
    renewal = w.keep_renewing(cx, ttl / 3, [key, owner, ttl](RequestCtx& rc) { return extend_lease(rc, key, owner, ttl); });
  }
  Effect effect = Effect::unknown;
  try {
    effect = co_await sc.external(cx, plan, opt);
  } catch (...) {
    failure = std::current_exception();
  }
  if (renewal) co_await renewal->stop();  // before the lease is given back
  if (failure) {
    co_await w.kv_lease_release(cx, key, cx.owner());
    std::rethrow_exception(failure);
  }

  bool stored = false;
  {
    ConnHandle c = co_await w.acquire(cx);
    if (!c) {
      co_await w.kv_lease_release(cx, key, cx.owner());
      co_return Outcome::pool_timeout;
    }
    try {
      // Unguarded: the database knows nothing of the store's lease. A holder whose
      // lease expired writes over the work of the one that took it over.
      if (effect == Effect::done) stored = co_await sc.store(cx, *c, plan, Guard::any());
    } catch (...) {
      failure = std::current_exception();
    }
  }
  // The owner-checked release: another owner (or none) means ours expired
  // while we worked and may have been taken over (the victim's side of a steal).
  if (!co_await w.kv_lease_release(cx, key, cx.owner())) cx.locks().unlock_failures++;
  if (failure) std::rethrow_exception(failure);
  co_return stored ? Outcome::ok : Outcome::error;
}

// The registry row (strategies/family.hpp): its variants, their properties, and the
// words `lockbench explain redis-lease` prints.
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
constexpr StrategyInfo kRedisLeaseVariants[] = {
    // Not in --strategy all: a real run needs a Redis (--redis).
    {.spec = "redis-lease",
     .family = "redis-lease",
     .family_default = true,
     .props = kRedisLease,
     .teaches = "SET NX PX in Redis: stolen when the TTL is below the call; the store is unguarded",
     .make = strategy_maker<KvLease, KvLease::Variant::plain>},
    {.spec = "redis-lease:fenced",
     .family = "redis-lease",
     .props = kRedisLease,
     .teaches = "sends the INCR fencing token; a failover can hand a token out twice",
     .make = strategy_maker<KvLease, KvLease::Variant::fenced>},
    {.spec = "redis-lease:renew",
     .family = "redis-lease",
     .props = kRedisLeaseRenew,
     .teaches = "extends its lease every TTL/3 during the call (Redisson's watchdog)",
     .make = strategy_maker<KvLease, KvLease::Variant::renew>},
};
constexpr StrategyFamily kRedisLeaseFamily{
    .name = "redis-lease",
    .order = 60,
    .words =
        {
            .summary = "a lease in Redis (SET NX PX) with a TTL: the article's alternative, outside the database",
            .how = "SET lock:$k $me NX PX $ttl takes the lease (one Lua script, which also INCRs lock:$k:token for a fencing "
                   "token); nothing is held in PostgreSQL and no connection during the partner calls. Release: one Lua "
                   "script, if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end, so a holder "
                   "never deletes its successor's lease. redis-lease:fenced sends the token with each partner call "
                   "(X-Fencing-Token); redis-lease:renew extends the lease every TTL/3 with an owner-checked PEXPIRE while "
                   "the calls run. In Java: Spring Integration's RedisLockRegistry (obtain(key).tryLock(), unlock(); its "
                   "RenewableLockRegistry.renewLock), or Redisson's RLock, whose watchdog renews a lock taken without a "
                   "leaseTime every lockWatchdogTimeout/3. lockbench runs it against a real redis-server with --redis "
                   "redis://127.0.0.1:PORT (hiredis), and models it in the simulator with a round trip (--redis-latency) and "
                   "a failover (--redis-failover-at, --redis-replication-lag).",
            .fails = "Everything row-lease's TTL does wrong, plus two of its own. The lock and the data live in two systems: "
                     "the store cannot say WHERE lock_owner = $me, so a holder whose lease expired writes over its "
                     "successor's work (only its release notices: unlock_failures). And Redis replicates asynchronously: a "
                     "failover loses the last writes, so a held lease vanishes and a second holder gets in, and the INCR "
                     "counter goes back with it, handing the same fencing token out twice (a partner that refuses only "
                     "tokens below the highest seen lets both through). Fencing tokens from Redis are 'implemented correctly' "
                     "only with a counter that survives failover (WAIT, or the token from the database).",
            .choose = "A Redis is already there, the data it protects is not in one PostgreSQL, or the database must not carry "
                      "lock traffic; with renewal and a short TTL, and fencing the partner enforces.",
            .avoid = "When one PostgreSQL already holds the record: row-lease or advisory-xact excludes with one system fewer, "
                     "and can guard the store itself.",
            .java = R"java(// Spring Integration's RedisLockRegistry (SET key owner NX PX ttl; an owner-checked Lua
// release), or Redisson's RLock with a lease time:
Lock lock = redisLockRegistry.obtain("user-" + userId);
if (!lock.tryLock()) throw new ResponseStatusException(HttpStatus.CONFLICT);
try {
  idp.unlink(identityId);
  idp.link(primaryOf(userId), identityId);
} finally {
  lock.unlock();                                    // fails if the lease expired and moved on
})java",
        },
    .variants = kRedisLeaseVariants};
LOCKBENCH_STRATEGY(kRedisLeaseFamily);

// The registry row (strategies/family.hpp): its variants, their properties, and the
// words `lockbench explain etcd-lease` prints.
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
constexpr StrategyInfo kEtcdLeaseVariants[] = {
    // Not in --strategy all: a real run needs an etcd (--etcd).
    {.spec = "etcd-lease",
     .family = "etcd-lease",
     .family_default = true,
     .props = kEtcdLease,
     .teaches = "a txn bound to an etcd lease: stolen when the TTL is below the call; no loss at a leader change",
     .make = strategy_maker<KvLease, KvLease::Variant::plain>},
    {.spec = "etcd-lease:fenced",
     .family = "etcd-lease",
     .props = kEtcdLease,
     .teaches = "sends the key's mod_revision as the fencing token: it never goes back",
     .make = strategy_maker<KvLease, KvLease::Variant::fenced>},
    {.spec = "etcd-lease:renew",
     .family = "etcd-lease",
     .props = kEtcdLeaseRenew,
     .teaches = "keeps its lease alive every TTL/3 during the call (an etcd Session's keep-alive)",
     .make = strategy_maker<KvLease, KvLease::Variant::renew>},
};
constexpr StrategyFamily kEtcdLeaseFamily{
    .name = "etcd-lease",
    .order = 70,
    .words =
        {
            .summary = "a lease in etcd, a consensus store: redis-lease's lease in a store that loses no acknowledged write",
            .how = "POST /v3/lease/grant {TTL} (whole seconds, at least 1), then one txn: IF create_revision(lock/$k) == 0 "
                   "THEN put lock/$k = $me with that lease; the key's mod_revision (the txn's revision) is the fencing "
                   "token. Release: txn IF value(lock/$k) == $me THEN delete, then POST /v3/lease/revoke. Nothing is held "
                   "in PostgreSQL and no connection during the partner calls. etcd-lease:fenced sends the revision with "
                   "each partner call (X-Fencing-Token); etcd-lease:renew sends POST /v3/lease/keepalive every TTL/3 while "
                   "the calls run. In Java: jetcd's Lease.grant + KV.txn (or its Lock service) and Lease.keepAlive; in Go, "
                   "clientv3/concurrency.NewMutex on a Session. lockbench runs it against a real etcd with --etcd "
                   "http://127.0.0.1:PORT (its v3 JSON gateway over cpp-httplib), and models it in the simulator with a "
                   "round trip (--etcd-latency) and a leader change (--etcd-leader-change-at, --etcd-election).",
            .fails = "Consensus fixes the store, not the lease. A write is acknowledged by a quorum, so a leader change only "
                     "pauses every request until a new leader is elected (leases are not revoked meanwhile and get their "
                     "whole TTL again); nothing is lost and the revision only grows: no lease vanishes and no fencing token "
                     "is handed out twice, unlike a Redis failover. But the TTL is still the crash net: a holder killed with "
                     "-9 frees its key one TTL later, a holder paused past its TTL (SIGSTOP, a GC pause) or slower than it "
                     "loses the lease to the next one and then writes over its successor's work in PostgreSQL (etcd cannot "
                     "guard that store); only fencing at the partner refuses it. Each acquisition costs two round trips "
                     "(grant, txn) through Raft's fsync, and TTLs are whole seconds.",
            .choose = "The lock must survive the loss of a store node, or many services that share no database must agree on "
                      "one holder: an etcd (or a Kubernetes control plane's) already there, with renewal and fencing the "
                      "partner enforces. Choose row-lease when one PostgreSQL holds the record (one system, and the store can "
                      "check the lease); redis-lease when a Redis is already there and losing a lease in a failover is "
                      "tolerable (cheaper and millisecond TTLs); etcd-lease when it is not.",
            .avoid = "When one PostgreSQL already holds the record (row-lease or advisory-xact, one system fewer), or when the "
                     "lock must be taken thousands of times a second per key: every etcd write goes through consensus.",
            .java = R"java(// jetcd: a lease, then a txn that creates the key only if it is absent:
long lease = client.getLeaseClient().grant(ttlSeconds).get().getID();
ByteSequence key = ByteSequence.from("lock/user-" + userId, UTF_8);
TxnResponse t = client.getKVClient().txn()
    .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
    .Then(Op.put(key, me, PutOption.newBuilder().withLeaseId(lease).build()))
    .commit().get();
if (!t.isSucceeded()) throw new ResponseStatusException(HttpStatus.CONFLICT);
long fencingToken = t.getHeader().getRevision();   // the key's mod_revision
try {
  idp.unlink(identityId, fencingToken);
  idp.link(primaryOf(userId), identityId, fencingToken);
} finally {                                         // delete if still ours, then revoke
  client.getKVClient().txn()
      .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.value(me)))
      .Then(Op.delete(key, DeleteOption.DEFAULT)).commit();
  client.getLeaseClient().revoke(lease);
})java",
        },
    .variants = kEtcdLeaseVariants};
LOCKBENCH_STRATEGY(kEtcdLeaseFamily);

}  // namespace lockbench

// The texts are data, kept next to each other so they read as one comparison.
// They describe PostgreSQL's behaviour; strategies/ holds the code they describe.
#include "report/explain.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "base/units.hpp"
#include "strategies/registry.hpp"

namespace lockbench::report {

namespace {

// The words of one family; its variants and properties come from the registry
// (strategies/registry.cpp), so a strategy without words here fails a test.
struct Strategy {
  std::string name;                   // the family
  std::string summary;                // one line for the list
  std::string how;
  std::string fails;
  std::string choose;
  std::string avoid;
};

const std::vector<Strategy>& strategies() {
  static const std::vector<Strategy> all = {
      {"none",
       "no exclusion: the baseline that shows the double-link race itself",
       "Nothing is locked. Each request reads the user's current primary identity, calls the partner to unlink "
       "the target identity and to link the old primary under it, then stores the new primary. A pooled "
       "connection is borrowed only for the short reads and writes, never during the partner calls.",
       "Two requests for the same person (a double click, a client retry, two tabs) run their unlink/link calls "
       "at the same time. The partner applies both, in whatever order they arrive: the person can end up split "
       "over two users, with the wrong primary, or with an identity lost. Nothing fails loudly; the local "
       "database cannot see it. The partner's oracle counts it as overlap_person, flow_interleaving, "
       "person_split and lost_promotion.",
       "Only as the measurement baseline, or when the partner operation is itself atomic and idempotent.",
       "Whenever two requests for one key can overlap and the external operation has more than one step."},
      {"held-tx",
       "@Transactional around the HTTP call: correct exclusion, pool exhaustion",
       "BEGIN; SELECT ... FROM users WHERE id = $1 FOR UPDATE; then the partner calls; then UPDATE ...; COMMIT. "
       "The row lock is held until COMMIT, so the connection stays checked out of the pool and sits 'idle in "
       "transaction' for the whole partner call. Variant wait: a second request for the same row blocks in "
       "FOR UPDATE (bounded by lock_timeout) while holding its own connection. Variant nowait: FOR UPDATE "
       "NOWAIT fails at once with SQLSTATE 55P03 (lock_not_available), which the service returns as 409.",
       "Every request holds a pooled connection for the partner time. Little's law caps throughput at "
       "pool size / hold time (10 connections, 1.5 s hold: 6.6 requests/s); above that requests queue for a "
       "connection, fail after connectionTimeout and starve the health check, so pods are marked unready. With "
       "wait, blocked requests hold connections too, so one hot key can drain the whole pool. Long open "
       "transactions also hold back VACUUM's xmin horizon, and idle_in_transaction_session_timeout, if set, "
       "kills the session and rolls back the local write after the partner effect already happened. A crashed "
       "service is cleaned up: when its session ends PostgreSQL rolls back and frees the row (a silently dead "
       "client needs TCP keepalives before the server notices). Work before the first SQL (--pre-sql-work: "
       "validation, a call made before any statement) is held time too: Spring takes the connection when the "
       "transaction starts, unless spring.jpa.properties.hibernate.connection.provider_disables_autocommit=true "
       "with spring.datasource.hikari.auto-commit=false (--delay-connection-acquisition on) lets Hibernate take it "
       "at the first statement; the hold then shrinks by that work, and the ceiling grows by Little's law.",
       "When the critical section only talks to the database, or the external call is fast and bounded and "
       "the pool has headroom: rate x hold time well below the pool size.",
       "Around slow or retried HTTP calls. It also needs the row to exist: it cannot protect a record that is "
       "not there yet."},
      {"advisory-xact",
       "transaction-scoped advisory lock: correct and crash-safe, still pins the pool",
       "BEGIN; SELECT pg_try_advisory_xact_lock(k) (variant try: returns false at once when another "
       "transaction holds k, answered as 409) or SET LOCAL lock_timeout via set_config('lock_timeout', ..., "
       "true) and SELECT pg_advisory_xact_lock(k) (variant wait: blocks, up to lock_timeout, then SQLSTATE "
       "55P03). The lock lives until COMMIT or ROLLBACK; pg_advisory_unlock cannot release it early. The key k "
       "is any 64-bit number (or two 32-bit ones), so it can protect a record that does not exist yet.",
       "The transaction, and so the pooled connection, stays open for the whole partner call: the same "
       "Little's-law ceiling and pool exhaustion as held-tx. Keys share one namespace per database, so two "
       "features hashing to the same number block each other, and so do two keys of one feature when the hash "
       "is narrow: with --key-hash hashtext-32 (pg_advisory_xact_lock(hashtext(key)), 32 bits) the ids 70606 and "
       "156495 share one lock, and a request of one is refused while the other holds it (locks.false_conflicts); "
       "sha256-64 (the article's first 8 bytes of SHA-256) and int-id keep them apart. Over uniform traffic a "
       "request meets a false conflict with probability about (locks held at once) / 2^32, whatever the key "
       "count once it passes about 10^5 (docs/explanation/key-hashing.md). Locks live in the shared lock table sized by "
       "max_locks_per_transaction x max_connections. It works through PgBouncer in transaction pooling mode, "
       "because the transaction pins the server connection. Crash-safe: a dead session's transaction is "
       "rolled back and its locks are freed.",
       "DB-only critical sections, or short external calls with pool headroom; when the key has no row.",
       "When the critical section contains a slow or retried HTTP call and the pool cannot absorb it."},
      {"advisory-session",
       "session-scoped advisory lock: the pooled-connection trap",
       "SELECT pg_advisory_lock(k) or pg_try_advisory_lock(k) outside a transaction, the partner calls, then "
       "SELECT pg_advisory_unlock(k). The lock belongs to the database session (the physical connection), "
       "not to a transaction. Variant pinned: the request keeps the same connection from lock to unlock "
       "(not idle in transaction, but still checked out). Variant pooled: the connection goes back to the pool "
       "during the partner call and the unlock runs on whatever connection the pool hands out next. Without "
       "-wait the lock is tried once (pg_try_advisory_lock: busy means 409); the -wait forms wait for it under "
       "lock_timeout.",
       "Pinned: the same pool ceiling as held-tx, without the long transaction. Pooled: the unlock usually runs "
       "on another session, so pg_advisory_unlock returns false with the warning 'you don't own a lock of type "
       "ExclusiveLock' (counted as unlock_failures); the lock stays on the first connection, which sits in the "
       "pool holding it (leaked) until that connection is closed (maxLifetime). Session locks are re-entrant: "
       "any later request that borrows that connection acquires the key again without waiting, so exclusion "
       "breaks for it while every other connection is denied. PgBouncer in transaction mode breaks session "
       "locks the same way. A crashed service frees its locks only when its sessions end. "
       "Behind PgBouncer with pool_mode = transaction (lockbench run --pgbouncer transaction), even pinned "
       "breaks: the pool's connection is only a client of PgBouncer, which lends a server backend per "
       "transaction or autocommitted statement. The lock taken by client A stays on backend X; the next client "
       "handed X acquires it again at once (counted as handed_to_stranger), A's unlock runs on another backend "
       "and fails, and the lock outlives both clients, in PgBouncer's pool. A lock wait keeps its backend, so "
       "under load waiters can hold every backend and everything else queues in PgBouncer until lock_timeout. "
       "Measured with 10 pooled connections on 4 backends (results/pgbouncer-real, 5 s at 20 requests/s): "
       "pinned and pooled let 37 and 33 promotions overlap and leaked 15 and 12 locks, while advisory-xact and "
       "row-lease stayed at 0 violations; the simulator models the same (sim/bouncer.hpp).",
       "Pinned: a dedicated connection outside the pool (a leader-election or a batch job). Never pooled.",
       "With any connection pool or transaction-mode PgBouncer between the code and the database."},
      {"row-lease",
       "a lease in a row (locked_at, lock_owner) with a TTL: the first article's pattern, done carefully",
       "UPDATE users SET locked_at = now(), lock_owner = $me WHERE id = $k AND (locked_at IS NULL OR locked_at "
       "< now() - $ttl), in autocommit: one affected row means the lease is held, zero means someone else holds "
       "it (409). Concurrent UPDATEs on one row serialize on the row lock; the second re-checks the WHERE "
       "against the committed row and matches nothing. The connection goes back to the pool before the partner "
       "calls. Release: UPDATE ... SET locked_at = NULL WHERE id = $k AND lock_owner = $me. Times come from the "
       "database's clock, so service clocks do not matter; row-lease:app-clock computes them with the service's "
       "own clock instead, and then clock skew between services moves the expiry. row-lease:fenced also bumps "
       "a lease_token column on every acquisition and sends it with each partner call (X-Fencing-Token), so a "
       "partner that remembers the highest token seen can refuse the calls of a holder whose lease was taken "
       "over. The result is stored only while the lease is still ours (UPDATE ... WHERE id = $k AND lock_owner = "
       "$me: 0 rows = the lease was lost, counted as lease_lost, nothing stored). row-lease:article is the first "
       "article's exact SQL: locked_at = NOW() from the database's clock, compared with :staleBefore computed "
       "from the application's clock, an unconditional store and a release WHERE id = $k with no owner check. "
       "The same idea as ShedLock's JDBC provider (lockAtMostFor is the TTL; usingDbTime() is the database-clock "
       "form). Renewal: row-lease:renew keeps the TTL short and extends the lease while the partner calls run, "
       "every TTL/3, with UPDATE ... SET locked_at = now() WHERE id = $k AND lock_owner = $me AND locked_at >= "
       "now() - $ttl on a connection borrowed from the pool each time (ShedLock's extendable locks, "
       "KeepAliveLockProvider; Spring Integration's RenewableLockRegistry.renewLock on a JdbcLockRegistry). A "
       "crashed holder then frees the key about one TTL after its last renewal, and a merely slow call is never "
       "stolen; but a holder that cannot renew (a GC pause, a frozen pod, a renewal stuck waiting for the pool) "
       "still loses its lease after one TTL while it keeps working, so fencing still matters. Each renewal is "
       "one statement and one pool borrow: holders x 3 / TTL statements per second (locks.renewals). "
       "row-lease:orm-mapped runs the same SQL, but the lock columns are also fields of the ORM entity, which "
       "the article warns against: another code path (a profile edit, a last-login stamp; --orm-writer-rate, "
       "--orm-writer-gap) loads the entity, does its own work, and save()s it, and the ORM writes back every "
       "mapped field, the locked_at and lock_owner it loaded included.",
       "The TTL is a guess: when a live request's partner calls (retries and backoff included) outlast it, the "
       "next request steals the lease and the two race exactly as with none (counted as lease_steals). A "
       "crashed service leaves the key locked until the TTL passes. A failed release leaves it locked until the "
       "TTL too, after the effect happened. row-lease:article makes it worse: a holder that outlived its TTL "
       "releases the lease of the request that stole it (no owner check), so a third request enters while the "
       "second still works, and its store overwrites the thief's. It needs the row to exist (it cannot protect "
       "a first claim or a new order), needs columns the ORM must never write, and is advisory: any code path "
       "that ignores it is not excluded. row-lease:orm-mapped shows the columns written: a save() that lands "
       "inside a lease writes back the stale lock (NULL, or an old owner), a third request takes the lease and "
       "enters while the holder still calls the partner (overlap_person; side_traffic.lock_stomps counts the "
       "saves that changed the lock), and the holder's owner-checked store then finds the lease gone "
       "(lease_lost). The same second code path against row-lease, whose entity does not map the lock, writes "
       "its own column only and leaves the lease alone.",
       "Slow external calls on a bounded pool, with one PostgreSQL as the source of truth: size the TTL above "
       "the worst-case call window (lockbench lint computes it).",
       "When the worst case of the external calls is unbounded, or a stolen lease is unacceptable: then add "
       "fencing tokens the partner enforces (row-lease:fenced; note that a two-call promotion can still be cut "
       "in half when its second call is refused), or an idempotent partner operation."},
      {"redis-lease",
       "a lease in Redis (SET NX PX) with a TTL: the article's alternative, outside the database",
       "SET lock:$k $me NX PX $ttl takes the lease (one Lua script, which also INCRs lock:$k:token for a fencing "
       "token); nothing is held in PostgreSQL and no connection during the partner calls. Release: one Lua "
       "script, if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end, so a holder "
       "never deletes its successor's lease. redis-lease:fenced sends the token with each partner call "
       "(X-Fencing-Token); redis-lease:renew extends the lease every TTL/3 with an owner-checked PEXPIRE while "
       "the calls run. In Java: Spring Integration's RedisLockRegistry (obtain(key).tryLock(), unlock(); its "
       "RenewableLockRegistry.renewLock), or Redisson's RLock, whose watchdog renews a lock taken without a "
       "leaseTime every lockWatchdogTimeout/3. lockbench runs it against a real redis-server with --redis "
       "redis://127.0.0.1:PORT (hiredis), and models it in the simulator with a round trip (--redis-latency) and "
       "a failover (--redis-failover-at, --redis-replication-lag).",
       "Everything row-lease's TTL does wrong, plus two of its own. The lock and the data live in two systems: "
       "the store cannot say WHERE lock_owner = $me, so a holder whose lease expired writes over its "
       "successor's work (only its release notices: unlock_failures). And Redis replicates asynchronously: a "
       "failover loses the last writes, so a held lease vanishes and a second holder gets in, and the INCR "
       "counter goes back with it, handing the same fencing token out twice (a partner that refuses only "
       "tokens below the highest seen lets both through). Fencing tokens from Redis are 'implemented correctly' "
       "only with a counter that survives failover (WAIT, or the token from the database).",
       "A Redis is already there, the data it protects is not in one PostgreSQL, or the database must not carry "
       "lock traffic; with renewal and a short TTL, and fencing the partner enforces.",
       "When one PostgreSQL already holds the record: row-lease or advisory-xact excludes with one system fewer, "
       "and can guard the store itself."},
      {"etcd-lease",
       "a lease in etcd, a consensus store: redis-lease's lease in a store that loses no acknowledged write",
       "POST /v3/lease/grant {TTL} (whole seconds, at least 1), then one txn: IF create_revision(lock/$k) == 0 "
       "THEN put lock/$k = $me with that lease; the key's mod_revision (the txn's revision) is the fencing "
       "token. Release: txn IF value(lock/$k) == $me THEN delete, then POST /v3/lease/revoke. Nothing is held "
       "in PostgreSQL and no connection during the partner calls. etcd-lease:fenced sends the revision with "
       "each partner call (X-Fencing-Token); etcd-lease:renew sends POST /v3/lease/keepalive every TTL/3 while "
       "the calls run. In Java: jetcd's Lease.grant + KV.txn (or its Lock service) and Lease.keepAlive; in Go, "
       "clientv3/concurrency.NewMutex on a Session. lockbench runs it against a real etcd with --etcd "
       "http://127.0.0.1:PORT (its v3 JSON gateway over cpp-httplib), and models it in the simulator with a "
       "round trip (--etcd-latency) and a leader change (--etcd-leader-change-at, --etcd-election).",
       "Consensus fixes the store, not the lease. A write is acknowledged by a quorum, so a leader change only "
       "pauses every request until a new leader is elected (leases are not revoked meanwhile and get their "
       "whole TTL again); nothing is lost and the revision only grows: no lease vanishes and no fencing token "
       "is handed out twice, unlike a Redis failover. But the TTL is still the crash net: a holder killed with "
       "-9 frees its key one TTL later, a holder paused past its TTL (SIGSTOP, a GC pause) or slower than it "
       "loses the lease to the next one and then writes over its successor's work in PostgreSQL (etcd cannot "
       "guard that store); only fencing at the partner refuses it. Each acquisition costs two round trips "
       "(grant, txn) through Raft's fsync, and TTLs are whole seconds.",
       "The lock must survive the loss of a store node, or many services that share no database must agree on "
       "one holder: an etcd (or a Kubernetes control plane's) already there, with renewal and fencing the "
       "partner enforces. Choose row-lease when one PostgreSQL holds the record (one system, and the store can "
       "check the lease); redis-lease when a Redis is already there and losing a lease in a failover is "
       "tolerable (cheaper and millisecond TTLs); etcd-lease when it is not.",
       "When one PostgreSQL already holds the record (row-lease or advisory-xact, one system fewer), or when the "
       "lock must be taken thousands of times a second per key: every etcd write goes through consensus."},
      {"optimistic",
       "version check at the end: detects the conflict after the side effect",
       "Read the row's version, do the partner calls, then UPDATE ... SET version = version + 1 WHERE id = $k "
       "AND version = $v. Zero rows updated means another request wrote first (version_conflicts). No lock and "
       "no connection is held during the partner calls.",
       "It detects, it does not prevent: both requests have already called the partner when the second one "
       "learns of the conflict, so the external state is corrupted exactly as with none; only the local write "
       "is refused. Compensating the partner afterwards is the caller's problem.",
       "Local edits where losing the race only costs a retry; as a second line of defence next to a lease.",
       "As the only protection around a non-idempotent external side effect."},
      {"split-tx",
       "the @Transactional article's fix: short transactions around an idempotent call",
       "Spring's TransactionTemplate instead of @Transactional around the whole method. Transaction 1: INSERT "
       "the order as PAYMENT_PENDING and COMMIT (a few milliseconds). Then the charge, with no connection held, "
       "under the Idempotency-Key checkout-order-<id>. Transaction 2: UPDATE the order to PAID with the charge "
       "id, or to FAILED when the partner refused the charge for certain. Both transactions are idempotent, so a "
       "lost connection or a failed COMMIT is retried on a fresh connection. When the outcome is unknown (every "
       "attempt timed out) or the pod dies between the charge and transaction 2, the order stays "
       "PAYMENT_PENDING: transaction 1 also wrote a reconciliation row, transaction 2 settles it, and background "
       "reconcilers (--outbox-pollers per pod) re-drive the rows still due with the same key, so the partner "
       "replays the first charge instead of making a second one and the order ends PAID.",
       "It does not exclude: two submissions of one order both call the partner, and only the idempotency key "
       "makes the second one a replay (409 idempotency_key_in_use while the first is in flight, retried). "
       "split-tx:no-reconcile is the article's code as written: an unknown outcome or a crash after the charge "
       "leaves the order pending while the money is taken (orphan_charge), until someone reconciles it by hand. "
       "It applies only where the partner takes an idempotency key (payments), not to the identity API's "
       "two-call promotion.",
       "A slow payment-style call whose provider honours idempotency keys: the pool is held for milliseconds, "
       "not for the call.",
       "When the external operation has several steps that must not interleave (switch-primary): use a lock."},
      {"after-commit",
       "@TransactionalEventListener(AFTER_COMMIT): the confirmation email after the order committed",
       "The payment runs as split-tx. The transaction that marks the order PAID publishes an OrderPaid event; "
       "Spring holds it until the COMMIT returned and then calls the listener, which sends the confirmation "
       "email with no connection and no transaction. A rolled-back order (a failed COMMIT, a lost connection) "
       "never gets an email: the listener only runs after a successful commit.",
       "The event lives only in the pod's memory. A pod that dies between the COMMIT and the listener's send "
       "(a crash, a kill -9, a deploy) loses the email of an order that is PAID, and nothing retries it: the "
       "result counts emails.lost (orders whose PAID commit returned without an email). The payment itself "
       "keeps split-tx's weakness: a crash between the charge and the PAID commit leaves an orphan_charge.",
       "For a side effect you can afford to lose now and then (a notification, an audit event, a cache "
       "eviction): it costs nothing on the request's path and never fires for a rolled-back change.",
       "For anything that must happen: the money, a ledger entry, a message another system relies on. Use the "
       "outbox."},
      {"outbox",
       "the transactional outbox: order and outbox row in one transaction, pollers deliver at least once",
       "The request INSERTs the order PAYMENT_PENDING and an outbox row in one short transaction and answers at "
       "once: no partner call on the request's path. Background pollers (--outbox-pollers per pod) claim due "
       "rows with SELECT ... FOR UPDATE SKIP LOCKED (pollers on every pod skip each other's rows instead of "
       "waiting), move the row's due time past a claim lease and commit, call the partner with the "
       "Idempotency-Key checkout-order-<id> and no connection held, then mark the order PAID and the row SENT "
       "in one transaction. An unknown outcome (timeout, 5xx, outage) reschedules the row with exponential "
       "backoff; a poller that dies leaves its row claimed until the lease ends, then another one redelivers "
       "it. At least once, and the key makes it charge once.",
       "The customer's answer no longer says \"paid\": it says \"accepted\", and the charge follows after the "
       "delivery lag (outbox.lag_ms: p50, p99, max), which grows with the partner's latency, its outages and "
       "too few pollers (each poller delivers one row per partner call: pollers x pods must exceed rate x call "
       "time). Rows left when --outbox-drain-limit ends the run are outbox.undelivered. Without the "
       "idempotency key a redelivery after a lost mark would charge twice.",
       "A critical integration that must happen exactly once in effect and may happen later: payments, "
       "ERP/CRM sync, events to Kafka. The pool is held for milliseconds and the request path never waits for "
       "the partner.",
       "When the user must see the partner's answer before the request returns, or the partner takes no "
       "idempotency key (then deduplicate at the receiver)."},
      {"synchronized",
       "an in-process lock per key (Java's synchronized): excludes within one pod, nothing across pods",
       "In Java: synchronized (key.intern()) { ... }, or a ConcurrentHashMap<String, ReentrantLock> with "
       "lock.lock() (variant wait, bounded here by --lock-timeout as tryLock(timeout, MILLISECONDS) would be) or "
       "lock.tryLock() (variant try: busy answers 409), and unlock() in finally. The lock table lives in the "
       "pod's memory: no SQL, no connection held during the partner calls, and a crashed pod's locks vanish "
       "with it. The key is the scenario's lock key (the hashed business string for reward-claim).",
       "Each pod has its own lock table, so two requests for one key that a load balancer sends to different "
       "pods never see each other's lock: with --pods 2 they run their critical sections at once, exactly as "
       "with none (a payout webhook delivered twice pays out twice: overdrawn; two reward claims credit twice: "
       "duplicate_reward). With --pods 1 it is correct, which is why it passes every single-instance test and "
       "fails in production behind a second replica.",
       "A single-instance service, or to spare the database work inside one pod in front of a lock that spans "
       "pods (advisory-xact, row-lease).",
       "As the only protection in any service that runs more than one instance (Kubernetes replicas, blue/green "
       "deploys, autoscaling)."},
  };
  return all;
}

// The Spring/Java shape of each family, shown beside its SQL: what the code a
// reviewer meets in a service looks like. Printed as written (a code block),
// each line under 100 columns. A family of the registry without one fails a test.
const std::vector<std::pair<std::string_view, std::string_view>>& java_shapes() {
  static const std::vector<std::pair<std::string_view, std::string_view>> all = {
      {"none", R"java(public void switchPrimary(long userId, String identityId) {
  User u = users.findById(userId).orElseThrow();    // a short read; the connection goes back
  idp.unlink(identityId);                           // the partner calls: nothing held,
  idp.link(u.getPrimaryIdentity(), identityId);     // nothing excluded
  users.updatePrimary(userId, identityId);          // a short write
})java"},
      {"held-tx", R"java(@Transactional   // the connection is checked out here and kept until COMMIT
public void switchPrimary(long userId, String identityId) {
  User u = users.findByIdForUpdate(userId);         // @Lock(PESSIMISTIC_WRITE): SELECT ... FOR UPDATE
  idp.unlink(identityId);                           // the partner calls, idle in transaction
  idp.link(u.getPrimaryIdentity(), identityId);
  u.setPrimaryIdentity(identityId);                 // UPDATE at COMMIT, when the method returns
}
// nowait: @QueryHints(@QueryHint(name = "jakarta.persistence.lock.timeout", value = "0"))
// on findByIdForUpdate makes Hibernate send FOR UPDATE NOWAIT (55P03 -> 409))java"},
      {"advisory-xact", R"java(@Transactional
public void switchPrimary(long userId, String identityId) {
  Boolean got = jdbc.queryForObject("SELECT pg_try_advisory_xact_lock(?)", Boolean.class, userId);
  if (!got) throw new ResponseStatusException(HttpStatus.CONFLICT);          // :try
  // :wait: jdbc.queryForObject("SELECT set_config('lock_timeout', '5s', true)", String.class);
  //        jdbc.queryForList("SELECT pg_advisory_xact_lock(?)", userId);
  idp.unlink(identityId);                           // the transaction and its connection stay open
  idp.link(primaryOf(userId), identityId);
  users.updatePrimary(userId, identityId);
}                                                   // COMMIT (or ROLLBACK) releases the key)java"},
      {"advisory-session", R"java(// :pooled: every JdbcTemplate call borrows a HikariCP connection and gives it back
public void switchPrimary(long userId, String identityId) {
  Boolean got = jdbc.queryForObject("SELECT pg_try_advisory_lock(?)", Boolean.class, userId); // conn A
  if (!got) throw new ResponseStatusException(HttpStatus.CONFLICT);
  try {
    idp.unlink(identityId);
    idp.link(primaryOf(userId), identityId);
    users.updatePrimary(userId, identityId);
  } finally {
    jdbc.queryForObject("SELECT pg_advisory_unlock(?)", Boolean.class, userId); // conn B: false,
  }                                                 // the lock stays on A, idle in the pool
}
// :pinned: try (Connection c = dataSource.getConnection()) { lock, calls, unlock, all on c })java"},
      {"row-lease", R"java(// ShedLock's JDBC provider keeps the same lease in a row (lock_until, locked_by):
@Bean
LockProvider lockProvider(DataSource dataSource) {
  return new JdbcTemplateLockProvider(JdbcTemplateLockProvider.Configuration.builder()
      .withJdbcTemplate(new JdbcTemplate(dataSource))
      .usingDbTime()     // the database's clock, as row-lease; without it the app's (:app-clock)
      .build());
}
public void switchPrimary(long userId, String identityId) {
  TaskResult<Void> r = executor.executeWithLock(() -> { promote(userId, identityId); return null; },
      new LockConfiguration(Instant.now(), "user-" + userId,
          Duration.ofSeconds(30),   // lockAtMostFor: the TTL, after which another holder may enter
          Duration.ZERO));          // lockAtLeastFor
  if (!r.wasExecuted()) throw new ResponseStatusException(HttpStatus.CONFLICT);
}
// The lock columns stay out of the entity. row-lease:orm-mapped maps them,
//   @Column Instant lockedAt; @Column String lockOwner;   // on @Entity User
// and then an unrelated users.save(user) (a profile edit, a last-login stamp)
// writes back the lockedAt/lockOwner it loaded: Hibernate's UPDATE sets every
// mapped column (without @DynamicUpdate), and a third request takes the lease.)java"},
      {"optimistic", R"java(@Entity
class User {
  @Id Long id;
  @Version long version;                            // Hibernate adds AND version = ? to the UPDATE
  String primaryIdentity;
}
public void switchPrimary(long userId, String identityId) {
  User u = users.findById(userId).orElseThrow();    // a short transaction reads version v
  idp.unlink(identityId);                           // no lock, no connection: the effects happen
  idp.link(u.getPrimaryIdentity(), identityId);
  u.setPrimaryIdentity(identityId);
  users.save(u);   // UPDATE ... SET version = v + 1 WHERE id = ? AND version = v; 0 rows:
}                  // ObjectOptimisticLockingFailureException (409), after the partner calls)java"},
      {"split-tx", R"java(public void checkout(Order o) {
  long id = tx.execute(s -> orders.insertPending(o));           // TransactionTemplate: COMMIT now
  Charge c = Charge.create(params(o),                            // no connection held
      RequestOptions.builder().setIdempotencyKey("checkout-order-" + id).build());
  tx.executeWithoutResult(s -> orders.markPaid(id, c.getId())); // a second short transaction
}
@Scheduled(fixedDelay = 1000)   // the reconciler: orders left PAYMENT_PENDING, charged again with
void reconcile() { ... }        // the same key, which the provider answers as a replay)java"},
      {"after-commit", R"java(@Transactional
public void markPaid(long orderId, String chargeId) {
  orders.markPaid(orderId, chargeId);
  events.publishEvent(new OrderPaid(orderId));      // held by Spring until the COMMIT returns
}
@TransactionalEventListener(phase = TransactionPhase.AFTER_COMMIT)
void onPaid(OrderPaid e) {
  mail.sendConfirmation(e.orderId());               // only in this pod's memory: a pod that dies
}                                                   // between COMMIT and here loses the email)java"},
      {"outbox", R"java(@Transactional
public long checkout(Order o) {
  long id = orders.insertPending(o);
  outbox.insert(id, "checkout-order-" + id);        // the same transaction as the order
  return id;                                        // answered at once: "accepted"
}
@Scheduled(fixedDelay = 100)   // per poller; Spring Modulith's event publication registry is alike
void deliver() {
  Row r = tx.execute(s -> outbox.claimOne());   // SELECT ... FOR UPDATE SKIP LOCKED, due_at moved
  if (r == null) return;                        // past a claim lease, COMMIT
  Charge c = Charge.create(params(r), RequestOptions.builder()
      .setIdempotencyKey(r.key()).build());     // no connection held; retried with backoff
  tx.executeWithoutResult(s -> {
    orders.markPaid(r.orderId(), c.getId());
    outbox.markSent(r.id());
  });
})java"},
      {"synchronized", R"java(private final ConcurrentHashMap<Long, ReentrantLock> locks = new ConcurrentHashMap<>();

public void payout(long accountId) throws InterruptedException {
  ReentrantLock lock = locks.computeIfAbsent(accountId, k -> new ReentrantLock());
  if (!lock.tryLock(5, TimeUnit.SECONDS))            // :try is lock.tryLock()
    throw new ResponseStatusException(HttpStatus.CONFLICT);
  try {
    payoutOnce(accountId);                           // read, partner call, write
  } finally {
    lock.unlock();                                   // this JVM's map: pod 2 has its own
  }
})java"},
      {"etcd-lease", R"java(// jetcd: a lease, then a txn that creates the key only if it is absent:
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
})java"},
      // For the redis-lease family (issue 15), when it is registered.
      {"redis-lease", R"java(// Spring Integration's RedisLockRegistry (SET key owner NX PX ttl; an owner-checked Lua
// release), or Redisson's RLock with a lease time:
Lock lock = redisLockRegistry.obtain("user-" + userId);
if (!lock.tryLock()) throw new ResponseStatusException(HttpStatus.CONFLICT);
try {
  idp.unlink(identityId);
  idp.link(primaryOf(userId), identityId);
} finally {
  lock.unlock();                                    // fails if the lease expired and moved on
})java"},
  };
  return all;
}

// A code block under a two-space indent, fenced as Markdown does.
std::string code_block(std::string_view code) {
  std::string out = "  ```java\n";
  std::size_t start = 0;
  while (start <= code.size()) {
    const std::size_t end = std::min(code.find('\n', start), code.size());
    out += "  " + std::string(code.substr(start, end - start)) + "\n";
    start = end + 1;
  }
  return out + "  ```\n";
}

// Paragraphs wrapped at 100 columns with a two-space indent: terminals and
// pasted design notes both read better than one 600-character line.
std::string wrap(const std::string& text) {
  constexpr std::size_t width = 100;
  std::string out = "  ", word;
  std::size_t column = 2;
  auto flush = [&] {
    if (word.empty()) return;
    if (column > 2 && column + 1 + word.size() > width) {
      out += "\n  ";
      column = 2;
    } else if (column > 2) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    word.clear();
  };
  for (char c : text) {
    if (c == ' ') flush();
    else word += c;
  }
  flush();
  return out + "\n";
}

const Strategy& words_of(std::string_view family) {
  for (const auto& st : strategies())
    if (st.name == family) return st;
  throw std::logic_error("explain has no text for the strategy family '" + std::string(family) + "'");
}

std::string yes_no(bool b) { return b ? "yes" : "no"; }

}  // namespace

// Every lock is advisory to a writer that does not take it (--bypass-share).
static std::string bypass_text() {
  return "A writer that ignores the lock (an admin job, a second service, a script; --bypass-share S makes "
         "that share of requests run the scenario's read, partner calls and store with no lock) is not "
         "excluded by any strategy here: measured on switch-primary (docs/explanation/other-writers.md), every "
         "one shows overlap_person, the fenced leases with --fencing enforce included, because the bypass sends "
         "no fencing token and an enforcing partner compares the tokens it is given. Only what the bypass cannot "
         "skip protects against it: a database constraint the write itself meets, or a partner that refuses a "
         "mutation without a current token.";
}

// A lock can hold and two calls still overlap at the partner: the oracle's overlap_abandoned.
static std::string abandoned_call_text() {
  return "When the partner's read timeout (--partner-read-timeout) is shorter than the partner's work, the "
         "client gives up on a call that keeps running at the partner; after its last attempt the request "
         "fails and releases the lock, and the next holder's call arrives while the abandoned one is still "
         "running. The lock held: the oracle counts this as overlap_abandoned (a note, not overlap_person), "
         "told apart by the attempt's timeout the client sends (X-Client-Timeout-Ms). The abandoned call may "
         "still apply its effect later; a person it leaves split or with a lost promotion is counted as "
         "abandoned_effect (an effect the service has no record of), not as person_split. The fix is an idempotency key (the retry and the next holder's call "
         "become one effect) or a fencing token the partner enforces, not another lock; a read timeout above "
         "the partner's worst case also ends it.";
}

// Kubernetes' probes and the restart cascade (sim/kubelet.cpp, docs/how-to/probes-and-recovery.md).
static std::string probes_text() {
  return "probes — Kubernetes' readiness and liveness probes, and the restart cascade\n\n" +
         wrap("Spring Boot's /actuator/health includes the db health indicator: it borrows a connection from the pool "
              "and runs a validation query. A readiness probe on it takes a pod out of the load balancer after "
              "failureThreshold failures in a row (its requests go to the other pods; with none ready the load "
              "balancer answers 503), and brings it back after successThreshold successes. A liveness probe on it "
              "gets the pod killed after failureThreshold failures: its requests in flight are lost, its "
              "connections dropped, its transaction and session locks released with them (leases stay until "
              "their TTL), and kubelet starts it again after its back-off (10 s, 20 s, ... at most 5 minutes), "
              "cold, with an empty pool.") +
         "\n" +
         wrap("The cascade: a strategy that holds a pooled connection through a slow partner call dries the pool "
              "(Little's law: pool / hold). The probe waits for a connection like every request, times out, and "
              "fails; readiness pulls the pod, so its share of the load moves to the others and dries theirs; "
              "liveness kills it, and the restarted pod meets the same queue. A strategy that holds nothing "
              "during the call keeps its pool free for the probe and is never restarted. A liveness probe that "
              "does not check the database (/actuator/health/liveness, the default group when "
              "management.endpoint.health.probes.enabled=true) does not kill a pod for a dry pool; readiness "
              "may still pull it.") +
         "\n" +
         wrap("Mitigations in the client: a circuit breaker (--circuit-breaker, resilience4j's names) that opens "
              "on failed or slow calls fails requests at once, so their transactions end and their connections "
              "go back: the pool stays free for the probe and no pod is killed. It costs what a fail-fast costs, "
              "and in a flow of two calls (unlink, then link) a breaker that opens between them leaves a split "
              "person. A retry budget (--retry-budget, gRPC's retry throttling) stops a pod's retries once half "
              "its tokens are spent, so an outage does not triple the load on the partner.") +
         "\n" +
         wrap("Measure it: lockbench run --preset incident --pods 3 --readiness on --liveness on --strategy all "
              "(--liveness db=off for the recommended setting; a partner outage that ends: a fault with from_ms "
              "and until_ms in --partner-faults, and the result's recovery block). lockbench lint --from "
              "application.yml --from deployment.yaml reads the Deployment's probes with Spring's actuator keys and "
              "flags a liveness probe that checks the database. Figures: docs/how-to/probes-and-recovery.md.");
}

// Virtual threads: where the queue forms, and carrier pinning (sim/pod.cpp, Pod::pin).
static std::string virtual_threads_text() {
  return "virtual-threads — spring.threads.virtual.enabled, and synchronized pinning the carriers\n\n" +
         wrap("With spring.threads.virtual.enabled=true (Spring Boot 3.2+, JDK 21+) every request gets a virtual "
              "thread: there is no Tomcat worker cap (threads.max) and no accept queue (accept-count), so no "
              "request is refused at the socket. Every one waits for a connection instead, up to HikariCP's "
              "connectionTimeout: the queue forms at the pool, and a strategy that holds a connection through the "
              "partner call has the same Little's-law ceiling as before, with a longer queue in front of it.") +
         "\n" +
         wrap("Virtual threads run on carrier threads, as many as the cores (jdk.virtualThreadScheduler."
              "parallelism; --carriers). A virtual thread that blocks gives its carrier back, except inside "
              "synchronized on JDK 21 to 23: the holder of the monitor, blocked in the pool, the database or the "
              "partner call, and every thread waiting to enter the monitor keep their carriers (pinning). Once the "
              "pinned threads are as many as the carriers, no other virtual thread of the pod runs: new requests, "
              "a connection handed back, a statement's answer and the health probe's handler all wait for a "
              "carrier, even those that need no lock. The pod then serves --carriers requests per partner call "
              "time, whatever its pool, and a liveness probe that does not even check the database times out "
              "(Netflix's 2024 report of this stall). JDK 24 (JEP 491) unmounts a thread blocked in synchronized; "
              "a ReentrantLock (synchronized:try here) never pinned.") +
         "\n" +
         wrap("Measure it: lockbench run --strategy synchronized --virtual-threads on --jdk 21 --carriers 2 "
              "--rate 10 --partner-latency lognormal:p50=1.5s,p99=4s, against --jdk 24 (the result's "
              "virtual_threads block: stalls, stalled_s, starts_waited_for_a_carrier); add --liveness db=off to "
              "see the stalled pod killed. lockbench lint flags synchronized on virtual threads below JDK 24 "
              "(lockbench.jdk, spring.threads.virtual.enabled). The real world runs the same on its pods: a "
              "thread per request that runs only on one of the pod's --carriers, and holds it while pinned.");
}

std::string explain(std::string_view spec) {
  if (spec == "probes") return probes_text();
  if (spec == "virtual-threads") return virtual_threads_text();
  for (const auto& sc : scenario_registry())  // a scenario: its summary and its file's story
    if (sc.name == spec)
      return fmt::format("scenario {} — {}\n\n{}", sc.name, sc.summary, wrap(std::string(sc.story)));
  const StrategyInfo& info = strategy_info(spec);  // unknown names: one line listing the accepted ones
  const Strategy& it = words_of(info.family);
  std::string out = fmt::format("{} — {}\n", it.name, it.summary);
  std::vector<const StrategyInfo*> variants;
  for (const auto& row : strategy_registry())
    if (row.family == info.family) variants.push_back(&row);
  if (variants.size() > 1 || variants.front()->spec != info.family) {
    out += "Variants:\n";
    for (const auto* v : variants)
      out += fmt::format("  {}{}: {}\n", v->spec, v == &info ? " (this one)" : "", v->teaches);
  }
  const StrategyProps& p = info.props;
  out += fmt::format(
      "\nProperties of {} (strategies/registry.cpp)\n"
      "  holds a pooled connection during the partner call: {}\n"
      "  excludes two requests for one key: {}\n"
      "  frees the key by itself when its holder crashes: {}\n"
      "  needs the record's row to exist before the first request: {}\n",
      info.spec, yes_no(p.holds_connection_during_call),
      p.exclusion == Exclusion::all_pods  ? "yes, across pods"
      : p.exclusion == Exclusion::one_pod ? "within one pod only"
                                          : "no",
      yes_no(p.crash_safe), yes_no(p.needs_existing_row));
  out += "\nHow it works\n" + wrap(it.how);
  for (const auto& [family, code] : java_shapes())
    if (family == info.family) out += "\nIn Spring/Java\n" + code_block(code);
  out += "\nHow it fails\n" + wrap(it.fails);
  if (p.exclusion != Exclusion::none) out += "\nWhen the client gives up first\n" + wrap(abandoned_call_text());
  if (p.exclusion != Exclusion::none) out += "\nWhen another writer ignores the lock\n" + wrap(bypass_text());
  out += "\nUnder Kubernetes probes\n" +
         wrap(p.holds_connection_during_call
                  ? "It holds a pooled connection through the partner call: when the partner is slow the pool runs "
                    "dry, a probe that checks the database (Spring's /actuator/health) fails, readiness pulls the "
                    "pod and a liveness probe on it gets the pod killed and restarted into the same queue: the "
                    "restart cascade (lockbench explain probes). Keep the database out of the liveness probe."
                  : "It holds no pooled connection during the partner call, so a slow partner leaves the pool free "
                    "for the health probe: probes that check the database stay green and no pod is restarted for "
                    "it (lockbench explain probes).");
  if (p.monitor_during_call)
    out += "\nOn virtual threads\n" +
           wrap("It holds a monitor (synchronized) through the partner call: on JDK 21 to 23 each request inside it, "
                "holding or waiting, pins a carrier thread, and once they are as many as the carriers the whole "
                "pod stalls (lockbench explain virtual-threads). JDK 24 does not pin.");
  out += "\nChoose it\n" + wrap(it.choose);
  out += "\nDo not choose it\n" + wrap(it.avoid);
  return out;
}

std::string explain_list() {
  std::string out = "Strategies (lockbench explain STRATEGY for how each works and fails):\n";
  std::vector<std::string_view> families;
  for (const auto& row : strategy_registry())
    if (std::find(families.begin(), families.end(), row.family) == families.end()) families.push_back(row.family);
  for (const auto family : families) {
    std::string name(family);
    std::string variants;
    for (const auto& row : strategy_registry())
      if (row.family == family && row.spec != family) variants += (variants.empty() ? "[" : "|") + std::string(row.spec.substr(family.size()));
    if (!variants.empty()) name += variants + "]";
    out += fmt::format("  {:<44} {}\n", name, words_of(family).summary);
  }
  out += "\nScenarios (--scenario; lockbench explain SCENARIO for what each reproduces):\n";
  for (const auto& sc : scenario_registry()) out += fmt::format("  {:<44} {}\n", sc.name, sc.summary);
  out += "\nTopics:\n";
  out += fmt::format("  {:<44} {}\n", "probes", "Kubernetes' readiness and liveness probes and the restart cascade");
  out += fmt::format("  {:<44} {}\n", "virtual-threads", "no worker cap, the queue at the pool, synchronized pinning the carriers");
  return out;
}

}  // namespace lockbench::report

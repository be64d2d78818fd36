// Every knob of a run. Defaults follow HikariCP and Tomcat where users know
// them (maximumPoolSize 10, connectionTimeout 30 s, maxThreads 200). The
// table of settings (settings/table.cpp) names each field, reads and shows it,
// and writes it into a result (settings_json).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/distribution.hpp"
#include "base/units.hpp"
#include "core/client_policy.hpp"

namespace lockbench {

using namespace std::chrono_literals;

enum class Arrival { open, closed, burst };
enum class KeyDist { hot, uniform, zipf };
// How an advisory lock's number is made from a request's key (base/key_hash.hpp):
//   scenario    the scenario's own (today's: the integer id; reward-claim: FNV-1a 64
//               of its string), and no false-conflict count in the result;
//   int_id      the integer id itself (business id = key_id_base + (key-1) * stride);
//   sha256_64   the article's: first 8 bytes of SHA-256 of the scenario's lock string
//               ("user:<id>");
//   hashtext_32 PostgreSQL's hashtext() of that string: 32 bits, so keys collide.
enum class KeyHash { scenario, int_id, sha256_64, hashtext_32 };

// One Kubernetes probe, with Kubernetes' defaults (periodSeconds 10,
// timeoutSeconds 1, failureThreshold 3, successThreshold 1).
struct ProbeSpec {
  bool on = false;
  Duration period = 10s;        // periodSeconds
  Duration timeout = 1s;        // timeoutSeconds
  int failure_threshold = 3;    // failureThreshold
  int success_threshold = 1;    // successThreshold (Kubernetes: 1 for liveness)
  Duration initial_delay = 0s;  // initialDelaySeconds, from the container's start
  bool db = true;               // checks the database (borrow + SELECT 1) or only that the pod answers
  bool operator==(const ProbeSpec&) const = default;
};

struct Settings {
  std::string world = "sim";                // real | sim
  std::string scenario = "switch-primary";  // switch-primary | single-call
  std::string strategy = "row-lease";       // NAME[:variant]
  std::uint64_t seed = 1;
  // `run` / `sweep --repetitions N`: this run is repetition `repetition` (0-based) of
  // `repetitions`, its seed derived from `repetition_base_seed` (repetition_seed()). Not a
  // knob of the run itself, so not in the settings table; a result carries it as its "repetition"
  // block when repetitions > 1.
  int repetitions = 1;
  int repetition = 0;
  std::uint64_t repetition_base_seed = 0;

  // Connection pool (HikariCP names).
  int maximum_pool_size = 10;
  Duration connection_timeout = 30s;
  Duration leak_detection_threshold = 0s;  // 0 = off
  Duration max_lifetime = 30min;
  // Health probe: borrows a connection every probe_interval, gives up after probe_timeout.
  // It only counts (probe{total, failed}); --readiness replaces it with a probe that acts.
  Duration probe_interval = 1s;
  Duration probe_timeout = 1s;
  // Kubernetes probes with consequences (--readiness, --liveness; off by default,
  // so a result of today's settings keeps its bytes). Readiness takes a pod out of
  // the load balancer after failure_threshold failures in a row and back after
  // success_threshold successes; liveness kills it after failure_threshold
  // failures, and kubelet starts it again (its back-off, then pod_startup). A
  // probe with `db` borrows a connection within its timeout and runs SELECT 1
  // (Spring's /actuator/health with the db indicator); without, it checks only
  // that the pod answers (/actuator/health/liveness).
  ProbeSpec readiness;
  ProbeSpec liveness;
  Duration pod_startup = 10s;  // simulator: a restarted pod's application start, before it serves
  // The partner client's guards against a retry storm (core/client_policy.hpp;
  // off by default, so a result of today's settings keeps its bytes): a
  // circuit breaker (resilience4j) and a retry budget (gRPC's retry throttling), per pod.
  BreakerSpec circuit_breaker;
  RetryBudgetSpec retry_budget;

  // Pods (service instances): each has its own pool and workers; requests go
  // round-robin. Simulator faults (pause, clock skew) hit pod 1 and up.
  int pods = 1;
  // Real world: how the pods run. thread = inside this process (a function
  // call per request); process = `lockbench serve` children over HTTP
  // (real/run_pods.cpp). targets = comma-separated base URLs of services
  // already running: the load goes there and no pod is started.
  std::string pod_mode = "thread";
  std::string targets;
  // run --shard I/N (with --targets only): this runner drives the requests of
  // the one arrival schedule whose position p has p % shard_count ==
  // shard_index (closed loop: those virtual users); real/shard_marks.hpp has
  // how the N runners meet. Not a setting of the run's result: a shard's result
  // says which slice it holds in its `shard` block.
  int shard_index = 0;
  int shard_count = 1;
  Duration shard_wait = 60s;  // how long a runner waits for the others

  // Request workers (Tomcat names): maxThreads workers, acceptCount queued, rejected beyond.
  int max_threads = 200;
  int accept_count = 100;
  // Spring's spring.threads.virtual.enabled (a virtual thread per request, no
  // worker cap), the JDK's feature release (0 = not known) and the carrier
  // threads a pod has (jdk.virtualThreadScheduler.parallelism: its cores).
  // Below JDK 24 a virtual thread inside synchronized pins its carrier (JEP 491
  // ends that): the simulator models it (sim/pod.cpp, Pod::pin), lint flags it.
  bool virtual_threads = false;
  int jdk = 0;
  int carriers = 2;

  // Workload.
  Arrival arrival = Arrival::open;
  double rate_per_s = 5;        // open loop
  int users = 10;               // closed loop
  Duration think_time = 100ms;  // closed loop, exponential with this mean
  int burst = 8;                // burst: K requests at t = 0
  int keys = 1000;
  KeyDist key_dist = KeyDist::uniform;
  double zipf_s = 1.1;
  Duration duration = 10s;  // arrivals stop after it; the run then drains
  // Share of requests submitted twice (a double click, a client retry: the same
  // record, the same body), the second within duplicate_gap of the first.
  double duplicate_share = 0;
  Duration duplicate_gap = 500ms;
  // Traffic that does not go through the strategy's lock (the row-lease
  // article's warnings; strategies/side_traffic.hpp). bypass_share: the share
  // of requests that run the scenario's read, partner calls and store with no
  // lock (an admin job, a second service). orm_writer_rate: a second code path
  // (a profile edit, a last-login stamp) that loads the lock row's entity,
  // waits orm_writer_gap, and saves it, per second over all pods (0 = off).
  double bypass_share = 0;
  double orm_writer_rate = 0;
  Duration orm_writer_gap = 100ms;

  // Partner and its client.
  Distribution partner_latency = Distribution::fixed(200);
  double apply_at = 0.5;
  Duration partner_connect_timeout = 1s;
  Duration partner_read_timeout = 10s;
  int partner_max_attempts = 1;  // 1 = no retry
  Duration retry_backoff_base = 100ms;
  Duration retry_backoff_cap = 2s;
  nlohmann::json partner_faults = nlohmann::json::object();  // section D document, per endpoint
  std::string fencing = "ignore";                             // ignore | enforce
  int identities_per_person = 3;

  // Locks.
  Duration lease_ttl = 30s;
  Duration lock_timeout = 5s;
  // Advisory-lock keys (advisory-xact, advisory-session). The business id a key
  // stands for is key_id_base + (key - 1) * key_id_stride (1, 1: the key
  // itself), so a run can hold two ids found to collide. Written into a result
  // only when key_hash is not `scenario`.
  KeyHash key_hash = KeyHash::scenario;
  std::int64_t key_id_base = 1;
  std::int64_t key_id_stride = 1;

  // held-tx: work before the transaction's first statement (validation, a call
  // made before any SQL). Spring holds the connection through it from the start
  // of @Transactional, unless delay_connection_acquisition (Hibernate's
  // provider_disables_autocommit=true with Hikari auto-commit=false) takes it at
  // the first statement. Written into a result only when set.
  Duration pre_sql_work = 0s;
  bool delay_connection_acquisition = false;

  // Database faults, both worlds (named fault sites, seeded): per statement
  // inside a transaction, conn_lost ends the backend (its locks released, its
  // transaction rolled back; the pool replaces the connection); per COMMIT,
  // commit_fail makes it throw after rolling back. --db-faults
  // commit_fail:p=0.05,conn_lost:p=0.02 | none.
  struct DbFaults {
    double commit_fail = 0;
    double conn_lost = 0;
    bool any() const { return commit_fail > 0 || conn_lost > 0; }
  };
  DbFaults db_faults;

  // The outbox strategy's pollers: per pod, how often an idle poller looks
  // again, and how long after --duration they may keep delivering before the
  // rest counts as outbox.undelivered.
  int outbox_pollers = 1;
  Duration outbox_poll_interval = 100ms;
  Duration outbox_drain_limit = 2min;
  // after-commit: the listener's confirmation email (a send to the mail provider).
  Duration email_latency = 50ms;

  // The real stack's own costs, as the simulator models them (the real world
  // has them): one SQL statement, the HTTP overhead of one partner call, the
  // pool handing a connection to a waiting thread, a worker picking up a
  // request. `lockbench calibrate` measures them into a settings file.
  Distribution db_latency = Distribution::fixed(0.5);
  Duration partner_overhead = 0s;
  Duration pool_handoff = 0s;
  Duration worker_handoff = 0s;
  // Who gets a returned connection while threads wait for one: "fifo", the
  // first waiter (the default); or "hikari", HikariCP's ConcurrentBag: the
  // connection is offered to the longest-waiting thread, but until that thread
  // has woken (pool_handoff) it stays free in the bag, and a newcomer's scan
  // takes it; the passed-over thread waits again, behind the others, with
  // what is left of its connectionTimeout (docs/explanation/hikaricp.md).
  std::string pool_order = "fifo";

  // Real world: every configured duration is multiplied by time_scale, rates divided.
  double time_scale = 1;
  std::string db_url;
  std::string partner_url;
  // run/sweep --force: reset the partner even while another run is live on it
  // (real/partner_http.hpp's set_run). Not a setting of the run: never in its result.
  bool force_partner_reset = false;
  // redis-lease's store: redis://HOST:PORT (real world); in the simulator a
  // model with this round trip, and a failover at redis_failover_at that loses
  // the writes of the last redis_replication_lag (asynchronous replication).
  std::string redis_url;
  Distribution redis_latency = Distribution::fixed(0.2);
  std::optional<Duration> redis_failover_at;
  Duration redis_replication_lag = 1s;
  // etcd-lease's store: http://HOST:PORT, etcd's v3 JSON gateway (real world);
  // in the simulator a model with this round trip (a write through Raft: the
  // leader's fsync and a quorum), and a leader change at etcd_leader_change_at
  // that pauses every etcd request for etcd_election and loses nothing.
  std::string etcd_url;
  Distribution etcd_latency = Distribution::fixed(1.0);
  std::optional<Duration> etcd_leader_change_at;
  Duration etcd_election = 1s;
  // lint: the server's max_connections and max_locks_per_transaction when no
  // --db says (0 = PostgreSQL's defaults, 100 and 64).
  int pg_max_connections = 0;
  int pg_max_locks_per_transaction = 0;

  // Simulator faults (virtual time; absent = none).
  std::optional<Duration> crash_at;    // the pod running the requests crashes here
  std::optional<Duration> pause_at;    // one pod pauses (GC-style) ...
  Duration pause_for = 0s;             // ... for this long
  Duration clock_skew = 0s;            // app clock minus database clock (row-lease:app-clock)
  // Real world, --pod-mode process: which pod (1-based) a fault hits (the
  // ":POD" of --crash-at T:POD, --pause-at T:POD, --clock-skew D:POD; 0 for the
  // skew = every pod after the first, as in the simulator), and how long a
  // killed pod stays down before lockbench starts it again.
  int crash_pod = 1;
  int pause_pod = 1;
  int skew_pod = 0;
  Duration restart_after = 1s;

  // PgBouncer between the pods and PostgreSQL (both worlds): none | transaction
  // | session (its pool_mode); the real world starts one for the run
  // (--pgbouncer), or --db may point through one. pgbouncer_pool_size is its
  // default_pool_size: the server backends all pods' connections share.
  // statements (real world): prepared (named, once per session) | unnamed
  // (PQexecParams: what transaction pooling in PgBouncer 1.18 needs) | auto
  // (unnamed with --pgbouncer transaction or when --db is found to be a pooler).
  std::string pgbouncer = "none";
  int pgbouncer_pool_size = 20;
  std::string statements = "auto";

  // Trace sample size (requests whose events are kept in the result).
  int trace_requests = 40;

  // Offered load in requests per second, before scaling (open: rate; burst:
  // K over the duration; closed: users / think time as an upper bound).
  double offered_per_s() const;
  // The effective settings of a real run: durations times time_scale, rates divided.
  Settings scaled() const;
  // Throws SettingError naming the first setting out of range. The checks of
  // settings/table.hpp's validate_settings, in its order: check_fields, then
  // every duration's bound (generated from the table), then check_memory (a
  // run too large for this machine: see memory_estimate_bytes).
  void check_fields() const;
  void check_memory() const;

  // Requests a run keeps in memory (its schedule, samples and trace events):
  // the expected arrivals over the duration (open: rate x duration; closed:
  // users / (think time + one partner call) x duration; burst: K). The key
  // space is not counted here.
  double expected_requests() const;
  double memory_estimate_bytes() const;
  // One line when the estimate is large enough to mention ("" otherwise).
  std::string memory_note() const;
};

// Every duration setting is at most this long, before and after --time-scale:
// sums of a few of them (a run's drain bound) must stay far from the
// nanosecond clock's 292-year range.
inline constexpr Duration kSettingDurationMax = kDurationMax;
// Memory a run's per-request state takes: the simulator grows by about 70 B a
// request (`/usr/bin/time -f %M lockbench run --strategy held-tx --rate 1000
// --duration 200s|1000s --keys 100000`: 216 MB -> 272 MB for 800 k more);
// 256 B leaves room for the real world's per-request trace.
inline constexpr double kBytesPerRequest = 256;
inline constexpr double kMemoryNoteBytes = 1024.0 * 1024 * 1024;  // mention above 1 GiB
// The bound: at most this share of the machine's physical memory (and 64 GiB).
inline constexpr double kMemoryShareMax = 0.5;
inline constexpr double kMemoryBytesMax = 64.0 * 1024 * 1024 * 1024;
double memory_bytes_allowed();
// Runs that go `jobs` at a time must fit together: throws SettingError naming
// --jobs when the `jobs` largest estimates add up to more than the allowance.
void check_memory_side_by_side(const std::vector<Settings>& runs, int jobs);

std::string_view arrival_name(Arrival);
// "commit_fail:p=0.05,conn_lost:p=0.02" (either part may be left out) or "none";
// throws SettingError naming --db-faults and the accepted values.
Settings::DbFaults parse_db_faults(const std::string& text);
std::string db_faults_text(const Settings::DbFaults& f);  // the same form; "none" when off
// --readiness / --liveness: "off", "on" (Kubernetes' defaults) or
// "period=10s,timeout=1s,failure-threshold=3,success-threshold=1,initial-delay=0s,db=on"
// (any of them; Kubernetes' names periodSeconds, timeoutSeconds, failureThreshold,
// successThreshold, initialDelaySeconds too), or the same as a JSON object (a TOML
// inline table). Throws SettingError naming `setting` and what is accepted:
// Kubernetes' own rules (thresholds at least 1, a liveness successThreshold of 1).
ProbeSpec parse_probe(const std::string& text, std::string_view setting, bool liveness);
// A compound setting's key=value pairs ("a=1,b=2"), or a JSON object's (a TOML
// inline table; booleans as on/off). Throws SettingError naming `name` and `keys`.
std::vector<std::pair<std::string, std::string>> key_value_pairs(const std::string& text, const std::string& name,
                                                                 const std::string& keys);
std::string probe_text(const ProbeSpec& p);  // "off" or every field, in the form parse_probe reads
// Throws SettingError when `p` breaks a rule parse_probe checks.
void check_probe(const ProbeSpec& p, std::string_view setting, bool liveness);
std::string_view key_dist_name(KeyDist);
std::string_view key_hash_name(KeyHash);  // scenario | int-id | sha256-64 | hashtext-32
// Throws SettingError naming --key-hash and the accepted values.
KeyHash parse_key_hash(const std::string& text);

// Repetitions: repetition 0 keeps the base seed (one repetition of N is the run
// without repetitions); repetition i > 0 runs with derive_seed(base, "repetition.i")
// cut to 53 bits (what --seed accepts, and what a JSON number holds exactly).
inline constexpr int kRepetitionsMax = 1000;
std::uint64_t repetition_seed(std::uint64_t base_seed, int index);
// `n` copies of `s`, each with its repetition index, count and derived seed; `s` once when n is 1.
// Throws SettingError naming --repetitions unless 1 <= n <= kRepetitionsMax.
std::vector<Settings> expand_repetitions(const Settings& s, int n);

}  // namespace lockbench

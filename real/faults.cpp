#include "real/faults.hpp"

#include <algorithm>
#include <csignal>

#include "core/result.hpp"
#include "real/pg_conn.hpp"
#include "real/pod_protocol.hpp"
#include "real/kv_lease_store.hpp"
#include "real/run_common.hpp"

namespace lockbench::real {

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

// Locks of a pod's sessions (advisory, row and transaction locks), as PostgreSQL sees them.
constexpr const char* kLocksSql =
    "SELECT count(*) FROM pg_locks WHERE granted AND locktype IN ('advisory', 'transactionid', 'tuple') "
    "AND pid = ANY($1::int[])";
// One lock by identity: at the resume, those held then, not those the pod takes afterwards.
constexpr const char* kLockIdentity =
    "(locktype || ':' || pid || ':' || coalesce(transactionid::text, '') || ':' || coalesce(classid::text, '') || "
    "':' || coalesce(objid::text, '') || ':' || coalesce(relation::text, '') || ':' || coalesce(page::text, '') || "
    "':' || coalesce(tuple::text, ''))";

std::string pid_array(const std::vector<int>& backends) {
  std::string pids = "{";
  for (std::size_t k = 0; k < backends.size(); ++k) pids += (k ? "," : "") + std::to_string(backends[k]);
  return pids + "}";
}

std::string text_array(const std::vector<std::string>& items) {
  std::string out = "{";
  for (std::size_t k = 0; k < items.size(); ++k) out += (k ? ",\"" : "\"") + items[k] + "\"";
  return out + "}";
}

std::int64_t count_locks(pqxx::connection& db, const std::string& pids) {
  pqxx::nontransaction tx(db);
  return tx.exec_params1(kLocksSql, pids)[0].as<std::int64_t>();
}

// Waits (until the arrivals end) for a moment when pod `i` is inside a partner
// call, so that the fault strikes while it holds its lock or lease; the count then.
// `gauge` is the pod's /lockbench/pool figure waited on: "in_partner" (any call)
// or "in_first_call" (a request's first call: the holder then has a next one).
int await_partner_call(FaultEnv& e, std::size_t i, const char* gauge = "in_partner") {
  int in_partner = 0;
  while (e.clock.now() < e.clock.last_chance(e.s.duration)) {
    if (const auto j = get_json(e.fleet.url_of(i), kPathPool, std::chrono::milliseconds(200)))
      if ((in_partner = j->value(gauge, 0)) > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return in_partner;
}

std::vector<int> backends_of(FaultEnv& e, std::size_t i) {
  if (const auto st = get_json(e.fleet.url_of(i), kPathStats, std::chrono::seconds(1)))
    return st->value("backend_pids", std::vector<int>{});
  return {};
}

std::int64_t ns(Duration d) { return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count(); }

}  // namespace

void refuse_without_own_pods(const Settings& s) {
  if (s.pod_mode == "process" && s.targets.empty()) return;  // the runner's own pods: it plays kubelet
  const std::string why = s.targets.empty()
                              ? " needs --pod-mode process: the runner plays kubelet and load balancer for the pods it "
                                "starts, and the in-process pods have no process to probe, kill and restart"
                              : " is not done with --targets: lockbench does not own these services (their own "
                                "kubelet probes them); use --pod-mode process";
  if (s.readiness.on) throw SettingError("--readiness:" + why + " (or --readiness off)");
  if (s.liveness.on) throw SettingError("--liveness:" + why + " (or --liveness off)");
  for (const auto& [endpoint, list] : s.partner_faults.items())
    if (list.is_array())
      for (const auto& f : list)
        if (f.is_object() && (f.contains("from_ms") || f.contains("until_ms")))
          throw SettingError("--partner-faults: " + endpoint + ": a fault window (from_ms, until_ms)" + why +
                             " (the runner starts the window with the load)");
}

void refuse_faults_in_threads(const Settings& s) {
  const char* hint = " is not done by the in-process pods; use --pod-mode process (or --world sim)";
  if (s.crash_at) throw SettingError(std::string("--crash-at:") + hint);
  if (s.pause_at) throw SettingError(std::string("--pause-at:") + hint);
  if (s.clock_skew != Duration::zero()) throw SettingError(std::string("--clock-skew:") + hint);
}

void check_fault_pods(const Settings& s) {
  if (!s.targets.empty()) {
    if (s.crash_at || s.pause_at || s.clock_skew != Duration::zero())
      throw SettingError("--targets: lockbench does not own these services; --crash-at, --pause-at and --clock-skew need --pod-mode process");
    return;
  }
  if (s.crash_at && s.liveness.on)  // two killers of one pod: the runner's kubelet would not know its pod died
    throw SettingError("--crash-at: not with --liveness in the real world (the runner's kubelet kills and restarts the "
                       "pods itself); use one of them");
  const auto exists = [&](bool on, int pod, const char* flag) {
    if (on && pod > s.pods)
      throw SettingError(std::string(flag) + ": pod " + std::to_string(pod) + " does not exist (--pods " +
                         std::to_string(s.pods) + ")");
  };
  exists(s.crash_at.has_value(), s.crash_pod, "--crash-at");
  exists(s.pause_at.has_value(), s.pause_pod, "--pause-at");
  exists(true, s.skew_pod, "--clock-skew");
}

bool skewed(const Settings& s, int index) {
  return s.clock_skew != Duration::zero() && (s.skew_pod == 0 ? index >= 1 : index + 1 == s.skew_pod);
}

Settings pod_settings(const Settings& s, int index) {
  Settings pod = s;
  if (!skewed(s, index)) {
    pod.clock_skew = Duration::zero();
    pod.skew_pod = 0;
  }
  return pod;
}

// ---- the clock

bool FaultClock::wait_until(Duration t) {
  std::unique_lock lock(mu_);
  return !cv_.wait_until(lock, epoch_ + t, [&] { return over_; });
}

bool FaultClock::ended() {
  std::lock_guard lock(mu_);
  return over_;
}

Duration FaultClock::last_chance(Duration arrivals_end) {
  std::lock_guard lock(mu_);
  return over_ ? Duration::zero() : arrivals_end;
}

void FaultClock::end() {
  {
    std::lock_guard lock(mu_);
    over_ = true;
  }
  cv_.notify_all();
}

// ---- pause: SIGSTOP, then SIGCONT --pause-for later

template <class F>
void PauseFault::measure(F f) {
  if (!db_) return;
  try {
    f(*db_);
  } catch (const std::exception& ex) {
    pause_["measure_error"] = one_line(ex.what());
    db_.reset();
  }
}

void PauseFault::open_session_and_settings() {
  try {
    db_ = open_session(e_.s.db_url, e_.session_name);
    pqxx::nontransaction tx(*db_);
    // The sessions' settings, as the --db URL's options give them (the runner's session has the same).
    for (const char* g : {"idle_in_transaction_session_timeout", "tcp_keepalives_idle", "tcp_keepalives_interval",
                          "tcp_keepalives_count"})
      pause_["session_settings"][g] = tx.exec1(std::string("SHOW ") + g)[0].as<std::string>();
  } catch (const std::exception& ex) {
    pause_["measure_error"] = one_line(ex.what());
    db_.reset();
  }
}

void PauseFault::freeze() {
  paused_ = e_.s.pause_pod - 1;
  e_.fleet.signal(static_cast<std::size_t>(e_.s.pause_pod - 1), SIGSTOP);
  stopped_ = e_.clock.now();
  from_ns_ = ns(stopped_);
  // Frozen: its own side holds still. While it is, every lock its sessions
  // hold blocks (its own waiters granted the lock in turn included).
  measure([&](pqxx::connection& db) { held_locks_ = count_locks(db, pids_); });
}

void PauseFault::resume() {
  // From here on the pod takes new locks: only those its sessions hold now still count.
  if (!freed_)
    measure([&](pqxx::connection& db) {
      pqxx::nontransaction tx(db);
      const std::string snapshot = std::string("SELECT coalesce(array_agg(") + kLockIdentity +
                                   ")::text, '{}') FROM pg_locks WHERE granted AND locktype IN ('advisory', "
                                   "'transactionid', 'tuple') AND pid = ANY($1::int[])";
      held_at_pause_ = tx.exec_params1(snapshot, pids_)[0].as<std::string>();
    });
  e_.fleet.signal(static_cast<std::size_t>(e_.s.pause_pod - 1), SIGCONT);
  resumed_ = true;
  continued_ = e_.clock.now();
  to_ns_ = ns(continued_);
}

// Resumes --pause-for after the pod stopped (not after --pause-at: the pause
// waited for a partner call, and one that struck late would be cut short);
// meanwhile, and after, watches the pod's locks until they are gone. TCP
// keepalives cannot end them: the stopped process's kernel still answers;
// idle_in_transaction_session_timeout can.
void PauseFault::watch_until_freed() {
  const Duration resume_at = stopped_ + e_.s.pause_for;
  const std::string still = std::string("SELECT count(*) FROM pg_locks WHERE granted AND ") + kLockIdentity +
                            " = ANY($1::text[])";
  for (const auto give_up = Clock::now() + e_.s.pause_for + std::chrono::seconds(30);;) {
    if (!resumed_ && (e_.clock.now() >= resume_at || e_.clock.ended() || Clock::now() >= give_up)) resume();
    if (!freed_ && held_locks_ > 0)
      measure([&](pqxx::connection& db) {
        pqxx::nontransaction tx(db);
        const auto left = resumed_ ? tx.exec_params1(still, held_at_pause_)[0].as<std::int64_t>()
                                   : tx.exec_params1(kLocksSql, pids_)[0].as<std::int64_t>();
        if (left == 0) freed_ = e_.clock.now() - stopped_;
      });
    if (resumed_ && (freed_ || !db_ || held_locks_ <= 0 || Clock::now() >= give_up)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void PauseFault::strike() {
  const auto i = static_cast<std::size_t>(e_.s.pause_pod - 1);
  if (!e_.clock.wait_until(*e_.s.pause_at)) return;
  // As a crash does, the pause waits for a moment when the pod is inside a partner call,
  // here the first of its request's calls: a holder woken after a steal always has
  // its next call to make (which fencing refuses), never only a reply to read.
  const int in_partner = await_partner_call(e_, i, "in_first_call");
  pids_ = pid_array(backends_of(e_, i));
  pause_ = {{"pod", e_.s.pause_pod}, {"in_partner_at_pause", in_partner}};
  open_session_and_settings();
  freeze();
  watch_until_freed();
  pause_["at_s"] = to_s(stopped_);
  pause_["for_s"] = to_s(continued_ - stopped_);
  pause_["locks_held_at_pause"] = held_locks_;
  // From SIGSTOP until the frozen pod's sessions hold no lock: during the
  // pause only when the server ended them, otherwise after the pod resumed.
  pause_["key_blocked_ms"] = freed_ ? json(to_ms(*freed_)) : json(nullptr);
  pause_["freed_during_pause"] = freed_.has_value() && *freed_ < continued_ - stopped_;
  db_.reset();
}

void PauseFault::answered_ok(std::size_t pod, Duration end) {
  const auto end_ns = ns(end);
  if (static_cast<int>(pod) != paused_.load() && from_ns_.load() >= 0 && end_ns >= from_ns_.load() &&
      (to_ns_.load() < 0 || end_ns < to_ns_.load()))
    ++ok_elsewhere_;
}

json PauseFault::block() const {
  if (pause_.is_null()) return pause_;
  json out = pause_;
  out["ok_on_other_pods_during_pause"] = ok_elsewhere_.load();
  return out;
}

// ---- crash: kill -9 inside a partner call, then a restart

void CrashFault::strike() {
  const auto i = static_cast<std::size_t>(e_.s.crash_pod - 1);
  if (!e_.clock.wait_until(*e_.s.crash_at)) return;
  const int in_partner = await_partner_call(e_, i);
  pids_ = pid_array(backends_of(e_, i));
  const std::vector<std::string> owners = e_.fleet.owners_in_flight(i);
  crash_ = {{"pod", e_.s.crash_pod}, {"in_partner_at_crash", in_partner}, {"crashed_requests", owners.size()}};
  try {
    db_ = open_session(e_.s.db_url, e_.session_name);
    held_locks_ = count_locks(*db_, pids_);
  } catch (const std::exception& ex) {
    crash_["measure_error"] = one_line(ex.what());
    db_.reset();
  }
  e_.fleet.kill_and_reap(i);
  const Duration killed = e_.clock.now();
  crash_["at_s"] = to_s(killed);
  if (db_) measure_what_stays_blocked(killed, owners);
  db_.reset();
  restart_later(killed);
}

// What the dead pod keeps from everyone else: its sessions' locks until
// PostgreSQL notices the closed sockets, its in-flight requests' leases until their TTL.
void CrashFault::measure_what_stays_blocked(Duration killed, const std::vector<std::string>& owners) {
  try {
    pqxx::nontransaction tx(*db_);
    const auto leases = tx.exec_params1(
        "SELECT count(*), COALESCE(max(EXTRACT(EPOCH FROM (locked_at + $3::interval - now())) * 1000), 0) "
        "FROM lockbench.rows WHERE run = $1 AND locked_at IS NOT NULL AND lock_owner = ANY($2::text[])",
        e_.run_key, text_array(owners),
        std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(e_.s.lease_ttl).count()) + " milliseconds");
    Duration freed = Duration::zero(), gone = Duration::zero();
    bool locks_freed = false;
    for (const auto give_up = Clock::now() + std::chrono::seconds(30); Clock::now() < give_up;) {
      if (!locks_freed) {
        locks_freed = tx.exec_params1(kLocksSql, pids_)[0].as<std::int64_t>() == 0;
        freed = e_.clock.now() - killed;
      }
      const auto alive =
          tx.exec_params1("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1::int[])", pids_)[0].as<std::int64_t>();
      gone = e_.clock.now() - killed;
      if (alive == 0 && locks_freed) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    auto lease_count = leases[0].as<std::int64_t>();
    double lease_left_ms = std::max(0.0, leases[1].as<double>());
    if (e_.redis) {  // redis-lease: the dead pod's leases in Redis, until their PX passes
      const KvLeaseStore::Held h = e_.redis->held_by(owners);
      lease_count += h.count;
      lease_left_ms = std::max(lease_left_ms, h.left_ms_max);
    }
    crash_["locks_held_at_crash"] = held_locks_;
    crash_["locks_freed_ms"] = to_ms(freed);
    crash_["sessions_closed_ms"] = to_ms(gone);
    crash_["leases_held_at_crash"] = lease_count;
    crash_["lease_left_ms"] = lease_left_ms;
    crash_["key_blocked_ms"] = std::max(held_locks_ > 0 ? to_ms(freed) : 0.0, lease_count > 0 ? lease_left_ms : 0.0);
  } catch (const std::exception& ex) {
    crash_["measure_error"] = one_line(ex.what());
  }
}

void CrashFault::restart_later(Duration killed) {
  if (!e_.clock.wait_until(killed + e_.s.restart_after)) return;
  try {
    e_.fleet.restart(static_cast<std::size_t>(e_.s.crash_pod - 1));
    crash_["restarted_at_s"] = to_s(e_.clock.now());
  } catch (const std::exception& ex) {
    crash_["restart_error"] = one_line(ex.what());
  }
}

// ---- the run's faults

PodFaults::PodFaults(const FaultEnv& env) : s_(env.s), clock_(env.clock) {
  if (s_.pause_at) pause_.emplace(env);
  if (s_.crash_at) crash_.emplace(env);
}

void PodFaults::start() {
  if (!pause_ && !crash_) return;
  thread_ = std::thread([this] {
    const bool pause_first = pause_ && (!crash_ || *s_.pause_at <= *s_.crash_at);
    if (pause_first) pause_->strike();
    if (crash_) crash_->strike();
    if (pause_ && !pause_first) pause_->strike();
    while (clock_.wait_until(std::chrono::hours(24 * 365))) {
    }  // alive until the run ends: a restarted pod dies with its forking thread
  });
}

void PodFaults::end() {
  clock_.end();
  if (thread_.joinable()) thread_.join();
}

json PodFaults::block() const {
  if (!s_.crash_at && !s_.pause_at && s_.clock_skew == Duration::zero()) return nullptr;
  const json crash = crash_ ? crash_->block() : json(nullptr);
  const json pause = pause_ ? pause_->block() : json(nullptr);
  const auto count = [&](const char* key) {
    return crash.is_object() ? std::max<std::int64_t>(0, crash.value(key, std::int64_t{0})) : std::int64_t{0};
  };
  json f = faults_block(s_, crash.is_object() && crash.contains("key_blocked_ms") ? json(crash["key_blocked_ms"]) : json(nullptr),
                        count("crashed_requests"), count("locks_held_at_crash") + count("leases_held_at_crash"));
  f["skew_pod"] = s_.skew_pod;
  f["crash"] = crash;
  f["pause"] = pause;
  return f;
}

}  // namespace lockbench::real

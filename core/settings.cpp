#include "core/settings.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>

#include "base/random.hpp"
#include <cstdlib>
#include <string>

namespace lockbench {

std::string_view arrival_name(Arrival a) {
  switch (a) {
    case Arrival::open: return "open";
    case Arrival::closed: return "closed";
    case Arrival::burst: return "burst";
  }
  return "?";
}

namespace {

// "on", "db=off", "true": a switch inside a probe's text.
bool probe_switch(const std::string& v, const std::string& where) {
  if (v == "on" || v == "true") return true;
  if (v == "off" || v == "false") return false;
  throw SettingError(where + ": '" + v + "' is not accepted (accepted: on, off)");
}

// Kubernetes' *Seconds fields take whole seconds; a duration with its unit is taken too.
Duration probe_duration(const std::string& v, const std::string& where, bool seconds_field) {
  if (seconds_field && !v.empty() && v.find_first_not_of("0123456789") == std::string::npos)
    return parse_duration(v + "s", where);
  return parse_duration(v, where);
}

int probe_threshold(const std::string& v, const std::string& where) {
  if (v.empty() || v.size() > 6 || v.find_first_not_of("0123456789") != std::string::npos)
    throw SettingError(where + ": '" + v + "' is not a whole number (Kubernetes: minimum value is 1)");
  return std::stoi(v);
}

}  // namespace

namespace {

// A JSON object's members as pairs (strings as they are, booleans on/off, the rest as JSON).
std::vector<std::pair<std::string, std::string>> json_pairs(const std::string& text, const std::string& name,
                                                            const std::string& keys) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception&) {
    throw SettingError(name + ": not valid JSON (use key=value pairs: " + keys + ")");
  }
  if (!j.is_object()) throw SettingError(name + ": must be an object of " + keys);
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& [k, v] : j.items())
    pairs.emplace_back(k, v.is_string() ? v.get<std::string>() : v.is_boolean() ? (v.get<bool>() ? "on" : "off") : v.dump());
  return pairs;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> key_value_pairs(const std::string& text, const std::string& name,
                                                                 const std::string& keys) {
  if (text.starts_with("{")) return json_pairs(text, name, keys);
  std::vector<std::pair<std::string, std::string>> pairs;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string part = text.substr(start, comma - start);
    const std::size_t eq = part.find('=');
    if (eq == std::string::npos || eq == 0)
      throw SettingError(name + ": '" + part + "' is not key=value (accepted: off, on, or key=value pairs of " + keys + ")");
    pairs.emplace_back(part.substr(0, eq), part.substr(eq + 1));
    start = comma + 1;
  }
  return pairs;
}

ProbeSpec parse_probe(const std::string& text, std::string_view setting, bool liveness) {
  const std::string name(setting);
  const std::string keys =
      "period, timeout, failure-threshold, success-threshold, initial-delay, db (or periodSeconds, timeoutSeconds, "
      "failureThreshold, successThreshold, initialDelaySeconds)";
  ProbeSpec p;
  if (text == "off" || text == "none" || text == "false") return p;
  p.on = true;
  if (text == "on" || text == "true") {
    check_probe(p, setting, liveness);
    return p;
  }
  for (const auto& [k, v] : key_value_pairs(text, name, keys)) {
    const std::string where = name + ": " + k;
    if (k == "period" || k == "periodSeconds") p.period = probe_duration(v, where, k != "period");
    else if (k == "timeout" || k == "timeoutSeconds") p.timeout = probe_duration(v, where, k != "timeout");
    else if (k == "initial-delay" || k == "initialDelaySeconds") p.initial_delay = probe_duration(v, where, k != "initial-delay");
    else if (k == "failure-threshold" || k == "failureThreshold") p.failure_threshold = probe_threshold(v, where);
    else if (k == "success-threshold" || k == "successThreshold") p.success_threshold = probe_threshold(v, where);
    else if (k == "db") p.db = probe_switch(v, where);
    else throw SettingError(where + ": unknown key (accepted: " + keys + ")");
  }
  check_probe(p, setting, liveness);
  return p;
}

void check_probe(const ProbeSpec& p, std::string_view setting, bool liveness) {
  if (!p.on) return;
  const std::string name(setting);
  // Kubernetes' validation: every field non-negative, thresholds and the period
  // at least 1 (its defaults fill a 0 in), a liveness successThreshold of 1. A
  // timeout longer than the period is accepted there: kubelet waits for a probe
  // before it starts the next (so it is here).
  if (p.period <= Duration::zero()) throw SettingError(name + ": period must be above 0 (Kubernetes: periodSeconds, minimum 1)");
  if (p.timeout <= Duration::zero()) throw SettingError(name + ": timeout must be above 0 (Kubernetes: timeoutSeconds, minimum 1)");
  if (p.initial_delay < Duration::zero()) throw SettingError(name + ": initial-delay must be 0 or a duration");
  if (p.failure_threshold < 1 || p.failure_threshold > 1000)
    throw SettingError(name + ": failure-threshold " + std::to_string(p.failure_threshold) +
                       " is not accepted (a whole number from 1 to 1000; Kubernetes: minimum value is 1)");
  if (p.success_threshold < 1 || p.success_threshold > 1000)
    throw SettingError(name + ": success-threshold " + std::to_string(p.success_threshold) +
                       " is not accepted (a whole number from 1 to 1000; Kubernetes: minimum value is 1)");
  if (liveness && p.success_threshold != 1)
    throw SettingError(name + ": success-threshold " + std::to_string(p.success_threshold) +
                       " is not accepted (Kubernetes: must be 1 for liveness and startup probes)");
}

std::string probe_text(const ProbeSpec& p) {
  if (!p.on) return "off";
  return "period=" + format_duration(p.period) + ",timeout=" + format_duration(p.timeout) +
         ",failure-threshold=" + std::to_string(p.failure_threshold) +
         ",success-threshold=" + std::to_string(p.success_threshold) +
         ",initial-delay=" + format_duration(p.initial_delay) + ",db=" + (p.db ? "on" : "off");
}

std::string_view key_dist_name(KeyDist k) {
  switch (k) {
    case KeyDist::hot: return "hot";
    case KeyDist::uniform: return "uniform";
    case KeyDist::zipf: return "zipf";
  }
  return "?";
}

double Settings::offered_per_s() const {
  switch (arrival) {
    case Arrival::open: return rate_per_s;
    case Arrival::burst: return to_s(duration) > 0 ? burst / to_s(duration) : 0;
    case Arrival::closed: return to_s(think_time) > 0 ? users / to_s(think_time) : 0;
  }
  return 0;
}

namespace {

// The partner's fault times are configured durations too: a fault's delay
// (`ms` of hang and slow) and its window (`from_ms`, `until_ms`), numbers only
// (a hang's "forever" stays).
nlohmann::json scaled_faults(nlohmann::json faults, double f) {
  if (f == 1) return faults;
  const auto scale_fault = [f](nlohmann::json& fault) {
    if (!fault.is_object()) return;
    for (const char* k : {"ms", "from_ms", "until_ms"})
      if (fault.contains(k) && fault[k].is_number()) fault[k] = fault[k].get<double>() * f;
  };
  for (auto it = faults.begin(); it != faults.end(); ++it)
    if (it.value().is_array())
      for (auto& fault : it.value()) scale_fault(fault);
  return faults;
}

}  // namespace

Settings Settings::scaled() const {
  Settings s = *this;
  const double f = time_scale;
  const auto d = [f](Duration x) { return Duration(static_cast<Duration::rep>(static_cast<double>(x.count()) * f)); };
  s.connection_timeout = d(connection_timeout);
  s.leak_detection_threshold = d(leak_detection_threshold);
  s.max_lifetime = d(max_lifetime);
  s.probe_interval = d(probe_interval);
  s.probe_timeout = d(probe_timeout);
  s.think_time = d(think_time);
  s.duration = d(duration);
  s.duplicate_gap = d(duplicate_gap);
  s.orm_writer_gap = d(orm_writer_gap);
  s.orm_writer_rate = orm_writer_rate / f;
  s.partner_latency = partner_latency.scaled(f);
  s.partner_faults = scaled_faults(partner_faults, f);
  s.partner_connect_timeout = d(partner_connect_timeout);
  s.partner_read_timeout = d(partner_read_timeout);
  s.retry_backoff_base = d(retry_backoff_base);
  s.retry_backoff_cap = d(retry_backoff_cap);
  s.lease_ttl = d(lease_ttl);
  s.redis_latency = redis_latency.scaled(f);
  if (redis_failover_at) s.redis_failover_at = d(*redis_failover_at);
  s.redis_replication_lag = d(redis_replication_lag);
  s.etcd_latency = etcd_latency.scaled(f);
  if (etcd_leader_change_at) s.etcd_leader_change_at = d(*etcd_leader_change_at);
  s.etcd_election = d(etcd_election);
  s.lock_timeout = d(lock_timeout);
  s.pre_sql_work = d(pre_sql_work);
  s.db_latency = db_latency.scaled(f);  // the real world ignores these four: it has the real costs
  s.partner_overhead = d(partner_overhead);
  s.pool_handoff = d(pool_handoff);
  s.worker_handoff = d(worker_handoff);
  if (crash_at) s.crash_at = d(*crash_at);
  if (pause_at) s.pause_at = d(*pause_at);
  s.pause_for = d(pause_for);
  s.clock_skew = d(clock_skew);
  s.outbox_poll_interval = d(outbox_poll_interval);
  s.outbox_drain_limit = d(outbox_drain_limit);
  s.email_latency = d(email_latency);
  s.restart_after = d(restart_after);
  for (ProbeSpec* p : {&s.readiness, &s.liveness}) {
    p->period = d(p->period);
    p->timeout = d(p->timeout);
    p->initial_delay = d(p->initial_delay);
  }
  s.pod_startup = d(pod_startup);
  s.circuit_breaker.wait_in_open = d(circuit_breaker.wait_in_open);
  s.circuit_breaker.slow_call_duration_threshold = d(circuit_breaker.slow_call_duration_threshold);
  s.rate_per_s = rate_per_s / f;
  s.time_scale = 1;
  return s;
}

void Settings::check_fields() const {
  const auto need = [](bool ok, const char* msg) {
    if (!ok) throw SettingError(msg);
  };
  need(world == "real" || world == "sim", "--world: accepted values are real, sim");
  // The scenario's name is checked against scenarios/registry.cpp where it is used.
  need(maximum_pool_size >= 1 && maximum_pool_size <= 10000, "--maximum-pool-size: must be a whole number from 1 to 10000");
  need(connection_timeout > 0s, "--connection-timeout: must be above 0 (e.g. 30s)");
  need(probe_interval >= 0s, "--probe-interval: must be 0 (off) or a duration");
  need(pods >= 1 && pods <= 64, "--pods: must be a whole number from 1 to 64");
  need(pre_sql_work >= 0s, "--pre-sql-work: must be 0 (none) or a duration");
  need(key_id_base >= 0 && key_id_stride >= 1 &&
           static_cast<double>(key_id_base) + static_cast<double>(keys - 1) * static_cast<double>(key_id_stride) < 9e15,
       "--key-id-base, --key-id-stride: the ids base + (keys-1) * stride must stay below 9e15 (base >= 0, stride >= 1)");
  need(pod_mode == "thread" || pod_mode == "process", "--pod-mode: accepted values are thread, process");
  need(world != "sim" || (crash_pod == 1 && pause_pod == 1 && skew_pod == 0),
       "--crash-at, --pause-at, --clock-skew: the simulator takes no :POD (it picks the pod); use T or D alone");
  need(restart_after >= 0s, "--restart-after: must be 0 or a duration");
  need(max_threads >= 1 && max_threads <= 100000, "--max-threads: must be a whole number from 1 to 100000");
  need(accept_count >= 0 && accept_count <= 1000000, "--accept-count: must be a whole number from 0 to 1000000");
  need(rate_per_s > 0 && rate_per_s <= 1e6, "--rate: must be above 0 and at most 1000000 per second");
  need(users >= 1 && users <= 100000, "--users: must be a whole number from 1 to 100000");
  need(burst >= 1 && burst <= 100000, "--burst: must be a whole number from 1 to 100000");
  need(keys >= 1 && keys <= 10000000, "--keys: must be a whole number from 1 to 10000000");
  need(zipf_s > 0 && zipf_s < 10, "--key-dist: zipf exponent must be above 0 and below 10 (e.g. zipf:1.1)");
  need(duration > 0s, "--duration: must be above 0 (e.g. 10s)");
  need(apply_at >= 0 && apply_at <= 1, "--apply-at: must be a number from 0 to 1");
  need(partner_connect_timeout > 0s, "--partner-connect-timeout: must be above 0");
  need(partner_read_timeout > 0s, "--partner-read-timeout: must be above 0");
  need(partner_max_attempts >= 1 && partner_max_attempts <= 20, "--partner-max-attempts: must be a whole number from 1 to 20");
  need(fencing == "ignore" || fencing == "enforce", "--fencing: accepted values are ignore, enforce");
  need(probe_interval == 0s || probe_timeout > 0s, "--probe-timeout: must be above 0 while the probe runs");
  check_probe(readiness, "--readiness", false);
  check_probe(liveness, "--liveness", true);
  check_breaker(circuit_breaker, "--circuit-breaker");
  need(pod_startup >= 0s, "--pod-startup: must be 0 or a duration (e.g. 10s)");
  need(retry_backoff_cap >= retry_backoff_base, "--retry-backoff-cap: must be at least --retry-backoff-base");
  need(max_lifetime > 0s, "--max-lifetime: must be above 0 (e.g. 30m)");
  need(identities_per_person >= 2 && identities_per_person <= 16,
       "--identities-per-person: must be a whole number from 2 to 16");
  need(bypass_share >= 0 && bypass_share <= 1, "--bypass-share: must be a number from 0 to 1 (e.g. 0.05)");
  need(orm_writer_rate >= 0 && orm_writer_rate <= 1e5, "--orm-writer-rate: must be 0 (off) or a rate per second up to 100000");
  need(orm_writer_gap >= 0s, "--orm-writer-gap: must be 0 or a duration (e.g. 100ms)");
  need(lease_ttl > 0s, "--lease-ttl: must be above 0 (e.g. 30s)");
  need(lock_timeout >= 0s, "--lock-timeout: must be 0 (no bound) or a duration");
  need(time_scale > 0 && time_scale <= 1000, "--time-scale: must be above 0 and at most 1000 (e.g. 0.01)");
  need(outbox_pollers >= 0 && outbox_pollers <= 64, "--outbox-pollers: must be a whole number from 0 to 64");
  need(outbox_poll_interval > 0s, "--outbox-poll-interval: must be above 0 (e.g. 100ms)");
  need(outbox_drain_limit >= 0s, "--outbox-drain-limit: must be 0 or a duration (e.g. 2m)");
  need(email_latency >= 0s, "--email-latency: must be 0 or a duration");
  need(trace_requests >= 0 && trace_requests <= 10000, "--trace-requests: must be a whole number from 0 to 10000");
  need(pgbouncer == "none" || pgbouncer == "transaction" || pgbouncer == "session",
       "--pgbouncer: accepted values are none, transaction, session");
  need(pgbouncer_pool_size >= 1 && pgbouncer_pool_size <= 10000,
       "--pgbouncer-pool-size: must be a whole number from 1 to 10000");
  need(statements == "auto" || statements == "prepared" || statements == "unnamed",
       "--statements: accepted values are auto, prepared, unnamed");

}

void Settings::check_memory() const {
  const double need_bytes = memory_estimate_bytes();
  const double allowed = memory_bytes_allowed();
  if (need_bytes > allowed) {
    char msg[320];
    std::snprintf(msg, sizeof msg,
                  "--duration: about %.3g requests (%s) need about %.1f GiB of memory; this machine allows %.1f GiB "
                  "(use a shorter --duration or a lower rate)",
                  expected_requests(), arrival == Arrival::burst ? "--burst" : "rate x duration", need_bytes / (1 << 30),
                  allowed / (1 << 30));
    throw SettingError(msg);
  }
}

double Settings::expected_requests() const {
  switch (arrival) {
    case Arrival::open: return rate_per_s * to_s(duration);
    case Arrival::burst: return burst;
    case Arrival::closed:
      // A user's cycle is at least its think time plus one partner call.
      return users * to_s(duration) / std::max(to_s(think_time) + partner_latency.mean_ms() / 1000, 1e-3);
  }
  return 0;
}

double Settings::memory_estimate_bytes() const { return expected_requests() * kBytesPerRequest; }

std::string Settings::memory_note() const {
  const double b = memory_estimate_bytes();
  if (b < kMemoryNoteBytes) return "";
  char msg[200];
  std::snprintf(msg, sizeof msg, "this run keeps about %.3g requests in memory: about %.1f GiB", expected_requests(),
                b / (1 << 30));
  return msg;
}

double memory_bytes_allowed() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  const double physical = pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : kMemoryBytesMax;
  return std::min(kMemoryBytesMax, kMemoryShareMax * physical);
}

void check_memory_side_by_side(const std::vector<Settings>& runs, int jobs) {
  const std::size_t together = std::min(runs.size(), static_cast<std::size_t>(std::max(jobs, 1)));
  if (together < 2) return;
  std::vector<double> bytes;
  for (const auto& s : runs) bytes.push_back(s.memory_estimate_bytes());
  std::partial_sort(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(together), bytes.end(), std::greater<>());
  double need = 0;
  for (std::size_t i = 0; i < together; ++i) need += bytes[i];
  const double allowed = memory_bytes_allowed();
  if (need <= allowed) return;
  char msg[320];
  std::snprintf(msg, sizeof msg,
                "--jobs: %zu runs side by side need about %.1f GiB of memory together; this machine allows %.1f GiB "
                "(use a lower --jobs, e.g. --jobs 1, or a shorter --duration)",
                together, need / (1 << 30), allowed / (1 << 30));
  throw SettingError(msg);
}

namespace {
constexpr const char* kDbFaultsAccepted =
    "--db-faults: accepted: none, or a comma-separated list of commit_fail:p=P and conn_lost:p=P with P from 0 to 1 "
    "(e.g. commit_fail:p=0.05,conn_lost:p=0.02)";
}  // namespace

Settings::DbFaults parse_db_faults(const std::string& text) {
  Settings::DbFaults f;
  if (text == "none" || text == "off" || text.empty()) return f;
  std::size_t start = 0;
  bool seen_commit = false, seen_lost = false;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::size_t colon = part.find(":p=");
    if (colon == std::string::npos) throw SettingError(std::string(kDbFaultsAccepted) + "; got '" + part + "'");
    const std::string name = part.substr(0, colon), value = part.substr(colon + 3);
    char* end = nullptr;
    const double p = std::strtod(value.c_str(), &end);
    if (value.empty() || end != value.c_str() + value.size() || !(p >= 0 && p <= 1))
      throw SettingError(std::string(kDbFaultsAccepted) + "; got '" + part + "'");
    if (name == "commit_fail" && !seen_commit) {
      f.commit_fail = p;
      seen_commit = true;
    } else if (name == "conn_lost" && !seen_lost) {
      f.conn_lost = p;
      seen_lost = true;
    } else {
      throw SettingError(std::string(kDbFaultsAccepted) + "; got '" + part + "'");
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return f;
}

std::string db_faults_text(const Settings::DbFaults& f) {
  if (!f.any()) return "none";
  const auto num = [](double p) {
    std::string t = std::to_string(p);
    while (t.size() > 1 && t.back() == '0') t.pop_back();
    if (!t.empty() && t.back() == '.') t.pop_back();
    return t;
  };
  std::string out;
  if (f.commit_fail > 0) out += "commit_fail:p=" + num(f.commit_fail);
  if (f.conn_lost > 0) out += std::string(out.empty() ? "" : ",") + "conn_lost:p=" + num(f.conn_lost);
  return out;
}

std::uint64_t repetition_seed(std::uint64_t base_seed, int index) {
  if (index == 0) return base_seed;
  return derive_seed(base_seed, "repetition." + std::to_string(index)) >> 11;
}

std::vector<Settings> expand_repetitions(const Settings& s, int n) {
  if (n < 1 || n > kRepetitionsMax)
    throw SettingError("--repetitions: " + std::to_string(n) + " is not accepted; give a whole number from 1 to " +
                       std::to_string(kRepetitionsMax));
  if (n == 1) return {s};
  std::vector<Settings> out;
  out.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    Settings one = s;
    one.repetitions = n;
    one.repetition = i;
    one.repetition_base_seed = s.seed;
    one.seed = repetition_seed(s.seed, i);
    out.push_back(std::move(one));
  }
  return out;
}

std::string_view key_hash_name(KeyHash h) {
  switch (h) {
    case KeyHash::scenario: return "scenario";
    case KeyHash::int_id: return "int-id";
    case KeyHash::sha256_64: return "sha256-64";
    case KeyHash::hashtext_32: return "hashtext-32";
  }
  return "scenario";
}

KeyHash parse_key_hash(const std::string& text) {
  for (KeyHash h : {KeyHash::scenario, KeyHash::int_id, KeyHash::sha256_64, KeyHash::hashtext_32})
    if (text == key_hash_name(h)) return h;
  throw SettingError("--key-hash: '" + text + "' is not accepted (accepted: scenario, int-id, sha256-64, hashtext-32)");
}

}  // namespace lockbench

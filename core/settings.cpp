#include "core/settings.hpp"

namespace lockbench {

std::string_view arrival_name(Arrival a) {
  switch (a) {
    case Arrival::open: return "open";
    case Arrival::closed: return "closed";
    case Arrival::burst: return "burst";
  }
  return "?";
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
  s.partner_latency = partner_latency.scaled(f);
  s.partner_connect_timeout = d(partner_connect_timeout);
  s.partner_read_timeout = d(partner_read_timeout);
  s.retry_backoff_base = d(retry_backoff_base);
  s.retry_backoff_cap = d(retry_backoff_cap);
  s.lease_ttl = d(lease_ttl);
  s.lock_timeout = d(lock_timeout);
  s.db_latency = db_latency.scaled(f);
  if (crash_at) s.crash_at = d(*crash_at);
  if (pause_at) s.pause_at = d(*pause_at);
  s.pause_for = d(pause_for);
  s.clock_skew = d(clock_skew);
  s.restart_after = d(restart_after);
  s.rate_per_s = rate_per_s / f;
  s.time_scale = 1;
  return s;
}

nlohmann::json Settings::to_json() const {
  const auto fd = [](Duration x) { return format_duration(x); };
  nlohmann::json j = {
      {"world", world},
      {"scenario", scenario},
      {"strategy", strategy},
      {"seed", seed},
      {"maximum-pool-size", maximum_pool_size},
      {"connection-timeout", fd(connection_timeout)},
      {"leak-detection-threshold", fd(leak_detection_threshold)},
      {"max-lifetime", fd(max_lifetime)},
      {"probe-interval", fd(probe_interval)},
      {"probe-timeout", fd(probe_timeout)},
      {"pods", pods},
      {"pod-mode", pod_mode},
      {"max-threads", max_threads},
      {"accept-count", accept_count},
      {"arrival", std::string(arrival_name(arrival))},
      {"rate", rate_per_s},
      {"users", users},
      {"think-time", fd(think_time)},
      {"burst", burst},
      {"keys", keys},
      {"key-dist", key_dist == KeyDist::zipf ? "zipf:" + std::to_string(zipf_s) : std::string(key_dist_name(key_dist))},
      {"duration", fd(duration)},
      {"duplicate-share", duplicate_share},
      {"duplicate-gap", fd(duplicate_gap)},
      {"partner-latency", partner_latency.to_string()},
      {"apply-at", apply_at},
      {"partner-connect-timeout", fd(partner_connect_timeout)},
      {"partner-read-timeout", fd(partner_read_timeout)},
      {"partner-max-attempts", partner_max_attempts},
      {"retry-backoff-base", fd(retry_backoff_base)},
      {"retry-backoff-cap", fd(retry_backoff_cap)},
      {"partner-faults", partner_faults},
      {"fencing", fencing},
      {"identities-per-person", identities_per_person},
      {"lease-ttl", fd(lease_ttl)},
      {"lock-timeout", fd(lock_timeout)},
      {"db-latency", db_latency.to_string()},
      {"time-scale", time_scale},
      {"trace-requests", trace_requests},
  };
  j["crash-at"] = crash_at ? nlohmann::json(fd(*crash_at)) : nlohmann::json(nullptr);
  j["pause-at"] = pause_at ? nlohmann::json(fd(*pause_at)) : nlohmann::json(nullptr);
  j["pause-for"] = fd(pause_for);
  j["clock-skew"] = fd(clock_skew);
  if (pod_mode == "process") {
    j["crash-pod"] = crash_pod;
    j["pause-pod"] = pause_pod;
    j["skew-pod"] = skew_pod;
    j["restart-after"] = fd(restart_after);
  }
  if (!targets.empty()) j["targets"] = targets;
  if (!db_url.empty()) j["db"] = db_url;
  if (!partner_url.empty()) j["partner"] = partner_url;
  return j;
}

void Settings::validate() const {
  const auto need = [](bool ok, const char* msg) {
    if (!ok) throw SettingError(msg);
  };
  need(world == "real" || world == "sim", "--world: accepted values are real, sim");
  // The scenario's name is checked against scenarios/registry.cpp where it is used.
  need(maximum_pool_size >= 1 && maximum_pool_size <= 10000, "--maximum-pool-size: must be a whole number from 1 to 10000");
  need(connection_timeout > 0s, "--connection-timeout: must be above 0 (e.g. 30s)");
  need(probe_interval >= 0s, "--probe-interval: must be 0 (off) or a duration");
  need(pods >= 1 && pods <= 64, "--pods: must be a whole number from 1 to 64");
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
  need(retry_backoff_cap >= retry_backoff_base, "--retry-backoff-cap: must be at least --retry-backoff-base");
  need(max_lifetime > 0s, "--max-lifetime: must be above 0 (e.g. 30m)");
  need(identities_per_person >= 2 && identities_per_person <= 16,
       "--identities-per-person: must be a whole number from 2 to 16");
  need(lease_ttl > 0s, "--lease-ttl: must be above 0 (e.g. 30s)");
  need(lock_timeout >= 0s, "--lock-timeout: must be 0 (no bound) or a duration");
  need(time_scale > 0 && time_scale <= 1000, "--time-scale: must be above 0 and at most 1000 (e.g. 0.01)");
  need(trace_requests >= 0 && trace_requests <= 10000, "--trace-requests: must be a whole number from 0 to 10000");
}

}  // namespace lockbench

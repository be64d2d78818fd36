// The one table of settings (settings/table.hpp): one row a setting, with its
// name, help, parser, --help group and type, its text and its place in a
// result. Every function that names settings reads these rows.
#include "settings/table.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "base/redact.hpp"
#include "scenarios/registry.hpp"
#include "strategies/registry.hpp"

namespace lockbench {

namespace {

std::string flag(std::string_view name) { return "--" + std::string(name); }

long long parse_int(const std::string& v, std::string_view name, long long lo, long long hi) {
  long long out = 0;
  const auto* end = v.data() + v.size();
  auto [p, ec] = std::from_chars(v.data(), end, out);
  if (ec != std::errc() || p != end || out < lo || out > hi)
    throw SettingError(flag(name) + ": '" + v + "' is not a whole number from " + std::to_string(lo) + " to " +
                       std::to_string(hi));
  return out;
}

// A decimal number only: strtod would also take hexadecimal ("0x10" = 16),
// "inf" and "nan".
bool decimal_text(const std::string& v) {
  return !v.empty() && v.find_first_not_of("0123456789.eE+-") == std::string::npos;
}

double parse_number(const std::string& v, std::string_view name, double lo, double hi) {
  char* end = nullptr;
  const double out = std::strtod(v.c_str(), &end);
  if (!decimal_text(v) || end != v.c_str() + v.size() || !std::isfinite(out) || out < lo || out > hi) {
    std::ostringstream msg;
    msg << flag(name) << ": '" << v << "' is not a number from " << lo << " to " << hi;
    throw SettingError(msg.str());
  }
  return out;
}

std::string one_of(const std::string& v, std::string_view name, std::initializer_list<const char*> accepted) {
  std::string list;
  for (const char* a : accepted) {
    if (v == a) return v;
    list += (list.empty() ? "" : ", ") + std::string(a);
  }
  throw SettingError(flag(name) + ": '" + v + "' is not accepted (accepted: " + list + ")");
}

using S = Settings;

// T or T:POD (POD 1-based; none/off = no fault).
void fault_at(S& s, const std::string& v, const char* name, std::optional<Duration> S::*at, int S::*pod) {
  if (v == "none" || v == "off") {
    s.*at = std::nullopt;
    return;
  }
  const auto colon = v.find(':');
  s.*at = parse_duration(iso8601_duration(v.substr(0, colon)), flag(name));
  s.*pod = colon == std::string::npos ? 1 : static_cast<int>(parse_int(v.substr(colon + 1), name, 1, 64));
}

// A setting's value as the user writes it: --help's default is this of Settings{}.
std::string text_of(Duration d) { return format_duration(d); }
std::string text_of(int v) { return std::to_string(v); }
std::string text_of(std::uint64_t v) { return std::to_string(v); }
std::string text_of(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}
std::string text_of(const std::string& v) { return v; }
std::string text_of(const Distribution& d) { return d.to_string(); }

template <class T>
std::function<std::string(const S&)> shown(T S::*field) {
  return [field](const S& s) { return text_of(s.*field); };
}

std::string fault_text(const std::optional<Duration>& at, int pod) {
  return at ? format_duration(*at) + (pod != 1 ? ":" + std::to_string(pod) : "") : "none";
}

// A row's place in a result's `settings` block (SettingDef::json).
using JsonOf = std::function<void(const S&, const SettingDef&, nlohmann::json&)>;

// `name: the field`, as a JSON number.
template <class T>
JsonOf number(T S::*field) {
  return [field](const S& s, const SettingDef& d, nlohmann::json& j) { j[d.name] = s.*field; };
}
// `name: of(s)`.
JsonOf value(std::function<nlohmann::json(const S&)> of) {
  return [of](const S& s, const SettingDef& d, nlohmann::json& j) { j[d.name] = of(s); };
}
// Only when `used(s)`: `write`, or `name: show(s)`.
JsonOf when(bool (*used)(const S&), JsonOf write = {}) {
  return [used, write](const S& s, const SettingDef& d, nlohmann::json& j) {
    if (!used(s)) return;
    if (write) write(s, d, j);
    else j[d.name] = d.show(s);
  };
}
// `name: show(s)` when the field is not empty (the URLs: show redacts them).
JsonOf unless_empty(std::string S::*field) {
  return [field](const S& s, const SettingDef& d, nlohmann::json& j) {
    if (!(s.*field).empty()) j[d.name] = d.show(s);
  };
}
// A point in time or null.
std::function<nlohmann::json(const S&)> time_or_null(std::optional<Duration> S::*field) {
  return [field](const S& s) { return s.*field ? nlohmann::json(format_duration(*(s.*field))) : nlohmann::json(nullptr); };
}
bool process_pods(const S& s) { return s.pod_mode == "process"; }
// A fault at T[:POD]: the time (or null) under the row's name, the pod under
// `pod_key` with process pods (the pod a fault hits is theirs only).
JsonOf fault_json(std::optional<Duration> S::*at, int S::*pod, const char* pod_key) {
  return [at, pod, pod_key](const S& s, const SettingDef& d, nlohmann::json& j) {
    j[d.name] = time_or_null(at)(s);
    if (process_pods(s)) j[pod_key] = s.*pod;
  };
}
// A duration row's bound (SettingDef::longest).
std::function<Duration(const S&)> longest(Duration S::*field) {
  return [field](const S& s) { return s.*field; };
}
std::function<Duration(const S&)> longest_at(std::optional<Duration> S::*field) {
  return [field](const S& s) { return (s.*field).value_or(Duration::zero()); };
}
bool key_hash_used(const S& s) { return s.key_hash != KeyHash::scenario; }
// etcd-lease's settings only where they matter: older results keep their bytes.
bool etcd_used(const S& s) { return s.strategy.rfind("etcd-lease", 0) == 0 || s.etcd_leader_change_at.has_value(); }

// The registries' names, for --help: a new scenario or strategy shows up by itself.
std::string scenario_names() {
  std::string out;
  for (const auto& sc : scenario_registry()) out += (out.empty() ? "" : " | ") + std::string(sc.name);
  return out;
}
std::string strategy_families() {
  std::vector<std::string_view> seen;
  std::string out;
  for (const auto& row : strategy_registry()) {
    if (std::find(seen.begin(), seen.end(), row.family) != seen.end()) continue;
    seen.push_back(row.family);
    out += (out.empty() ? "" : " | ") + std::string(row.family);
  }
  return out;
}

std::vector<SettingDef> make_defs() {
  const auto dur = [](const char* name, Duration S::*field) {
    return [name, field](S& s, const std::string& v) { s.*field = parse_duration(iso8601_duration(v), flag(name)); };
  };
  const auto integer = [](const char* name, int S::*field, long long lo, long long hi) {
    return [=](S& s, const std::string& v) { s.*field = static_cast<int>(parse_int(v, name, lo, hi)); };
  };
  constexpr auto W = kGroupWorkload, P = kGroupPool, C = kGroupContainer, N = kGroupPartner, D = kGroupDatabase,
                 F = kGroupFaults, O = kGroupOutput;
  std::vector<SettingDef> d = {
      {"world", "where the run happens: real | sim", [](S& s, const std::string& v) { s.world = one_of(v, "world", {"real", "sim"}); },
       W, "real|sim", shown(&S::world)},
      {"scenario", "business operation: " + scenario_names() + " (lockbench explain SCENARIO)",
       [](S& s, const std::string& v) { s.scenario = std::string(scenario_info(v).name); }, W, "NAME", shown(&S::scenario)},
      {"strategy", "NAME[:variant], a comma-separated list, or all; families: " + strategy_families() +
                       " (lockbench explain lists the variants)",
       [](S& s, const std::string& v) { s.strategy = v; }, W, "NAME[,NAME...]|all", shown(&S::strategy)},
      {"seed", "seed of every random choice (printed and stored in each result)",
       [](S& s, const std::string& v) { s.seed = static_cast<std::uint64_t>(parse_int(v, "seed", 0, 9007199254740991LL)); },
       W, "INT", shown(&S::seed),
       number(&S::seed)},
      {"db", "PostgreSQL URL for --world real (postgresql://user@127.0.0.1:5432/db)",
       [](S& s, const std::string& v) {
         if (v.rfind("postgresql://", 0) != 0 && v.rfind("postgres://", 0) != 0)
           throw SettingError("--db: '" + redact_secrets(v) +
                              "' is not a PostgreSQL URL (use postgresql://user@host:port/dbname; the password "
                              "from PGPASSWORD or ~/.pgpass)");
         s.db_url = v;
       },
       D, "URL", [](const S& s) { return redact_secrets(s.db_url); },
       unless_empty(&S::db_url)},
      {"partner", "fake partner base URL for --world real (http://127.0.0.1:PORT)",
       [](S& s, const std::string& v) {
         if (v.rfind("http://", 0) != 0)
           throw SettingError("--partner: '" + redact_secrets(v) + "' is not an http:// URL (use http://127.0.0.1:PORT)");
         s.partner_url = v;
       },
       N, "URL", [](const S& s) { return redact_secrets(s.partner_url); },
       unless_empty(&S::partner_url)},
      {"maximum-pool-size", "HikariCP maximumPoolSize: connections in each pod's pool", integer("maximum-pool-size", &S::maximum_pool_size, 1, 10000),
       P, "INT", shown(&S::maximum_pool_size),
       number(&S::maximum_pool_size)},
      {"connection-timeout", "HikariCP connectionTimeout: longest wait for a connection", dur("connection-timeout", &S::connection_timeout),
       P, "DURATION", shown(&S::connection_timeout),
       {}, longest(&S::connection_timeout)},
      {"leak-detection-threshold", "HikariCP leakDetectionThreshold (0 = off)", dur("leak-detection-threshold", &S::leak_detection_threshold),
       P, "DURATION", shown(&S::leak_detection_threshold),
       {}, longest(&S::leak_detection_threshold)},
      {"max-lifetime", "HikariCP maxLifetime: connections older than this are retired", dur("max-lifetime", &S::max_lifetime),
       P, "DURATION", shown(&S::max_lifetime),
       {}, longest(&S::max_lifetime)},
      {"probe-interval", "health probe period (0 = no probe)", dur("probe-interval", &S::probe_interval),
       P, "DURATION", shown(&S::probe_interval),
       {}, longest(&S::probe_interval)},
      {"probe-timeout", "health probe's connection timeout", dur("probe-timeout", &S::probe_timeout),
       P, "DURATION", shown(&S::probe_timeout),
       {}, longest(&S::probe_timeout)},
      {"pods", "service instances, each with its own pool and workers", integer("pods", &S::pods, 1, 64),
       C, "INT", shown(&S::pods),
       number(&S::pods)},
      {"readiness", "Kubernetes readiness probe that acts (replaces --probe-interval's counting probe): off | on | "
                    "period=10s,timeout=1s,failure-threshold=3,success-threshold=1,initial-delay=0s,db=on; a pod that "
                    "fails it gets no new requests, none ready = 503 (simulator; real: --pod-mode process)",
       [](S& s, const std::string& v) { s.readiness = parse_probe(v, "--readiness", false); }, C, "off|on|KEY=VALUE,...",
       [](const S& s) { return probe_text(s.readiness); },
       when([](const S& s) { return s.readiness.on; }),
       [](const S& s) { return std::max({s.readiness.period, s.readiness.timeout, s.readiness.initial_delay}); }},
      {"liveness", "Kubernetes liveness probe that kills: off | on | period=10s,timeout=1s,failure-threshold=3,db=on "
                   "(db=off: only that the pod answers, the recommended liveness); a pod that fails it is killed and "
                   "restarted cold (simulator; real: --pod-mode process)",
       [](S& s, const std::string& v) { s.liveness = parse_probe(v, "--liveness", true); }, C, "off|on|KEY=VALUE,...",
       [](const S& s) { return probe_text(s.liveness); },
       when([](const S& s) { return s.liveness.on; }),
       [](const S& s) { return std::max({s.liveness.period, s.liveness.timeout, s.liveness.initial_delay}); }},
      {"pod-startup", "--liveness: a restarted pod's application start (after kubelet's back-off) before it serves",
       dur("pod-startup", &S::pod_startup), C, "DURATION", shown(&S::pod_startup),
       when([](const S& s) { return s.liveness.on; }),
       longest(&S::pod_startup)},
      {"pod-mode", "real world: thread (pods inside this process) | process (`lockbench serve` children over HTTP)",
       [](S& s, const std::string& v) { s.pod_mode = one_of(v, "pod-mode", {"thread", "process"}); },
       C, "thread|process", shown(&S::pod_mode)},
      {"targets", "real world: base URLs of services already running (http://HOST:PORT[,...]); no pod is started",
       [](S& s, const std::string& v) {
         std::stringstream in(v);
         std::string one;
         int n = 0;
         while (std::getline(in, one, ',')) {
           if (one.rfind("http://", 0) != 0 || one.size() <= 7)
             throw SettingError("--targets: '" + one + "' is not an http:// URL (use http://HOST:PORT[,http://HOST:PORT...])");
           ++n;
         }
         if (n == 0 || n > 64) throw SettingError("--targets: give 1 to 64 comma-separated http://HOST:PORT URLs");
         s.targets = v;
       },
       C, "URL[,URL...]", shown(&S::targets),
       unless_empty(&S::targets)},
      {"max-threads", "Tomcat maxThreads: request workers per pod", integer("max-threads", &S::max_threads, 1, 100000),
       C, "INT", shown(&S::max_threads),
       number(&S::max_threads)},
      {"accept-count", "Tomcat acceptCount: queued requests per pod before rejection", integer("accept-count", &S::accept_count, 0, 1000000),
       C, "INT", shown(&S::accept_count),
       number(&S::accept_count)},
      {"virtual-threads", "Spring's spring.threads.virtual.enabled (Java 21+): a virtual thread per request, no "
                          "Tomcat worker cap or accept queue (simulator and lint; below --jdk 24 synchronized pins "
                          "one of the pod's --carriers): on | off",
       [](S& s, const std::string& v) {
         const std::string w = one_of(v, "virtual-threads", {"on", "off", "true", "false"});
         s.virtual_threads = w == "on" || w == "true";
       },
       C, "on|off", [](const S& s) { return std::string(s.virtual_threads ? "on" : "off"); },
       when([](const S& s) { return s.virtual_threads; }, value([](const S&) { return nlohmann::json(true); }))},
      {"jdk", "lint, and the simulator with --virtual-threads: the JDK's feature release the service runs on (21, 24, ...; unknown = not known): below 24 a "
              "virtual thread in synchronized pins its carrier",
       [](S& s, const std::string& v) { s.jdk = v == "unknown" ? 0 : static_cast<int>(parse_int(v, "jdk", 8, 99)); },
       C, "INT|unknown", [](const S& s) { return s.jdk ? std::to_string(s.jdk) : std::string("unknown"); },
       when([](const S& s) { return s.jdk > 0; }, number(&S::jdk))},
      {"carriers", "with --virtual-threads: the carrier threads a pod runs its virtual threads on "
                   "(jdk.virtualThreadScheduler.parallelism, by default the pod's cores)",
       integer("carriers", &S::carriers, 1, 1024), C, "INT", shown(&S::carriers),
       when([](const S& s) { return s.virtual_threads; }, number(&S::carriers))},
      {"rate", "open loop: Poisson arrivals per second",
       [](S& s, const std::string& v) {
         s.rate_per_s = parse_number(v, "rate", 1e-6, 1e6);
         s.arrival = Arrival::open;
       },
       W, "RATE", shown(&S::rate_per_s),
       [](const S& s, const SettingDef& d, nlohmann::json& j) {  // and the arrival model the three rows choose
         j[d.name] = s.rate_per_s;
         j["arrival"] = std::string(arrival_name(s.arrival));
       }},
      {"users", "closed loop: this many users, each waiting for its answer then thinking",
       [](S& s, const std::string& v) {
         s.users = static_cast<int>(parse_int(v, "users", 1, 100000));
         s.arrival = Arrival::closed;
       },
       W, "INT", shown(&S::users),
       number(&S::users)},
      {"think-time", "closed loop: mean think time (exponential)", dur("think-time", &S::think_time),
       W, "DURATION", shown(&S::think_time),
       {}, longest(&S::think_time)},
      {"burst", "K requests at the same instant",
       [](S& s, const std::string& v) {
         s.burst = static_cast<int>(parse_int(v, "burst", 1, 100000));
         s.arrival = Arrival::burst;
       },
       W, "INT", shown(&S::burst),
       number(&S::burst)},
      {"keys", "number of users (keys) requests are spread over", integer("keys", &S::keys, 1, 10000000),
       W, "INT", shown(&S::keys),
       number(&S::keys)},
      {"key-dist", "key choice: hot | uniform | zipf:S",
       [](S& s, const std::string& v) {
         if (v == "hot") s.key_dist = KeyDist::hot;
         else if (v == "uniform") s.key_dist = KeyDist::uniform;
         else if (v.rfind("zipf:", 0) == 0) {
           s.key_dist = KeyDist::zipf;
           s.zipf_s = parse_number(v.substr(5), "key-dist", 0.01, 9.99);
         } else {
           throw SettingError("--key-dist: '" + v + "' is not accepted (accepted: hot, uniform, zipf:S e.g. zipf:1.1)");
         }
       },
       W, "hot|uniform|zipf:S",
       [](const S& s) {
         return std::string(key_dist_name(s.key_dist)) + (s.key_dist == KeyDist::zipf ? ":" + text_of(s.zipf_s) : "");
       },
       value([](const S& s) {
         return s.key_dist == KeyDist::zipf ? "zipf:" + std::to_string(s.zipf_s) : std::string(key_dist_name(s.key_dist));
       })},
      {"duration", "how long arrivals go on (the run then drains)", dur("duration", &S::duration),
       W, "DURATION", shown(&S::duration),
       {}, longest(&S::duration)},
      {"duplicate-share", "share of requests submitted twice (double click, client retry), 0..1",
       [](S& s, const std::string& v) { s.duplicate_share = parse_number(v, "duplicate-share", 0, 1); },
       W, "SHARE", shown(&S::duplicate_share),
       number(&S::duplicate_share)},
      {"duplicate-gap", "the second submission arrives within this of the first", dur("duplicate-gap", &S::duplicate_gap),
       W, "DURATION", shown(&S::duplicate_gap),
       {}, longest(&S::duplicate_gap)},
      {"bypass-share", "share of requests that ignore the lock (an admin job, a second service), 0..1",
       [](S& s, const std::string& v) { s.bypass_share = parse_number(v, "bypass-share", 0, 1); },
       W, "SHARE", shown(&S::bypass_share),
       when([](const S& s) { return s.bypass_share > 0; }, number(&S::bypass_share))},
      {"orm-writer-rate", "a second code path that loads and saves the lock row's entity, per second (0 = off)",
       [](S& s, const std::string& v) { s.orm_writer_rate = parse_number(v, "orm-writer-rate", 0, 100000); },
       W, "RATE", shown(&S::orm_writer_rate),
       when([](const S& s) { return s.orm_writer_rate > 0; }, number(&S::orm_writer_rate))},
      {"orm-writer-gap", "that second code path's time between its load and its save", dur("orm-writer-gap", &S::orm_writer_gap),
       W, "DURATION", shown(&S::orm_writer_gap),
       when([](const S& s) { return s.orm_writer_rate > 0; }),
       longest(&S::orm_writer_gap)},
      {"partner-latency", "fixed:200ms | uniform:100ms..300ms | exponential:mean=1.5s | lognormal:p50=1.5s,p99=4s",
       [](S& s, const std::string& v) { s.partner_latency = Distribution::parse(v, "--partner-latency"); },
       N, "DIST", shown(&S::partner_latency)},
      {"apply-at", "share of the partner delay that passes before its effect (0..1)",
       [](S& s, const std::string& v) { s.apply_at = parse_number(v, "apply-at", 0, 1); },
       N, "SHARE", shown(&S::apply_at),
       number(&S::apply_at)},
      {"partner-connect-timeout", "partner client's connect timeout", dur("partner-connect-timeout", &S::partner_connect_timeout),
       N, "DURATION", shown(&S::partner_connect_timeout),
       {}, longest(&S::partner_connect_timeout)},
      {"partner-read-timeout", "partner client's read timeout", dur("partner-read-timeout", &S::partner_read_timeout),
       N, "DURATION", shown(&S::partner_read_timeout),
       {}, longest(&S::partner_read_timeout)},
      {"partner-max-attempts", "partner client's attempts per call (1 = no retry)", integer("partner-max-attempts", &S::partner_max_attempts, 1, 20),
       N, "INT", shown(&S::partner_max_attempts),
       number(&S::partner_max_attempts)},
      {"retry-backoff-base", "retry backoff base (min(cap, base*2^n), full jitter)", dur("retry-backoff-base", &S::retry_backoff_base),
       N, "DURATION", shown(&S::retry_backoff_base),
       {}, longest(&S::retry_backoff_base)},
      {"retry-backoff-cap", "retry backoff cap", dur("retry-backoff-cap", &S::retry_backoff_cap),
       N, "DURATION", shown(&S::retry_backoff_cap),
       {}, longest(&S::retry_backoff_cap)},
      {"circuit-breaker", "partner client's circuit breaker per pod (resilience4j): off | on | failure-rate-threshold=50,"
                          "slow-call-rate-threshold=100,slow-call-duration-threshold=60s,wait-in-open=60s,sliding-window-size=100,"
                          "minimum-number-of-calls=100,permitted-calls-in-half-open=10 (resilience4j's names too); open, "
                          "an attempt fails at once without reaching the partner",
       [](S& s, const std::string& v) { s.circuit_breaker = parse_breaker(v, "--circuit-breaker"); }, N,
       "off|on|KEY=VALUE,...", [](const S& s) { return breaker_text(s.circuit_breaker); },
       when([](const S& s) { return s.circuit_breaker.on; }),
       [](const S& s) { return std::max(s.circuit_breaker.wait_in_open, s.circuit_breaker.slow_call_duration_threshold); }},
      {"retry-budget", "partner client's retry budget per pod (gRPC retry throttling): off | on | max-tokens=10,token-ratio=0.1; "
                       "a failed attempt takes a token, a success gives token-ratio back, retries only above max-tokens/2",
       [](S& s, const std::string& v) { s.retry_budget = parse_retry_budget(v, "--retry-budget"); }, N,
       "off|on|KEY=VALUE,...", [](const S& s) { return retry_budget_text(s.retry_budget); },
       when([](const S& s) { return s.retry_budget.on; })},
      {"partner-faults", "partner faults per endpoint, JSON (docs/reference/partner-api.md D), e.g. {\"auth0.link\":[{\"kind\":\"error\",\"p\":0.5,\"status\":503}]}",
       [](S& s, const std::string& v) {
         nlohmann::json j;
         try {
           j = nlohmann::json::parse(v);
         } catch (const std::exception&) {
           throw SettingError("--partner-faults: not valid JSON (use an object of endpoint -> list of faults)");
         }
         if (!j.is_object()) throw SettingError("--partner-faults: must be a JSON object of endpoint -> list of faults");
         s.partner_faults = j;
       },
       F, "JSON", [](const S& s) { return s.partner_faults.dump(); },
       value([](const S& s) { return s.partner_faults; })},
      {"fencing", "partner fencing-token enforcement: ignore | enforce",
       [](S& s, const std::string& v) { s.fencing = one_of(v, "fencing", {"ignore", "enforce"}); },
       N, "ignore|enforce", shown(&S::fencing)},
      {"identities-per-person", "identities seeded per user at the partner", integer("identities-per-person", &S::identities_per_person, 2, 16),
       N, "INT", shown(&S::identities_per_person),
       number(&S::identities_per_person)},
      {"lease-ttl", "row-lease TTL: a lease older than this is free again", dur("lease-ttl", &S::lease_ttl),
       D, "DURATION", shown(&S::lease_ttl),
       {}, longest(&S::lease_ttl)},
      {"lock-timeout", "bounded lock waits (SET LOCAL lock_timeout); 0 = no bound", dur("lock-timeout", &S::lock_timeout),
       D, "DURATION", shown(&S::lock_timeout),
       {}, longest(&S::lock_timeout)},
      {"key-hash", "advisory-xact/-session: the lock's number from the request's key: scenario (its own) | int-id | "
                   "sha256-64 (first 8 bytes of SHA-256 of \"user:<id>\") | hashtext-32 (PostgreSQL's hashtext)",
       [](S& s, const std::string& v) { s.key_hash = parse_key_hash(v); }, D, "scenario|int-id|sha256-64|hashtext-32",
       [](const S& s) { return std::string(key_hash_name(s.key_hash)); },
       when(key_hash_used)},
      {"key-id-base", "--key-hash: the business id of key 1 (key k is base + (k-1) * stride)",
       [](S& s, const std::string& v) { s.key_id_base = parse_int(v, "key-id-base", 0, 1LL << 50); }, D, "INT",
       [](const S& s) { return std::to_string(s.key_id_base); },
       when(key_hash_used, number(&S::key_id_base))},
      {"key-id-stride", "--key-hash: the ids' step from one key to the next",
       [](S& s, const std::string& v) { s.key_id_stride = parse_int(v, "key-id-stride", 1, 1LL << 40); }, D, "INT",
       [](const S& s) { return std::to_string(s.key_id_stride); },
       when(key_hash_used, number(&S::key_id_stride))},
      {"pre-sql-work", "held-tx: work inside @Transactional before its first SQL (validation, a call); 0 = none",
       dur("pre-sql-work", &S::pre_sql_work), P, "DURATION", shown(&S::pre_sql_work),
       when([](const S& s) { return s.pre_sql_work != Duration::zero(); }),
       longest(&S::pre_sql_work)},
      {"delay-connection-acquisition", "held-tx: take the connection at the first SQL, not at the transaction's start "
                                       "(Hibernate provider_disables_autocommit=true + Hikari auto-commit=false): on | off",
       [](S& s, const std::string& v) {
         const std::string w = one_of(v, "delay-connection-acquisition", {"on", "off", "true", "false"});
         s.delay_connection_acquisition = w == "on" || w == "true";
       },
       P, "on|off", [](const S& s) { return std::string(s.delay_connection_acquisition ? "on" : "off"); },
       when([](const S& s) { return s.delay_connection_acquisition; })},
      {"db-latency", "simulator: latency of one SQL statement (as --partner-latency)",
       [](S& s, const std::string& v) { s.db_latency = Distribution::parse(v, "--db-latency"); },
       D, "DIST", shown(&S::db_latency)},
      {"partner-overhead", "simulator: HTTP cost of one partner call on top of its latency (lockbench calibrate)",
       dur("partner-overhead", &S::partner_overhead), N, "DURATION", shown(&S::partner_overhead),
       {}, longest(&S::partner_overhead)},
      {"pool-handoff", "simulator: time for a waiting thread to get a returned connection (lockbench calibrate)",
       dur("pool-handoff", &S::pool_handoff), P, "DURATION", shown(&S::pool_handoff),
       {}, longest(&S::pool_handoff)},
      {"pool-order", "simulator: who gets a returned connection while threads wait: fifo (the first waiter) | "
                     "hikari (HikariCP's ConcurrentBag: a newcomer takes it while the offered waiter wakes, --pool-handoff)",
       [](S& s, const std::string& v) { s.pool_order = one_of(v, "pool-order", {"fifo", "hikari"}); },
       P, "fifo|hikari", shown(&S::pool_order),
       when([](const S& s) { return s.pool_order != "fifo"; })},
      {"worker-handoff", "simulator: time for a worker to pick up a request (lockbench calibrate)",
       dur("worker-handoff", &S::worker_handoff), C, "DURATION", shown(&S::worker_handoff),
       {}, longest(&S::worker_handoff)},
      {"db-faults", "database faults, both worlds: commit_fail:p=P,conn_lost:p=P | none",
       [](S& s, const std::string& v) { s.db_faults = parse_db_faults(v); },
       F, "FAULTS", [](const S& s) { return db_faults_text(s.db_faults); }},
      {"outbox-pollers", "outbox: delivering pollers per pod (split-tx, after-commit: reconcilers)", integer("outbox-pollers", &S::outbox_pollers, 0, 64),
       C, "INT", shown(&S::outbox_pollers),
       number(&S::outbox_pollers)},
      {"outbox-poll-interval", "outbox: an idle poller looks again after this", dur("outbox-poll-interval", &S::outbox_poll_interval),
       C, "DURATION", shown(&S::outbox_poll_interval),
       {}, longest(&S::outbox_poll_interval)},
      {"outbox-drain-limit", "outbox: pollers may deliver this long after --duration; the rest is undelivered",
       dur("outbox-drain-limit", &S::outbox_drain_limit), C, "DURATION", shown(&S::outbox_drain_limit),
       {}, longest(&S::outbox_drain_limit)},
      {"email-latency", "after-commit: time of the confirmation email's send", dur("email-latency", &S::email_latency),
       C, "DURATION", shown(&S::email_latency),
       {}, longest(&S::email_latency)},
      {"time-scale", "real world: multiply every configured duration by F (rates divided)",
       [](S& s, const std::string& v) { s.time_scale = parse_number(v, "time-scale", 1e-4, 1000); },
       W, "FACTOR", shown(&S::time_scale),
       number(&S::time_scale)},
      {"crash-at", "the pod crashes at this time (real: T[:POD], kill -9 of pod POD's process, --pod-mode process)",
       [](S& s, const std::string& v) { fault_at(s, v, "crash-at", &S::crash_at, &S::crash_pod); },
       F, "DURATION[:POD]|none", [](const S& s) { return fault_text(s.crash_at, s.crash_pod); },
       fault_json(&S::crash_at, &S::crash_pod, "crash-pod"),
       longest_at(&S::crash_at)},
      {"restart-after", "real, --pod-mode process: a killed pod is started again after this", dur("restart-after", &S::restart_after),
       F, "DURATION", shown(&S::restart_after),
       when(process_pods),
       longest(&S::restart_after)},
      {"pause-at", "a pod pauses (GC-style) at this time (real: T[:POD], SIGSTOP/SIGCONT, --pod-mode process; at the pod's first partner call from T on)",
       [](S& s, const std::string& v) { fault_at(s, v, "pause-at", &S::pause_at, &S::pause_pod); },
       F, "DURATION[:POD]|none", [](const S& s) { return fault_text(s.pause_at, s.pause_pod); },
       fault_json(&S::pause_at, &S::pause_pod, "pause-pod"),
       longest_at(&S::pause_at)},
      {"pause-for", "length of the pause (real: from the SIGSTOP)", dur("pause-for", &S::pause_for), F, "DURATION", shown(&S::pause_for),
       {}, longest(&S::pause_for)},
      {"clock-skew", "app clock minus database clock on pods >= 1 (row-lease:app-clock); real: D[:POD], --pod-mode process",
       [](S& s, const std::string& v) {
         const auto colon = v.find(':');
         s.clock_skew = parse_duration(iso8601_duration(v.substr(0, colon)), "--clock-skew");
         s.skew_pod = colon == std::string::npos ? 0 : static_cast<int>(parse_int(v.substr(colon + 1), "clock-skew", 1, 64));
       },
       F, "DURATION[:POD]",
       [](const S& s) { return format_duration(s.clock_skew) + (s.skew_pod > 0 ? ":" + std::to_string(s.skew_pod) : ""); },
       [](const S& s, const SettingDef& d, nlohmann::json& j) {
         j[d.name] = format_duration(s.clock_skew);
         if (process_pods(s)) j["skew-pod"] = s.skew_pod;
       },
       [](const S& s) { return s.clock_skew < Duration::zero() ? -s.clock_skew : s.clock_skew; }},
      {"trace-requests", "requests whose steps are kept in the result's trace", integer("trace-requests", &S::trace_requests, 0, 10000),
       O, "INT", shown(&S::trace_requests),
       number(&S::trace_requests)},
      {"pgbouncer", "PgBouncer between pods and PostgreSQL: none | transaction | session (real: started for the run)",
       [](S& s, const std::string& v) { s.pgbouncer = one_of(v, "pgbouncer", {"none", "transaction", "session"}); },
       D, "none|transaction|session", shown(&S::pgbouncer)},
      {"pgbouncer-pool-size", "PgBouncer default_pool_size: server backends shared by every pod's connections",
       integer("pgbouncer-pool-size", &S::pgbouncer_pool_size, 1, 10000), D, "INT", shown(&S::pgbouncer_pool_size),
       number(&S::pgbouncer_pool_size)},
      {"statements", "real world: prepared | unnamed (PQexecParams, works through transaction pooling) | auto",
       [](S& s, const std::string& v) { s.statements = one_of(v, "statements", {"auto", "prepared", "unnamed"}); },
       D, "auto|prepared|unnamed", shown(&S::statements)},
      {"redis", "redis-lease's store: redis://HOST:PORT (real world)", [](S& s, const std::string& v) { s.redis_url = v; },
       D, "URL", [](const S& s) { return s.redis_url.empty() ? std::string("none") : redact_secrets(s.redis_url); },
       unless_empty(&S::redis_url)},
      {"redis-latency", "simulator: round trip of one lease-store command (as --partner-latency)",
       [](S& s, const std::string& v) { s.redis_latency = Distribution::parse(v, "--redis-latency"); }, D, "DIST",
       shown(&S::redis_latency)},
      {"redis-failover-at", "simulator: the lease store fails over here, losing the writes of the last --redis-replication-lag",
       [](S& s, const std::string& v) {
         if (v == "none" || v == "off") s.redis_failover_at = std::nullopt;
         else s.redis_failover_at = parse_duration(iso8601_duration(v), "--redis-failover-at");
       },
       F, "DURATION|none", [](const S& s) { return s.redis_failover_at ? format_duration(*s.redis_failover_at) : std::string("none"); },
       value(time_or_null(&S::redis_failover_at)),
       longest_at(&S::redis_failover_at)},
      {"redis-replication-lag", "simulator: writes not yet replicated when the store fails over",
       dur("redis-replication-lag", &S::redis_replication_lag), F, "DURATION", shown(&S::redis_replication_lag),
       {}, longest(&S::redis_replication_lag)},
      {"etcd", "etcd-lease's store: http://HOST:PORT, etcd's v3 JSON gateway (real world)",
       [](S& s, const std::string& v) { s.etcd_url = v; }, D, "URL",
       [](const S& s) { return s.etcd_url.empty() ? std::string("none") : redact_secrets(s.etcd_url); },
       when([](const S& s) { return etcd_used(s) && !s.etcd_url.empty(); })},
      {"etcd-latency", "simulator: round trip of one etcd request, a write through Raft (as --partner-latency)",
       [](S& s, const std::string& v) { s.etcd_latency = Distribution::parse(v, "--etcd-latency"); }, D, "DIST",
       shown(&S::etcd_latency),
       when(etcd_used)},
      {"etcd-leader-change-at", "simulator: etcd's leader changes here; its requests wait --etcd-election, nothing is lost",
       [](S& s, const std::string& v) {
         if (v == "none" || v == "off") s.etcd_leader_change_at = std::nullopt;
         else s.etcd_leader_change_at = parse_duration(iso8601_duration(v), "--etcd-leader-change-at");
       },
       F, "DURATION|none",
       [](const S& s) { return s.etcd_leader_change_at ? format_duration(*s.etcd_leader_change_at) : std::string("none"); },
       when(etcd_used, value(time_or_null(&S::etcd_leader_change_at))),
       longest_at(&S::etcd_leader_change_at)},
      {"etcd-election", "simulator: how long etcd has no leader after --etcd-leader-change-at",
       dur("etcd-election", &S::etcd_election), F, "DURATION", shown(&S::etcd_election),
       when(etcd_used),
       longest(&S::etcd_election)},
      {"max-connections", "lint: the server's max_connections; server = read from --db (100 without it)",
       [](S& s, const std::string& v) {
         s.pg_max_connections = v == "server" ? 0 : static_cast<int>(parse_int(v, "max-connections", 1, 262143));
       },
       D, "INT|server", [](const S& s) { return s.pg_max_connections ? std::to_string(s.pg_max_connections) : std::string("server"); },
       when([](const S& s) { return s.pg_max_connections > 0; }, number(&S::pg_max_connections))},
      {"max-locks-per-transaction", "lint: the server's max_locks_per_transaction; server = read from --db (64 without it)",
       [](S& s, const std::string& v) {
         s.pg_max_locks_per_transaction =
             v == "server" ? 0 : static_cast<int>(parse_int(v, "max-locks-per-transaction", 10, 2147483647));
       },
       D, "INT|server",
       [](const S& s) { return s.pg_max_locks_per_transaction ? std::to_string(s.pg_max_locks_per_transaction) : std::string("server"); },
       when([](const S& s) { return s.pg_max_locks_per_transaction > 0; }, number(&S::pg_max_locks_per_transaction))},
  };
  return d;
}

}  // namespace

const std::vector<SettingDef>& setting_defs() {
  static const std::vector<SettingDef> defs = make_defs();
  return defs;
}

const SettingDef* find_setting(std::string_view name) {
  for (const auto& d : setting_defs())
    if (d.name == name) return &d;
  return nullptr;
}

void apply_setting(Settings& s, std::string_view name, const std::string& value) {
  const SettingDef* d = find_setting(name);
  if (!d) throw SettingError(flag(name) + ": unknown setting (see `lockbench run --help`)");
  d->apply(s, value);
}

}  // namespace lockbench

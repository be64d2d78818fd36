// The pod protocol: what the runner (real/process_pods.cpp) and `lockbench
// serve` (real/serve.cpp) exchange, written once for both sides.
//
//   flags      a pod is started as `lockbench serve` + pod_args(): the run's
//              settings generated from the settings table (settings/table.hpp's
//              setting_args: a new setting reaches the pods by itself), its run
//              and pod number, --port 0; the URLs that may hold a password in
//              the environment (pod_env: kServeDbEnv, kServeRedisEnv, kServeEtcdEnv)
//   started    the pod prints "listening on HOST:PORT" (kListeningPrefix) first
//   requests   POST op_path(scenario, key) with X-Request-Id and X-Choice; the
//              answer's status is the Outcome (status_of / outcome_of_status)
//              and X-Lockbench-Split the pod's time split (split_header /
//              parse_split)
//   probes     GET kPathReadiness (a pool borrow + SELECT 1, Spring's db
//              indicator; ?timeout_ms=N bounds the borrow), kPathLiveness (the
//              answer alone): the runner's kubelet (real/kubelet.hpp) probes these
//   control    GET kPathReadiness, kPathInfo, kPathPool, kPathStats; POST
//              kPathRequestsOver with "Authorization: Bearer $kControlTokenEnv"
//              when the pods were given a token
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/metrics.hpp"
#include "core/settings.hpp"

namespace lockbench::real {

// Process pods get their --db and --redis URLs, which may hold a password, in
// these environment variables instead of argv (ps shows argv to every user).
inline constexpr const char* kServeDbEnv = "LOCKBENCH_SERVE_DB";
inline constexpr const char* kServeRedisEnv = "LOCKBENCH_SERVE_REDIS";
inline constexpr const char* kServeEtcdEnv = "LOCKBENCH_SERVE_ETCD";
inline constexpr const char* kControlTokenEnv = "LOCKBENCH_CONTROL_TOKEN";

inline constexpr std::string_view kListeningPrefix = "listening on ";
inline constexpr const char* kPathReadiness = "/health/readiness";
inline constexpr const char* kPathLiveness = "/health/liveness";  // answers without touching the pool
// kPathReadiness?timeout_ms=N: the pool borrow gives up after N ms (the kubelet's probe timeout).
inline constexpr const char* kParamTimeoutMs = "timeout_ms";
inline constexpr const char* kPathInfo = "/lockbench/info";
inline constexpr const char* kPathPool = "/lockbench/pool";
inline constexpr const char* kPathStats = "/lockbench/stats";
inline constexpr const char* kPathRequestsOver = "/lockbench/requests-over";
inline constexpr const char* kHeaderRequestId = "X-Request-Id";
inline constexpr const char* kHeaderChoice = "X-Choice";
inline constexpr const char* kHeaderSplit = "X-Lockbench-Split";
inline constexpr const char* kHeaderOutcome = "X-Lockbench-Outcome";

// The HTTP path of a request of `scenario` on `key` (the generic form).
std::string op_path(std::string_view scenario, std::int64_t key);

// 200 ok | 409 conflict | 503 pool timeout | 429 rejected | 500 error; any
// other status (404, 400, a proxy's 502) is an error to the runner.
int status_of(Outcome o);
Outcome outcome_of_status(int status);

// "queue pool_wait lock_wait partner db held service" in microseconds.
std::string split_header(const TimeSplit& split, Duration service);
// The runner's view: the time outside the pod (network, a late sender), the
// request's `total` less the pod's service time, counts as queueing; a header
// it cannot read gives TimeSplit{total}.
TimeSplit parse_split(const std::string& text, Duration total);

// The flags of pod `index` (0-based) of a run on rows `run`: `scaled` as the
// settings table writes it (less the secrets, which pod_env carries), then
// --run-id, --pod, --port 0. The caller gives each pod its own settings (a
// clock skew on some pods only: real/faults.hpp).
std::vector<std::string> pod_args(const Settings& scaled, std::int64_t run, int index);
// NAME=VALUE entries for the pod's environment.
std::vector<std::string> pod_env(const Settings& s);

}  // namespace lockbench::real

// serve: ONE pod of the service as an HTTP server on 127.0.0.1 (`lockbench serve`).
//
// The pod is what a Spring Boot service is: a servlet container's workers
// (real::WorkerPool: --max-threads, --accept-count), a HikariCP-like pool
// (real::Pool) on the run's rows (lockbench.rows, run = --run-id), the partner
// over HTTP. The endpoint contract (also the "bring your own service" contract,
// docs/reference/service-contract.md) is:
//
//   POST /ops/{scenario}/{key}       one request of the scenario on record {key}
//   POST /users/{key}/primary        the same for switch-primary
//   POST /checkout/{key}             the same for checkout
//   POST /calls/{key}                the same for single-call
//        headers  X-Request-Id: N (1..2^63, unique in the run; names the lease owner
//                 and the partner's request id), X-Choice: N (the scenario's random bits)
//        answers  200 ok | 409 conflict | 503 pool timeout | 429 rejected
//                 (no worker and the accept queue full) | 500 error | 404 wrong
//                 scenario | 400 bad request; header X-Lockbench-Split with the
//                 pod's time split in microseconds: "queue pool_wait lock_wait
//                 partner db held service"
//   GET  /health/readiness           borrows a connection within --probe-timeout and
//                                    runs SELECT 1: 200 {"status":"UP"} | 503 DOWN
//   GET  /health/liveness            200 while the process answers
//   GET  /metrics                    Prometheus text, Micrometer's HikariCP names
//                                    (hikaricp_connections_*{pool="podN"})
//   GET  /lockbench/info             {"run", "scenario", "strategy", "pod", "pid", "settings"
//                                    (Settings::to_json: what the pod was started with)}
//   GET  /lockbench/pool             {"active", "pending", "idle", "in_partner", "in_first_call"} (cheap;
//                                    in_first_call: of in_partner, those in step 1 or outside a promotion)
//   GET  /lockbench/stats            the pool's figures, lock counters, backend pids,
//                                    side effects (core/side_effects.hpp's json()) and
//                                    background_running, for the runner's result
//   POST /lockbench/requests-over    the load is over: the background work may end
//                                    once nothing is due (answers at once). A control
//                                    endpoint: with --control-token (from the environment,
//                                    LOCKBENCH_CONTROL_TOKEN) it needs "Authorization:
//                                    Bearer TOKEN", without one a loopback peer (else 403)
//
// Any client may reach a pod (README's --host 0.0.0.0), so its HTTP is bounded
// (real/http_guard.hpp: headers 16 KiB -> 431, bodies 1 MiB -> 413, a POST
// without Content-Length -> 411, smuggling framings -> 400, a request whole
// within 10 s of its first byte); a key outside 1..--keys is 404. With
// --management-port the health endpoints and /metrics are served on a port of
// their own with threads of their own (Tomcat's management port), so probes
// answer while the request threads are taken (docs/safety.md).
//
// The strategy's background work (Strategy::background: the outbox's pollers,
// split-tx's and after-commit's reconcilers) runs on a thread per worker from
// the start, bounded by --duration + --outbox-drain-limit from the pod's start.
// serve_pod() prints "listening on 127.0.0.1:PORT" on stdout once it answers,
// and returns 0 after SIGTERM or SIGINT (in-flight requests finish first, then
// the background work is told the requests are over and joined).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/settings.hpp"
#include "real/pod_protocol.hpp"  // the flags, headers and paths both sides use

namespace lockbench::real {

struct ServeOptions {
  int port = 0;                     // 0 = any free port (printed)
  std::string host = "127.0.0.1";   // loopback unless told otherwise
  std::optional<std::int64_t> run;  // lockbench.rows run; absent = a new one (seeded by the runner)
  int pod = 1;                      // 1-based: the pool's name (podN) and connection ids
  int management_port = -1;         // -1 = health on the request port only; 0 = any free port (printed)
  std::string control_token;        // empty: control endpoints answer loopback peers only
};

// Throws SettingError (before listening) for a bad setting or an unreachable database.
int serve_pod(const Settings& s, const ServeOptions& o);

}  // namespace lockbench::real

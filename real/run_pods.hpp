// run_pods: a real run whose pods are HTTP services (real/serve.hpp's contract).
//
//   --pod-mode process   starts --pods `lockbench serve` children (fork/exec of
//                        /proc/self/exe, each on a free port, one process group,
//                        killed in every exit path), waits for their readiness
//   --targets URL,...    drives services already running (no child started);
//                        their run number comes from GET /lockbench/info
//
// Then, as run_real does for the in-process pods: the database's rows for the
// run and the partner prepared once; an open-loop (burst, closed-loop) load whose latency
// counts from each request's intended start (no coordinated omission), spread
// round-robin over the pods as a load balancer would (closed loop: one thread
// per virtual user); readiness polled as the
// probe; the pods' background work told the load is over and waited for
// (POST /lockbench/requests-over, at most --outbox-drain-limit + 10 s); each
// pod's pool figures, lock counters and side effects read at the end
// (GET /lockbench/stats, effects summed); the partner's oracle and the database
// check; one result of the usual contract (core/result.hpp).
//
// --shard I/N (with --targets; real/shard_marks.hpp): this runner sends the
// schedule's positions p with p % N == I (closed loop: those users). Shard 0
// alone seeds the rows and resets the partner, announces a wall-clock start
// once every runner has joined, and after every runner's `ended` mark tells the
// pods the requests are over and reads their figures, the rows and the checks;
// the others' results say the checks were read by shard 0 (partner
// unavailable, not an error). Each result has a `shard` block and offers its
// slice's share of the load; all share one run_id.
//
// A stop (hooks.should_stop): no new request, the queued ones rejected, a grace
// period for those in flight (connectionTimeout clamped to 2..10 s), then the
// pods' figures read, the pods stopped and their sessions terminated (process
// mode), and what is still on the wire cut; the result is marked interrupted.
// A partner that cannot be read at the end gives partner_unavailable().
// --pause-at measures what the frozen pod blocks (faults.pause.key_blocked_ms,
// freed_during_pause, ok_on_other_pods_during_pause, session_settings).
#pragma once

#include <nlohmann/json.hpp>

#include "core/run.hpp"
#include "core/settings.hpp"

namespace lockbench::real {

// True when the run's pods are HTTP services (process mode or --targets).
bool pods_over_http(const Settings& s);
nlohmann::json run_pods(const Settings& s, const RunHooks& hooks);
// The in-process pods cannot crash, pause or skew a pod: one line naming the
// setting (SettingError) instead of ignoring it.
void refuse_faults_in_threads(const Settings& s);

}  // namespace lockbench::real

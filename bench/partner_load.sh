#!/usr/bin/env bash
# bench/partner_load.sh BUILD_DIR: load figures of the fake_partner server (a benchmark, not a test).
#
# (a) in flight: 10,000 requests held at once, each with a configured 1 s delay,
#     from partner_inflight_client (one thread, 10,000 sockets). Reports the
#     latency the server adds beyond the 1 s (p50/p99/max; target p99 < 10 ms)
#     and the server's peak resident memory, VmHWM (target < 200 MiB). The
#     server's own share (GET /admin/server: answer write started - arrival - delay)
#     is printed beside it: the rest is the client's and the kernel's.
# (b) throughput: wrk over keep-alive on zero-delay GET /api/v2/users/{id} for
#     10 s; requests/s.
#
# Env: REQUESTS (10000), DELAY_MS (1000), RAMP_MS (500: the requests are written
# over this window, all of them are in flight together once it ends),
# WRK_SECONDS (10), WRK_CONNECTIONS (64), WRK_THREADS (1; the server has one thread).
set -euo pipefail

BUILD_DIR=${1:?usage: bench/partner_load.sh BUILD_DIR}
SERVER="$BUILD_DIR/fake_partner/server/fake_partner"
CLIENT="$BUILD_DIR/fake_partner/server/partner_inflight_client"
REQUESTS=${REQUESTS:-10000}
DELAY_MS=${DELAY_MS:-1000}
RAMP_MS=${RAMP_MS:-500}
WRK_SECONDS=${WRK_SECONDS:-10}
WRK_CONNECTIONS=${WRK_CONNECTIONS:-64}
WRK_THREADS=${WRK_THREADS:-1}

for f in "$SERVER" "$CLIENT"; do
  [[ -x "$f" ]] || { echo "partner_load: $f is missing (build targets fake_partner partner_inflight_client)" >&2; exit 2; }
done
command -v wrk >/dev/null || { echo "partner_load: wrk is not installed (apt-get install wrk)" >&2; exit 2; }
command -v curl >/dev/null || { echo "partner_load: curl is not installed" >&2; exit 2; }

# One descriptor per connection on both sides.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if (( $(ulimit -n) < REQUESTS + 100 )); then
  echo "partner_load: ulimit -n is $(ulimit -n), need more than $REQUESTS" >&2
  exit 2
fi

WORK=$(mktemp -d)
SERVER_PID=""
cleanup() {
  if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID"
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

cat >"$WORK/config.json" <<JSON
{"seed": 1, "latency": {"*": {"dist": "fixed", "ms": $DELAY_MS}}}
JSON

"$SERVER" --port 0 --config "$WORK/config.json" --max-connections $((REQUESTS + 1000)) \
  >"$WORK/stdout" 2>"$WORK/stderr" &
SERVER_PID=$!
PORT=""
for _ in $(seq 1 100); do
  PORT=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$WORK/stdout" | head -1)
  [[ -n "$PORT" ]] && break
  sleep 0.05
done
[[ -n "$PORT" ]] || { echo "partner_load: the server did not start: $(cat "$WORK/stderr")" >&2; exit 1; }
BASE="http://127.0.0.1:$PORT"
curl -sf -X POST "$BASE/admin/reset" -H 'Content-Type: application/json' \
  -d '{"persons":[{"identities":["auth0|u1","google-oauth2|u1"],"primary":"auth0|u1"}]}' >/dev/null

# Both sides share this machine's cores with whatever else runs: say so beside the figures.
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== (a) $REQUESTS requests in flight at once, ${DELAY_MS} ms configured delay, written over ${RAMP_MS} ms"
INFLIGHT_JSON=$("$CLIENT" --port "$PORT" --requests "$REQUESTS" --delay-ms "$DELAY_MS" --ramp-ms "$RAMP_MS" \
  --path /api/v2/users/auth0%7Cu1) || { echo "partner_load: client reported failures: $INFLIGHT_JSON" >&2; exit 1; }
HWM_KB=$(awk '/^VmHWM:/ {print $2}' "/proc/$SERVER_PID/status")
SERVER_JSON=$(curl -sf "$BASE/admin/server")
echo "client: $INFLIGHT_JSON"
echo "server: $SERVER_JSON"
python3 - "$INFLIGHT_JSON" "$HWM_KB" "$SERVER_JSON" <<'PY'
import json, sys
r = json.loads(sys.argv[1]); hwm_mib = int(sys.argv[2]) / 1024; srv = json.loads(sys.argv[3])
a = r["added_ms"]
ok = lambda cond: "ok" if cond else "MISSED"
print(f"answered {r['ok']}/{r['requests']}, peak in flight {r['peak_inflight']}")
print(f"added latency ms: p50 {a['p50']:.2f}  p90 {a['p90']:.2f}  p99 {a['p99']:.2f}  max {a['max']:.2f}"
      f"   (target p99 < 10 ms: {ok(a['p99'] < 10)})")
s = srv["lateness_ms"]
print(f"  of which the server (answer write started - arrival - delay): p50 {s['p50']:.2f}  p99 {s['p99']:.2f}  max {s['max']:.2f}")
print(f"server peak RSS (VmHWM): {hwm_mib:.1f} MiB   (target < 200 MiB: {ok(hwm_mib < 200)})")
PY

echo "== (b) wrk: zero-delay GET /api/v2/users/{id}, keep-alive, ${WRK_CONNECTIONS} connections, ${WRK_SECONDS} s"
curl -sf -X PUT "$BASE/admin/config" -H 'Content-Type: application/json' \
  -d '{"latency": {"*": {"dist": "fixed", "ms": 0}}}' >/dev/null
wrk -t"$WRK_THREADS" -c"$WRK_CONNECTIONS" -d"${WRK_SECONDS}s" --latency "$BASE/api/v2/users/auth0%7Cu1" | tee "$WORK/wrk.txt"
RPS=$(awk '/^Requests\/sec:/ {print $2}' "$WORK/wrk.txt")
echo "throughput: $RPS requests/s"

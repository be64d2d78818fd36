#!/usr/bin/env bash
# bench/sweep_bench.sh: wall time of a large simulator sweep, issue 14's goal.
#
#   SETTINGS seeds x 6 strategies, 1 h of virtual time each, at the articles'
#   incident (pool 10, partner lognormal p50 1.5 s / p99 4 s, 20 requests/s,
#   200 keys, connectionTimeout 30 s, 200 workers, accept 100), run by
#   `lockbench sweep --jobs JOBS`. Prints the wall time, runs per second, peak
#   RSS and the ratio to the 20 s anchor (below 1 meets the goal).
#
#   bench/sweep_bench.sh [BUILD_DIR]     (default: build)
#   SETTINGS=100 JOBS=<cores> by default; KEEP=1 keeps the result files.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
bin=$build/cli/lockbench
settings=${SETTINGS:-100}
jobs=${JOBS:-$(nproc)}
[[ -x $bin ]] || { echo "no $bin: cmake --build $build --target lockbench" >&2; exit 1; }

out=$(mktemp -d /tmp/lockbench-sweep-bench.XXXXXX)
[[ ${KEEP:-0} == 1 ]] || trap 'rm -rf "$out"' EXIT
seeds=$(seq -s, 1 "$settings")

/usr/bin/time -f '%e %M' -o "$out/time.txt" "$bin" sweep --world sim --quiet \
  --scenario switch-primary --maximum-pool-size 10 --partner-latency lognormal:p50=1.5s,p99=4s \
  --rate 20 --keys 200 --connection-timeout 30s --max-threads 200 --accept-count 100 --duration 1h \
  --vary seed="$seeds" --vary strategy=all --jobs "$jobs" --out "$out/results" >/dev/null
read -r wall_s rss_kb <"$out/time.txt"
runs=$(find "$out/results" -name '*.json' | wc -l)
awk -v w="$wall_s" -v r="$runs" -v j="$jobs" -v m="$rss_kb" -v s="$settings" 'BEGIN {
  printf "sweep: %d settings x 6 strategies = %d runs, 1 h virtual each, --jobs %d\n", s, r, j
  printf "  wall %.1f s, %.1f runs/s, peak RSS %.0f MB\n", w, r / w, m / 1024
  printf "  vs the 20 s anchor: %.2f (below 1 meets the goal)\n", w / 20
}'

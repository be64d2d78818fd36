#!/usr/bin/env bash
# bench/plan_bench.sh: wall time of `lockbench plan` for the six strategies of
# `--strategy all`, issue 31's goal (under 10 s on this machine, every core).
#
#   The article's incident as the service configures it
#   (examples/incident/application.yml: held-tx, 20 requests/s, partner
#   lognormal p50 1.5 s / p99 4 s, two calls, 3 attempts), the default targets,
#   SEEDS seeds per confirmed point, 2 minutes of virtual time per run, the
#   simulator's runs on JOBS threads. Prints the wall time, the simulator runs
#   it made, peak RSS and the ratio to the 10 s anchor (below 1 meets the goal).
#
#   bench/plan_bench.sh [BUILD_DIR]     (default: build)
#   SEEDS=3 JOBS=<cores> by default; ROUNDS=3 runs it three times (each printed).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
bin=$build/cli/lockbench
seeds=${SEEDS:-3}
jobs=${JOBS:-$(nproc)}
rounds=${ROUNDS:-3}
[[ -x $bin ]] || { echo "no $bin: cmake --build $build --target lockbench" >&2; exit 1; }

out=$(mktemp -d /tmp/lockbench-plan-bench.XXXXXX)
trap 'rm -rf "$out"' EXIT
for round in $(seq 1 "$rounds"); do
  status=0
  /usr/bin/time -f '%e %M' -o "$out/time.txt" "$bin" plan --from "$root/examples/incident/application.yml" \
    --seeds "$seeds" --jobs "$jobs" --format json >"$out/plan.json" || status=$?
  read -r wall_s rss_kb <"$out/time.txt"
  runs=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); print(sum(s["simulator"]["simulator_runs"] for s in p["strategies"]), len(p["strategies"]))' "$out/plan.json")
  awk -v w="$wall_s" -v r="$runs" -v j="$jobs" -v m="$rss_kb" -v s="$seeds" -v k="$round" -v st="$status" 'BEGIN {
    split(r, a, " ")
    printf "plan [%d]: %d strategies, %d simulator runs (2 min virtual each, %d seeds per confirmed point), --jobs %d, exit %d\n", k, a[2], a[1], s, j, st
    printf "  wall %.2f s, peak RSS %.0f MB; vs the 10 s anchor: %.2f (below 1 meets the goal)\n", w, m / 1024, w / 10
  }'
done

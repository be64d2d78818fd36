#!/usr/bin/env bash
# bench/keyspace_bench.sh: does the simulator's cost follow the work or the key space?
#
#   The same run (switch-primary, held-tx, uniform keys, 3.2 requests/s, 10 min
#   of virtual time: about 2,000 requests) with 10,000 keys (the anchor) and
#   with KEYS keys; prints wall time, user CPU and peak RSS of each, the time
#   ratio (goal: within 2x of the anchor) and the RSS against 200 MB (goal: below).
#
#   bench/keyspace_bench.sh [BUILD_DIR]     (default: build)
#   KEYS=10000000 by default. A partner model without the compact reset form
#   (person_range) lists every person: about 1.4 GB per million keys, so try
#   KEYS=1000000 first on such a build.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
bin=$build/cli/lockbench
keys=${KEYS:-10000000}
[[ -x $bin ]] || { echo "no $bin: cmake --build $build --target lockbench" >&2; exit 1; }
out=$(mktemp -d /tmp/lockbench-keyspace-bench.XXXXXX)
trap 'rm -rf "$out"' EXIT

measure() {  # keys -> "wall_s user_s rss_kb"
  /usr/bin/time -f '%e %U %M' -o "$out/time-$1.txt" "$bin" run --world sim --quiet --scenario switch-primary \
    --strategy held-tx --keys "$1" --key-dist uniform --rate 3.2 --duration 10m --out "$out/r-$1.json" >/dev/null
  cat "$out/time-$1.txt"
}
read -r a_wall a_user a_rss < <(measure 10000)
read -r b_wall b_user b_rss < <(measure "$keys")
awk -v aw="$a_wall" -v au="$a_user" -v ar="$a_rss" -v bw="$b_wall" -v bu="$b_user" -v br="$b_rss" -v k="$keys" 'BEGIN {
  printf "switch-primary, held-tx, uniform keys, 3.2/s, 10 min virtual\n"
  printf "  %10d keys: wall %6.2f s, user %6.2f s, peak RSS %7.1f MB\n", 10000, aw, au, ar / 1024
  printf "  %10d keys: wall %6.2f s, user %6.2f s, peak RSS %7.1f MB\n", k, bw, bu, br / 1024
  printf "  time vs the 10,000-key run: %.2fx (goal: at most 2x)\n", (bw > 0.01 ? bw : 0.01) / (aw > 0.01 ? aw : 0.01)
  printf "  peak RSS vs 200 MB: %.2f (goal: below 1)\n", br / 1024 / 200
}'

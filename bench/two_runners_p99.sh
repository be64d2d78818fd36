#!/usr/bin/env bash
# bench/two_runners_p99.sh: is two runners' merged ok p99 one runner's?
# (issue 43). Repeats the live test
# Runners.TwoRunnersSplittingOneScheduleMergeToTheirHalvesAdded... (row-lease
# on single-call, 100/s for 3 s, a 20 ms partner, two `serve` pods of 4
# connections; one runner three times, two runners merged twice, alternating)
# against its own throw-away servers, and tabulates the p99 line each round
# prints. The test asserts what the merge owes, exactly; this measures what the
# machine does to the tails, which no pass/fail test can bound.
#
#   bench/two_runners_p99.sh [BUILD_DIR]      (default: build)
#   ROUNDS=5 by default; HOG=1 runs `stress-ng --cpu <cores>` beside it.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
test_bin=$build/tests/real/real_test
rounds=${ROUNDS:-5}
[[ -x $test_bin ]] || { echo "no $test_bin: cmake --build $build --target real_test lockbench" >&2; exit 1; }
[[ ${HOG:-0} == 1 ]] && ! command -v stress-ng >/dev/null && { echo "HOG=1 needs stress-ng (apt-get install stress-ng)" >&2; exit 1; }

# shellcheck source=scripts/lib.sh
source "$root/scripts/lib.sh"
work=$(mktemp -d /tmp/lockbench-two-runners.XXXXXX)
hog=""
cleanup() {
  [[ -n $hog ]] && kill "$hog" 2>/dev/null || true
  lockbench_stop_servers "$work" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
lockbench_start_servers "$work" "$build" >/dev/null
export LOCKBENCH_TEST_DB=$LOCKBENCH_DB LOCKBENCH_TEST_PARTNER=$LOCKBENCH_PARTNER

if [[ ${HOG:-0} == 1 ]]; then
  stress-ng --cpu "$(nproc)" --timeout $((rounds * 30 + 30))s >/dev/null 2>&1 &
  hog=$!
fi
status=0
"$test_bin" --gtest_filter='Runners.TwoRunnersSplitting*' --gtest_repeat="$rounds" >"$work/out.txt" 2>&1 || status=$?
grep -h 'ok p99, single:' "$work/out.txt" >"$work/lines.txt" || true
[[ $status == 0 ]] || { echo "the test failed (exit $status): the merge, not the machine" >&2; tail -n 30 "$work/out.txt" >&2; exit 1; }

# "ok p99, single: A B C ms; two runners merged: D E ms"
awk -v hog="${HOG:-0}" '
  { n = 0; for (i = 1; i <= NF; ++i) if ($i ~ /^[0-9.]+$/) v[++n] = $i
    lo = v[1]; hi = v[1]; for (i = 2; i <= 3; ++i) { if (v[i] < lo) lo = v[i]; if (v[i] > hi) hi = v[i] }
    inside = 0; for (i = 4; i <= 5; ++i) { if (v[i] >= lo && v[i] <= hi) ++inside; r = v[i] / lo; if (r > worst) worst = r; if (r < best || best == "") best = r }
    if (lo < slo || slo == "") slo = lo; if (hi > shi) shi = hi
    total += 2; within += inside
    printf "  round %d: one runner %.1f, %.1f, %.1f ms; two runners merged %.1f, %.1f ms (%d of 2 within the three)\n", NR, v[1], v[2], v[3], v[4], v[5], inside }
  END {
    printf "two runners, %d rounds%s: %d of %d merged p99s within their round'"'"'s single-runner range; merged / that range'"'"'s low end %.2f to %.2f; one runner alone %.1f to %.1f ms\n",
      NR, (hog == 1 ? " beside a CPU hog" : ""), within, total, best, worst, slo, shi }' "$work/lines.txt"

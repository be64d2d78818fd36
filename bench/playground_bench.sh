#!/usr/bin/env bash
# The playground's wasm time against native time for the same runs, as a ratio
# (bench/playground_bench.mjs says what is measured).
#   bench/playground_bench.sh [BUILD_DIR] [ROUNDS]
# Needs a build with the playground (em++) and puppeteer-core in
# BUILD_DIR/.puppeteer (scripts/test installs it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
export LOCKBENCH_PLAYGROUND=$build/playground/index.html LOCKBENCH_BIN=$build/cli/lockbench
export LOCKBENCH_PUPPETEER_DIR=$build/.puppeteer
for f in "$LOCKBENCH_PLAYGROUND" "$LOCKBENCH_BIN" "$LOCKBENCH_PUPPETEER_DIR/node_modules/puppeteer-core/package.json"; do
  [[ -f $f ]] || { echo "playground_bench: $f is missing (build with em++; scripts/test installs puppeteer-core)" >&2; exit 2; }
done
exec node "$root/bench/playground_bench.mjs" "${2:-3}"

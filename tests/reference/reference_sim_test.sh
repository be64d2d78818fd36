#!/usr/bin/env bash
# reference_sim_test.sh LOCKBENCH SOURCE_DIR PYTHON: runs every simulator run
# of the reference (scripts/reference.sh), compacts the results as
# scripts/demo does, and compares them with results/ apart from provenance.
set -euo pipefail
lockbench=$1 root=$2 python=$3
source "$root/scripts/reference.sh"
work=$(mktemp -d /tmp/lockbench-reference.XXXXXX)
trap 'rm -rf "$work"' EXIT
reference_sim "$lockbench" "$work/full" >/dev/null
"$lockbench" compact "$work/full" --out "$work/compact" >/dev/null
exec "$python" "$root/tests/reference/same_results.py" "$work/compact" "$root/results" --world sim

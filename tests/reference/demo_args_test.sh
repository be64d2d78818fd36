#!/usr/bin/env bash
# demo_args_test.sh SOURCE_DIR: scripts/demo's destination logic without its
# 10 minutes of runs: an unknown argument is refused in one line (exit 2)
# before any set-up, and the default destination, out/, is git-ignored
# (so `scripts/demo` leaves `git status` empty; --update-reference writes results/).
set -uo pipefail
root=$1
err=$(bash "$root/scripts/demo" --no-such-flag 2>&1 >/dev/null)
rc=$?
fail() { echo "FAIL: $*" >&2; exit 1; }
[[ $rc -eq 2 ]] || fail "scripts/demo --no-such-flag exited $rc, not 2"
[[ $(printf '%s\n' "$err" | wc -l) -eq 1 ]] || fail "more than one line: $err"
[[ $err == *"--update-reference"* ]] || fail "the refusal does not name what is accepted: $err"
grep -q '^  "") dest_name=out ;;$' "$root/scripts/demo" || fail "scripts/demo's default destination is not out/"
grep -q '^  --update-reference) dest_name=results ;;$' "$root/scripts/demo" || fail "--update-reference does not write results/"
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git -C "$root" check-ignore -q out/full/sim/x.json || fail "out/ is not git-ignored"
  git -C "$root" check-ignore -q results/sim/x.json && fail "results/ is git-ignored"
fi
echo "scripts/demo: refuses a bad argument in one line; writes a git-ignored out/ by default"

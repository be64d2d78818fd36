#!/usr/bin/env python3
"""Compares regenerated results with the committed ones (results/).

  same_results.py NEW COMMITTED --world sim
      every result JSON under NEW must exist under COMMITTED at the same
      relative path and be equal to it apart from `provenance`; every committed
      result of that world must have been regenerated (no stale file).
      Prints each difference (file, first differing field) and exits 1.
  same_results.py --check-size DIR BYTES
      DIR holds no result with a trace or a timeline, and its committed files
      take under BYTES on disk (whole 4 KiB blocks, as du counts).
  same_results.py --self-test
      proves the comparison fails on a changed figure, a missing file and a
      stale file, and passes on equal ones.
"""
import json
import os
import subprocess
import sys
import tempfile


def results_in(root, world=None):
    found = {}
    for p in committed_files(root):
        if p.endswith(".json"):
            with open(p, encoding="utf-8") as fh:
                try:
                    j = json.load(fh)
                except ValueError:
                    continue
            if isinstance(j, dict) and str(j.get("schema", "")).startswith("lockbench.result/"):
                if world is None or j.get("world") == world:
                    found[os.path.relpath(p, root)] = j
    return found


def first_difference(a, b, path=""):
    if type(a) is not type(b):
        return path or "(top)"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}.{k}".lstrip(".")
            d = first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d.lstrip(".")
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path} (length {len(a)} against {len(b)})"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    return None if a == b else f"{path}: {a!r} against {b!r}"


def compare(new_root, committed_root, world):
    new = results_in(new_root, world)
    old = results_in(committed_root, world)
    problems = []
    for rel, j in sorted(new.items()):
        if rel not in old:
            problems.append(f"{rel}: regenerated, but results/ has no such file (run scripts/demo)")
            continue
        a, b = dict(j), dict(old[rel])
        a.pop("provenance", None)
        b.pop("provenance", None)
        d = first_difference(a, b)
        if d:
            problems.append(f"{rel}: differs from results/ at {d}")
    for rel in sorted(set(old) - set(new)):
        problems.append(f"{rel}: in results/ but no reference run makes it any more (stale)")
    for p in problems:
        print(p)
    print(f"{len(new)} regenerated {world} results compared with {len(old)} committed: "
          f"{'all equal apart from provenance' if not problems else str(len(problems)) + ' problems'}")
    return 1 if problems or not new else 0


def committed_files(root):
    """The files under root that git would commit (tracked, or new and not
    ignored: results/full/ and charts/gnuplot/ are ignored); every file when
    root is not in a git work tree."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-co", "--exclude-standard", "-z", "--", "."],
                             capture_output=True, check=True).stdout.decode()
        return [os.path.join(root, f) for f in out.split("\0") if f and os.path.isfile(os.path.join(root, f))]
    except (OSError, subprocess.CalledProcessError):
        return [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs]


def check_size(root, limit):
    files = committed_files(root)
    # As `du` counts them: each file takes whole 4 KiB blocks on disk.
    total = sum(-(-os.path.getsize(p) // 4096) * 4096 for p in files)
    bulky = []
    for p in files:
        if not p.endswith(".json"):
            continue
        with open(p, encoding="utf-8") as fh:
            try:
                j = json.load(fh)
            except ValueError:
                continue
        if isinstance(j, dict) and ("trace" in j or "timeline" in j):
            bulky.append(os.path.relpath(p, root))
    for rel in bulky:
        print(f"{rel}: holds a trace or a timeline; commit `lockbench compact` output")
    print(f"{root}: {total} bytes in 4 KiB blocks, {len(files)} files (limit {limit})")
    return 1 if bulky or total >= limit else 0


def self_test():
    def write(root, rel, obj):
        p = os.path.join(root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", encoding="utf-8") as fh:
            json.dump(obj, fh)

    r = {"schema": "lockbench.result/1", "world": "sim", "requests": {"ok": 10}, "provenance": {"created_at": "x"}}
    failures = []
    with tempfile.TemporaryDirectory() as t:
        a, b = os.path.join(t, "a"), os.path.join(t, "b")
        write(a, "sim/001.json", r)
        write(b, "sim/001.json", dict(r, provenance={"created_at": "y"}))
        if compare(a, b, "sim") != 0:
            failures.append("equal results apart from provenance were reported different")
        write(b, "sim/001.json", dict(r, requests={"ok": 11}))
        if compare(a, b, "sim") == 0:
            failures.append("a changed figure passed")
        write(b, "sim/001.json", r)
        write(b, "sim/002.json", r)
        if compare(a, b, "sim") == 0:
            failures.append("a stale committed file passed")
        write(a, "sim/003.json", r)
        if compare(a, b, "sim") == 0:
            failures.append("a missing committed file passed")
        c = os.path.join(t, "c")
        write(c, "sim/001.json", dict(r, trace=[]))
        if check_size(c, 10**9) == 0:
            failures.append("a result with a trace passed the size check")
    for f in failures:
        print("self-test:", f)
    return 1 if failures else 0


def main(argv):
    if argv[1:2] == ["--self-test"]:
        return self_test()
    if argv[1:2] == ["--check-size"]:
        return check_size(argv[2], int(argv[3]))
    if len(argv) == 5 and argv[3] == "--world":
        return compare(argv[1], argv[2], argv[4])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

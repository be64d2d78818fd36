#!/usr/bin/env python3
"""The layers' rules, read from the sources (ARCHITECTURE.md, "Parts").

includes   No part below cli/ includes a cli/ header (only cli/ itself and the
           tests that span parts do), and no part below settings/ (base, core,
           scenarios, strategies, fake_partner) includes a settings/ header.
names      settings/table.cpp is the one list of settings. A source outside
           settings/ (tests apart) that spells three or more setting names as
           string literals ("maximum-pool-size", "--lease-ttl") holds a list of
           them: it fails unless ALLOWED names it, with why, and with at most
           the count it holds today. A single-word name ("rate", "world")
           counts only as a flag ("--rate"): as a key it is also a word of
           the result's own (its top-level "world", "seed").

usage: layers_test.py SOURCE_DIR         check the tree
       layers_test.py --self-test        prove both checks fail on a bad tree
"""
import os
import re
import sys
import tempfile

SOURCE_SUFFIXES = (".cpp", ".hpp", ".h", ".in", ".js", ".mjs")
SKIP_DIRS = {"build", ".git", "node_modules"}
BELOW_SETTINGS = ("base/", "core/", "scenarios/", "strategies/", "fake_partner/")
LIST_MIN = 3  # distinct setting names in one file that make a list

# Files that name several settings on purpose: path -> (most names, why).
ALLOWED = {
    "cli/spring_config.cpp": (13, "Spring's and HikariCP's property names, each mapped to its setting"),
    "cli/main.cpp": (4, "the command-line front asks which flags were given (lint's load, --keys, --duration, the probes)"),
    "cli/commands.cpp": (6, "calibrate writes the settings it measured into a settings file; validate "
                         "--targets takes the service's own hand-off unless --pool-handoff is given"),
    "report/lint.cpp": (8, "lint's findings name the setting to change"),
    "report/sections.cpp": (7, "the report's fault line and its settings table leave out what the fault line shows"),
    "plan/paper.cpp": (6, "the paper plan's why-lines name the settings it recommends"),
    "plan/render.cpp": (5, "plan's output names the settings it recommends, as flags and file keys"),
    "core/settings.cpp": (4, "check_fields' refusals, each naming the one setting it refuses"),
    "real/faults.cpp": (3, "the three faults that take :POD, each refused naming its flag"),
    "playground/app.js": (14, "the page's main controls, a hand-picked few (every row is also drawn from the table)"),
    "playground/lessons.js": (15, "each lesson's settings, as a preset holds them"),
}


def source_files(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for f in sorted(filenames):
            if f.endswith(SOURCE_SUFFIXES):
                path = os.path.join(dirpath, f)
                yield os.path.relpath(path, root).replace(os.sep, "/"), path


def is_test(rel):
    name = rel.rsplit("/", 1)[-1]
    return rel.startswith("tests/") or "/tests/" in rel or "_test." in name or name.startswith("test_")


def include_violations(root):
    bad = []
    for rel, path in source_files(root):
        if is_test(rel):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                m = re.match(r'\s*#\s*include\s*"([^"]+)"', line)
                if not m:
                    continue
                target = m.group(1)
                if target.startswith("cli/") and not rel.startswith("cli/"):
                    bad.append(f"{rel}:{n}: includes {target}: only cli/ and tests/ may include cli/")
                if target.startswith("settings/") and rel.startswith(BELOW_SETTINGS):
                    bad.append(f"{rel}:{n}: includes {target}: {rel.split('/')[0]}/ is below settings/")
    return bad


def setting_names(root):
    with open(os.path.join(root, "settings", "table.cpp"), encoding="utf-8") as f:
        text = f.read()
    return set(re.findall(r'^\s*\{"([a-z0-9-]+)",', text, re.M))


def names_in(text, names):
    found = set()
    for m in re.finditer(r"""["']((?:--)?[a-z0-9-]+)["']""", text):
        lit = m.group(1)
        if lit.startswith("--") and lit[2:] in names:
            found.add(lit[2:])
        elif "-" in lit and lit in names:
            found.add(lit)
    return found


def list_violations(root, allowed):
    names = setting_names(root)
    bad = []
    if len(names) < 50:
        return [f"settings/table.cpp: {len(names)} rows read; the scan expects the table's 80-odd"]
    with open(os.path.join(root, "settings", "table.cpp"), encoding="utf-8") as f:
        seen = names_in(f.read(), names) | {n for n in names if "-" not in n}
    if seen != names:  # the scanner must see every row of the table where the rows are
        bad.append(f"settings/table.cpp: the scan does not see rows {sorted(names - seen)}")
    counts = {}
    for rel, path in source_files(root):
        if rel.startswith("settings/") or is_test(rel):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            found = names_in(f.read(), names)
        if len(found) >= LIST_MIN:
            counts[rel] = found
    for rel, found in sorted(counts.items()):
        most = allowed.get(rel, (0, ""))[0]
        if rel not in allowed:
            bad.append(f"{rel}: a list of {len(found)} setting names ({', '.join(sorted(found))}): generate it from "
                       "settings/table.hpp, or add the file to ALLOWED in tests/layers/layers_test.py with why")
        elif len(found) > most:
            bad.append(f"{rel}: {len(found)} setting names, above the {most} ALLOWED ({', '.join(sorted(found))})")
    for rel in sorted(set(allowed) - set(counts)):
        bad.append(f"{rel}: ALLOWED, but it no longer names {LIST_MIN} settings: remove it from ALLOWED")
    return bad


def check(root, allowed):
    return include_violations(root) + list_violations(root, allowed)


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def self_test():
    rows = "".join(f'      {{"setting-{i}", "help",\n' for i in range(60)) + '      {"rate", "help",\n'
    with tempfile.TemporaryDirectory() as root:
        write(root, "settings/table.cpp", rows)
        write(root, "cli/main.cpp", '#include "cli/output.hpp"\nauto x = {"setting-1", "setting-2", "--rate"};\n')
        write(root, "report/one.cpp", 'auto y = j["settings"]["setting-1"]; auto z = "rate";\n')
        write(root, "core/ok_test.cpp", '#include "cli/output.hpp"\nauto x = {"setting-1", "setting-2", "setting-3"};\n')
        clean = check(root, {"cli/main.cpp": (3, "the self-test's")})
        if clean:
            print("self-test: a clean tree fails:\n  " + "\n  ".join(clean))
            return 1
        write(root, "plan/confirm.cpp", '#include "cli/settings_io.hpp"\n')
        write(root, "core/result.cpp", '#include "settings/table.hpp"\n')
        write(root, "real/pod.cpp", 'const char* flags[] = {"--setting-4", "--setting-5", "setting-6", "--rate"};\n')
        write(root, "cli/main.cpp", 'auto x = {"setting-1", "setting-2", "--rate", "setting-9"};\n')
        found = check(root, {"cli/main.cpp": (3, "the self-test's"), "cli/gone.cpp": (3, "stale")})
        expected = ["plan/confirm.cpp:1: includes cli/", "core/result.cpp:1: includes settings/",
                    "real/pod.cpp: a list of 4", "cli/main.cpp: 4 setting names, above the 3", "cli/gone.cpp: ALLOWED"]
        missing = [e for e in expected if not any(f.startswith(e) for f in found)]
        if missing or len(found) != len(expected):
            print("self-test: expected " + repr(expected) + ", found:\n  " + "\n  ".join(found))
            return 1
    print(f"self-test: {len(expected)} planted faults found, the clean tree passes")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        print(__doc__)
        return 2
    bad = check(argv[1], ALLOWED)
    for b in bad:
        print(b)
    if not bad:
        print(f"layers: no include into cli/ from below it, no list of setting names outside settings/ "
              f"(beyond {len(ALLOWED)} allowed files)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

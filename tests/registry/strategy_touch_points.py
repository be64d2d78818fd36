#!/usr/bin/env python3
"""How many files a strategy touches outside its own file: ARCHITECTURE.md's recipe, counted.

Usage: strategy_touch_points.py ROOT           list, per strategy family, the code files outside its own
                                               file that name it; fail when one names it in more files
                                               than BOUNDS allows (a new family: 0)
       strategy_touch_points.py --self-test    check that a tree with a strategy named elsewhere fails

A family is what a file under strategies/ registers (`constexpr StrategyFamily kX{ .name = "NAME"`); its
own file is that file. A file names a family when it holds one of its specs ("NAME" or "NAME:variant") in
quotes, or after --strategy on a command line. Code files are every file of ROOT but the docs (*.md),
results/, the tests (tests/, *_test.*, test_fixtures.hpp) and build folders: tests and docs name
strategies to test and explain them, which the recipe does not need.

The recipe (ARCHITECTURE.md, "Adding a strategy"): a strategy with no setting and no world operation of its
own is one file, named by no other code file: BOUNDS has no row for it, so it must stay at 0.
tests/registry/recipe_strategy.cpp is such a strategy, built into recipe_test, which checks that the
registry, explain, lint and the simulator take it from that one file.
"""
import os
import re
import sys
import tempfile

# Existing families: the code files outside their own file that name them, at
# most, and why. A count may go down; raising one is a recipe regression to
# justify here.
BOUNDS = {
    # "none" is also a value of many settings (--key-hash, --liveness, --pgbouncer, ...): these are those.
    "none": 16,
    # The default of two commands (cli/commands.cpp), the report's pool story (report/markdown.cpp),
    # lint_code's @Transactional-around-HTTP pattern (lint_code/findings.cpp).
    "held-tx": 3,
    # lint_code's Java advisory-lock patterns.
    "advisory-xact": 1,
    "advisory-session": 1,
    # The settings' default strategy (core/settings.hpp), lint's placeholder (cli/main.cpp), lint_code's
    # ORM-mapped lease (lint_code/findings.cpp) and the fix it simulates beside it (cli/lint_code_command.cpp).
    "row-lease": 4,
    # Its store's own setting (--redis's help, settings/table.cpp).
    "redis-lease": 1,
    # Its store's own settings (--etcd's help and their check, settings/table.cpp).
    "etcd-lease": 1,
    # lint_code's version-check pattern.
    "optimistic": 1,
    "split-tx": 0,
    "after-commit": 0,
    "outbox": 0,
    # lint_code's Java pattern (three files) and finding kind (cli/lint_code_command.cpp); explain's
    # virtual-threads topic.
    "synchronized": 5,
}

CODE_SKIP_DIRS = {".git", "results", "docs", "tests", "node_modules", "out"}


def families(root):
    """{family: its own file (relative)} from strategies/*.cpp."""
    found = {}
    folder = os.path.join(root, "strategies")
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".cpp"):
            continue
        text = open(os.path.join(folder, name), encoding="utf-8").read()
        for m in re.finditer(r'constexpr StrategyFamily \w+\{\s*\.name = "([^"]+)"', text):
            found[m.group(1)] = "strategies/" + name
    return found


SOURCE_EXT = (".cpp", ".hpp", ".h", ".cmake")
USE_DIRS = ("bench/", "examples/", "deploy/", "scripts/")


def strip_comments(path, text):
    """The text without its comments (// in C++/JS/Java, # elsewhere): a comment names by example."""
    slash = path.endswith((".cpp", ".hpp", ".h", ".js", ".mjs", ".java", ".html"))
    mark = "//" if slash else "#"
    return re.sub(r"(^|\s)" + re.escape(mark) + r".*", r"\1", text, flags=re.M)


def is_source(path):
    """Program code that knows a strategy (C++ and CMake), not a run that uses one (scripts, examples)."""
    return (path.endswith(SOURCE_EXT) or os.path.basename(path) == "CMakeLists.txt") and not path.startswith(USE_DIRS)


def code_files(root):
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        dirnames[:] = [d for d in dirnames if not (rel == "." and (d in CODE_SKIP_DIRS or d.startswith("build")))]
        for f in filenames:
            if f.endswith(".md") or "_test." in f or f == "test_fixtures.hpp":
                continue
            path = os.path.normpath(os.path.join(rel, f))
            try:
                yield path, strip_comments(path, open(os.path.join(dirpath, f), encoding="utf-8").read())
            except (UnicodeDecodeError, OSError):
                continue


def pattern(family):
    name = re.escape(family)
    spec = name + r"(?::[a-z0-9-]+)?"
    return re.compile(r'["\']' + spec + r'["\']|--strategy[ =](?:[\w:-]+,)*' + spec + r'(?![\w-])')


def touch_points(root):
    fams = families(root)
    files = list(code_files(root))
    out = {}
    for family, own in fams.items():
        p = pattern(family)
        named = sorted(path for path, text in files if path != own and p.search(text))
        out[family] = (own, [n for n in named if is_source(n)], [n for n in named if not is_source(n)])
    return out


def check(root, bounds=BOUNDS, show=True):
    points = touch_points(root)
    failures = []
    for family, (own, others, uses) in points.items():
        bound = bounds.get(family, 0)
        if show:
            print(f"{family}: {own} + {len(others)} source file(s) (at most {bound}): {' '.join(others)}")
            if uses:
                print(f"  runs that use it ({len(uses)}, not counted): {' '.join(uses)}")
        if len(others) > bound:
            failures.append(f"{family} is named in {len(others)} source files outside {own}, more than {bound}: "
                            + " ".join(others))
    if not points:
        failures.append("no strategy family found under strategies/")
    for f in failures if show else []:
        print("FAIL: " + f)
    return not failures


def self_test():
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "strategies"))
        os.makedirs(os.path.join(root, "cli"))
        os.makedirs(os.path.join(root, "tests"))
        with open(os.path.join(root, "strategies", "new_one.cpp"), "w") as f:
            f.write('constexpr StrategyFamily kNewOneFamily{\n    .name = "new-one",\n')
        with open(os.path.join(root, "tests", "x_test.cpp"), "w") as f:
            f.write('run("new-one:fast");\n')  # a test: not counted
        ok = check(root, {}, show=False)
        assert ok, "a strategy named only by its file and a test failed"
        with open(os.path.join(root, "cli", "main.cpp"), "w") as f:
            f.write('if (s.strategy == "new-one:fast") special();\n')
        assert not check(root, {}, show=False), "a strategy named by another code file passed"
        assert check(root, {"new-one": 1}, show=False), "a bound of 1 did not admit one file"
        with open(os.path.join(root, "cli", "main.cpp"), "a") as f:
            f.write('// a comment may name it: "new-one"\n')
        assert check(root, {"new-one": 1}, show=False), "a comment was counted"
        with open(os.path.join(root, "run.sh"), "w") as f:
            f.write("lockbench run --strategy none,new-one  # a run that uses it\n")
        assert check(root, {"new-one": 1}, show=False), "a script that runs it was counted as source"
        assert touch_points(root)["new-one"][2] == ["run.sh"], "a script that runs it was not listed"
        with open(os.path.join(root, "cli", "plan.cpp"), "w") as f:
            f.write('const char* kArgs = "--strategy=none,new-one:fast";\n')
        assert not check(root, {"new-one": 1}, show=False), "a --strategy list in source was not counted"
    print("self-test passed")
    return True


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(0 if self_test() else 1)
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(0 if check(sys.argv[1]) else 1)

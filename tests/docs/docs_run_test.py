#!/usr/bin/env python3
"""The docs run as written.

Usage: docs_run_test.py ROOT BUILD  run the docs' shell blocks against the test servers
       docs_run_test.py --self-test  check the extraction and that a failing block fails

Which blocks run (docs/README.md#docs-that-run says the same to writers):
- every ```sh block of docs/tutorial.md, but the one marked
  `<!-- the README's two commands -->`, which must hold exactly README.md's
  `scripts/demo` and `scripts/test` lines: they are what a newcomer ran first;
- in every other page under docs/, each ```sh block on the line after
  `<!-- runnable -->`.

A page's blocks run in order in one bash (`set -euo pipefail`), so a variable
or a background process of one block is there for the next; the tutorial
first, then the other pages by path. They run as a newcomer types them at the
top of a clone after the README's two commands: in a scratch directory holding
links to ROOT's files and folders, `build` linked to BUILD, and an empty
`results/` (what a run writes stays out of the clone). The servers are the test
servers: LOCKBENCH_DB, LOCKBENCH_PARTNER, LOCKBENCH_REDIS, LOCKBENCH_ETCD and
LOCKBENCH_PGBOUNCER are set from their LOCKBENCH_TEST_* names, as
`lockbench_start_servers` (scripts/lib.sh) sets them for a newcomer. Without
LOCKBENCH_TEST_DB and LOCKBENCH_TEST_PARTNER the test is skipped (exit 77).

Exit status 0 when every block ran; 1 naming the page and line of the block
that failed (its output above); 2 for a bad marker or usage.
"""

import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time

from docs_common import checker_main, markdown_files

RUNNABLE = "<!-- runnable -->"
README_COMMANDS = "<!-- the README's two commands -->"
FENCE = re.compile(r"^(`{3,})(\S*)\s*$")
SERVERS = ("DB", "PARTNER", "REDIS", "ETCD", "PGBOUNCER")


class MarkerError(Exception):
    pass


def blocks_of(text, rel, every_block):
    """(line, code) of the blocks of a page that run, in order. every_block: the
    tutorial's rule; else the runnable marker's."""
    lines = text.split("\n")
    out = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = FENCE.match(line)
        if m:
            fence, lang = m.group(1), m.group(2)
            end = i + 1
            while end < len(lines) and not lines[end].startswith(fence):
                end += 1
            code = "\n".join(lines[i + 1:end]) + "\n"
            previous = lines[i - 1].strip() if i > 0 else ""
            if lang == "sh":
                if previous == README_COMMANDS:
                    if not every_block:
                        raise MarkerError(f"{rel}:{i}: {README_COMMANDS} belongs to docs/tutorial.md only")
                elif every_block or previous == RUNNABLE:
                    out.append((i + 1, code))
            elif previous in (RUNNABLE, README_COMMANDS):
                raise MarkerError(f"{rel}:{i}: {previous} must stand right above a ```sh block")
            i = end + 1
            continue
        if line.strip() in (RUNNABLE, README_COMMANDS):
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            if not FENCE.match(nxt):
                raise MarkerError(f"{rel}:{i + 1}: {line.strip()} must stand right above a ```sh block")
        i += 1
    return out


def commands(code):
    """The command lines of a block: no comment, no blank."""
    return [c.split("#")[0].strip() for c in code.split("\n") if c.split("#")[0].strip()]


def readme_commands_agree(tutorial, readme):
    """The tutorial's skipped block must be the README's two commands."""
    m = re.search(re.escape(README_COMMANDS) + r"\n```sh\n(.*?)```", tutorial, re.S)
    if not m:
        raise MarkerError(f"docs/tutorial.md: no ```sh block marked {README_COMMANDS}")
    skipped = commands(m.group(1))
    readme = [c for c in commands(re.search(r"```sh\n(.*?)```", readme, re.S).group(1)) if c.startswith("scripts/")]
    if skipped != readme:
        raise MarkerError(f"docs/tutorial.md: the block marked {README_COMMANDS} runs {skipped}, "
                          f"not the README's {readme}")


def pages(root):
    """(rel, blocks) of the pages whose blocks run, the tutorial first."""
    found = []
    with open(os.path.join(root, "docs", "tutorial.md"), encoding="utf-8") as f:
        tutorial = f.read()
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        readme_commands_agree(tutorial, f.read())
    found.append(("docs/tutorial.md", blocks_of(tutorial, "docs/tutorial.md", True)))
    for rel in markdown_files(root, "docs"):
        if rel == "docs/tutorial.md":
            continue
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            blocks = blocks_of(f.read(), rel, False)
        if blocks:
            found.append((rel, blocks))
    return found


def script_of(rel, blocks):
    """One bash script running a page's blocks in order, naming the block that failed."""
    parts = ["set -euo pipefail",
             "trap 'echo \"docs_run: $LB_BLOCK failed (exit $?): $BASH_COMMAND\" >&2' ERR"]
    for line, code in blocks:
        where = f"{rel}:{line}"
        parts.append(f"LB_BLOCK={shlex.quote(where)}; echo \"--- $LB_BLOCK\" >&2")
        parts.append(code)
    return "\n".join(parts) + "\n"


def scratch_clone(root, build, tmp):
    """A directory that looks like a clone after the README's two commands."""
    root = os.path.abspath(root)
    for name in os.listdir(root):
        if name in (".git", "results", "out") or name.startswith("build"):
            continue
        os.symlink(os.path.join(root, name), os.path.join(tmp, name))
    os.symlink(os.path.abspath(build), os.path.join(tmp, "build"))
    os.mkdir(os.path.join(tmp, "results"))


def run_page(cwd, rel, blocks, env, timeout):
    """Runs a page's blocks; (ok, seconds). The page's processes die with it."""
    started = time.monotonic()
    proc = subprocess.Popen(["bash", "-c", script_of(rel, blocks)], cwd=cwd, env=env, start_new_session=True)
    try:
        rc = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"docs_run: {rel} still running after {timeout} s", file=sys.stderr)
        rc = -1
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # background servers a page started
        except ProcessLookupError:
            pass
        proc.wait()
    return rc == 0, time.monotonic() - started


def run(root, build):
    env = dict(os.environ)
    if not env.get("LOCKBENCH_TEST_DB") or not env.get("LOCKBENCH_TEST_PARTNER"):
        print("docs_run: LOCKBENCH_TEST_DB and LOCKBENCH_TEST_PARTNER unset: skipped (scripts/test sets them)")
        return 77
    for server in SERVERS:
        value = env.get(f"LOCKBENCH_TEST_{server}")
        if value:
            env[f"LOCKBENCH_{server}"] = value
        else:
            env.pop(f"LOCKBENCH_{server}", None)
    try:
        found = pages(root)
    except MarkerError as e:
        print(e)
        return 2
    failed = []
    with tempfile.TemporaryDirectory(prefix="lockbench-docs-") as tmp:
        scratch_clone(root, build, tmp)
        for rel, blocks in found:
            ok, seconds = run_page(tmp, rel, blocks, env, timeout=300)
            print(f"docs_run: {rel}: {len(blocks)} block{'s' * (len(blocks) != 1)} {'ran' if ok else 'FAILED'} "
                  f"in {seconds:.1f} s")
            if not ok:
                failed.append(rel)
    if failed:
        print(f"docs_run: the shell blocks of {', '.join(failed)} do not run as written")
        return 1
    print(f"docs_run: {sum(len(b) for _, b in found)} blocks of {len(found)} pages ran as written")
    return 0


SELF_TEST_README = "# x\n\n```sh\nscripts/demo    # all\nscripts/test    # tests\n\nbuild/cli/lockbench run\n```\n"
SELF_TEST_TUTORIAL = ("# T\n\n" + README_COMMANDS + "\n```sh\nscripts/demo  # a\nscripts/test  # b\n```\n\n"
                      "```sh\nexport A=1\n```\n\n```text\nnot shell\n```\n\n```sh\ntest \"$A\" = 1\n```\n")
SELF_TEST_HOWTO = ("# H\n\n```sh\nfalse  # not marked: never runs\n```\n\n" + RUNNABLE + "\n```sh\nB=2\n```\n\n"
                   + RUNNABLE + "\n```sh\ntest \"$B\" = 2\n```\n")


def self_test():
    failures = []

    def expect(cond, what):
        if not cond:
            failures.append(f"self-test: {what}")

    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "docs", "how-to"))
        files = {"README.md": SELF_TEST_README, "docs/tutorial.md": SELF_TEST_TUTORIAL,
                 "docs/how-to/h.md": SELF_TEST_HOWTO, "docs/how-to/none.md": "# N\n\n```sh\nfalse\n```\n"}
        for rel, text in files.items():
            with open(os.path.join(tmp, rel), "w", encoding="utf-8") as f:
                f.write(text)
        found = pages(tmp)
        expect([rel for rel, _ in found] == ["docs/tutorial.md", "docs/how-to/h.md"],
               f"the tutorial and the marked page, in that order; got {[r for r, _ in found]}")
        expect([line for line, _ in found[0][1]] == [9, 17], f"the tutorial's two blocks; got {found[0][1]}")
        expect([line for line, _ in found[1][1]] == [8, 13], f"the how-to's marked blocks; got {found[1][1]}")
        env = dict(os.environ)
        for rel, blocks in found:
            ok, _ = run_page(tmp, rel, blocks, env, timeout=30)
            expect(ok, f"{rel}'s clean blocks run")
        # A block that fails fails the page, and names its line.
        bad = SELF_TEST_HOWTO.replace('test "$B" = 2', 'test "$B" = 3')
        blocks = blocks_of(bad, "docs/how-to/h.md", False)
        proc = subprocess.run(["bash", "-c", script_of("docs/how-to/h.md", blocks)], capture_output=True, text=True)
        expect(proc.returncode != 0 and "docs/how-to/h.md:13 failed" in proc.stderr,
               f"a failing block fails and names docs/how-to/h.md:13; got {proc.returncode} {proc.stderr!r}")
        # A marker above no shell block, and a tutorial whose skipped block is not the README's commands.
        for text, rel, every, why in [
                ("# x\n\n" + RUNNABLE + "\n```text\nx\n```\n", "docs/a.md", False, "a marker above a text block"),
                ("# x\n\n" + RUNNABLE + "\n\n```sh\nx\n```\n", "docs/a.md", False, "a marker above a blank line"),
                ("# x\n\n" + README_COMMANDS + "\n```sh\nscripts/demo\n```\n", "docs/a.md", False,
                 "the README marker outside the tutorial")]:
            try:
                blocks_of(text, rel, every)
                failures.append(f"self-test: {why} is not refused")
            except MarkerError:
                pass
        try:
            readme_commands_agree(SELF_TEST_TUTORIAL.replace("scripts/test  # b\n", "rm -rf results\n"),
                                  SELF_TEST_README)
            failures.append("self-test: a skipped tutorial block that is not the README's commands is not refused")
        except MarkerError:
            pass
    return failures


def main(argv):
    return checker_main(argv, __doc__, self_test,
                        "self-test: blocks found by their markers, run in order in one shell; a failing block, "
                        "a stray marker and a wrong skipped block are each refused", 2, run)

if __name__ == "__main__":
    sys.exit(main(sys.argv))

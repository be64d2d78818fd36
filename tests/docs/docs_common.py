"""What the docs checkers share (docs_links_test.py, docs_run_test.py): the
files of the tree they read, and their command line (a check of ROOT, or
--self-test)."""

import os
import subprocess


def tracked_files(root):
    """Every tracked file under root, relative to it, sorted: `git ls-files` (untracked files git
    does not ignore too; a file deleted in the work tree is none); without a .git, every file
    but those under build*/ and dot folders."""
    if os.path.exists(os.path.join(root, ".git")):
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             check=True, capture_output=True, text=True).stdout
        return sorted(f for f in out.split("\0") if f and os.path.isfile(os.path.join(root, f)))
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and not d.startswith("build")]
        found += [os.path.relpath(os.path.join(dirpath, n), root) for n in filenames]
    return sorted(found)


def markdown_files(root, under=""):
    """The tracked *.md files under root (below the folder `under`, when given), relative to root."""
    prefix = under.rstrip("/") + "/" if under else ""
    return [f for f in tracked_files(root) if f.endswith(".md") and f.startswith(prefix)]


def checker_main(argv, doc, self_test, self_test_passed, check_args, check):
    """A checker's command line: `--self-test` runs self_test() (a list of failure lines; on none
    it prints self_test_passed), `check_args` arguments run check(*args) (its exit status); any
    other use prints the usage paragraph of `doc` and exits 2."""
    if argv[1:] == ["--self-test"]:
        failures = self_test()
        for line in failures:
            print(line)
        if not failures:
            print(self_test_passed)
        return 1 if failures else 0
    if len(argv) != check_args + 1:
        print(doc.strip().split("\n\n")[1])
        return 2
    return check(*argv[1:])

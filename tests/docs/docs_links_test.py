#!/usr/bin/env python3
"""No dead link in the documentation, and no page nobody links to.

Usage: docs_links_test.py ROOT       check the markdown files of the tree at ROOT
       docs_links_test.py --self-test  check that a tree with dead links fails

Checked files: every tracked *.md file (`git ls-files`; without a .git, every
*.md under ROOT): README.md, ARCHITECTURE.md, docs/**, the parts' READMEs and
the generated reports under results/.

For every relative link and image target ([text](target), ![alt](target),
[label]: target, <a href>, <img src>) outside code blocks and code spans, the
target must exist; a #anchor into a markdown file (or into the page itself)
must match one of its headings, slugged as GitHub slugs them. http(s), mailto
and other links with a scheme are not checked. HTML comments are not
rendered, so links inside them are not checked either.

Paths written in backticks in prose (`docs/how-to/x.md`, `../elsewhere/x.md`,
`fake_partner/model/config.hpp`) are checked too: a code span that is one word
with a '/' and starts with './', '../' or a name that exists beside the file
or at ROOT must name a file or folder inside ROOT (a module named without its
extension, `base/stats`, may stand for `base/stats.*`); one that leaves ROOT
fails. An absolute path to a file fails too, unless it is a system path (/usr,
/proc, /tmp, ...); one without an extension (`/admin/check`) is an HTTP path.
Globs and placeholders (`*`, `<part>`, `…`, `NAME.cpp`), results/ (written by
runs) and paths git ignores (`build/...`) are not checked; `x.hpp/.cpp` checks
`x.hpp`.

Every page under docs/ must be linked from docs/README.md or README.md.

The sources cite documents too (a comment's "docs/reference/partner-api.md
section E", a help text): in every tracked source, script and CMake file (not
results/, not this folder's fixtures) a *.md path must name a file of the tree
(from ROOT or from the file's folder, or the tail of a tracked path, as
`report/report.md` in a results directory); a bare name must be a tracked
page's; an absolute one leaves the tree. A section letter cited with
partner-api.md must be a section of docs/reference/partner-api.md.

Exit status 0 when all is well; 1 with one line per problem, file:line first.
"""

import os
import re
import subprocess
import sys
import tempfile
import urllib.parse

from docs_common import checker_main, markdown_files, tracked_files

INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
REFERENCE_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
HTML_ATTR = re.compile(r"<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*[\"']([^\"']+)[\"']", re.IGNORECASE)
HTML_ANCHOR = re.compile(r"<a\b[^>]*?\b(?:name|id)\s*=\s*[\"']([^\"']+)[\"']", re.IGNORECASE)
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
CODE_SPAN_TEXT = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
PATH_WORD = re.compile(r"^(?:\.{1,2}/|/)?[\w.@+-]+(?:/[\w.@+-]*)+$")
PLACEHOLDER = re.compile(r"(?:^|/|-)[A-Z]+(?:\.\w+)?(?:/|$)")  # scenarios/NAME.cpp, shard-I
SYSTEM_DIRS = {"usr", "proc", "dev", "sys", "etc", "tmp", "var", "opt", "bin", "sbin", "lib", "run", "srv", "home"}


def prose_lines(text):
    """(line number, line) of the lines outside fenced code blocks, with HTML
    comments blanked out (line numbers kept)."""
    text = re.sub(r"<!--.*?-->", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.DOTALL)
    fence = None
    for number, line in enumerate(text.split("\n"), start=1):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)[0] * len(m.group(1))
            continue
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            continue
        yield number, line


def github_slug(heading):
    """The anchor GitHub gives a heading: its text without markup, lower case,
    punctuation dropped (letters, digits, '_', '-' and spaces stay), spaces
    as '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links keep their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "")
    text = re.sub(r"(\*\*|__|\*|_(?=\W)|(?<=\W)_)", "", " " + text + " ").strip()
    text = text.lower()
    text = "".join(c for c in text if c.isalnum() or c in "-_ ")
    return text.replace(" ", "-")


def anchors_of(path, cache):
    """The anchors a markdown file offers: its headings' slugs (a repeated
    slug gets -1, -2, ...) and <a name|id> anchors."""
    if path not in cache:
        slugs = set()
        seen = {}
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for _, line in prose_lines(text):
            m = HEADING.match(line)
            if m:
                slug = github_slug(m.group(2))
                n = seen.get(slug, 0)
                seen[slug] = n + 1
                slugs.add(slug if n == 0 else f"{slug}-{n}")
            slugs.update(HTML_ANCHOR.findall(CODE_SPAN.sub("", line)))
        cache[path] = slugs
    return cache[path]


def links_in(text):
    """(line number, target) of every link and image in the rendered text."""
    for number, line in prose_lines(text):
        line = CODE_SPAN.sub("", line)
        for m in INLINE_LINK.finditer(line):
            yield number, m.group(1).strip("<>")
        m = REFERENCE_DEF.match(line)
        if m:
            yield number, m.group(1).strip("<>")
        for target in HTML_ATTR.findall(line):
            yield number, target


def backtick_paths_in(text):
    """(line number, path) of every code span in the prose that reads as a path."""
    for number, line in prose_lines(text):
        for m in CODE_SPAN_TEXT.finditer(line):
            word = m.group(1).strip()
            if PATH_WORD.match(word) and "//" not in word:
                yield number, word


def ignored_by_git(root, rel):
    """Whether git ignores rel (a build output, results/full/): not a citation of a file in the tree."""
    if not os.path.exists(os.path.join(root, ".git")):
        return rel.split("/")[0].startswith("build")
    return subprocess.run(["git", "-C", root, "check-ignore", "-q", "--no-index", rel]).returncode == 0


def backtick_path_problem(root, path, word):
    """Why the path `word` written in the file at path is dead or leaves the tree; None when it is fine
    or not a path of the tree."""
    if word.startswith("/"):
        first = word.lstrip("/").split("/")[0]
        if first in SYSTEM_DIRS or "." not in word.rstrip("/").split("/")[-1]:
            return None  # /usr/bin/time; /admin/check, /actuator/health: an HTTP path, not a file
        return f"dead path `{word}`: outside the repository"
    here = os.path.dirname(path)
    first = word.split("/")[0]
    if word.startswith(("./", "../")):
        base = here
    elif os.path.exists(os.path.join(here, first)) and here != root and (
            os.path.exists(os.path.join(here, word)) or not os.path.exists(os.path.join(root, word))):
        base = here  # docs/playground.md's `playground/binding.cpp` is the root's when docs/playground/ lacks it
    elif os.path.exists(os.path.join(root, first)):
        base = root
    else:
        return None  # application/json, host/port: not a path of the tree
    resolved = os.path.normpath(os.path.join(base, word))
    if os.path.relpath(resolved, root).startswith(".."):
        return f"dead path `{word}`: outside the repository"
    rel = os.path.relpath(resolved, root)
    if os.path.exists(resolved) or ignored_by_git(root, rel + ("/" if word.endswith("/") else "")):
        return None
    folder, name = os.path.split(resolved)
    if os.path.isdir(folder) and any(f.startswith(name + ".") for f in os.listdir(folder)):
        return None  # a module named without its extension
    return f"dead path `{word}`: no {rel}"


SOURCE_FILE = re.compile(r"(\.(cpp|hpp|h|cmake|txt|sh|py|in|json|toml|ya?ml|js|html)$|^scripts/|Dockerfile)")
MD_CITATION = re.compile(r"(?<![\w./-])((?:\.{1,2}/|/)?[\w.-]+(?:/[\w.-]+)*\.md)\b")
PARTNER_SECTION = re.compile(r"partner-api\.md(?:'s)?,?\s+(?:section\s+)?([A-Z])\b|section ([A-Z]) of [\w/]*partner-api\.md")
PARTNER_API = os.path.join("docs", "reference", "partner-api.md")


def partner_sections(root):
    """The section letters of docs/reference/partner-api.md ("## E. Admin ..."); None without the page."""
    path = os.path.join(root, PARTNER_API)
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        return {m.group(1) for m in re.finditer(r"^## ([A-Z])\. ", f.read(), re.M)}


def citation_problems(root, files):
    """Dead or outside *.md citations in the sources, and partner-api.md sections that do not exist."""
    problems = []
    pages = {os.path.basename(f) for f in files if f.endswith(".md")}
    sections = partner_sections(root)
    for rel in files:
        # A test's own scratch paths (a report.md under a temporary folder) cite nothing.
        if rel.endswith((".md", "_test.cpp")) or rel.startswith("results/") or rel.startswith("tests/docs/") \
                or not SOURCE_FILE.search(rel):
            continue
        try:
            with open(os.path.join(root, rel), encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue
        if ".md" not in text:
            continue
        for number, line in enumerate(text.split("\n"), start=1):
            if ".md" not in line:
                continue
            for m in MD_CITATION.finditer(line):
                word = m.group(1)
                if word.startswith("/"):
                    problems.append(f"{rel}:{number}: cites {word}: outside the repository")
                elif "/" not in word:
                    if word not in pages:
                        problems.append(f"{rel}:{number}: cites {word}: no such page in the repository")
                else:
                    here = os.path.normpath(os.path.join(os.path.dirname(os.path.join(root, rel)), word))
                    there = os.path.normpath(os.path.join(root, word))
                    inside = [p for p in (here, there) if not os.path.relpath(p, root).startswith("..")]
                    if not any(os.path.exists(p) for p in inside) and not (
                            not word.startswith(".") and any(f.endswith("/" + word) for f in files)):
                        problems.append(f"{rel}:{number}: cites {word}: not in the repository")
            if sections is not None:
                for m in PARTNER_SECTION.finditer(line):
                    letter = m.group(1) or m.group(2)
                    if letter not in sections:
                        problems.append(f"{rel}:{number}: cites section {letter} of {PARTNER_API}, which has none")
    return problems


def check(root):
    """The problems found in the tree at root, one line each."""
    root = os.path.abspath(root)
    files = markdown_files(root)
    problems = []
    cache = {}
    linked_from_index = set()
    for rel in files:
        path = os.path.join(root, rel)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for number, target in links_in(text):
            if SCHEME.match(target) or target.startswith("//"):
                continue
            where = f"{rel}:{number}"
            file_part, _, anchor = target.partition("#")
            file_part = urllib.parse.unquote(file_part)
            if file_part.startswith("/"):
                resolved = os.path.normpath(os.path.join(root, file_part.lstrip("/")))
            elif file_part:
                resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part))
            else:
                resolved = path
            if not os.path.exists(resolved):
                problems.append(f"{where}: dead link {target}: no {os.path.relpath(resolved, root)}")
                continue
            if rel in ("README.md", os.path.join("docs", "README.md")) and resolved.endswith(".md"):
                linked_from_index.add(os.path.relpath(resolved, root))
            if anchor and resolved.endswith(".md") and os.path.isfile(resolved):
                anchor = urllib.parse.unquote(anchor).lower()
                if anchor not in anchors_of(resolved, cache):
                    problems.append(f"{where}: dead link {target}: no heading #{anchor} in "
                                    f"{os.path.relpath(resolved, root)}")
        for number, word in backtick_paths_in(text):
            word = word.split("/.")[0] if re.search(r"\.\w+/\.\w+$", word) else word  # x.hpp/.cpp: x.hpp
            if any(c in word for c in "*<>…") or "results/" in word or PLACEHOLDER.search(word):
                continue
            problem = backtick_path_problem(root, path, word)
            if problem:
                problems.append(f"{rel}:{number}: {problem}")
    problems += citation_problems(root, tracked_files(root))
    for rel in files:
        parts = rel.split(os.sep)
        if parts[0] == "docs" and rel != os.path.join("docs", "README.md") and rel not in linked_from_index:
            problems.append(f"{rel}:1: orphan page: linked from neither docs/README.md nor README.md")
    return problems


SELF_TEST_FILES = {
    "README.md": "# Top\n\n[docs](docs/README.md), [ok](docs/a.md#a-heading-with-code), "
                 "[web](https://example.com/none)\n\n```\n[in code](nowhere.md)\n```\n"
                 "<!-- [in a comment](nowhere.md) -->\n`[in a span](nowhere.md)`\n",
    "docs/README.md": "# Docs\n\n- [a](a.md)\n- [same page](#docs)\n- [contract](reference/partner-api.md)\n\n## Part\n\n## Part\n",
    "docs/a.md": "# A heading with `code`\n\n[dead](missing.md)\n\n![dead image](img/none.png)\n\n"
                 "[bad anchor](../README.md#no-such-heading)\n\n[good](../README.md#top)\n\n"
                 "[the second Part](README.md#part-1)\n\n<img src=\"none.svg\">\n\n[ref]: gone.md\n\n"
                 "See `../elsewhere/partner-api.md` and `docs/gone.md`, not `../../outside.md` or "
                 "`/work/elsewhere/partner-api.md`.\n\nFine: `docs/README.md`, `../README.md`, `/admin/check`, "
                 "`application/json`, `build/cli/lockbench`, `docs/a`, `x/NAME.cpp`, `docs/*.md`.\n",
    "docs/orphan.md": "# Nobody links here\n",
    "docs/reference/partner-api.md": "# Contract\n\n## A. One\n\n## E. Admin\n",
    "src/x.cpp": "// see /work/elsewhere/DESIGN.md and DESIGN.md, and docs/gone.md\n"
                 "// fine: README.md, docs/README.md, ../docs/a.md, docs/reference/partner-api.md section E\n"
                 "// docs/reference/partner-api.md Z is no section\n",
}
SELF_TEST_EXPECTED = [
    "docs/a.md:3: dead link missing.md",
    "docs/a.md:5: dead link img/none.png",
    "docs/a.md:7: dead link ../README.md#no-such-heading: no heading #no-such-heading",
    "docs/a.md:13: dead link none.svg",
    "docs/a.md:15: dead link gone.md",
    "docs/a.md:17: dead path `../elsewhere/partner-api.md`: no elsewhere/partner-api.md",
    "docs/a.md:17: dead path `docs/gone.md`: no docs/gone.md",
    "docs/a.md:17: dead path `../../outside.md`: outside the repository",
    "docs/a.md:17: dead path `/work/elsewhere/partner-api.md`: outside the repository",
    "src/x.cpp:1: cites /work/elsewhere/DESIGN.md: outside the repository",
    "src/x.cpp:1: cites DESIGN.md: no such page",
    "src/x.cpp:1: cites docs/gone.md: not in the repository",
    "src/x.cpp:3: cites section Z of docs/reference/partner-api.md",
    "docs/orphan.md:1: orphan page",
]


def self_test():
    """A tree with five dead links (a file, an image, an anchor, an <img>, a
    reference definition), four dead backtick paths (missing, missing from the
    root, leaving the tree, absolute), four bad citations in a source (outside,
    no such page, missing, no such partner-api.md section) and an orphan must
    give exactly those fourteen problems, beside backtick paths that are fine or no paths; and the same tree
    mended must give none."""
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for rel, text in SELF_TEST_FILES.items():
            os.makedirs(os.path.dirname(os.path.join(tmp, rel)), exist_ok=True)
            with open(os.path.join(tmp, rel), "w", encoding="utf-8") as f:
                f.write(text)
        problems = check(tmp)
        for expected in SELF_TEST_EXPECTED:
            if not any(p.startswith(expected) for p in problems):
                failures.append(f"self-test: expected a problem starting {expected!r}, got {problems}")
        if len(problems) != len(SELF_TEST_EXPECTED):
            failures.append(f"self-test: expected {len(SELF_TEST_EXPECTED)} problems, got {problems}")
        # Mend it: the same checker must now find nothing.
        os.remove(os.path.join(tmp, "docs", "orphan.md"))
        os.remove(os.path.join(tmp, "src", "x.cpp"))
        with open(os.path.join(tmp, "docs", "a.md"), "w", encoding="utf-8") as f:
            f.write("# A heading with `code`\n\n[good](../README.md#top)\n")
        mended = check(tmp)
        if mended:
            failures.append(f"self-test: the mended tree still has problems: {mended}")
    return failures


def check_tree(root):
    problems = check(root)
    for line in problems:
        print(line)
    if not problems:
        print(f"{len(markdown_files(root))} markdown files: no dead link, no orphan page; no source cites a page outside the repository")
    return 1 if problems else 0


def main(argv):
    return checker_main(argv, __doc__, self_test,
                        "self-test: dead links (file, image, anchor, <img>, reference), dead backtick paths (missing, "
                        "outside the repository), bad citations in sources and an orphan page are each found",
                        1, check_tree)

if __name__ == "__main__":
    sys.exit(main(sys.argv))

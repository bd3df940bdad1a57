#!/usr/bin/python3
"""Every relative link in the repository's Markdown files must resolve inside it.

    tools/check_markdown_links.py [ROOT]     check ROOT (default: this repository)
    tools/check_markdown_links.py --self-test

Checks inline links and images ``[text](target)``, ``![alt](target)``, reference
definitions ``[id]: target`` and HTML ``<a href>`` / ``<img src>``, outside fenced code
blocks and code spans. A link fails when its path leaves ROOT or names nothing there;
a ``#fragment`` on a Markdown target must name one of its headings (GitHub's anchor
rule). Links with a scheme (``https:``, ``mailto:``) are not followed. Exit status 1
lists every bad link as ``file:line: target: reason``.
"""

import os
import re
import subprocess
import sys
import tempfile
import unittest
from urllib.parse import unquote

INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+[\"'(][^)]*)?\)")
# A definition is the whole line: label, destination and at most a quoted title.
REFERENCE = re.compile(
    r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*$")
HTML = re.compile(r"<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*[\"']([^\"']+)[\"']", re.I)
FENCE = re.compile(r"^\s{0,3}(```+|~~~+)")
CODE_SPAN = re.compile(r"(`+)(?:.(?!\1))*?.?\1")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
SKIPPED_DIRS = {".git", "__pycache__", "node_modules"}


def markdown_files(root):
    """Tracked and untracked-but-not-ignored *.md files; a plain walk without git."""
    try:
        out = subprocess.run(
            ["git", "-C", root, "ls-files", "-z", "--cached", "--others",
             "--exclude-standard", "--", "*.md"],
            check=True, capture_output=True).stdout.decode()
        files = [os.path.join(root, f) for f in out.split("\0") if f]
        return sorted(f for f in files if os.path.isfile(f))
    except (OSError, subprocess.CalledProcessError):
        pass
    found = []
    for d, dirs, names in os.walk(root):
        # Build trees (CMakeCache.txt) hold copies and generated files, not sources.
        dirs[:] = [x for x in dirs if x not in SKIPPED_DIRS
                   and not os.path.exists(os.path.join(d, x, "CMakeCache.txt"))]
        found += [os.path.join(d, n) for n in names if n.endswith(".md")]
    return sorted(found)


def links(text):
    """(line number, target) of every link outside code blocks and code spans."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if m:
            marker = m.group(1)
            if fence is None:
                fence = marker[0] * len(marker)
            elif marker.startswith(fence):
                fence = None
            continue
        if fence is not None:
            continue
        line = CODE_SPAN.sub("", line)
        for pattern in (INLINE, REFERENCE, HTML):
            for m in pattern.finditer(line):
                yield number, m.group(1).strip("<>")


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"`|\*\*|__", "", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(path):
    seen = {}
    result = set()
    with open(path, encoding="utf-8") as f:
        fence = None
        for line in f:
            m = FENCE.match(line)
            if m:
                fence = None if fence else m.group(1)
                continue
            h = None if fence else HEADING.match(line)
            if h:
                base = slug(h.group(1))
                n = seen.get(base, 0)
                seen[base] = n + 1
                result.add(base if n == 0 else f"{base}-{n}")
    return result


def check_link(root, md_file, target):
    """None when the link is fine, else why not."""
    if SCHEME.match(target) or target.startswith("//"):
        return None
    path, _, fragment = target.partition("#")
    path = unquote(path)
    if not path:
        resolved = md_file
    elif path.startswith("/"):
        resolved = os.path.join(root, path.lstrip("/"))
    else:
        resolved = os.path.join(os.path.dirname(md_file), path)
    resolved = os.path.realpath(resolved)
    real_root = os.path.realpath(root)
    if os.path.commonpath([resolved, real_root]) != real_root:
        return "leaves the repository"
    if not os.path.exists(resolved):
        return "does not exist"
    if fragment and resolved.endswith(".md") and os.path.isfile(resolved):
        if unquote(fragment).lower() not in anchors(resolved):
            return f"no heading for #{fragment}"
    return None


def check(root):
    problems = []
    files = markdown_files(root)
    for md in files:
        with open(md, encoding="utf-8") as f:
            text = f.read()
        for number, target in links(text):
            why = check_link(root, md, target)
            if why:
                problems.append(f"{os.path.relpath(md, root)}:{number}: {target}: {why}")
    return files, problems


class SelfTest(unittest.TestCase):
    """The checker flags exactly the bad links of a small tree."""

    def test_tree(self):
        with tempfile.TemporaryDirectory() as outer:
            root = os.path.join(outer, "repo")
            os.makedirs(os.path.join(root, "docs", "images"))
            open(os.path.join(outer, "outside.md"), "w").close()
            open(os.path.join(root, "docs", "images", "a b.png"), "w").close()
            with open(os.path.join(root, "docs", "guide.md"), "w") as f:
                f.write("# Guide\n\n## Live `control`, setters\n")
            with open(os.path.join(root, "README.md"), "w") as f:
                f.write("\n".join([
                    "[ok](docs/guide.md) and ![img](docs/images/a%20b.png)",
                    "[anchor](docs/guide.md#live-control-setters) [self](#top)",
                    "[web](https://example.org/x.md) [dir](docs/)",
                    "[up](../outside.md)",
                    "![missing](docs/images/none.png)",
                    "[bad anchor](docs/guide.md#nowhere)",
                    "[ref]: docs/missing.md",
                    "[x, y]: not a definition (a sentence)",
                    '<img src="docs/nothing.png">',
                    "`[code](nowhere.md)`",
                    "```",
                    "[fenced](nowhere.md)",
                    "```",
                    "# Top",
                ]) + "\n")
            files, problems = check(root)
            self.assertEqual(len(files), 2)
            self.assertEqual(problems, [
                "README.md:4: ../outside.md: leaves the repository",
                "README.md:5: docs/images/none.png: does not exist",
                "README.md:6: docs/guide.md#nowhere: no heading for #nowhere",
                "README.md:7: docs/missing.md: does not exist",
                "README.md:9: docs/nothing.png: does not exist",
            ])


def main(argv):
    if argv[1:] == ["--self-test"]:
        suite = unittest.defaultTestLoader.loadTestsFromTestCase(SelfTest)
        return 0 if unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful() else 1
    if len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-")):
        print(__doc__, file=sys.stderr)
        return 2
    root = argv[1] if len(argv) == 2 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    files, problems = check(root)
    for p in problems:
        print(p, file=sys.stderr)
    if not files:
        print(f"check_markdown_links: no Markdown files under {root}", file=sys.stderr)
        return 1
    print(f"check_markdown_links: {len(files)} Markdown files, "
          f"{len(problems)} bad links", file=sys.stderr if problems else sys.stdout)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

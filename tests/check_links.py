#!/usr/bin/env python3
"""Check the relative links of the Markdown documentation.

Every [text](target) and ![alt](target) of README.md, CONTRIBUTING.md,
CHANGELOG.md, docs/*.md and bench/**/*.md whose target is not a URL must
name a file or folder of the repository, and an #anchor must be one of the
target's headings (GitHub's rule: lower case, punctuation dropped, spaces
to hyphens). Fenced code and inline code are skipped. Lists each broken
link and exits 1.

usage: check_links.py SOURCE_ROOT
"""
import glob
import os
import re
import sys

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def prose(text):
    """The text without fenced blocks and inline code (same line count)."""
    out, fenced = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            out.append("")
            continue
        out.append("" if fenced else re.sub(r"`[^`]*`", "", line))
    return out


def anchors(path, cache={}):
    """The anchors of a Markdown file's headings, as GitHub makes them."""
    if path not in cache:
        seen, fenced = {}, False
        for line in open(path, encoding="utf-8").read().split("\n"):
            if line.lstrip().startswith("```"):
                fenced = not fenced
            m = None if fenced else re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m:
                slug = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
                seen[slug] = seen.get(slug, -1) + 1
                if seen[slug]:
                    seen[f"{slug}-{seen[slug]}"] = 0
        cache[path] = set(seen)
    return cache[path]


def main():
    root = os.path.abspath(sys.argv[1])
    files = [os.path.join(root, f) for f in ("README.md", "CONTRIBUTING.md", "CHANGELOG.md")]
    files += sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    files += sorted(glob.glob(os.path.join(root, "bench", "**", "*.md"), recursive=True))
    bad = 0
    for md in files:
        if not os.path.exists(md):
            continue
        for no, line in enumerate(prose(open(md, encoding="utf-8").read()), 1):
            for m in LINK.finditer(line):
                target = m.group(1)
                if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                    continue
                path, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
                where = f"{os.path.relpath(md, root)}:{no}: {target}"
                if not dest.startswith(root) or not os.path.exists(dest):
                    print(f"{where}: no such file")
                    bad += 1
                elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                    print(f"{where}: no heading #{anchor} in {os.path.relpath(dest, root)}")
                    bad += 1
    print(f"{len(files)} files checked, {bad} broken links")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The closing lines of scripts/test.sh from meson's testlog.json files (and
the wheel's one-line log): each skipped test with its build and the reason
it printed last, then "N passed, N failed, N skipped", which stays the very
last line (CI parses it). A log that is missing counts as one failure.

usage: scripts/test-summary.py TESTLOG.json...
"""
import json
import os
import sys


def main(paths):
    counts = {"OK": 0, "FAIL": 0, "SKIP": 0}
    skipped = []
    for path in paths:
        if not os.path.exists(path):
            counts["FAIL"] += 1
            continue
        parent = os.path.dirname(path)
        build = os.path.dirname(parent) if os.path.basename(parent) == "meson-logs" else parent
        for line in open(path):
            r = json.loads(line)
            kind = {"OK": "OK", "SKIP": "SKIP", "EXPECTEDFAIL": "OK"}.get(r["result"], "FAIL")
            counts[kind] += 1
            if kind == "SKIP":
                # A skipping test says why on its last line of output.
                out = [l.strip() for l in (r.get("stdout") or "").splitlines() if l.strip()]
                skipped.append((build or ".", r["name"], out[-1] if out else "no reason given"))
    for build, name, why in skipped:
        print(f"skipped: {build}: {name}: {why}")
    print(f"{counts['OK']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

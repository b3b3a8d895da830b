#!/usr/bin/env python3
"""The setup scripts: scripts/deps.sh --list prints the one list of Debian
packages (one a line, no repeats, --test and --fuzz adding theirs); as a
user who can neither be root nor use sudo it prints the command to run as
root and exits 1; scripts/test-summary.py names each skipped test and why
just before its closing count line, which stays last; demo.sh and test.sh
set up their builds through scripts/setup-build.sh (one build type).

usage: test_scripts.py SOURCE_ROOT
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from refcheck import check, finish

ROOT = sys.argv[1]
DEPS = os.path.join(ROOT, "scripts", "deps.sh")


def deps(*args, **kw):
    return subprocess.run(["sh", DEPS, *args], capture_output=True, text=True, **kw)


def deps_list():
    base = deps("--list")
    lines = base.stdout.splitlines()
    check(base.returncode == 0 and len(lines) > 10, f"deps.sh --list: {base.returncode}")
    check(all(re.fullmatch(r"[a-z0-9][a-z0-9.+-]+", p) for p in lines),
          f"deps.sh --list: not one package a line: {lines}")
    check(len(set(lines)) == len(lines), "deps.sh --list repeats a package")
    for p in ("meson", "libpng-dev", "scdoc", "bash-completion"):
        check(p in lines, f"deps.sh --list lacks {p}")
    test = deps("--list", "--test").stdout.splitlines()
    fuzz = deps("--list", "--fuzz").stdout.splitlines()
    check(test[:len(lines)] == lines and "python3-opencv" in test and "zsh" in test,
          "deps.sh --list --test does not add the test packages")
    check("clang" in fuzz and "python3-opencv" not in fuzz, "deps.sh --list --fuzz")
    check(deps("--bogus").returncode == 2, "deps.sh --bogus: not a usage error")


def deps_without_root():
    """As nobody (where this runs as root and setpriv exists), with a
    package to install: the command for root, exit 1, nothing installed."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        print("skipped: deps.sh as a user without root (not root, or no setpriv)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        # A copy nobody can read wherever the tree lies.
        os.chmod(tmp, 0o755)
        script = shutil.copy(DEPS, os.path.join(tmp, "deps.sh"))
        os.chmod(script, 0o755)
        r = subprocess.run([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "sh",
                            script, "imghist-no-such-package"], capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, cwd=tmp)
    last = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ""
    check(r.returncode == 1 and last.strip().startswith("apt-get update && ") and
          last.rstrip().endswith("install -y --no-install-recommends imghist-no-such-package"),
          f"deps.sh without root: exit {r.returncode}, {r.stderr!r}")


def summary():
    with tempfile.TemporaryDirectory() as tmp:
        logs = []
        for build, rows in (("build", [("cpu", "OK", "all good"),
                                       ("gpu", "SKIP", "start\nskipping: no usable GPU\n"),
                                       ("bad", "FAIL", "boom")]),
                            ("build-asan", [("cpu", "OK", ""), ("quiet", "SKIP", "")])):
            d = os.path.join(tmp, build, "meson-logs")
            os.makedirs(d)
            logs.append(os.path.join(d, "testlog.json"))
            with open(logs[-1], "w") as f:
                for name, result, out in rows:
                    f.write(json.dumps({"name": name, "result": result, "stdout": out}) + "\n")
        r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "test-summary.py"),
                            *logs, os.path.join(tmp, "missing.json")],
                           capture_output=True, text=True)
        lines = r.stdout.splitlines()
        want = [f"skipped: {tmp}/build: gpu: skipping: no usable GPU",
                f"skipped: {tmp}/build-asan: quiet: no reason given",
                "2 passed, 2 failed, 2 skipped"]
        check(r.returncode == 0 and lines == want, f"test-summary.py: {lines}")


def one_build_type():
    for name in ("demo.sh", "test.sh"):
        text = open(os.path.join(ROOT, "scripts", name)).read()
        check("scripts/setup-build.sh build" in text and "meson setup" not in text and
              "buildtype" not in text, f"scripts/{name} sets up its build by itself")
    text = open(os.path.join(ROOT, "scripts", "setup-build.sh")).read()
    check(text.count("--buildtype=\"$buildtype\"") == 2,
          "setup-build.sh does not set the build type on setup and on reconfigure")


def main():
    deps_list()
    deps_without_root()
    summary()
    one_build_type()
    return finish("scripts")


if __name__ == "__main__":
    sys.exit(main())

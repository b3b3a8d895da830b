#!/usr/bin/env python3
"""The man page and the shell completions against the CLI's option table
(src/cli/args.c): every option the CLI accepts is in docs/imghist.1.scd and
in the bash, zsh and fish completions; the man page builds with scdoc (where
it is installed); bash -n, zsh -n and fish -n accept the completion files
(each where the shell is installed); meson installs them where the shells
and man look.

usage: test_man_completions.py SOURCE_ROOT BUILD_ROOT [MAN_BUILT]
MAN_BUILT: 1 where meson builds the man page (option man), 0 where not.
"""
import json
import os
import re
import shutil
import subprocess
import sys

from refcheck import check, finish

ROOT, BUILD = sys.argv[1], sys.argv[2]
MAN_BUILT = len(sys.argv) < 4 or sys.argv[3] == "1"
COMPLETIONS = {"bash": "completions/imghist.bash", "zsh": "completions/_imghist",
               "fish": "completions/imghist.fish"}


def option_table():
    """The names in args.c's options[] (short and long), e.g. -j, --jobs."""
    src = open(os.path.join(ROOT, "src", "cli", "args.c")).read()
    table = src.split("static const option options[] = {", 1)[1].split("\n};", 1)[0]
    names = set(re.findall(r'"(--?[a-z][a-z0-9-]*)"', table))
    check(len(names) > 30, f"only {len(names)} options read from the table: {sorted(names)}")
    return sorted(names)


def mentions(text, opt, fish=False):
    if fish:  # complete -s j / -l jobs
        flag = "-s" if not opt.startswith("--") else "-l"
        return re.search(rf"{flag} {re.escape(opt.lstrip('-'))}(\s|$)", text) is not None
    return re.search(rf"(^|[\s'\"*{{,(]){re.escape(opt)}($|[\s'\"*}},=\[)|])", text, re.M) \
        is not None


def main():
    opts = option_table()
    scd = open(os.path.join(ROOT, "docs", "imghist.1.scd")).read()
    for opt in opts:
        check(mentions(scd, opt), f"docs/imghist.1.scd does not describe {opt}")
        for shell, path in COMPLETIONS.items():
            text = open(os.path.join(ROOT, path)).read()
            if shell == "bash":  # the words offered: the first opts="..."
                text = re.search(r'opts="([^"]*)"', text).group(1)
            check(mentions(text, opt, fish=shell == "fish"), f"{path} does not complete {opt}")

    scdoc = shutil.which("scdoc")
    if scdoc:
        with open(os.path.join(ROOT, "docs", "imghist.1.scd"), "rb") as f:
            r = subprocess.run([scdoc], stdin=f, capture_output=True)
        check(r.returncode == 0 and r.stdout.startswith(b".\\\""),
              f"scdoc failed: {r.stderr.decode(errors='replace')}")
        for opt in opts:
            check(f"\\fB{opt}\\fR" in r.stdout.decode(), f"imghist.1 lacks {opt} in bold")
    else:
        print("skipped: scdoc is not installed (the man page is not built)")

    for shell, path in COMPLETIONS.items():
        exe = shutil.which(shell)
        if exe is None:
            print(f"skipped: {shell} -n (no {shell})")
            continue
        r = subprocess.run([exe, "-n", os.path.join(ROOT, path)], capture_output=True, text=True)
        check(r.returncode == 0, f"{shell} -n {path}: {r.stderr.strip()}")

    # Where meson installs them (relative to the prefix).
    r = subprocess.run(["meson", "introspect", BUILD, "--installed"], capture_output=True,
                       text=True)
    installed = json.loads(r.stdout) if r.returncode == 0 else {}
    check(installed, f"meson introspect --installed failed: {r.stderr.strip()}")
    dests = {os.path.relpath(k, ROOT): v for k, v in installed.items()}
    for path, want in ((COMPLETIONS["bash"], "/bash-completion/completions/imghist"),
                       (COMPLETIONS["zsh"], "/share/zsh/site-functions/_imghist"),
                       (COMPLETIONS["fish"], "/share/fish/vendor_completions.d/imghist.fish")):
        check(dests.get(path, "").endswith(want), f"{path} installed as {dests.get(path)}")
    man = [v for k, v in installed.items() if k.endswith("/imghist.1")]
    if MAN_BUILT:
        check(len(man) == 1 and man[0].endswith("/man/man1/imghist.1"), f"man page: {man}")
    return finish("man page and completions")


if __name__ == "__main__":
    sys.exit(main())

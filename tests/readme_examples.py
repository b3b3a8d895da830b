#!/usr/bin/env python3
"""Run the README's examples as printed.

Every fenced block of README.md's "Examples" section runs in order, in a
scratch folder that holds a link to the repository's samples/, against this
build's tool, library and Python binding, on the CPU backend:
- ```sh blocks with `sh -e`, the tool's folder first on the PATH and the
  uninstalled imghist.pc on the pkg-config path;
- ```c blocks are written to the file their first line names (`/* NAME.c */`),
  for the shell blocks after them to compile;
- ```python blocks run with this interpreter, except those that need PyTorch
  or CuPy (a GPU), which are only compiled.
The shell blocks of docs/cli.md, the tool's guide, run the same way.
Any block that fails fails the test, with the block and its output.
The quick start must give the two commands ./scripts/demo.sh and
./scripts/test.sh, and every scripts/ or samples/ path a block names must exist.

usage: readme_examples.py SOURCE_ROOT BUILD_ROOT [PYTHON_BINDING]
"""
import os
import re
import subprocess
import sys
import tempfile

GPU_MODULES = re.compile(r"^\s*import\s+(torch|cupy)\b|^\s*from\s+(torch|cupy)\b", re.M)


def blocks(text, section=None):
    """The fenced blocks of one `## section` (or of the whole text), as
    (language, body, line)."""
    m = re.search(r"^## " + re.escape(section) + r"\s*$(.*?)(?=^## |\Z)", text, re.M | re.S) \
        if section else re.match(r"(.*)", text, re.S)
    if not m:
        sys.exit(f"README.md has no '## {section}' section")
    first = text[:m.start(1)].count("\n") + 1
    out = []
    for b in re.finditer(r"^```(\w*)\n(.*?)^```$", m.group(1), re.M | re.S):
        out.append((b.group(1), b.group(2), first + m.group(1)[:b.start()].count("\n")))
    return out


def fail(lang, line, body, why, output="", doc="README.md"):
    print(f"{doc}:{line}: the ```{lang} block {why}:\n{body}{output}")
    sys.exit(1)


def main():
    src, build = sys.argv[1], sys.argv[2]
    binding = sys.argv[3] if len(sys.argv) > 3 else ""
    text = open(os.path.join(src, "README.md"), encoding="utf-8").read()

    quick = [re.sub(r"\s*#.*", "", cmd).strip()
             for lang, b, _ in blocks(text, "Quick start") if lang == "sh"
             for cmd in b.splitlines() if cmd.strip()]
    if quick != ["./scripts/demo.sh", "./scripts/test.sh"]:
        sys.exit(f"the quick start's commands are {quick}, not ./scripts/demo.sh and ./scripts/test.sh")
    for path in sorted(set(re.findall(r"\b((?:scripts|samples)/[\w./-]*\w)", text))):
        if not os.path.exists(os.path.join(src, path)):
            sys.exit(f"README.md names {path}, which the repository does not have")

    examples = blocks(text, "Examples")
    kinds = {lang for lang, _, _ in examples}
    if not {"sh", "python", "c"} <= kinds:
        sys.exit(f"the examples have blocks of {sorted(kinds)}; sh, python and c expected")

    env = dict(os.environ)
    env["PATH"] = os.path.join(build, "src") + os.pathsep + env.get("PATH", "")
    env["PKG_CONFIG_PATH"] = os.path.join(build, "meson-uninstalled")
    env["LD_LIBRARY_PATH"] = os.path.join(build, "src")
    env["IMGHIST_BACKEND"] = "cpu"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if binding:
        env["IMGHIST_NATIVE"] = binding
        env["PYTHONPATH"] = os.path.join(src, "python")

    with tempfile.TemporaryDirectory() as tmp:
        os.symlink(os.path.join(src, "samples"), os.path.join(tmp, "samples"))
        for n, (lang, body, line) in enumerate(examples):
            if lang == "c":
                name = re.match(r"/\* (\w+\.c) \*/", body)
                if not name:
                    fail(lang, line, body, "does not start with /* NAME.c */")
                with open(os.path.join(tmp, name.group(1)), "w") as f:
                    f.write(body)
                continue
            if lang == "python":
                path = os.path.join(tmp, f"example{n}.py")
                with open(path, "w") as f:
                    f.write(body)
                if GPU_MODULES.search(body):
                    cmd = [sys.executable, "-m", "py_compile", path]
                elif not binding:
                    print(f"README.md:{line}: python block skipped: no binding in this build")
                    continue
                else:
                    cmd = [sys.executable, path]
            elif lang == "sh":
                cmd = ["sh", "-e", "-c", body]
            else:
                fail(lang, line, body, "is of no language the test runs")
            r = subprocess.run(cmd, cwd=tmp, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=120)
            shown = r.stdout if len(r.stdout) < 4000 else r.stdout[:4000] + "...\n"
            if r.returncode != 0:
                fail(lang, line, body, f"exited {r.returncode}", "--- output:\n" + shown)
            print(f"README.md:{line}: ```{lang} ok" + (" (compiled only: needs a GPU)"
                                                       if cmd[1:3] == ["-m", "py_compile"] else ""))
            print(shown, end="")

        guide = open(os.path.join(src, "docs", "cli.md"), encoding="utf-8").read()
        os.mkdir(os.path.join(tmp, "cli"))
        os.symlink(os.path.join(src, "samples"), os.path.join(tmp, "cli", "samples"))
        for lang, body, line in blocks(guide):
            if lang != "sh":
                continue
            r = subprocess.run(["sh", "-e", "-c", body], cwd=os.path.join(tmp, "cli"), env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=120)
            if r.returncode != 0:
                fail(lang, line, body, f"exited {r.returncode}", "--- output:\n" + r.stdout[:4000],
                     doc="docs/cli.md")
            print(f"docs/cli.md:{line}: ```sh ok")

        # What the C example promises: a PNG, a line naming the backend, and a
        # one-line error and exit 1 for a missing file.
        if os.path.exists(os.path.join(tmp, "equalize")):
            r = subprocess.run(["./equalize", "samples/moon.png", "c-out.png"], cwd=tmp, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if r.returncode != 0 or not re.match(r"512x512 on cpu, \d+ pixels were 0$", r.stdout):
                sys.exit(f"equalize on moon.png: exit {r.returncode}, {r.stdout!r} {r.stderr!r}")
            with open(os.path.join(tmp, "c-out.png"), "rb") as f:
                if f.read(8) != b"\x89PNG\r\n\x1a\n":
                    sys.exit("the C example wrote no PNG")
            r = subprocess.run(["./equalize", "missing.png", "x.png"], cwd=tmp, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if r.returncode != 1 or "missing.png" not in r.stderr:
                sys.exit(f"the C example on a missing file: exit {r.returncode}, {r.stderr!r}")
    print("README examples: ok")


if __name__ == "__main__":
    main()

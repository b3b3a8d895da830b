#!/usr/bin/env python3
"""What a user meets first: runs that would do nothing, or the wrong thing,
without a word. Several inputs with no output print each summary; a run
that finds no image fails naming its input; --equalize refuses a name that
says another format; merge refuses a shard given twice and a per-image CSV
as a total; every usage error exits 2; summaries show values the image can
have and the pixels a mask counted; messages name the option or variable
that caused them; --version says what was built in; -h and --help fit 80
columns.

usage: test_front_door.py IMGHIST_BINARY SOURCE_ROOT
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from refcheck import check, finish

EXE, ROOT = sys.argv[1], sys.argv[2]
SAMPLES = os.path.join(ROOT, "samples")
MOON = os.path.join(SAMPLES, "moon.png")
CAMERA = os.path.join(SAMPLES, "camera.png")


def run(*args, env=None):
    e = dict(os.environ)
    e.pop("IMGHIST_BACKEND", None)
    e.update(env or {})
    return subprocess.run([EXE, *args], capture_output=True, text=True, env=e)


def one_line_error(r, code, *words):
    lines = r.stderr.splitlines()
    return (r.returncode == code and len(lines) == 1 and lines[0].startswith("imghist: ")
            and all(w in lines[0] for w in words))


def summaries(tmp):
    r = run(MOON, CAMERA)
    heads = [l for l in r.stdout.splitlines() if re.match(r".*: \d+x\d+, \d+ pixels$", l)]
    check(r.returncode == 0 and heads == [f"{CAMERA}: 512x512, 262144 pixels",
                                          f"{MOON}: 512x512, 262144 pixels"],
          f"two inputs, no output: exit {r.returncode}, summaries {heads}")
    single = run(MOON).stdout
    check(single in r.stdout, "a batch summary differs from the one-image summary")
    check(run(MOON, CAMERA, "-q").stdout == "", "-q still prints summaries")


def no_image(tmp):
    empty = os.path.join(tmp, "empty")
    nested = os.path.join(tmp, "nested")
    os.makedirs(empty)
    os.makedirs(os.path.join(nested, "a"))
    shutil.copy(MOON, os.path.join(nested, "a", "moon.png"))
    with open(os.path.join(empty, "notes.txt"), "w") as f:
        f.write("not an image\n")
    for d, want_r in ((empty, False), (nested, True)):
        for opt in ("--csv", "--total", "--json"):
            out = os.path.join(tmp, "out.txt")
            r = run(d, opt, out)
            check(one_line_error(r, 1, d, "no image found"),
                  f"{os.path.basename(d)} {opt}: exit {r.returncode}, {r.stderr!r}")
            check(("-r" in r.stderr) == want_r, f"{os.path.basename(d)}: -r suggested "
                  f"{'-r' in r.stderr}, want {want_r}")
            check(not os.path.exists(out), f"{os.path.basename(d)} {opt}: an output was left")
    r = run(empty, os.path.join(tmp, "empty2"))
    check(r.returncode in (1, 2) and r.stdout == "", f"a missing second input: {r.returncode}")
    r = run("-r", nested, "--csv", os.path.join(tmp, "ok.csv"))
    check(r.returncode == 0 and os.path.exists(os.path.join(tmp, "ok.csv")),
          f"-r finds the image: exit {r.returncode}")


def equalize_names(tmp):
    for name in ("out.jpg", "out.JPEG", "out.tif", "out.png.bmp"):
        out = os.path.join(tmp, name)
        r = run(MOON, "--equalize", out)
        check(one_line_error(r, 2, name, ".png"), f"--equalize {name}: exit {r.returncode}, "
              f"{r.stderr!r}")
        check(not os.path.exists(out), f"--equalize {name} wrote a file")
    for name in ("out.png", "OUT.PNG", "noext", ".hidden"):
        out = os.path.join(tmp, name)
        r = run(MOON, "--equalize", out)
        check(r.returncode == 0 and open(out, "rb").read(8) == b"\x89PNG\r\n\x1a\n",
              f"--equalize {name}: exit {r.returncode}, {r.stderr!r}")
    # A batch run's OUT is a folder, whatever its name.
    r = run(MOON, CAMERA, "--equalize", os.path.join(tmp, "eq.jpg"))
    check(r.returncode == 0, f"a batch --equalize folder named eq.jpg: exit {r.returncode}")


def merge_guards(tmp):
    d = os.path.join(tmp, "m")
    os.makedirs(d)
    for name in ("moon.png", "camera.png", "coffee.png"):
        shutil.copy(os.path.join(SAMPLES, name), d)
    t = [os.path.join(tmp, f"t{k}.csv") for k in (1, 2)]
    c1 = os.path.join(tmp, "c1.csv")
    j = [os.path.join(tmp, f"j{k}.jsonl") for k in (1, 2)]
    for k in (1, 2):
        r = run(d, "--shard", f"{k}/2", "--total", t[k - 1], "--json", j[k - 1], "-q",
                *(["--csv", c1] if k == 1 else []))
        check(r.returncode == 0, f"shard {k}: exit {r.returncode} {r.stderr!r}")
    out = os.path.join(tmp, "merged.csv")
    copy = os.path.join(tmp, "t1-copy.csv")
    shutil.copy(t[0], copy)
    jcopy = os.path.join(tmp, "j1-copy.jsonl")
    shutil.copy(j[0], jcopy)
    for code, args, words, what in (
            (2, ["--total", out, t[0], t[0]], [t[0], "same file"], "the same path twice"),
            (2, ["--total", out, t[0], os.path.join(tmp, ".", "t1.csv")], ["same file"],
             "one file under two names"),
            (1, ["--total", out, t[0], copy], [copy, "same records"], "a copy of a shard"),
            (1, ["--json", out, j[0], jcopy], [jcopy, "same records"], "a copy of a JSON shard"),
            (1, ["--total", out, c1], [c1, "per-image CSV"], "a per-image CSV alone"),
            (1, ["--total", out, t[0], c1], [c1, "per-image CSV"], "a per-image CSV second"),
            (1, ["--total", out, c1, t[0]], [c1, "per-image CSV"], "a per-image CSV first")):
        r = run("merge", *args)
        check(one_line_error(r, code, *words), f"merge, {what}: exit {r.returncode}, "
              f"{r.stderr!r}")
        check(not os.path.exists(out), f"merge, {what}: an output was written")
    r = run("merge", "--total", out, *t)
    check(r.returncode == 0, f"merge of two shards: exit {r.returncode} {r.stderr!r}")
    whole = run(d, "--total", "-", "-q").stdout
    check(open(out).read() == whole, "the merged total is not the whole run's")
    # More shards than images: the empty shards' totals are empty files.
    e = [os.path.join(tmp, f"e{k}.csv") for k in (1, 2, 3)]
    for k in (1, 2, 3):
        run(MOON, "--shard", f"{k}/3", "--total", e[k - 1], "-q")
    r = run("merge", "--total", "-", *e)
    check(r.returncode == 0 and r.stdout == run(MOON, "--total", "-", "-q").stdout,
          f"merge with empty shards: exit {r.returncode} {r.stderr!r}")
    empty = [p for p in e if os.path.getsize(p) == 0]
    none = os.path.join(tmp, "none.csv")
    r = run("merge", "--total", none, *empty)
    check(len(empty) == 2 and one_line_error(r, 1, "empty") and not os.path.exists(none),
          f"merge of empty shards only: exit {r.returncode} {r.stderr!r}")


def usage_exit_2(tmp):
    p = lambda n: os.path.join(tmp, n)
    for args in (["--plot", p("p.png"), "-r", SAMPLES],
                 ["--plot-dir", p("plots"), MOON],
                 ["--match", MOON, "--equalize", p("eq"), "-r", SAMPLES],
                 ["--clahe", "--equalize", p("eq"), "-r", SAMPLES],
                 ["--plot", p("p.gif"), MOON],
                 ["--equalize", p("eq.webp"), MOON],
                 ["--bogus", MOON],
                 ["merge", "--bogus"]):
        r = run(*args)
        check(r.returncode == 2 and r.stdout == "" and "imghist" in r.stderr,
              f"{' '.join(args)}: exit {r.returncode}, want 2 (a usage error)")


def summary_values(tmp):
    r = run(MOON, "--bins", "16")
    line = next((l for l in r.stdout.splitlines() if l.startswith("min ")), "")
    values = [int(v) for v in re.findall(r"\d+", re.sub(r"  mean.*", "", line))]
    check(r.returncode == 0 and values and max(values) <= 255,
          f"--bins 16 on an 8-bit image: {line!r}")
    # A mask that keeps the left half: its pixel count, not the image's.
    mask = os.path.join(tmp, "half.pgm")
    with open(mask, "wb") as f:
        f.write(b"P5\n512 512\n255\n" + (b"\xff" * 256 + b"\x00" * 256) * 512)
    r = run(MOON, "--mask", mask)
    first = r.stdout.splitlines()[0] if r.stdout else ""
    check(r.returncode == 0 and "131072 of 262144 pixels" in first,
          f"masked summary: {first!r}")


def backend_messages(tmp):
    built = "CUDA backend: yes" in run("--version").stdout
    r = run(MOON, env={"IMGHIST_BACKEND": "cuda"})
    if r.returncode != 0:
        check(one_line_error(r, 1, "IMGHIST_BACKEND=cuda") and "--backend" not in r.stderr,
              f"IMGHIST_BACKEND=cuda failing: {r.stderr!r}")
    r = run(MOON, "--backend", "cuda")
    if r.returncode != 0:
        check(one_line_error(r, 1, "--backend cuda"), f"--backend cuda failing: {r.stderr!r}")
    # A second file's failure names the option that gave it.
    missing = os.path.join(tmp, "missing.png")
    for opt, extra in (("--mask", []), ("--joint", []),
                       ("--match", ["--equalize", os.path.join(tmp, "eq.png")])):
        for other in (missing, os.path.join(SAMPLES, "coffee.png")):
            if opt == "--match" and other != missing:
                continue  # any size matches
            r = run(MOON, opt, other, *extra)
            check(one_line_error(r, 1, f"{opt} {other}:"), f"{opt} {other}: {r.stderr!r}")
    r = run(MOON, env={"IMGHIST_BACKEND": "gpu"})
    check(one_line_error(r, 1, "IMGHIST_BACKEND=gpu") and r.stderr.count("IMGHIST_BACKEND") == 1,
          f"IMGHIST_BACKEND=gpu: {r.stderr!r}")
    if not built:
        for args in ([MOON, "-v"], ["-v", "-r", SAMPLES, "--csv", os.path.join(tmp, "c.csv")],
                     [MOON, "--help"], [MOON, "-h"]):
            r = run(*args)
            text = r.stdout + r.stderr if "-v" in args else ""
            check("--backend cuda" not in text and "GPU too" not in text,
                  f"{' '.join(args)}: a build without CUDA suggests a GPU: {text!r}")


def version():
    r = run("--version")
    for word in ("imghist ", "CUDA backend: ", "MPI", "plots", "formats read: ", "PNG", "JPEG"):
        check(r.returncode == 0 and word in r.stdout, f"--version lacks {word!r}: {r.stdout!r}")


def help_widths():
    short, full = run("-h"), run("--help")
    check(short.returncode == 0 and full.returncode == 0, "-h or --help failed")
    for name, r in (("-h", short), ("--help", full), ("merge --help", run("merge", "--help"))):
        wide = [l for l in r.stdout.splitlines() if len(l) > 80]
        check(not wide, f"{name}: lines over 80 columns: {wide}")
    check(len(short.stdout.splitlines()) < 25 < len(full.stdout.splitlines()),
          "-h is not the short summary")
    for group in ("Outputs:", "Batch", "Messages:"):
        check(group in short.stdout and group in full.stdout, f"no group {group!r} in the help")
    # Every option of the table in both.
    table = open(os.path.join(ROOT, "src", "cli", "args.c")).read()
    for opt in sorted(set(re.findall(r'"(--?[a-z][a-z-]*)"', table.split("options[] = {")[1]
                                     .split("};")[0]))):
        check(re.search(rf"(^|[\s,|(]){re.escape(opt)}\b", full.stdout, re.M) is not None,
              f"--help does not show {opt}")
        check(re.search(rf"(^|[\s,|(]){re.escape(opt)}\b", short.stdout, re.M) is not None,
              f"-h does not show {opt}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for part in (summaries, no_image, equalize_names, merge_guards, usage_exit_2,
                     summary_values, backend_messages):
            sub = os.path.join(tmp, part.__name__)
            os.makedirs(sub)
            part(sub)
    version()
    help_widths()
    return finish("front door")


if __name__ == "__main__":
    sys.exit(main())

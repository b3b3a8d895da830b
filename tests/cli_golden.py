#!/usr/bin/python3
"""Every byte the imghist CLI writes, against a committed manifest.

Usage: cli_golden.py IMGHIST SOURCE_ROOT [--update] [--manifest FILE]

Runs a fixed list of invocations over samples/ (photographs), every folder
of tests/conformance/ and tests/crashers/, and records for each one its exit
status, the SHA-256 of its standard output and standard error, and the
SHA-256 of every file it wrote. The list is compared with
tests/golden/cli-outputs.tsv and every difference is printed; --update
rewrites that file instead. The manifest is written with a build known to be
right, so that a restructuring of the code can be checked byte for byte.

Inputs are named relative to SOURCE_ROOT (the working directory of every
run), outputs go to a scratch folder whose path is replaced by @TMP@ before
hashing: the manifest does not depend on where the tree or the scratch folder
lies. Nothing whose bytes legitimately differ between builds is run: no
--version, no --backend cuda or --gpus, and the GPUs are hidden, so a build
with CUDA and one without, on a machine with a GPU or without, write the same.
"""

import concurrent.futures
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

TMP = "@TMP@"
HEADER = ("# id\targs\texit\tstdout\tstderr\tfiles written (name=digest)\n"
          "# digests: SHA-256's first 16 hex digits; '-': empty or none\n")
# Short digests keep the manifest readable; 64 bits are ample to see a change.
DIGEST = 16
# Several runs at once: each is small, and most of the time is start-up.
WORKERS = 2
TIMEOUT = 60

IMAGE_EXT = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".gif", ".pgm", ".ppm")


# A batch run's closing line says how long it took.
TIMING = re.compile(rb"in [0-9.]+ s \([0-9.]+ images/s\)")


# Why one image ran on the CPU under -v: a build with CUDA suggests a GPU,
# one without says it has none.
ONE_IMAGE_CPU = re.compile(rb"backend: cpu \((auto: one image is done before CUDA would have "
                           rb"started; --backend cuda or --gpus for a GPU|this build has no CUDA "
                           rb"backend)\)")


def normalize_stderr(err, batch):
    """The timing replaced; a batch run's lines sorted, as it reports files
    in the order the folder lists them, which differs between checkouts."""
    err = TIMING.sub(b"in @TIME@", err)
    err = ONE_IMAGE_CPU.sub(b"backend: cpu (@ONE-IMAGE@)", err)
    if batch:
        err = b"\n".join(sorted(err.replace(b"\r", b"\n").split(b"\n")))
    return err


def digest(data):
    if not data:
        return "-"
    return hashlib.sha256(data).hexdigest()[:DIGEST]


def files_under(root, sub):
    """Every file below root/sub, as paths relative to root, sorted."""
    out = []
    for d, dirs, names in os.walk(os.path.join(root, sub)):
        dirs.sort()
        for n in sorted(names):
            out.append(os.path.relpath(os.path.join(d, n), root))
    return sorted(out)


def is_document(path):
    name = os.path.basename(path)
    return name.endswith((".md", ".tsv")) or "README" in name or "LICENSE" in name


def build_cases(src):
    """The invocations: (id, [steps]); each step is an argument list, and the
    steps of one case share a scratch folder (a later step reads an earlier
    one's files). '@TMP@' in an argument is that folder."""
    cases = []

    def add(cid, *steps, stdin=None):
        cases.append((cid, [list(s) for s in steps], stdin))

    samples = [p for p in files_under(src, "samples") if p.lower().endswith(IMAGE_EXT)]
    crashers = [p for p in files_under(src, "tests/crashers") if not is_document(p)]
    conformance = [p for p in files_under(src, "tests/conformance") if not is_document(p)]
    t = TMP

    for img in samples:
        name = os.path.basename(img)
        add(f"sample:{name}:summary", [img])
        add(f"sample:{name}:summary-v", [img, "-v"])
        add(f"sample:{name}:csv", [img, "--csv", "-"])
        add(f"sample:{name}:json", [img, "--json", "-"])
        add(f"sample:{name}:total", [img, "--total", "-", "-q"])
        add(f"sample:{name}:equalize", [img, "--equalize", f"{t}/eq.png", "--csv", f"{t}/h.csv"])
        add(f"sample:{name}:equalize16", [img, "--depth", "native", "--equalize", f"{t}/eq.png",
                                          "--json", "-"])
        add(f"sample:{name}:luma", [img, "--gray", "luma", "--csv", "-", "--equalize",
                                    f"{t}/eq.png"])
        add(f"sample:{name}:bins", [img, "--bins", "10", "--range", "20:200", "--json", "-"])
        add(f"sample:{name}:bins-csv", [img, "--bins", "7", "--range", "-5:300", "--csv", "-"])
        add(f"sample:{name}:channels", [img, "--channels", "--csv", "-", "--json", f"{t}/s.json"])
        add(f"sample:{name}:mask", [img, "--mask", img, "--json", "-", "--equalize",
                                    f"{t}/eq.png"])
        add(f"sample:{name}:clahe", [img, "--clahe", "--equalize", f"{t}/eq.png"])
        add(f"sample:{name}:clahe-grid", [img, "--clahe", "--clip", "2.5", "--tiles", "4x3",
                                          "--equalize", f"{t}/eq.png"])
        add(f"sample:{name}:clahe16", [img, "--clahe", "--depth", "native", "--clip", "0",
                                       "--equalize", f"{t}/eq.png"])
        add(f"sample:{name}:color-luma", [img, "--color", "luma", "--equalize", f"{t}/eq.png"])
        add(f"sample:{name}:color-channels", [img, "--color", "channels", "--equalize",
                                              f"{t}/eq.png"])
        add(f"sample:{name}:match", [img, "--match", "samples/moon.png", "--equalize",
                                     f"{t}/eq.png"])
        add(f"sample:{name}:joint", [img, "--joint", img, "--bins", "32", "--csv", "-",
                                     "--json", f"{t}/mi.json"])
        add(f"sample:{name}:plot", [img, "--plot", f"{t}/p.png"])
        add(f"sample:{name}:plot-eq", [img, "--plot", f"{t}/p.png", "--log", "--equalize",
                                       f"{t}/eq.png"])
        add(f"sample:{name}:plot-svg", [img, "--plot", f"{t}/p.svg"])
        add(f"sample:{name}:stdin", ["-", "--csv", "-"], stdin=img)

    # Every conformance file and crasher: decoded at both depths, equalized.
    for f in conformance + crashers:
        add(f"file:{f}:json", [f, "--json", "-"])
        add(f"file:{f}:native", [f, "--depth", "native", "--json", "-", "--read-truncated"])
        add(f"file:{f}:equalize", [f, "--equalize", f"{t}/eq.png", "-q"])
    # 16-bit and colour outputs where the suites have such images.
    for f in conformance:
        base = os.path.basename(f)
        if f.startswith("tests/conformance/pngsuite/") and ("16" in base or base[4:6] in ("2c", "6a")):
            add(f"file:{f}:equalize16", [f, "--depth", "native", "--equalize", f"{t}/eq.png"])
            add(f"file:{f}:channels", [f, "--channels", "--depth", "native", "--csv", "-"])

    # Folder runs: one worker so that messages come in one order.
    for d in ["samples"] + sorted({os.path.dirname(p) for p in conformance}):
        tag = d.replace("/", "_")
        add(f"batch:{tag}:csv", ["-r", "-j", "1", "--csv", f"{t}/all.csv", "--json",
                                 f"{t}/all.jsonl", "--total", "-", d])
        add(f"batch:{tag}:equalize", ["-r", "-j", "2", "--equalize", f"{t}/eq", "-q", d])
    add("batch:samples:verbose", ["-r", "-j", "1", "-v", "--backend", "cpu", "--csv",
                                  f"{t}/c.csv", "samples"])
    add("batch:samples:luma-bins", ["-r", "-j", "2", "--gray", "luma", "--bins", "16",
                                    "--range", "0:128", "--csv", "-", "samples"])
    add("batch:samples:channels", ["-r", "-j", "2", "--channels", "--csv", f"{t}/c.csv",
                                   "--total", f"{t}/t.csv", "samples"])
    add("batch:samples:native", ["-r", "-j", "2", "--depth", "native", "--json", "-",
                                 "--equalize", f"{t}/eq", "samples"])
    add("batch:samples:plots", ["-r", "-j", "2", "--plot-dir", f"{t}/plots", "--total",
                                f"{t}/t.csv", "--plot", f"{t}/t.png", "samples"])
    add("batch:files", ["-j", "2", "--csv", "-", "samples/moon.png", "samples/camera.png",
                        "tests/conformance/pngsuite/basn0g08.png"])
    # No output option: each image's summary, in the order of the list.
    add("batch:files:summaries", ["-j", "2", "samples/moon.png", "samples/camera.png",
                                  "tests/conformance/pngsuite/basn0g08.png"])
    add("sample:moon.png:summary-bins", ["samples/moon.png", "--bins", "16"])
    add("sample:camera.png:summary-mask", ["samples/camera.png", "--mask",
                                           "samples/camera.png"])
    add("batch:conformance-all", ["-r", "-j", "1", "--total", "-", "--csv", f"{t}/c.csv",
                                  "tests/conformance"])

    # Shards joined by merge, as one run writes them.
    shard_steps = []
    for k in (1, 2, 3):
        shard_steps.append(["-r", "-j", "1", "--shard", f"{k}/3", "--total", f"{t}/t{k}.csv",
                            "--csv", f"{t}/c{k}.csv", "--json", f"{t}/j{k}.jsonl",
                            "tests/conformance/pngsuite"])
    shard_steps += [
        ["merge", "--total", f"{t}/total.csv", f"{t}/t1.csv", f"{t}/t2.csv", f"{t}/t3.csv"],
        ["merge", "--csv", "-", f"{t}/c3.csv", f"{t}/c1.csv", f"{t}/c2.csv"],
        ["merge", "--json", f"{t}/all.jsonl", f"{t}/j1.jsonl", f"{t}/j2.jsonl", f"{t}/j3.jsonl"],
        ["merge", "--total", "-", f"{t}/t1.csv", f"{t}/c1.csv"],
        ["merge", "--total", "-", f"{t}/missing.csv"],
    ]
    add("merge:pngsuite", *shard_steps)

    # Usage errors and refusals.
    usage = {
        "help": ["--help"],
        "merge-help": ["merge", "--help"],
        "no-input": [],
        "unknown": ["--bogus", "samples/moon.png"],
        "bins-0": ["--bins", "0", "samples/moon.png"],
        "bins-text": ["--bins", "many", "samples/moon.png"],
        "range-reversed": ["--range", "5:2", "samples/moon.png"],
        "range-bad": ["--range", "5", "samples/moon.png"],
        "depth-12": ["--depth", "12", "samples/moon.png"],
        "gray-bad": ["--gray", "average", "samples/moon.png"],
        "color-bad": ["--color", "hsv", "--equalize", f"{t}/eq.png", "samples/moon.png"],
        "tiles-bad": ["--clahe", "--tiles", "0x3", "--equalize", f"{t}/eq.png",
                      "samples/moon.png"],
        "clip-bad": ["--clahe", "--clip", "-1", "--equalize", f"{t}/eq.png", "samples/moon.png"],
        "backend-bad": ["--backend", "fpga", "samples/moon.png"],
        "jobs-bad": ["-j", "0", "-r", "samples"],
        "shard-bad": ["--shard", "4/3", "-r", "samples"],
        "equalize-no-value": ["samples/moon.png", "--equalize"],
        "csv-empty-value": ["samples/moon.png", "--csv="],
        "two-stdin": ["-", "-"],
        "clahe-batch": ["--clahe", "--equalize", f"{t}/eq", "-r", "samples"],
        "match-batch": ["--match", "samples/moon.png", "--equalize", f"{t}/eq", "-r", "samples"],
        "plot-batch": ["--plot", f"{t}/p.png", "-r", "samples"],
        "plot-dir-one": ["--plot-dir", f"{t}/plots", "samples/moon.png"],
        "plot-bad-ext": ["--plot", f"{t}/p.gif", "samples/moon.png"],
        "joint-size": ["samples/moon.png", "--joint", "samples/coffee.png", "--csv", "-"],
        "mask-size": ["samples/moon.png", "--mask", "samples/coffee.png", "--csv", "-"],
        "overwrite-input": ["samples/moon.png", "--equalize", "samples/moon.png"],
        "missing-file": ["samples/no-such-image.png"],
        "not-an-image": ["samples/README.md"],
        "max-pixels": ["--max-pixels", "1000", "samples/moon.png"],
        "max-bytes": ["--max-bytes", "1000", "samples/moon.png"],
        "merge-nothing": ["merge"],
        "merge-no-inputs": ["merge", "--total", "-"],
        "merge-stdin": ["merge", "--csv", "-", "-"],
    }
    for cid, args in usage.items():
        add(f"usage:{cid}", args, stdin="samples/moon.png" if cid == "two-stdin" else None)
    return cases


def run_case(exe, src, env, case):
    cid, steps, stdin = case
    scratch = tempfile.mkdtemp(prefix="imghist-golden-")
    token = scratch.encode()
    rows = []
    try:
        for n, args in enumerate(steps):
            argv = [a.replace(TMP, scratch) for a in args]
            data = None
            if stdin is not None:
                with open(os.path.join(src, stdin), "rb") as fp:
                    data = fp.read()
            try:
                p = subprocess.run([exe] + argv, cwd=src, env=env, input=data,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   timeout=TIMEOUT)
                rc, out, err = p.returncode, p.stdout, p.stderr
            except subprocess.TimeoutExpired:
                rc, out, err = "timeout", b"", b""
            written = []
            for rel in files_under(scratch, "."):
                with open(os.path.join(scratch, rel), "rb") as fp:
                    body = fp.read().replace(token, TMP.encode())
                written.append(f"{rel}={digest(body)}")
            sid = cid if len(steps) == 1 else f"{cid}:{n + 1}"
            rows.append("\t".join([
                sid, " ".join(args) if args else "(none)", str(rc),
                digest(out.replace(token, TMP.encode())),
                digest(normalize_stderr(err.replace(token, TMP.encode()),
                                        cid.startswith(("batch:", "merge:")))),
                " ".join(written) if written else "-"]))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return rows


def main(argv):
    update = "--update" in argv
    argv = [a for a in argv if a != "--update"]
    manifest = None
    if "--manifest" in argv:
        i = argv.index("--manifest")
        manifest = argv[i + 1]
        del argv[i:i + 2]
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    exe, src = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    manifest = manifest or os.path.join(src, "tests", "golden", "cli-outputs.tsv")

    env = {k: v for k, v in os.environ.items() if not k.startswith("IMGHIST_")}
    env.update({"LC_ALL": "C", "CUDA_VISIBLE_DEVICES": "", "TZ": "UTC"})
    env.pop("OMPI_COMM_WORLD_SIZE", None)
    # Under the sanitized build LeakSanitizer lists the suppressions it used
    # (fontconfig's caches) on standard error: not the CLI's output.
    if "LSAN_OPTIONS" in env:
        env["LSAN_OPTIONS"] += ":print_suppressions=0"

    cases = build_cases(src)
    # A build without cairo refuses --plot: its cases are left out both ways.
    with tempfile.TemporaryDirectory() as d:
        probe = subprocess.run([exe, "--plot", os.path.join(d, "p.png"), "samples/moon.png"],
                               cwd=src, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    skip_plots = b"without cairo" in probe.stderr
    if skip_plots:
        print("no --plot in this build: its invocations are skipped")
        cases = [c for c in cases if "plot" not in c[0]]
    with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
        results = list(pool.map(lambda c: run_case(exe, src, env, c), cases))
    rows = [r for rs in results for r in rs]

    if update:
        os.makedirs(os.path.dirname(manifest), exist_ok=True)
        with open(manifest, "w") as fp:
            fp.write(HEADER)
            fp.writelines(r + "\n" for r in rows)
        print(f"wrote {len(rows)} rows to {manifest}")
        return 0

    with open(manifest) as fp:
        want = [line.rstrip("\n") for line in fp if not line.startswith("#")]
    if skip_plots:
        want = [w for w in want if "plot" not in w.split("\t", 1)[0]]
    want_by_id = {w.split("\t", 1)[0]: w for w in want}
    got_by_id = {g.split("\t", 1)[0]: g for g in rows}
    bad = 0
    for g in rows:
        w = want_by_id.get(g.split("\t", 1)[0])
        if w is None:
            print(f"NEW (not in the manifest): {g}")
            bad += 1
        elif w != g:
            print(f"DIFFERS:\n  want {w}\n  got  {g}")
            bad += 1
    for w in want:
        if w.split("\t", 1)[0] not in got_by_id:
            print(f"MISSING (in the manifest, not run): {w}")
            bad += 1
    print(f"{len(rows)} invocations, {bad} differences")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

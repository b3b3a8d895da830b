#!/usr/bin/env python3
"""--decode: JPEGs decoded on the GPU's hardware decoder (nvJPEG) give the
CPU's bytes.

cpu mode (any host, CI): --decode gpu outside its modes is a usage error
naming the reason; on a host without a GPU or nvJPEG (or a build without
it) --decode gpu fails with one line and writes nothing, while --decode
auto falls back to the CPU with the same output as --decode cpu.

gpu mode (skips with 77 without a GPU or nvJPEG): over samples/, the
libjpeg-turbo conformance JPEGs and generated ones (every chroma
subsampling, gray, restart markers, progressive, CMYK, RGB-coded, odd
sizes, an EXIF orientation, a truncated and a corrupt file), --decode gpu
and auto write the same CSV and total as --decode cpu, byte for byte, with
the same errors and exit status, and -v shows the GPU decoded most of them.

usage: test_gpu_decode.py IMGHIST MAKE_JPEG SOURCE_ROOT cpu|gpu
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

EXE, MAKE_JPEG, ROOT, MODE = sys.argv[1:5]
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def run(*args):
    return subprocess.run([EXE, *args], capture_output=True, text=True)


def make_jpeg(path, kind, w, h, seed, *orientation):
    subprocess.run([MAKE_JPEG, path, kind, str(w), str(h), str(seed), *orientation], check=True)


def make_tree(root, copies):
    """Generated JPEGs (each kind `copies` times, different seeds), the
    samples' and conformance JPEGs, a truncated and a corrupt one."""
    kinds = ["444", "422", "420", "440", "411", "gray", "r420", "q420", "p420", "cmyk", "rgb",
             "arith"]
    sizes = [(1, 1), (7, 5), (16, 16), (333, 217), (640, 480), (1001, 777)]
    for c in range(copies):
        for i, kind in enumerate(kinds):
            w, h = sizes[(i + c) % len(sizes)]
            make_jpeg(os.path.join(root, f"gen/{kind}_{c}.jpg"), kind, w, h, 7 * c + i + 1)
    make_jpeg(os.path.join(root, "gen/oriented.jpg"), "420", 300, 200, 3, "6")
    for name in os.listdir(os.path.join(ROOT, "samples")):
        if name.endswith(".jpg"):
            shutil.copy(os.path.join(ROOT, "samples", name), os.path.join(root, name))
    conf = os.path.join(ROOT, "tests/conformance/libjpeg-turbo")
    for name in os.listdir(conf):
        if name.endswith(".jpg"):
            shutil.copy(os.path.join(conf, name), os.path.join(root, "conf_" + name))
    with open(os.path.join(root, "gen/420_3.jpg"), "rb") as f:
        whole = f.read()
    with open(os.path.join(root, "bad/truncated.jpg"), "wb") as f:
        f.write(whole[: len(whole) * 2 // 3])
    with open(os.path.join(root, "bad/corrupt.jpg"), "wb") as f:
        f.write(b"\xff\xd8\xff\xe0" + b"\x00" * 64)


def outputs(tmp, tag, src, *extra):
    csv, total = os.path.join(tmp, tag + ".csv"), os.path.join(tmp, tag + "_total.csv")
    p = run("-r", "--gray", "luma", "--csv", csv, "--total", total, *extra, src)
    read = lambda path: open(path).read() if os.path.exists(path) else None
    errors = sorted(line for line in p.stderr.splitlines() if "invalid JPEG" in line)
    return p, read(csv), read(total), errors


def usage_errors(tmp, src):
    for args, word in [(["--decode", "gpu"], "--gray luma"),
                       (["--decode", "gpu", "--gray", "luma", "--json", "-"], "--json"),
                       (["--decode", "gpu", "--gray", "luma", "--equalize", tmp + "/eq"],
                        "--equalize"),
                       (["--decode", "gpu", "--gray", "luma", "--channels"], "--channels"),
                       (["--decode", "gpu", "--gray", "luma", "--backend", "cpu"], "--backend"),
                       (["--decode", "quick"], "--decode")]:
        p = run(*args, "--total", os.path.join(tmp, "u.csv"), src)
        check(p.returncode == 2 and word in p.stderr and "--decode" in p.stderr,
              f"{args}: a usage error naming {word} (got {p.returncode}: {p.stderr.strip()})")
        check(not os.path.exists(os.path.join(tmp, "u.csv")), f"{args}: nothing written")


def main():
    tmp = tempfile.mkdtemp(prefix="ih_gpu_decode_")
    try:
        src = os.path.join(tmp, "in")
        for d in ["gen", "bad"]:
            os.makedirs(os.path.join(src, d))
        # auto takes the GPU only for runs of 64 files or more.
        make_tree(src, 6)
        usage_errors(tmp, src)
        cpu = outputs(tmp, "cpu", src, "--decode", "cpu")
        check(cpu[0].returncode == 1 and len(cpu[3]) == 3,
              f"--decode cpu: exit 1, the bad files and the 12-bit one named (got {cpu[0].returncode}: "
              f"{cpu[3]})")
        check(cpu[1] is not None and cpu[2] is not None, "--decode cpu wrote its outputs")
        gpu = outputs(tmp, "gpu", src, "--decode", "gpu", "-v")
        unavailable = gpu[0].returncode == 1 and "--decode gpu: " in gpu[0].stderr and \
            gpu[1] is None
        if unavailable and MODE == "gpu":
            print("skipping: " + gpu[0].stderr.strip().splitlines()[-1])
            sys.exit(77)
        if unavailable:
            line = [l for l in gpu[0].stderr.splitlines() if "--decode gpu: " in l]
            check(len(gpu[0].stderr.splitlines()) == 1,
                  f"--decode gpu without nvJPEG says one line: {gpu[0].stderr!r}")
            check(gpu[2] is None, "--decode gpu without nvJPEG writes no total")
            print("no GPU decoder here:", line[0] if line else "?")
        else:
            check(gpu[0].returncode == cpu[0].returncode,
                  f"--decode gpu exits {gpu[0].returncode}, cpu {cpu[0].returncode}")
            check(gpu[1] == cpu[1], "--decode gpu's CSV is --decode cpu's")
            check(gpu[2] == cpu[2], "--decode gpu's total is --decode cpu's")
            check(gpu[3] == cpu[3], f"the same bad files named: {gpu[3]} vs {cpu[3]}")
            m = re.search(r"decode: (\d+) images on GPU \d+'s hardware JPEG decoder, (\d+) JPEGs",
                          gpu[0].stderr)
            check(m is not None, f"-v says what the GPU decoded: {gpu[0].stderr}")
            if m:
                print(m.group(0))
                # Baseline kinds, the samples and most conformance files.
                check(int(m.group(1)) >= 6 * 8, f"the GPU decoded the baseline files: {m.group(0)}")
                check(int(m.group(2)) >= 6 * 4, f"it declined the others: {m.group(0)}")
            if MODE == "cpu":
                print("(the GPU decoder ran: this host has one)")
        auto = outputs(tmp, "auto", src, "-v")
        check(auto[0].returncode == cpu[0].returncode and auto[1] == cpu[1] and
              auto[2] == cpu[2] and auto[3] == cpu[3],
              f"--decode auto writes --decode cpu's outputs (exit {auto[0].returncode})")
        if MODE == "gpu":
            j1 = outputs(tmp, "gpu_j1", src, "--decode", "gpu", "-j", "1")
            check(j1[1] == cpu[1] and j1[2] == cpu[2], "--decode gpu -j 1: the same outputs")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)")
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()

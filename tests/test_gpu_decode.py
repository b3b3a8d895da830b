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
sizes, EXIF orientations, a truncated and a corrupt file), --decode gpu
and auto write the same CSV, total and equalized PNGs as --decode cpu, byte
for byte, in --gray luma and in the default bgr2gray mode, with the same errors and exit status, and -v shows the GPU decoded
most of them. On a host of two GPUs or more, --gpus 0,1 too, each GPU
decoding some of them.

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
    make_jpeg(os.path.join(root, "gen/upright.jpg"), "420", 301, 203, 4, "1")
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


def outputs(tmp, tag, src, *extra, equalize=False, luma=True):
    """The run's process, CSV, total, error lines and (equalize) its PNGs by
    relative path; luma: --gray luma, else the default bgr2gray."""
    csv, total = os.path.join(tmp, tag + ".csv"), os.path.join(tmp, tag + "_total.csv")
    eq = os.path.join(tmp, tag + "_eq")
    p = run("-r", *(["--gray", "luma"] if luma else []), "--csv", csv, "--total", total,
            *(["--equalize", eq] if equalize else []), *extra, src)
    read = lambda path: open(path).read() if os.path.exists(path) else None
    errors = sorted(line for line in p.stderr.splitlines() if "invalid JPEG" in line)
    pngs = {}
    for top, _, names in os.walk(eq):
        for name in names:
            with open(os.path.join(top, name), "rb") as f:
                pngs[os.path.relpath(os.path.join(top, name), eq)] = f.read()
    return p, read(csv), read(total), errors, pngs


def on_gpus(stderr):
    """-v's lines: images decoded on each GPU, JPEGs declined."""
    each = {}
    for n, g in re.findall(r"decode: (\d+) images on GPU (\d+)'s hardware JPEG decoder", stderr):
        each[int(g)] = each.get(int(g), 0) + int(n)
    m = re.search(r"decode: (\d+) JPEGs declined", stderr)
    return each, int(m.group(1)) if m else None


def gpu_count():
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
    except OSError:
        return 0
    return sum(line.startswith("GPU ") for line in out.splitlines())


def usage_errors(tmp, src):
    for args, word in [(["--decode", "gpu", "--gray", "luma", "--json", "-"], "--json"),
                       (["--decode", "gpu", "--gray", "luma", "--read-truncated"],
                        "--read-truncated"),
                       (["--decode", "gpu", "--gray", "luma", "--channels"], "--channels"),
                       (["--decode", "gpu", "--gray", "luma", "--backend", "cpu"], "--backend"),
                       (["--decode", "quick"], "--decode")]:
        p = run(*args, "--total", os.path.join(tmp, "u.csv"), src)
        check(p.returncode == 2 and word in p.stderr and "--decode" in p.stderr,
              f"{args}: a usage error naming {word} (got {p.returncode}: {p.stderr.strip()})")
        check(not os.path.exists(os.path.join(tmp, "u.csv")), f"{args}: nothing written")


def equalize_runs(tmp, src, luma=True):
    """--equalize: the GPU's PNGs are the CPU's, byte for byte; a turned
    photograph goes to the CPU, an upright one with EXIF to the GPU."""
    mode = "luma" if luma else "bgr2gray"
    cpu = outputs(tmp, "eq_cpu", src, "--decode", "cpu", equalize=True, luma=luma)
    check(cpu[0].returncode == 1 and len(cpu[4]) > 60,
          f"--decode cpu --equalize: exit 1, the PNGs written ({len(cpu[4])})")
    runs = [("eq_gpu", ["--decode", "gpu", "-v"]), ("eq_auto", ["-v"]),
            ("eq_gpu_j2", ["--decode", "gpu", "-j", "2", "-v"])]
    if gpu_count() >= 2:
        runs.append(("eq_gpus", ["--decode", "gpu", "--gpus", "0,1", "-v"]))
    for tag, extra in runs:
        tag = f"{tag}_{mode}"
        got = outputs(tmp, tag, src, *extra, equalize=True, luma=luma)
        check(got[0].returncode == cpu[0].returncode,
              f"{tag}: exit {got[0].returncode}, cpu {cpu[0].returncode}")
        check(got[1] == cpu[1] and got[2] == cpu[2], f"{tag}: the CSV and total are the CPU's")
        check(got[3] == cpu[3], f"{tag}: the same bad files named")
        check(sorted(got[4]) == sorted(cpu[4]), f"{tag}: the same PNGs written")
        differ = sorted(k for k in cpu[4] if got[4].get(k) != cpu[4][k])
        check(not differ, f"{tag}: PNGs differ from the CPU's: {differ[:8]}")
        each, declined = on_gpus(got[0].stderr)
        print(f"{tag}: decoded on GPUs {each}, {declined} declined, {len(got[4])} PNGs")
        if tag.startswith("eq_gpu_"):
            check(sum(each.values()) >= 6 * 6, f"{tag}: the GPU equalized the baseline files")
        if tag.startswith("eq_gpus"):
            check(len(each) == 2 and min(each.values()) > 0,
                  f"{tag}: both GPUs decoded some files: {each}")


def bgr_runs(tmp, src):
    """The default gray mode (bgr2gray): the GPU's gray, made from the
    hardware's Y, Cb and Cr planes, is the CPU's; layouts not measured exact
    (4:1:1 and others) go to the CPU."""
    cpu = outputs(tmp, "bgr_cpu", src, "--decode", "cpu", luma=False)
    gpu = outputs(tmp, "bgr_gpu", src, "--decode", "gpu", "-v", luma=False)
    check(gpu[0].returncode == cpu[0].returncode,
          f"bgr2gray: exit {gpu[0].returncode}, cpu {cpu[0].returncode}")
    check(gpu[1] == cpu[1] and gpu[2] == cpu[2], "bgr2gray: the CSV and total are the CPU's")
    check(gpu[3] == cpu[3], "bgr2gray: the same bad files named")
    each, declined = on_gpus(gpu[0].stderr)
    print(f"bgr2gray: decoded on GPUs {each}, {declined} declined")
    check(sum(each.values()) >= 6 * 6, f"bgr2gray: the GPU decoded the baseline files: {each}")
    equalize_runs(tmp, src, luma=False)


def main():
    tmp = tempfile.mkdtemp(prefix="ih_gpu_decode_")
    try:
        src = os.path.join(tmp, "in")
        for d in ["gen", "bad"]:
            os.makedirs(os.path.join(src, d))
        # auto takes the GPU only for runs of 64 files or more, and 64 MiB a
        # thread: these small files are the CPU's under auto.
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
            each, declined = on_gpus(gpu[0].stderr)
            check(each and declined is not None, f"-v says what the GPU decoded: {gpu[0].stderr}")
            if each and declined is not None:
                print(f"decoded on GPUs {each}, {declined} declined")
                # Baseline kinds, the samples and most conformance files.
                check(sum(each.values()) >= 6 * 8, f"the GPU decoded the baseline files: {each}")
                check(declined >= 6 * 4, f"it declined the others: {declined}")
            if MODE == "cpu":
                print("(the GPU decoder ran: this host has one)")
        auto = outputs(tmp, "auto", src, "-v")
        check(auto[0].returncode == cpu[0].returncode and auto[1] == cpu[1] and
              auto[2] == cpu[2] and auto[3] == cpu[3],
              f"--decode auto writes --decode cpu's outputs (exit {auto[0].returncode})")
        if MODE == "gpu":
            j1 = outputs(tmp, "gpu_j1", src, "--decode", "gpu", "-j", "1")
            check(j1[1] == cpu[1] and j1[2] == cpu[2], "--decode gpu -j 1: the same outputs")
            equalize_runs(tmp, src)
            bgr_runs(tmp, src)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)")
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()

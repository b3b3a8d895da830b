#!/usr/bin/env python3
"""Scaling a batch run out: --shard K/N with imghist merge, --gpus, and runs
under mpirun, each against one plain run of the same folder.

- shards 1/3..3/3 are disjoint, cover the folder, are balanced by file size,
  and merged (imghist merge --total/--csv/--json) give byte-identical files
  to the whole run; the shard holding the corrupt image alone exits 1;
- merge refuses inputs whose bins differ, shards that overlap, unsorted
  records, and usage errors, and then writes nothing;
- --gpus: usage errors; --gpus 0,0 (two worker slots on one GPU, the
  multi-GPU code path) gives the same bytes (on the CPU where there is no
  GPU, on the GPU where there is one);
- one image with --backend auto runs on the CPU (-v says why), on the GPU
  with --gpus 0 or IMGHIST_BACKEND=cuda (without a GPU: auto's CPU, and an
  error), with the same CSV;
- mpirun -np 4 --oversubscribe gives byte-identical CSV, JSON Lines, total
  and equalized PNGs, one summary, exit status 1 for the corrupt image on
  whichever rank it fell, 0 without it; more ranks than images; MPI with
  --shard. This part is skipped when the build has no MPI or mpirun is
  missing.

usage: test_scale.py IMGHIST_BINARY SAMPLES_DIR HAVE_MPI(0|1)
"""
import filecmp
import os
import random
import shutil
import subprocess
import sys
import tempfile

EXE, SAMPLES, HAVE_MPI = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
# The same program with the tests' hooks (IMGHIST_TEST_GPU_START_DELAY_MS), built beside it.
TEST_EXE = os.path.join(os.path.dirname(EXE), "imghist-test")
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def run(*args, cwd=None, env=None, exe=EXE):
    return subprocess.run([exe, *args], capture_output=True, text=True, cwd=cwd, env=env)


def pgm(w, h, rng, binary=True):
    data = bytes(rng.randrange(256) for _ in range(w * h))
    return b"P5\n%d %d\n255\n" % (w, h) + data


def make_tree(root):
    """Returns (image paths, the corrupt one)."""
    rng = random.Random(16)
    images = []

    def put(rel, data):
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        images.append(rel)

    for name in ["moon.png", "camera.png", "coffee.png", "hubble_deep_field.jpg"]:
        with open(os.path.join(SAMPLES, name), "rb") as f:
            put("photos/" + name, f.read())
    for i in range(17):  # sizes from tiny to ~40 KB, so balancing has work to do
        w, h = rng.randrange(1, 260), rng.randrange(1, 160)
        put("gen/%02d/img_%02d.pgm" % (i % 4, i), pgm(w, h, rng))
    # Names that need quoting in CSV and escaping in JSON.
    put('gen/we"ird,name.pgm', pgm(20, 10, rng))
    put("gen/new\nline.pgm", pgm(9, 7, rng))
    put("gen/empty_hist_not.pgm", pgm(1, 1, rng))
    with open(os.path.join(root, "notes.txt"), "w") as f:
        f.write("not an image\n")
    with open(os.path.join(SAMPLES, "camera.png"), "rb") as f:
        png = f.read()
    put("photos/zz_truncated.png", png[: len(png) // 3])
    return images, "photos/zz_truncated.png"


def read(path):
    with open(path, "rb") as f:
        return f.read()


def same_tree(a, b):
    """Byte-identical folders (files and names)."""
    la, lb = [], []
    for top, out in ((a, la), (b, lb)):
        for d, _, files in os.walk(top):
            for name in files:
                out.append(os.path.relpath(os.path.join(d, name), top))
    if sorted(la) != sorted(lb):
        return False
    return all(read(os.path.join(a, r)) == read(os.path.join(b, r)) for r in la)


def outputs(tag, work):
    o = os.path.join(work, tag)
    return ["--csv", o + ".csv", "--json", o + ".jsonl", "--total", o + "_total.csv",
            "--equalize", o + "_eq"]


def same_outputs(tag, ref, work, label):
    """Run `tag`'s CSV, JSON Lines, total and equalized PNGs against run `ref`'s."""
    for suffix in (".csv", ".jsonl", "_total.csv"):
        check(read(os.path.join(work, tag + suffix)) == read(os.path.join(work, ref + suffix)),
              f"{label}: {suffix} differs from the {ref} run's")
    check(same_tree(os.path.join(work, tag + "_eq"), os.path.join(work, ref + "_eq")),
          f"{label}: equalized PNGs differ from the {ref} run's")


def files_of(jsonl):
    import json
    with open(jsonl, encoding="utf-8", errors="surrogateescape") as f:
        return [json.loads(line)["file"] for line in f if line.strip()]


def main():
    work = tempfile.mkdtemp(prefix="imghist-scale-")
    try:
        tree = os.path.join(work, "in")
        images, corrupt = make_tree(tree)
        good = os.path.join(work, "good")
        shutil.copytree(tree, good)
        os.remove(os.path.join(good, corrupt))

        base = run("-r", "-q", "-j", "2", *outputs("whole", work), "in", cwd=work)
        check(base.returncode == 1, f"whole run: exit 1 for the corrupt image, got {base.returncode}")
        whole = files_of(os.path.join(work, "whole.jsonl"))
        check(len(whole) == len(images) - 1, f"whole run: {len(whole)} records")

        # ---- --shard K/N and merge ----
        seen = []
        shard_bytes = []
        for k in (1, 2, 3):
            r = run("-r", "-q", "-j", "2", "--shard", f"{k}/3", *outputs(f"s{k}", work), "in",
                    cwd=work)
            mine = [p[len("in/"):] for p in files_of(os.path.join(work, f"s{k}.jsonl"))]
            holds_corrupt = r.stderr.count("zz_truncated") > 0
            check(r.returncode == (1 if holds_corrupt else 0),
                  f"shard {k}/3: exit {r.returncode}, stderr {r.stderr!r}")
            check(mine == sorted(mine), f"shard {k}/3: records not in path order")
            seen += mine + ([corrupt] if holds_corrupt else [])
            shard_bytes.append(sum(os.path.getsize(os.path.join(tree, p)) for p in
                                   mine + ([corrupt] if holds_corrupt else [])))
        check(sorted(seen) == sorted(images), "shards: not disjoint, or not covering every image")
        biggest = max(os.path.getsize(os.path.join(tree, p)) for p in images)
        check(max(shard_bytes) - min(shard_bytes) <= biggest + 3,
              f"shards not balanced by size: {shard_bytes} (largest file {biggest})")
        again = run("-r", "-q", "--shard", "2/3", "--json", "-", "in", cwd=work)
        check(again.stdout.encode("utf-8", "surrogateescape") == read(os.path.join(work, "s2.jsonl")),
              "--shard 2/3 twice: not the same records (not deterministic)")

        merged = os.path.join(work, "merged")
        for opt, suffix, out in (("--total", "_total.csv", "_total.csv"), ("--csv", ".csv", ".csv"),
                                 ("--json", ".jsonl", ".jsonl")):
            ins = [os.path.join(work, f"s{k}{suffix}") for k in (3, 1, 2)]  # any order
            r = run("merge", opt, merged + out, *ins)
            check(r.returncode == 0, f"merge {opt}: exit {r.returncode} {r.stderr}")
            check(os.path.exists(merged + out) and
                  read(merged + out) == read(os.path.join(work, "whole" + out)),
                  f"merge {opt}: not byte-identical to the whole run's")
        eq = os.path.join(work, "shards_eq")
        os.makedirs(eq)
        for k in (1, 2, 3):
            shutil.copytree(os.path.join(work, f"s{k}_eq"), eq, dirs_exist_ok=True)
        check(same_tree(eq, os.path.join(work, "whole_eq")),
              "the shards' equalized PNGs together differ from the whole run's")
        r = run("merge", "--csv", "-", os.path.join(work, "s1.csv"), os.path.join(work, "s2.csv"))
        check(r.returncode == 0 and r.stdout.startswith("file,bin,"), "merge to standard output")

        # merge refusals: exit 1 or 2, and no output file.
        bad_total = os.path.join(work, "bad_total.csv")
        with open(os.path.join(work, "s1_total.csv")) as f:
            lines = f.readlines()
        with open(bad_total, "w") as f:
            f.writelines(lines[:-1])  # one bin fewer
        unsorted = os.path.join(work, "unsorted.jsonl")
        with open(os.path.join(work, "whole.jsonl"), "rb") as f:
            recs = f.readlines()
        with open(unsorted, "wb") as f:
            f.writelines(list(reversed(recs)))
        not_csv = os.path.join(work, "in", "notes.txt")
        refused = os.path.join(work, "refused.out")
        for want, args, what in (
            (1, ["--total", refused, os.path.join(work, "s1_total.csv"), bad_total], "bins differ"),
            (2, ["--csv", refused, os.path.join(work, "s1.csv"), os.path.join(work, "s1.csv")],
             "a shard given twice"),
            (1, ["--json", refused, unsorted], "records not in order"),
            (1, ["--csv", refused, not_csv], "not a CSV"),
            (1, ["--json", refused, os.path.join(work, "missing.jsonl")], "a missing input"),
            (2, [refused, os.path.join(work, "s1.csv")], "no mode"),
            (2, ["--csv", refused], "no inputs"),
            (2, ["--csv", refused, "--json", refused, os.path.join(work, "s1.csv")], "two modes"),
            (2, ["--csv", os.path.join(work, "s1.csv"), os.path.join(work, "s1.csv")],
             "output is an input"),
        ):
            r = run("merge", *args)
            check(r.returncode == want, f"merge with {what}: exit {r.returncode}, want {want}")
            check(r.stderr.startswith("imghist: "), f"merge with {what}: no message")
            check(not os.path.exists(refused), f"merge with {what}: wrote its output")

        for args in (["--shard", "0/3"], ["--shard", "4/3"], ["--shard", "a/b"], ["--shard", "3"],
                     ["--gpus", "x"], ["--gpus", "0,"], ["--gpus", "0", "--backend", "cpu"]):
            r = run("-r", *args, "--total", os.path.join(work, "u.csv"), "in", cwd=work)
            check(r.returncode == 2, f"{args}: exit {r.returncode}, want 2 (usage)")
        r = subprocess.run([EXE, "--shard", "1/2", "-", "--total", "-"], input=b"",
                           capture_output=True)
        check(r.returncode == 2, f"--shard with standard input: exit {r.returncode}")

        # ---- --gpus: several worker slots on one GPU (or the CPU without one) ----
        probe = run("--backend", "cuda", "-q", os.path.join(SAMPLES, "moon.png"), "--total", "-")
        backend = ["--backend", "cuda"] if probe.returncode == 0 else []
        r = run("-r", "-q", "-j", "4", "--gpus", "0,0", *backend, *outputs("gpus00", work), "in",
                cwd=work)
        check(r.returncode == 1, f"--gpus 0,0: exit {r.returncode} {r.stderr}")
        same_outputs("gpus00", "whole", work, f"--gpus 0,0 {' '.join(backend)}")
        if backend:
            # CUDA is shown only GPU 4095 (ih_narrow_gpus), finds none, and the
            # context's error names the GPU as the user did.
            r = run("-r", "--gpus", "4095", *backend, "--total", "-", "in", cwd=work)
            check(r.returncode in (1, 2) and "GPU 4095" in r.stderr,
                  f"--gpus 4095 on a GPU machine: exit {r.returncode}, {r.stderr!r}")
            # --gpus 1: CUDA is shown that GPU alone; -v names it as the user did.
            r = run("-r", "-v", "--gpus", "1", *backend, *outputs("gpus1", work), "in", cwd=work)
            if "on GPU 1," in r.stderr:
                check(r.returncode == 1, f"--gpus 1: exit {r.returncode} {r.stderr}")
                for suffix in (".csv", ".jsonl", "_total.csv"):
                    check(read(os.path.join(work, "gpus1" + suffix)) ==
                          read(os.path.join(work, "whole" + suffix)),
                          f"--gpus 1: {suffix} differs from the plain run's")
                print("--gpus 1 ran on the second GPU")
            else:
                check(r.returncode != 0 and "GPU 1" in r.stderr,
                      f"--gpus 1 with one GPU: exit {r.returncode}, {r.stderr!r}")
                print("--gpus 1 refused: one GPU")
            # auto on a GPU host: the CPU counts while the GPUs start, the
            # GPUs after; the same bytes as the run on the GPU above.
            r = run("-r", "-v", "-j", "4", *outputs("early", work), "in", cwd=work)
            check(r.returncode == 1, f"auto: exit {r.returncode} {r.stderr}")
            check("backend: auto (the CPU; from 1 s on, any usable GPU too)" in r.stderr and
                  ("counted on the CPU (while the GPUs started" in r.stderr or
                   "without waiting for it" in r.stderr or
                   "the run was over before auto starts the GPUs" in r.stderr),
                  f"auto on a GPU host: no early-CPU report in {r.stderr!r}")
            print("auto:", r.stderr.strip().splitlines()[-1])
            # CUDA started at once (the tests' delay of 0): the run is done
            # while it starts, and ends without waiting for it (or after it,
            # on a fast host); the same bytes either way.
            env0 = dict(os.environ, IMGHIST_TEST_GPU_START_DELAY_MS="0")
            r = run("-r", "-v", "-j", "4", *outputs("early0", work), "in", cwd=work, env=env0,
                    exe=TEST_EXE)
            check(r.returncode == 1, f"auto, no delay: exit {r.returncode} {r.stderr}")
            same_outputs("early0", "gpus00", work, "auto, no delay")
            print("auto, no delay:", r.stderr.strip().splitlines()[-1])
            # Images of 4 MiB and more go to the GPU once it is up; whichever
            # took them, the bytes are the CPU's.
            big = os.path.join(work, "big")
            os.makedirs(big)
            for i in range(12):
                with open(os.path.join(big, f"b{i:02d}.pgm"), "wb") as f:
                    f.write(b"P5\n2048 2048\n255\n" + os.urandom(2048 * 2048))
            want_big = run("--backend", "cpu", "-q", "--csv", "-", big).stdout
            r = run("-v", "-j", "2", "--csv", "-", big)
            check(r.returncode == 0 and r.stdout == want_big,
                  f"auto, 4 MiB images: exit {r.returncode} or not the CPU's CSV")
            print("auto, 4 MiB images:", r.stderr.strip().splitlines()[-1])
            same_outputs("early", "gpus00", work, "auto (CPU, then GPU)")
        print("--gpus 0,0 ran on", "the GPU" if backend else "the CPU (no usable GPU)")

        # ---- one image with auto: the CPU, unless --gpus or IMGHIST_BACKEND names a GPU ----
        moon = os.path.join(SAMPLES, "moon.png")
        want = run("--backend", "cpu", "-q", moon, "--csv", "-").stdout
        env = {k: v for k, v in os.environ.items() if k != "IMGHIST_BACKEND"}
        # The reason -v gives; a build without CUDA suggests no GPU.
        reason = ("one image is done before CUDA" if "CUDA backend: yes" in run("--version").stdout
                  else "this build has no CUDA backend")
        for args, extra_env, where in (([], {}, "cpu"),
                                       (["--gpus", "0"], {}, "cuda" if backend else "cpu"),
                                       ([], {"IMGHIST_BACKEND": "cuda"}, "cuda" if backend else None)):
            r = run("-v", moon, *args, "--csv", "-", env=dict(env, **extra_env))
            label = f"one image, auto {' '.join(args)} {extra_env}"
            if where is None:  # no GPU: IMGHIST_BACKEND=cuda is an error
                check(r.returncode != 0 and r.stdout == "", f"{label}: exit {r.returncode}")
                continue
            check(r.returncode == 0 and r.stdout == want, f"{label}: exit {r.returncode}, "
                  "or not the CPU's CSV")
            check(f"backend: {where}" in r.stderr, f"{label}: not on {where}: {r.stderr!r}")
            check((reason in r.stderr) == (where == "cpu" and not args
                                                                   and not extra_env),
                  f"{label}: the reason for the CPU, {r.stderr!r}")

        # ---- MPI ----
        mpirun = shutil.which("mpirun")
        if not HAVE_MPI or mpirun is None:
            print("MPI part skipped:", "this build has no MPI" if not HAVE_MPI else "no mpirun")
            mpi_ran = False
        else:
            mpi_ran = True
            env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                       OMPI_MCA_rmaps_base_oversubscribe="1")
            mpi = [mpirun, "--oversubscribe", "-np"]

            def mpirun_run(n, *args):
                return subprocess.run([*mpi, str(n), EXE, *args], capture_output=True,
                                      text=True, cwd=work, env=env)

            r = mpirun_run(4, "-r", *outputs("mpi4", work), "in")
            check(r.returncode == 1, f"mpirun -np 4: exit {r.returncode}, want 1: {r.stderr[-800:]}")
            for suffix in (".csv", ".jsonl", "_total.csv"):
                check(os.path.exists(os.path.join(work, "mpi4" + suffix)) and
                      read(os.path.join(work, "mpi4" + suffix)) == read(os.path.join(work, "whole" + suffix)),
                      f"mpirun -np 4: {suffix} differs from the single-process run's")
            check(same_tree(os.path.join(work, "mpi4_eq"), os.path.join(work, "whole_eq")),
                  "mpirun -np 4: equalized PNGs differ")
            summaries = [l for l in r.stderr.splitlines() if " images/s)" in l]
            check(len(summaries) == 1 and "1 failed" in summaries[0] and "4 MPI ranks" in summaries[0],
                  f"mpirun -np 4: summary lines {summaries}")
            check(r.stderr.count("zz_truncated.png") == 1, "mpirun -np 4: the corrupt image not said once")

            r = mpirun_run(4, "-r", "-q", "--total", os.path.join(work, "mpi_good.csv"),
                           "--json", os.path.join(work, "mpi_good.jsonl"), "good")
            one = run("-r", "-q", "--total", os.path.join(work, "one_good.csv"),
                      "--json", os.path.join(work, "one_good.jsonl"), "good", cwd=work)
            check(r.returncode == 0 and one.returncode == 0,
                  f"no corrupt image: exits {r.returncode} (mpirun) and {one.returncode}")
            for name in ("_good.csv", "_good.jsonl"):
                check(read(os.path.join(work, "mpi" + name)) == read(os.path.join(work, "one" + name)),
                      f"mpirun, no corrupt image: {name} differs")

            # More ranks than images; ranks with nothing to do.
            two = [os.path.join("in", "photos", "moon.png"), os.path.join("in", "photos", "camera.png")]
            r = mpirun_run(4, "-q", "--csv", os.path.join(work, "mpi_two.csv"), *two)
            one = run("-q", "--csv", os.path.join(work, "one_two.csv"), *two, cwd=work)
            check(r.returncode == 0 and read(os.path.join(work, "mpi_two.csv")) ==
                  read(os.path.join(work, "one_two.csv")), "mpirun -np 4 over 2 images")

            # MPI within a shard: the same as the shard in one process.
            r = mpirun_run(2, "-r", "-q", "--shard", "2/3", "--csv", os.path.join(work, "mpi_s2.csv"), "in")
            check(os.path.exists(os.path.join(work, "mpi_s2.csv")) and
                  read(os.path.join(work, "mpi_s2.csv")) == read(os.path.join(work, "s2.csv")),
                  "mpirun -np 2 --shard 2/3: differs from --shard 2/3")

            # A usage error is said once and every rank exits 2.
            r = mpirun_run(3, "-r", "--total", os.path.join(work, "x.csv"), "no-such-folder")
            check(r.returncode == 2 and r.stderr.count("no-such-folder") == 1,
                  f"mpirun, missing input: exit {r.returncode}, {r.stderr.count('no-such-folder')} messages")
            check(not os.path.exists(os.path.join(work, "x.csv")), "mpirun usage error wrote output")
    finally:
        shutil.rmtree(work, ignore_errors=True)

    if FAILURES:
        print(f"{len(FAILURES)} failure(s)")
        return 1
    print("all scale checks passed" + ("" if mpi_ran else " (MPI part skipped)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""SIGINT is honoured within about a second in every mode, and temporaries
that a killed run left are removed by the next run into their folder.

- One large progressive JPEG (81 MP of noise: seconds of decoding, which
  has no point to check a flag): SIGINT 0.3 s in; the run ends within
  1.5 s with exit 130, a line saying so, and no output file.
- A folder run of two such files on two workers: the same.
- A second SIGINT ends the run at once.
- A CSV of 2^24 bins (hundreds of megabytes, announced by a warning):
  SIGINT while it is written ends the run as above.
- Temporaries named by process and machine (`.NAME.imghist-tmp.PID.HOST.X`)
  beside an output: the one whose process is gone and that is a minute old
  is removed; one whose process is gone but that is new, one whose process
  runs, one of another machine, and files that only look alike stay.

usage: test_signals.py IMGHIST_BINARY
Exits 77 (skipped) when python3-opencv is not installed (it writes the
JPEG).
"""
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

from refcheck import check, finish, need_opencv

cv2, np = need_opencv()
EXE = sys.argv[1]


def interrupted(args, out_dir, what, signals=(0.3,), limit=1.5):
    """Starts args, sends SIGINT at each time in signals (seconds from the
    start), and checks how the run ends."""
    t_start = time.monotonic()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for at in signals:
        time.sleep(max(0.0, t_start + at - time.monotonic()))
        p.send_signal(signal.SIGINT)
    t_signal = time.monotonic()
    try:
        _, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        _, err = p.communicate()
    waited = time.monotonic() - t_signal
    left = sorted(os.listdir(out_dir))
    check(p.returncode == 130 and waited <= limit and not left,
          f"{what}: exit {p.returncode} {waited:.2f} s after SIGINT, left {left}: {err.strip()!r}")
    print(f"{what}: exit {p.returncode}, {waited:.2f} s after the last SIGINT")
    return err


def host_tag():
    tag = "".join(c if c.isascii() and (c.isalnum() or c == "-") else "-"
                  for c in socket.gethostname())[:32]
    return tag or "-"


def dead_pid():
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def check_sweep(tmp, sample):
    out_dir = os.path.join(tmp, "sweep")
    os.mkdir(out_dir)
    host, gone = host_tag(), dead_pid()
    old = time.time() - 120

    def put(name, age=old):
        path = os.path.join(out_dir, name)
        with open(path, "wb") as f:
            f.write(b"partial")
        os.utime(path, (age, age))
        return name

    stale = [put(f".h.csv.imghist-tmp.{gone}.{host}.Ab3dE9"),
             put(f".other.png.imghist-tmp.{gone}.{host}.7")]
    kept = [put(f".h.csv.imghist-tmp.{gone}.{host}.young", time.time()),
            put(f".h.csv.imghist-tmp.{os.getpid()}.{host}.alive"),
            put(f".h.csv.imghist-tmp.{gone}.{host}x.elsewhere"),
            put(f"h.csv.imghist-tmp.{gone}.{host}.nodot"),
            put(f".h.csv.imghist-tmp.{gone}x.{host}.badpid"),
            put(f".h.csv.{gone}.{host}.nomark")]
    r = subprocess.run([EXE, sample, "--csv", os.path.join(out_dir, "h.csv")],
                       capture_output=True, text=True)
    names = set(os.listdir(out_dir))
    check(r.returncode == 0, f"sweep run: exit {r.returncode}: {r.stderr}")
    check(not names & set(stale), f"stale temporaries not removed: {sorted(names & set(stale))}")
    check(set(kept) <= names, f"removed what is not stale: {sorted(set(kept) - names)}")
    check("h.csv" in names, "the output itself is missing")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        rng = np.random.default_rng(1)
        big = os.path.join(tmp, "big.jpg")
        cv2.imwrite(big, rng.integers(0, 256, (9000, 9000), dtype=np.uint8),
                    [cv2.IMWRITE_JPEG_PROGRESSIVE, 1, cv2.IMWRITE_JPEG_QUALITY, 100])
        folder = os.path.join(tmp, "in")
        os.mkdir(folder)
        os.link(big, os.path.join(folder, "a.jpg"))
        os.link(big, os.path.join(folder, "b.jpg"))
        out_dir = os.path.join(tmp, "out")
        os.mkdir(out_dir)
        t0 = time.monotonic()
        subprocess.run([EXE, big, "--csv", os.devnull], capture_output=True)
        print(f"the whole decode and count: {time.monotonic() - t0:.2f} s")
        err = interrupted([EXE, big, "--csv", os.path.join(out_dir, "h.csv"), "--equalize",
                           os.path.join(out_dir, "eq.png")], out_dir, "one image")
        check("interrupted" in err, f"one image: no line saying it was interrupted: {err!r}")
        interrupted([EXE, folder, "-j", "2", "--csv", os.path.join(out_dir, "h.csv"),
                     "--equalize", os.path.join(out_dir, "eq")], out_dir, "a folder run")
        interrupted([EXE, big, "--csv", os.path.join(out_dir, "h.csv")], out_dir,
                    "a second SIGINT", signals=(0.3, 0.4), limit=0.5)
        err = interrupted([EXE, big, "--bins", "16777216", "--range", "0:256", "--csv",
                           os.path.join(out_dir, "h.csv")], out_dir,
                          "writing a CSV of 2^24 bins", signals=(2.5,))
        check("warning: --bins 16777216" in err, f"no warning for 2^24 bins: {err!r}")
        check_sweep(tmp, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                      "samples", "moon.png"))
    return finish("signals and stale temporaries")


if __name__ == "__main__":
    sys.exit(main())

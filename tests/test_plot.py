#!/usr/bin/env python3
"""--plot: the files open, have the stated sizes, and a PNG plot of a
synthetic histogram shows its bars at the right heights; SVG is XML; a batch
run's --plot-dir (one plot per image, the folders mirrored) and --total
--plot (the total's bars); the refusals are one line each and leave no file
behind.

usage: test_plot.py IMGHIST_BINARY SAMPLES_DIR
Exits 77 (skipped) without numpy and PIL, or when the build has no cairo.
"""
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

try:
    import numpy as np
    from PIL import Image
except ImportError as e:  # pragma: no cover
    print(f"skipping: {e}")
    sys.exit(77)

EXE, SAMPLES = sys.argv[1], sys.argv[2]
BAR = (69, 117, 181)  # the gray histogram's bars, (0.27, 0.46, 0.71) in 8 bits
failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL", msg)


def run(*args):
    return subprocess.run([EXE, *args], capture_output=True, text=True)


BASE = 44 + 398  # the plot area's bottom row + 1 (top margin 44, 398 high)


def bars(png):
    """(middle column, height in pixels) of each run of columns holding bar
    pixels, left to right: from the area's bottom to the run's highest bar
    pixel (the cumulative line, drawn over the bars, may hide parts below)."""
    a = np.asarray(Image.open(png).convert("RGB")).astype(int)
    is_bar = (np.abs(a - np.array(BAR)).sum(axis=2) <= 3)
    cols = np.flatnonzero(is_bar.any(axis=0))
    runs = np.split(cols, np.flatnonzero(np.diff(cols) > 1) + 1) if cols.size else []
    out = []
    for r in runs:
        top = min(int(np.flatnonzero(is_bar[:, c]).min()) for c in r)
        out.append((int(r[len(r) // 2]), BASE - top))
    return out


def main():
    probe = run(os.path.join(SAMPLES, "moon.png"), "--plot", os.devnull + ".png")
    if "without cairo" in probe.stderr:
        print("skipping: imghist built without cairo")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as d:
        # Two values: 4000 pixels of 64 and 2000 of 192.
        img = np.full((60, 100), 64, np.uint8)
        img[40:] = 192
        src = os.path.join(d, "two.png")
        Image.fromarray(img).save(src)
        png = os.path.join(d, "two-plot.png")
        p = run(src, "--plot", png)
        if p.returncode != 0:
            fail(f"--plot: exit {p.returncode}: {p.stderr}")
        else:
            im = Image.open(png)
            if im.size != (900, 500):
                fail(f"plot size {im.size}, want (900, 500)")
            b = bars(png)
            if len(b) != 2:
                fail(f"want 2 bars, found {b}")
            else:
                (x1, h1), (x2, h2) = b
                # Plot area: 398 pixels high; the largest count reaches 95 %.
                if abs(h1 - round(0.95 * 398)) > 1 or abs(h2 - round(0.95 * 398 / 2)) > 1:
                    fail(f"bar heights {h1}, {h2}; want {round(0.95 * 398)}, "
                         f"{round(0.95 * 398 / 2)}")
                # Plot area from x = 78, 758 wide, over [0, 256).
                for x, v in ((x1, 64), (x2, 192)):
                    want = 78 + (v + 0.5) / 256 * 758
                    if abs(x - want) > 2:
                        fail(f"bar of {v} at x = {x}, want about {want:.1f}")
        # Before and after, log axis, SVG, channels.
        both = os.path.join(d, "both.png")
        p = run(os.path.join(SAMPLES, "moon.png"), "--equalize", os.path.join(d, "eq.png"),
                "--plot", both, "--log")
        if p.returncode != 0 or Image.open(both).size != (1800, 500):
            fail(f"--equalize --plot --log: exit {p.returncode} {p.stderr}")
        svg = os.path.join(d, "astro.svg")
        p = run(os.path.join(SAMPLES, "astronaut.png"), "--channels", "--plot", svg)
        if p.returncode != 0:
            fail(f"--channels --plot x.svg: exit {p.returncode}: {p.stderr}")
        else:
            root = ET.parse(svg).getroot()
            if not root.tag.endswith("svg") or root.get("width") not in ("900pt", "900"):
                fail(f"SVG root {root.tag} width {root.get('width')}")
        # A batch run: --plot-dir mirrors the folder, one plot per image;
        # --plot with --total draws the total (4000 x 64, 2000 x 192 and
        # 1500 x 100).
        folder = os.path.join(d, "batch")
        os.makedirs(os.path.join(folder, "sub"))
        Image.fromarray(img).save(os.path.join(folder, "two.png"))
        Image.fromarray(np.full((30, 50), 100, np.uint8)).save(
            os.path.join(folder, "sub", "const.png"))
        pd = os.path.join(d, "plots")
        total_png = os.path.join(d, "total.png")
        p = run("-q", "-r", folder, "--plot-dir", pd, "--total", os.path.join(d, "t.csv"),
                "--plot", total_png)
        if p.returncode != 0:
            fail(f"--plot-dir / --total --plot: exit {p.returncode}: {p.stderr}")
        else:
            for rel, want in (("two.png", [round(0.95 * 398), round(0.95 * 398 / 2)]),
                              (os.path.join("sub", "const.png"), [round(0.95 * 398)]),
                              ("", [round(0.95 * 398), round(0.95 * 398 * 1500 / 4000),
                                    round(0.95 * 398 / 2)])):
                path = os.path.join(pd, rel) if rel else total_png
                if not os.path.exists(path) or Image.open(path).size != (900, 500):
                    fail(f"{path}: missing or not 900x500")
                    continue
                heights = [h for _, h in bars(path)]
                if "const" in rel:  # the cumulative line's step splits the one bar
                    heights = [max(heights)] if heights else []
                if len(heights) != len(want) or any(abs(h - w) > 1 for h, w in zip(heights, want)):
                    fail(f"{path}: bar heights {heights}, want {want}")
        # Refusals: one line, exit 2 (usage) or 1, no file left.
        for args, code in (([src, "--plot", os.path.join(d, "x.jpg")], 2),
                           ([src, "--log"], 2),
                           ([SAMPLES, "--plot", os.path.join(d, "dir.png")], 2),
                           ([src, "--plot-dir", os.path.join(d, "x.d")], 1),
                           ([SAMPLES, "--plot-dir", os.path.join(d, "x.e"), "--equalize",
                             os.path.join(d, "x.e")], 2),
                           ([os.path.join(d, "missing.png"), "--plot", os.path.join(d, "m.png")], 1),
                           ([src, "--plot", os.path.join(d, "no", "such", "dir.png")], 1)):
            p = run(*args)
            lines = p.stderr.strip().splitlines()
            if p.returncode == 0 or len(lines) != 1:
                fail(f"{args[1:]}: exit {p.returncode}, stderr {p.stderr!r}")
        left = sorted(f for f in os.listdir(d) if f.startswith(("x.", "dir.", "m.")))
        if left:
            fail(f"refused runs left files: {left}")
    print(f"{failures} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

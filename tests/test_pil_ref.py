"""imghist's PIL equalization (IMGHIST_EQ_PIL, through imghist_equalize_list)
against Pillow's ImageOps.equalize, pixel for pixel, on the sample
photographs (as Pillow's gray, "L") and on synthetic images: constant, two
values, multiples of 32, step 0, 1x1, odd sizes, noise.

usage: test_pil_ref.py PIL_EQUALIZE SAMPLES_DIR   (exit 77 without Pillow)
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    from PIL import Image, ImageOps
except ImportError as e:
    print(f"skipping: {e}")
    sys.exit(77)


def synthetic():
    rng = np.random.default_rng(12)
    yield "constant", np.full((31, 17), 90, np.uint8)
    yield "one pixel", np.array([[200]], np.uint8)
    two = np.full((40, 50), 10, np.uint8)
    two[:, 30:] = 200
    yield "two values", two
    yield "multiples of 32", (rng.integers(0, 8, (63, 65)) * 32).astype(np.uint8)
    few = np.full((16, 17), 250, np.uint8)
    few.flat[:200] = 3
    yield "step 0", few
    yield "noise 1x999", rng.integers(0, 256, (1, 999), dtype=np.uint8)
    yield "narrow band", rng.integers(100, 108, (333, 127), dtype=np.uint8)
    yield "noise", rng.integers(0, 256, (480, 641), dtype=np.uint8)


def main():
    tool, samples = sys.argv[1], sys.argv[2]
    cases = list(synthetic())
    for name in sorted(os.listdir(samples)):
        if name.endswith((".png", ".jpg")):
            cases.append((name, np.asarray(Image.open(os.path.join(samples, name)).convert("L"))))
    with tempfile.TemporaryDirectory() as tmp:
        inputs = []
        for k, (_, a) in enumerate(cases):
            path = os.path.join(tmp, f"in{k}.png")
            Image.fromarray(a, "L").save(path)
            inputs.append(path)
        subprocess.run([tool, tmp] + inputs, check=True)
        failed = 0
        for k, (name, a) in enumerate(cases):
            want = np.asarray(ImageOps.equalize(Image.fromarray(a, "L")))
            got = np.asarray(Image.open(os.path.join(tmp, f"{k}.png")))
            if got.shape != want.shape or not np.array_equal(got, want):
                bad = int(np.count_nonzero(got != want)) if got.shape == want.shape else -1
                print(f"FAIL {name}: {bad} pixels differ from ImageOps.equalize")
                failed += 1
            else:
                print(f"ok   {name} {a.shape[1]}x{a.shape[0]}")
    sys.exit(1 if failed else 0)


main()

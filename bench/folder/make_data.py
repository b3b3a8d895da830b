#!/usr/bin/python3
"""Make the folder benchmark's data from photographs that Debian packages ship.

    make_data.py SRC_ROOT OUT_DIR [-j N] [--count 200]

SRC_ROOT holds the packages unpacked with `dpkg -x PKG.deb SRC_ROOT/PKG`
(make_data.sh does that). OUT_DIR receives:

    jpeg/img_000.jpg ... img_199.jpg   4000x3000, JPEG quality 90 (4:2:0)
    png/img_000.png  ... img_199.png   the same pixels as PNG (zlib level 6)
    single/photo24.jpg, photo24.png    6000x4000, from one photograph
    MANIFEST.tsv                       each file's source, crop and flip

The count of real photographs (SOURCES) is below 200, so each source gives
several files that differ in crop window (zoom and position) and flip; the
variant table is VARIANTS. Every file is a distinct crop of a real photograph,
resized to 4000x3000 (INTER_AREA when shrinking, INTER_LANCZOS4 when
enlarging). Deterministic: the same packages give the same files.
"""
import argparse
import os
import sys
from concurrent.futures import ProcessPoolExecutor

import cv2

W12, H12 = 4000, 3000
W24, H24 = 6000, 4000

# (package, path inside the package, author, licence as the package states it)
_BG = "usr/share/backgrounds/"
_MATE = "usr/share/backgrounds/mate/nature/"
_KDE = "usr/share/wallpapers/%s/contents/images/2560x1600.jpg"
SOURCES = [
    ("lomiri-wallpapers-16.04", _BG + "Bridge_by_Sander_Klootwijk.jpg", "Sander Klootwijk", "CC-BY-SA-4.0"),
    ("lomiri-wallpapers-16.04", _BG + "Dragonfly_by_Bolly.jpg", "\"Bolly\"", "CC-BY-SA-4.0"),
    ("lomiri-wallpapers-16.04", _BG + "Picture_0B_by_freespace.jpg", "Trevor \"Freespace\"", "CC-BY-4.0"),
    ("lomiri-wallpapers-16.04", _BG + "Wine_by_Jakkub_Mede.jpg", "Jakub Mede", "CC-BY-4.0"),
    ("lomiri-wallpapers-16.04", _BG + "aitzgorri_by_Aitzol_Berasategi.jpg", "Aitzol Berasategi", "CC-BY-4.0"),
    ("lomiri-wallpapers-16.04", _BG + "free_by_Peter_Nerlich.jpg", "Peter Nerlich", "CC-BY-SA-4.0"),
    ("lomiri-wallpapers-16.04", _BG + "friends_by_Aitzol_Berasategi.jpg", "Aitzol Berasategi", "CC-BY-4.0"),
    ("lomiri-wallpapers-16.04", _BG + "life_by_Aitzol_Berasategi.jpg", "Aitzol Berasategi", "CC-BY-4.0"),
    ("lomiri-wallpapers-16.04", _BG + "picosdeeuropa_by_Aitzol_Berasategi.jpg", "Aitzol Berasategi", "CC-BY-4.0"),
    ("lomiri-wallpapers-16.04", _BG + "seeding_by_Clements_Engelhardt.jpg", "Clemens Engelhardt", "CC0-1.0"),
    ("lomiri-wallpapers-16.04", _BG + "sunset_by_Aitzol_Berasategi.jpg", "Aitzol Berasategi", "CC-BY-4.0"),
    ("lomiri-wallpapers-20.04", _BG + "Kleiber_by_Lukas_Baubkus.jpg", "Lukas Baubkus", "CC-BY-SA-3.0"),
    ("mate-backgrounds", _MATE + "Aqua.jpg", "Charles Barbin", "GPL-2+"),
    ("mate-backgrounds", _MATE + "Garden.jpg", "Charles Barbin", "GPL-2+"),
    ("mate-backgrounds", _MATE + "LadyBird.jpg", "Charles Barbin", "GPL-2+"),
    ("mate-backgrounds", _MATE + "TwoWings.jpg", "Charles Barbin, Hylke Bons", "GPL-2+"),
    ("mate-backgrounds", _MATE + "Wood.jpg", "Jean-François Fortin Tam", "GPL-2+"),
    ("mate-backgrounds", _MATE + "YellowFlower.jpg", "Charles Barbin", "GPL-2+"),
    ("plasma-workspace-wallpapers", _KDE % "BytheWater", "Maciej Wiklo", "LGPL-3 (metadata.json); GPL-2+ (debian/copyright)"),
    ("plasma-workspace-wallpapers", _KDE % "ColdRipple", "Risto Saukonpää", "LGPL-3 (metadata.json); GPL-2+ (debian/copyright)"),
    ("plasma-workspace-wallpapers", _KDE % "ColorfulCups", "Dmitri Popov", "LGPL-3 (metadata.json); GPL-2+ (debian/copyright)"),
    ("plasma-workspace-wallpapers", _KDE % "DarkestHour", "Risto Saukonpää", "LGPL-3 (metadata.json); GPL-2+ (debian/copyright)"),
    ("plasma-workspace-wallpapers", _KDE % "EveningGlow", "Ian Hex", "LGPL-3 (metadata.json); GPL-2+ (debian/copyright)"),
    ("plasma-workspace-wallpapers", _KDE % "FallenLeaf", "Martin Klapetek", "LGPL-3 (metadata.json); GPL-2+ (debian/copyright)"),
    ("plasma-workspace-wallpapers", _KDE % "Grey", "Sigi Sagi", "LGPL-3 (metadata.json); GPL-2+ (debian/copyright)"),
    ("plasma-workspace-wallpapers", _KDE % "Kite", "Risto Saukonpää", "LGPL-3 (metadata.json); GPL-2+ (debian/copyright)"),
    ("plasma-workspace-wallpapers", _KDE % "OneStandsOut", "Risto Saukonpää", "LGPL-3 (metadata.json); GPL-2+ (debian/copyright)"),
    ("plasma-workspace-wallpapers", _KDE % "Path", "Risto Saukonpää", "LGPL-3 (metadata.json); GPL-2+ (debian/copyright)"),
    ("plasma-workspace-wallpapers", _KDE % "summer_1am", "Risto Saukonpää", "LGPL-3 (metadata.json); GPL-2+ (debian/copyright)"),
]
# The 24 MP photograph: the largest real photograph in these packages (6028x3391).
SOURCE24 = 11  # Kleiber_by_Lukas_Baubkus.jpg

# (zoom, x anchor, y anchor, flip): zoom is the crop's share of the largest
# 4:3 window that fits; anchors 0..1 place the window; flip: None, 1 (mirror
# left-right), -1 (turn by 180 degrees).
VARIANTS = [
    (1.00, 0.5, 0.5, None),
    (1.00, 0.5, 0.5, 1),
    (0.90, 0.0, 0.0, None),
    (0.90, 1.0, 1.0, 1),
    (0.80, 0.5, 0.5, -1),
    (0.80, 0.0, 1.0, None),
    (0.70, 1.0, 0.0, 1),
    (0.70, 0.3, 0.6, None),
]


def crop_resize(img, w, h, zoom, ax, ay, flip):
    sh, sw = img.shape[:2]
    # largest window of aspect w:h inside the source, scaled by zoom
    cw = min(sw, sh * w / h)
    ch = cw * h / w
    cw, ch = int(round(cw * zoom)), int(round(ch * zoom))
    x = int(round((sw - cw) * ax))
    y = int(round((sh - ch) * ay))
    roi = img[y:y + ch, x:x + cw]
    interp = cv2.INTER_AREA if cw >= w else cv2.INTER_LANCZOS4
    out = cv2.resize(roi, (w, h), interpolation=interp)
    if flip is not None:
        out = cv2.flip(out, flip)
    return out, (x, y, cw, ch)


def load(src_root, i):
    pkg, rel = SOURCES[i][0], SOURCES[i][1]
    path = os.path.join(src_root, pkg, rel)
    img = cv2.imread(path, cv2.IMREAD_COLOR)
    if img is None:
        raise SystemExit("make_data: cannot read %s" % path)
    return img


def make_one(args):
    src_root, out_dir, k = args
    n = len(SOURCES)
    si, vi = k % n, k // n
    zoom, ax, ay, flip = VARIANTS[vi % len(VARIANTS)]
    img = load(src_root, si)
    out, (x, y, cw, ch) = crop_resize(img, W12, H12, zoom, ax, ay, flip)
    stem = "img_%03d" % k
    jp = os.path.join(out_dir, "jpeg", stem + ".jpg")
    pp = os.path.join(out_dir, "png", stem + ".png")
    cv2.imwrite(jp + ".tmp.jpg", out, [cv2.IMWRITE_JPEG_QUALITY, 90])
    cv2.imwrite(pp + ".tmp.png", out, [cv2.IMWRITE_PNG_COMPRESSION, 6])
    os.replace(jp + ".tmp.jpg", jp)
    os.replace(pp + ".tmp.png", pp)
    fl = {None: "none", 1: "mirror", -1: "rot180"}[flip]
    return "%s\t%s/%s\t%dx%d+%d+%d\t%s\t%s\t%s" % (
        stem, SOURCES[si][0], os.path.basename(SOURCES[si][1]), cw, ch, x, y, fl,
        SOURCES[si][2], SOURCES[si][3])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src_root")
    ap.add_argument("out_dir")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--count", type=int, default=200)
    a = ap.parse_args()
    if a.count > len(SOURCES) * len(VARIANTS):
        raise SystemExit("make_data: at most %d files" % (len(SOURCES) * len(VARIANTS)))
    for d in ("jpeg", "png", "single"):
        os.makedirs(os.path.join(a.out_dir, d), exist_ok=True)
    cv2.setNumThreads(1)
    rows = []
    with ProcessPoolExecutor(max_workers=max(1, a.j)) as ex:
        for i, row in enumerate(ex.map(make_one, [(a.src_root, a.out_dir, k) for k in range(a.count)])):
            rows.append(row)
            if (i + 1) % 20 == 0:
                print("make_data: %d/%d" % (i + 1, a.count), flush=True)
    img = load(a.src_root, SOURCE24)
    out, (x, y, cw, ch) = crop_resize(img, W24, H24, 1.0, 0.5, 0.5, None)
    for ext, params in ((".jpg", [cv2.IMWRITE_JPEG_QUALITY, 90]), (".png", [cv2.IMWRITE_PNG_COMPRESSION, 6])):
        p = os.path.join(a.out_dir, "single", "photo24" + ext)
        cv2.imwrite(p + ".tmp" + ext, out, params)
        os.replace(p + ".tmp" + ext, p)
    rows.append("photo24\t%s/%s\t%dx%d+%d+%d\tnone\t%s\t%s" % (
        SOURCES[SOURCE24][0], os.path.basename(SOURCES[SOURCE24][1]), cw, ch, x, y,
        SOURCES[SOURCE24][2], SOURCES[SOURCE24][3]))
    with open(os.path.join(a.out_dir, "MANIFEST.tsv"), "w", encoding="utf-8") as f:
        f.write("file\tsource (package/file)\tcrop WxH+X+Y in the source\tflip\tauthor\tlicence\n")
        f.write("\n".join(rows) + "\n")
    print("make_data: %d files per format in %s/{jpeg,png}, 24 MP pair in %s/single"
          % (a.count, a.out_dir, a.out_dir))


if __name__ == "__main__":
    sys.exit(main())

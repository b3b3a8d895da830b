#!/usr/bin/python3
"""Generate the seed corpora of the fuzz targets, reproducibly.

    /usr/bin/python3 fuzz/make_corpus.py            # rewrite fuzz/corpus/{load,args}

fuzz/corpus/load/: small (<= 4 KiB) images of every format and layout the
loader handles (PNG through libpng, JPEG through libjpeg-turbo, the rest
through stb_image), plus broken ones: truncated, bad CRCs, wrong magic, empty,
and tiny files declaring huge sizes. Almost every format is written by hand
here (zlib and struct only); baseline and progressive JPEGs come from OpenCV
(python3-opencv) when it is installed and are skipped otherwise. Pixel data
comes from random.Random(SEED), so the same library versions give the same
bytes.

fuzz/corpus/args/: argument lists for fuzz_args, one argument per line.

The script deletes the files it owns in those folders before writing.
"""
import os
import random
import struct
import sys
import zlib

SEED = 20240521
MAX_SEED_BYTES = 4096

HERE = os.path.dirname(os.path.abspath(__file__))
LOAD_DIR = os.path.join(HERE, "corpus", "load")
ARGS_DIR = os.path.join(HERE, "corpus", "args")

rng = random.Random(SEED)


# ---------------------------------------------------------------- pixels

def gradient(w, h, channels, maxval=255):
    """A smooth picture with some noise: compresses well, has many levels."""
    rows = []
    for y in range(h):
        row = []
        for x in range(w):
            for c in range(channels):
                base = ((x * (c + 1) * 7 + y * (3 - c % 3) * 5) * maxval) // (
                    7 * (w + h) + 1)
                noise = rng.randint(-maxval // 16, maxval // 16) if maxval > 3 else 0
                row.append(max(0, min(maxval, base + noise)))
        rows.append(row)
    return rows


def random_samples(w, h, channels, maxval):
    return [[rng.randint(0, maxval) for _ in range(w * channels)] for _ in range(h)]


# ---------------------------------------------------------------- PNG

PNG_SIG = b"\x89PNG\r\n\x1a\n"
PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def chunk(kind, data, crc=None):
    if crc is None:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def pack_row(samples, depth):
    """Pack one row of samples at a PNG bit depth (1, 2, 4, 8 or 16)."""
    if depth == 8:
        return bytes(samples)
    if depth == 16:
        return b"".join(struct.pack(">H", s) for s in samples)
    out = bytearray()
    per = 8 // depth
    for i in range(0, len(samples), per):
        byte = 0
        group = samples[i:i + per]
        for j, s in enumerate(group):
            byte |= s << (8 - depth * (j + 1))
        out.append(byte)
    return bytes(out)


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def filter_rows(packed_rows, bpp, filters):
    out = bytearray()
    prev = bytes(len(packed_rows[0])) if packed_rows else b""
    for i, row in enumerate(packed_rows):
        ft = filters[i % len(filters)]
        out.append(ft)
        for x in range(len(row)):
            a = row[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            pred = (0, a, b, (a + b) // 2, paeth(a, b, c))[ft]
            out.append((row[x] - pred) & 0xFF)
        prev = row
    return bytes(out)


ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
         (0, 1, 1, 2)]


def png_image_data(rows, w, h, color, depth, interlace, filters):
    ch = PNG_CHANNELS[color]
    bpp = max(1, ch * depth // 8)
    if not interlace:
        packed = [pack_row(r, depth) for r in rows]
        return filter_rows(packed, bpp, filters)
    out = b""
    for x0, y0, dx, dy in ADAM7:
        sub = []
        for y in range(y0, h, dy):
            row = []
            for x in range(x0, w, dx):
                row.extend(rows[y][x * ch:(x + 1) * ch])
            if row:
                sub.append(row)
        if sub:
            out += filter_rows([pack_row(r, depth) for r in sub], bpp, filters)
    return out


def png(w, h, color, depth, rows=None, interlace=0, filters=(0, 1, 2, 3, 4), before_idat=(),
        after_idat=(), plte=None, idat_parts=1, raw=None, ihdr=None, level=9):
    ch = PNG_CHANNELS[color]
    if rows is None:
        maxval = (1 << depth) - 1
        if color == 3:
            maxval = min(maxval, len(plte) // 3 - 1 if plte else maxval)
        rows = gradient(w, h, ch, maxval)
    if raw is None:
        raw = png_image_data(rows, w, h, color, depth, interlace, filters)
    z = zlib.compress(raw, level)
    if ihdr is None:
        ihdr = struct.pack(">IIBBBBB", w, h, depth, color, 0, 0, interlace)
    out = PNG_SIG + chunk(b"IHDR", ihdr)
    for c in before_idat:
        out += c
    if plte is not None:
        out += chunk(b"PLTE", plte)
    step = max(1, -(-len(z) // idat_parts))
    for i in range(0, len(z), step):
        out += chunk(b"IDAT", z[i:i + step])
    for c in after_idat:
        out += c
    return out + chunk(b"IEND", b"")


def palette(n):
    return bytes(rng.randint(0, 255) for _ in range(3 * n))


# ---------------------------------------------------------------- JPEG (DC only, by hand)

DC_BITS = [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0]  # the standard luminance DC table
DC_VALS = list(range(12))


def huff_codes(bits, vals):
    codes, code, k = {}, 0, 0
    for length in range(1, 17):
        for _ in range(bits[length - 1]):
            codes[vals[k]] = (code, length)
            code += 1
            k += 1
        code <<= 1
    return codes


class BitWriter:
    def __init__(self):
        self.out = bytearray()
        self.acc = 0
        self.n = 0

    def put(self, value, length):
        for i in range(length - 1, -1, -1):
            self.acc = (self.acc << 1) | ((value >> i) & 1)
            self.n += 1
            if self.n == 8:
                self.out.append(self.acc)
                if self.acc == 0xFF:
                    self.out.append(0)
                self.acc = self.n = 0

    def flush(self):
        while self.n:
            self.put(1, 1)
        return bytes(self.out)


def jpeg_dc_only(w, h, ncomp, adobe_transform=None, block_values=None):
    """A baseline JPEG whose 8x8 blocks are flat (DC only), any component count.

    Covers what OpenCV cannot write: CMYK and YCCK (Adobe APP14) and 2- or
    4-component files."""
    bw, bh = -(-w // 8), -(-h // 8)
    if block_values is None:
        block_values = [[rng.randint(0, 255) for _ in range(ncomp)] for _ in range(bw * bh)]
    dc = huff_codes(DC_BITS, DC_VALS)
    eob = (0, 1)  # AC table: only EOB, one 1-bit code
    out = b"\xff\xd8"
    if adobe_transform is not None:
        app14 = b"Adobe" + struct.pack(">HHHB", 100, 0, 0, adobe_transform)
        out += b"\xff\xee" + struct.pack(">H", len(app14) + 2) + app14
    out += b"\xff\xdb" + struct.pack(">H", 67) + b"\x00" + bytes([1] * 64)
    sof = struct.pack(">BHHB", 8, h, w, ncomp)
    for c in range(ncomp):
        sof += bytes([c + 1, 0x11, 0])
    out += b"\xff\xc0" + struct.pack(">H", len(sof) + 2) + sof
    dht = b"\x00" + bytes(DC_BITS) + bytes(DC_VALS)
    dht += b"\x10" + bytes([1] + [0] * 15) + b"\x00"
    out += b"\xff\xc4" + struct.pack(">H", len(dht) + 2) + dht
    sos = bytes([ncomp]) + b"".join(bytes([c + 1, 0x00]) for c in range(ncomp)) + b"\x00\x3f\x00"
    out += b"\xff\xda" + struct.pack(">H", len(sos) + 2) + sos
    bw_ = BitWriter()
    pred = [0] * ncomp
    for blk in range(bw * bh):
        for c in range(ncomp):
            v = (block_values[blk][c] - 128) * 8
            diff = v - pred[c]
            pred[c] = v
            cat = abs(diff).bit_length()
            code, length = dc[cat]
            bw_.put(code, length)
            if cat:
                bw_.put(diff if diff > 0 else diff + (1 << cat) - 1, cat)
            bw_.put(*eob)
    return out + bw_.flush() + b"\xff\xd9"


def exif_block(orientation, big_endian, ifd_offset=8, entries=1, type_code=3):
    """An APP1 payload: "Exif\\0\\0" and a TIFF block whose IFD 0 holds the
    Orientation tag."""
    e = ">" if big_endian else "<"
    tiff = (b"MM" if big_endian else b"II") + struct.pack(e + "HI", 42, ifd_offset)
    tiff += struct.pack(e + "H", entries)
    if type_code == 3:
        value = struct.pack(e + "HH", orientation, 0)
    else:
        value = struct.pack(e + "I", orientation)
    tiff += struct.pack(e + "HHI", 0x0112, type_code, 1) + value + struct.pack(e + "I", 0)
    return b"Exif\0\0" + tiff


def jpeg_with_app1(jpeg, payload):
    return jpeg[:2] + b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload + jpeg[2:]


def cv2_jpegs():
    try:
        import cv2
        import numpy as np
    except ImportError:
        print("make_corpus: no OpenCV: the OpenCV-made JPEG seeds are skipped", file=sys.stderr)
        return {}
    npr = np.random.RandomState(SEED)
    yy, xx = np.mgrid[0:24, 0:32]
    gray = ((xx * 6 + yy * 3) % 256).astype(np.uint8)
    gray = np.clip(gray.astype(int) + npr.randint(-20, 20, gray.shape), 0, 255).astype(np.uint8)
    bgr = np.dstack([gray, 255 - gray, (xx * 8 % 256).astype(np.uint8)])
    odd = npr.randint(0, 256, (13, 17, 3)).astype(np.uint8)
    P = cv2.IMWRITE_JPEG_PROGRESSIVE
    Q = cv2.IMWRITE_JPEG_QUALITY
    jobs = {
        "jpeg_gray_baseline.jpg": (gray, [Q, 90]),
        "jpeg_rgb_baseline_420.jpg": (bgr, [Q, 90]),
        "jpeg_rgb_q100.jpg": (bgr, [Q, 100]),
        "jpeg_gray_progressive.jpg": (gray, [Q, 85, P, 1]),
        "jpeg_rgb_progressive.jpg": (bgr, [Q, 85, P, 1]),
        "jpeg_rgb_optimized_restart.jpg": (bgr, [Q, 60, cv2.IMWRITE_JPEG_OPTIMIZE, 1,
                                                 cv2.IMWRITE_JPEG_RST_INTERVAL, 2]),
        "jpeg_rgb_odd_size_17x13.jpg": (odd, [Q, 50]),
    }
    out = {}
    for name, (img, params) in jobs.items():
        ok, buf = cv2.imencode(".jpg", img, params)
        if ok:
            out[name] = buf.tobytes()
    return out


# ---------------------------------------------------------------- BMP

def bmp(w, h, bpp, pixels=None, pal=None, compression=0, header_size=40, masks=None,
        top_down=False, data=None):
    """pixels: rows (top first) of palette indices (bpp <= 8) or BGR(A) tuples."""
    if pal is None and bpp <= 8:
        pal = bytes(b for i in range(1 << bpp) for b in (i * 255 // ((1 << bpp) - 1),) * 3 + (0,))
    if data is None:
        stride = ((w * bpp + 31) // 32) * 4
        rows = []
        for y in range(h):
            r = bytearray()
            if bpp <= 8:
                idx = pixels[y] if pixels else [rng.randint(0, (1 << bpp) - 1) for _ in range(w)]
                r = bytearray(pack_row(idx, bpp)) if bpp < 8 else bytearray(idx)
            elif bpp == 16:
                for _ in range(w):
                    r += struct.pack("<H", rng.randint(0, 0x7FFF))
            else:
                for x in range(w):
                    r += bytes(((x * 8 + y * 4) & 0xFF, (y * 9) & 0xFF, rng.randint(0, 255)))
                    if bpp == 32:
                        r.append(0xFF)
            r += bytes(stride - len(r))
            rows.append(bytes(r))
        if not top_down:
            rows.reverse()
        data = b"".join(rows)
    extra = b""
    if masks is not None:
        extra = struct.pack("<III", *masks[:3])
        if header_size >= 56:
            extra = b""
    info = struct.pack("<IiiHHIIiiII", header_size, w, -h if top_down else h, 1, bpp,
                       compression, len(data), 2835, 2835, 0, 0)
    if header_size > 40:
        tail = b""
        if masks is not None:
            tail += struct.pack("<IIII", *(list(masks) + [0] * (4 - len(masks))))
        else:
            tail += bytes(16)
        tail += b"BGRs" + bytes(header_size - 40 - len(tail) - 4)
        info += tail
    palette_bytes = pal if bpp <= 8 else b""
    offset = 14 + len(info) + len(extra) + len(palette_bytes)
    head = b"BM" + struct.pack("<IHHI", offset + len(data), 0, 0, offset)
    return head + info + extra + palette_bytes + data


# ---------------------------------------------------------------- TGA

def run_length(seq, i, limit=128):
    """How many items from seq[i] on equal seq[i], at most limit (both RLEs' packet size)."""
    run = 1
    while i + run < len(seq) and run < limit and seq[i + run] == seq[i]:
        run += 1
    return run


def tga_rle(pixels, bytes_per_pixel):
    """pixels: list of bytes objects, one per pixel; alternate run and raw packets."""
    out = bytearray()
    i = 0
    while i < len(pixels):
        run = run_length(pixels, i)
        if run > 1:
            out.append(0x80 | (run - 1))
            out += pixels[i]
            i += run
            continue
        raw = 1
        while (i + raw < len(pixels) and raw < 128 and
               (i + raw + 1 >= len(pixels) or pixels[i + raw] != pixels[i + raw + 1])):
            raw += 1
        out.append(raw - 1)
        for p in pixels[i:i + raw]:
            out += p
        i += raw
    return bytes(out)


def tga(w, h, kind, bpp, rle=False, cmap=None, origin_top=False):
    """kind: 1 colour-mapped, 2 truecolour, 3 gray."""
    bytes_pp = (bpp + 7) // 8
    px = []
    for y in range(h):
        for x in range(w):
            if kind == 1:
                v = bytes([((x // 3) + y) % (len(cmap) // 3)])
            elif kind == 3:
                v = bytes([(x * 16 + y * 8) & 0xFF if x % 4 else 0x40])
            elif bpp == 16:
                v = struct.pack("<H", ((x * 2) & 31) | (((y * 3) & 31) << 5) | (9 << 10))
            else:
                v = bytes([(x * 20) & 0xFF, (y * 20) & 0xFF, 0x80 if x < w // 2 else 0x10])
                if bpp == 32:
                    v += b"\xc0"
            px.append(v)
    data = tga_rle(px, bytes_pp) if rle else b"".join(px)
    img_type = kind + (8 if rle else 0)
    cmap_len = len(cmap) // 3 if cmap else 0
    desc = (0x20 if origin_top else 0) | (8 if bpp == 32 else 0)
    head = struct.pack("<BBBHHBHHHHBB", 0, 1 if cmap else 0, img_type, 0, cmap_len,
                       24 if cmap else 0, 0, 0, w, h, bpp, desc)
    return head + (cmap or b"") + data


# ---------------------------------------------------------------- GIF

def lzw_encode(indices, min_code_size):
    clear, eoi = 1 << min_code_size, (1 << min_code_size) + 1
    out, acc, nbits = bytearray(), 0, 0

    def emit(code, size):
        nonlocal acc, nbits
        acc |= code << nbits
        nbits += size
        while nbits >= 8:
            out.append(acc & 0xFF)
            acc >>= 8
            nbits -= 8

    table = {(i,): i for i in range(clear)}
    next_code, size = eoi + 1, min_code_size + 1
    emit(clear, size)
    cur = ()
    for p in indices:
        cand = cur + (p,)
        if cand in table:
            cur = cand
            continue
        emit(table[cur], size)
        if next_code < 4096:
            table[cand] = next_code
            next_code += 1
            if next_code > (1 << size) and size < 12:
                size += 1
        else:
            emit(clear, size)
            table = {(i,): i for i in range(clear)}
            next_code, size = eoi + 1, min_code_size + 1
        cur = (p,)
    if cur:
        emit(table[cur], size)
    emit(eoi, size)
    if nbits:
        out.append(acc & 0xFF)
    blocks = bytearray()
    for i in range(0, len(out), 255):
        part = out[i:i + 255]
        blocks.append(len(part))
        blocks += part
    return bytes(blocks) + b"\x00"


def gif(w, h, ncolors=16, version=b"89a", local=False, interlace=False, transparent=None,
        frames=1, screen=None):
    bits = max(1, (ncolors - 1).bit_length())
    pal = palette(1 << bits)
    sw, sh = screen or (w, h)
    out = b"GIF" + version + struct.pack("<HHBBB", sw, sh, (0 if local else 0x80) | (bits - 1)
                                         | ((bits - 1) << 4), 0, 0)
    if not local:
        out += pal
    for f in range(frames):
        if transparent is not None or frames > 1:
            out += b"\x21\xf9\x04" + bytes([1 if transparent is not None else 0]) + \
                struct.pack("<H", 10) + bytes([transparent or 0]) + b"\x00"
        flags = (0x80 | (bits - 1) if local else 0) | (0x40 if interlace else 0)
        out += b"\x2c" + struct.pack("<HHHHB", 0, 0, w, h, flags)
        if local:
            out += pal
        idx = [((x // 2 + y + f) % ncolors) for y in range(h) for x in range(w)]
        out += bytes([max(2, bits)]) + lzw_encode(idx, max(2, bits))
    return out + b"\x3b"


# ---------------------------------------------------------------- PNM, PSD, HDR, PIC

def pnm(magic, w, h, maxval, comment=False, channels=None):
    ch = channels or (3 if magic in (b"P6", b"P3") else 1)
    head = magic + b"\n" + (b"# seed\n" if comment else b"") + b"%d %d\n%d\n" % (w, h, maxval)
    samples = [s for row in gradient(w, h, ch, maxval) for s in row]
    if magic in (b"P2", b"P3"):
        return head + b" ".join(b"%d" % s for s in samples) + b"\n"
    if maxval > 255:
        return head + b"".join(struct.pack(">H", s) for s in samples)
    return head + bytes(samples)


def packbits(row):
    out = bytearray()
    i = 0
    while i < len(row):
        run = run_length(row, i)
        if run >= 3:
            out += bytes([257 - run, row[i]])
            i += run
            continue
        j = i
        while j < len(row) and j - i < 128 and not (j + 2 < len(row) and
                                                      row[j] == row[j + 1] == row[j + 2]):
            j += 1
        out.append(j - i - 1)
        out += bytes(row[i:j])
        i = j
    return bytes(out)


def psd(w, h, channels=3, depth=8, rle=False, mode=3):
    head = b"8BPS" + struct.pack(">H", 1) + bytes(6) + struct.pack(">HIIHH", channels, h, w,
                                                                     depth, mode)
    head += struct.pack(">I", 0) + struct.pack(">I", 0) + struct.pack(">I", 0)
    planes = []
    for c in range(channels):
        rows = []
        for y in range(h):
            if depth == 16:
                rows.append(b"".join(struct.pack(">H", ((x * 4000 + y * 900 * (c + 1)) & 0xFFFF))
                                     for x in range(w)))
            else:
                rows.append(bytes(((x // 2) * 30 + y * 11 * (c + 1)) & 0xFF for x in range(w)))
        planes.append(rows)
    if not rle:
        return head + struct.pack(">H", 0) + b"".join(b"".join(p) for p in planes)
    packed = [[packbits(r) for r in p] for p in planes]
    counts = b"".join(struct.pack(">H", len(r)) for p in packed for r in p)
    return head + struct.pack(">H", 1) + counts + b"".join(b"".join(p) for p in packed)


def rgbe(r, g, b):
    import math
    v = max(r, g, b)
    if v < 1e-32:
        return bytes(4)
    m, e = math.frexp(v)
    scale = m * 256.0 / v
    return bytes([int(r * scale), int(g * scale), int(b * scale), e + 128])


def pfm(magic, w, h, scale, special=False):
    """Rows bottom to top; a negative scale means little-endian floats."""
    c = 3 if magic == b"PF" else 1
    vals = [((x * 7 + y * 13 + k) % 29) / 7.0 - 0.5 for y in range(h) for x in range(w)
            for k in range(c)]
    if special:
        vals[:4] = [float("nan"), float("inf"), float("-inf"), 3.0e9]
    order = "<" if scale < 0 else ">"
    return b"%s\n%d %d\n%r\n" % (magic, w, h, scale) + struct.pack(order + "%df" % len(vals), *vals)


def hdr(w, h, rle):
    out = b"#?RADIANCE\n# seed\nFORMAT=32-bit_rle_rgbe\nEXPOSURE=1.0\n\n-Y %d +X %d\n" % (h, w)
    for y in range(h):
        px = [rgbe(x / w * 4.0, y / h, 0.25 + (x + y) % 3) for x in range(w)]
        if not rle:
            out += b"".join(px)
            continue
        out += bytes([2, 2, w >> 8, w & 0xFF])
        for c in range(4):
            comp = bytes(p[c] for p in px)
            i = 0
            while i < w:
                run = 1
                while i + run < w and run < 127 and comp[i + run] == comp[i]:
                    run += 1
                if run > 2:
                    out += bytes([128 + run, comp[i]])
                    i += run
                else:
                    n = min(w - i, 128)
                    j = i + 1
                    while j < i + n and not (j + 2 < w and comp[j] == comp[j + 1] == comp[j + 2]):
                        j += 1
                    out += bytes([j - i]) + comp[i:j]
                    i = j
    return out


def softimage_pic(w, h, alpha=True):
    out = b"\x53\x80\xf6\x34" + b"seed".ljust(84, b"\x00") + b"PICT"
    out += struct.pack(">HHfHH", w, h, 1.0, 3, 0)
    mask = 0xF0 if alpha else 0xE0
    out += bytes([0, 8, 0, mask])  # last packet, 8 bits, uncompressed, R G B (A)
    nch = 4 if alpha else 3
    for y in range(h):
        for x in range(w):
            out += bytes([(x * 30) & 0xFF, (y * 30) & 0xFF, 0x77, 0xFF][:nch])
    return out


# ---------------------------------------------------------------- the corpus

def load_corpus():
    f = {}
    # PNG: every colour type and bit depth.
    for d in (1, 2, 4, 8, 16):
        f["png_gray_%dbit.png" % d] = png(16, 12, 0, d)
    f["png_gray_alpha_8bit.png"] = png(12, 10, 4, 8)
    f["png_gray_alpha_16bit.png"] = png(8, 8, 4, 16)
    f["png_rgb_8bit.png"] = png(16, 12, 2, 8)
    f["png_rgb_16bit.png"] = png(10, 8, 2, 16)
    f["png_rgba_8bit.png"] = png(12, 12, 6, 8)
    f["png_rgba_16bit.png"] = png(8, 6, 6, 16)
    f["png_palette_8bit_trns.png"] = png(16, 12, 3, 8, plte=palette(40),
                                         before_idat=[chunk(b"tRNS", bytes(range(0, 200, 10)))])
    for d in (1, 2, 4):
        f["png_palette_%dbit.png" % d] = png(16, 9, 3, d, plte=palette(1 << d))
    f["png_gray_8bit_interlaced.png"] = png(19, 13, 0, 8, interlace=1)
    f["png_rgb_8bit_interlaced.png"] = png(11, 9, 2, 8, interlace=1)
    f["png_gray_1bit_interlaced.png"] = png(13, 11, 0, 1, interlace=1)
    f["png_palette_4bit_interlaced.png"] = png(10, 7, 3, 4, interlace=1, plte=palette(16))
    f["png_1x1_gray.png"] = png(1, 1, 0, 8, rows=[[77]])
    f["png_ancillary_chunks_split_idat.png"] = png(
        16, 16, 2, 8, idat_parts=4,
        before_idat=[chunk(b"gAMA", struct.pack(">I", 45455)), chunk(b"sRGB", b"\x00"),
                     chunk(b"cHRM", struct.pack(">8I", 31270, 32900, 64000, 33000, 30000,
                                                60000, 15000, 6000)),
                     chunk(b"iCCP", b"bogus\x00\x00" + zlib.compress(b"not a profile")),
                     chunk(b"sBIT", b"\x05\x06\x05"), chunk(b"bKGD", b"\x00\x10\x00\x20\x00\x30"),
                     chunk(b"pHYs", struct.pack(">IIB", 2835, 2835, 1)),
                     chunk(b"tEXt", b"Comment\x00seed"),
                     chunk(b"zTXt", b"Title\x00\x00" + zlib.compress(b"imghist")),
                     chunk(b"iTXt", b"Author\x00\x00\x00en\x00\x00x"),
                     chunk(b"acTL", struct.pack(">II", 1, 0))],
        after_idat=[chunk(b"tIME", struct.pack(">HBBBBB", 2024, 5, 21, 12, 0, 0)),
                    chunk(b"prVt", b"private")])
    # Within the fuzz pixel limit but ~1000x compressed: a small decompression bomb.
    f["png_bomb_1024x1024_zeros.png"] = png(1024, 1024, 0, 8, raw=bytes(1025 * 1024))
    # Broken PNGs.
    good = png(16, 12, 0, 8)
    f["png_bad_crc_ihdr.png"] = good[:29] + bytes([good[29] ^ 0xFF]) + good[30:]
    idat_crc = good.index(b"IEND") - 8
    f["png_bad_crc_idat.png"] = good[:idat_crc] + b"\x00\x00\x00\x00" + good[idat_crc + 4:]
    for cut in (8, 20, 33, 45, len(good) - 12):
        f["png_truncated_at_%d.png" % cut] = good[:cut]
    f["png_wrong_magic.png"] = b"\x89PNx" + good[4:]
    f["png_declares_100000x100000.png"] = png(
        1, 1, 0, 8, raw=b"\x00\x00", ihdr=struct.pack(">IIBBBBB", 100000, 100000, 8, 0, 0, 0, 0))
    f["png_bad_ihdr_depth3.png"] = png(4, 4, 0, 8, ihdr=struct.pack(">IIBBBBB", 4, 4, 3, 0, 0, 0,
                                                                    0))
    f["png_palette_missing_plte.png"] = png(8, 8, 3, 8, rows=random_samples(8, 8, 1, 3))
    f["png_palette_index_past_plte.png"] = png(8, 8, 3, 8, rows=random_samples(8, 8, 1, 255),
                                               plte=palette(4))
    zl = zlib.compress(png_image_data(gradient(16, 12, 1, 255), 16, 12, 0, 8, 0, (0,)))
    f["png_short_image_data.png"] = png(16, 12, 0, 8, raw=bytes(16 * 6 + 6))
    f["png_bad_zlib_adler.png"] = (PNG_SIG + chunk(b"IHDR", struct.pack(">IIBBBBB", 16, 12, 8, 0,
                                                                         0, 0, 0))
                                   + chunk(b"IDAT", zl[:-4] + b"\xde\xad\xbe\xef")
                                   + chunk(b"IEND", b""))
    f["png_no_iend.png"] = good[:-12]

    # JPEG.
    f.update(cv2_jpegs())
    f["jpeg_cmyk_adobe_dc_only.jpg"] = jpeg_dc_only(24, 16, 4, adobe_transform=0)
    f["jpeg_ycck_adobe_dc_only.jpg"] = jpeg_dc_only(16, 16, 4, adobe_transform=2)
    f["jpeg_gray_dc_only.jpg"] = jpeg_dc_only(20, 12, 1)
    f["jpeg_2_components_dc_only.jpg"] = jpeg_dc_only(16, 8, 2)
    base = jpeg_dc_only(40, 40, 3)
    f["jpeg_rgb_dc_only.jpg"] = base
    f["jpeg_truncated_in_header.jpg"] = base[:100]
    f["jpeg_truncated_in_scan.jpg"] = base[:len(base) - 20]
    f["jpeg_no_eoi.jpg"] = base[:-2]
    sof = base.index(b"\xff\xc0")
    f["jpeg_declares_65500x65500.jpg"] = (base[:sof + 5] + struct.pack(">HH", 65500, 65500)
                                          + base[sof + 9:])
    f["jpeg_zero_width.jpg"] = base[:sof + 7] + b"\x00\x00" + base[sof + 9:]
    # EXIF orientation (APP1 right after SOI), both byte orders; and broken
    # EXIF: an IFD offset past the end, an entry count past the end, the
    # orientation as a LONG.
    f["jpeg_exif_orientation_6_le.jpg"] = jpeg_with_app1(base, exif_block(6, False))
    f["jpeg_exif_orientation_7_be.jpg"] = jpeg_with_app1(base, exif_block(7, True))
    f["jpeg_exif_ifd_offset_past_end.jpg"] = jpeg_with_app1(
        base, exif_block(6, False, ifd_offset=0x7fff0000))
    f["jpeg_exif_entry_count_past_end.jpg"] = jpeg_with_app1(
        base, exif_block(3, True, entries=0x7fff))
    f["jpeg_exif_orientation_as_long.jpg"] = jpeg_with_app1(
        base, exif_block(8, False, type_code=4))

    # BMP.
    f["bmp_1bit.bmp"] = bmp(20, 10, 1)
    f["bmp_4bit.bmp"] = bmp(15, 9, 4)
    f["bmp_8bit_palette.bmp"] = bmp(17, 11, 8, pal=bytes(
        b for i in range(256) for b in (i, 255 - i, i // 2, 0)))
    f["bmp_16bit_555.bmp"] = bmp(9, 7, 16)
    f["bmp_24bit.bmp"] = bmp(13, 9, 24)
    f["bmp_24bit_top_down.bmp"] = bmp(8, 6, 24, top_down=True)
    f["bmp_32bit.bmp"] = bmp(10, 8, 32)
    f["bmp_32bit_bitfields_v5.bmp"] = bmp(8, 8, 32, compression=3, header_size=124,
                                          masks=(0x00FF0000, 0x0000FF00, 0x000000FF,
                                                 0xFF000000))
    f["bmp_16bit_565_bitfields.bmp"] = bmp(8, 4, 16, compression=3, masks=(0xF800, 0x07E0,
                                                                          0x001F))
    f["bmp_rle8_unsupported.bmp"] = bmp(4, 2, 8, compression=1,
                                        data=b"\x04\x10\x00\x00\x04\x20\x00\x01")
    f["bmp_declares_100000x100000.bmp"] = bmp(100000, 100000, 24, data=b"\x00" * 12)
    f["bmp_truncated_pixels.bmp"] = bmp(13, 9, 24)[:100]
    # TGA.
    cmap = palette(12)
    f["tga_gray.tga"] = tga(12, 8, 3, 8)
    f["tga_rgb24.tga"] = tga(10, 6, 2, 24)
    f["tga_rgba32_top_left.tga"] = tga(8, 6, 2, 32, origin_top=True)
    f["tga_rgb16.tga"] = tga(8, 5, 2, 16)
    f["tga_colormapped.tga"] = tga(12, 8, 1, 8, cmap=cmap)
    f["tga_rle_rgb24.tga"] = tga(16, 10, 2, 24, rle=True)
    f["tga_rle_gray.tga"] = tga(16, 8, 3, 8, rle=True)
    f["tga_rle_colormapped.tga"] = tga(16, 8, 1, 8, rle=True, cmap=cmap)
    f["tga_rle_truncated.tga"] = tga(16, 10, 2, 24, rle=True)[:60]
    # GIF.
    f["gif89a_16_colours.gif"] = gif(16, 12)
    f["gif87a_2_colours.gif"] = gif(10, 10, ncolors=2, version=b"87a")
    f["gif_local_palette_interlaced.gif"] = gif(12, 9, ncolors=8, local=True, interlace=True)
    f["gif_256_colours_transparent.gif"] = gif(20, 14, ncolors=256, transparent=3)
    f["gif_animated_2_frames.gif"] = gif(8, 8, ncolors=4, frames=2)
    f["gif_truncated.gif"] = gif(16, 12)[:40]
    f["gif_screen_65535x65535.gif"] = gif(4, 4, screen=(65535, 65535))
    # PNM.
    f["pgm_p5_8bit.pgm"] = pnm(b"P5", 16, 12, 255, comment=True)
    f["pgm_p5_16bit.pgm"] = pnm(b"P5", 8, 8, 65535)
    f["pgm_p5_maxval_15.pgm"] = pnm(b"P5", 8, 6, 15)
    f["ppm_p6_8bit.ppm"] = pnm(b"P6", 12, 10, 255)
    f["ppm_p3_ascii_unsupported.ppm"] = pnm(b"P3", 4, 3, 255)
    f["pgm_declares_90000x90000.pgm"] = b"P5\n90000 90000\n255\n" + bytes(16)
    f["ppm_truncated.ppm"] = pnm(b"P6", 12, 10, 255)[:100]
    # PSD, HDR, Softimage PIC.
    f["psd_rgb_raw.psd"] = psd(10, 8)
    f["psd_rgba_rle.psd"] = psd(16, 10, channels=4, rle=True)
    f["psd_rgb_16bit.psd"] = psd(6, 5, depth=16)
    f["hdr_flat.hdr"] = hdr(6, 5, rle=False)
    f["hdr_rle.hdr"] = hdr(16, 8, rle=True)
    f["pic_softimage_rgba.pic"] = softimage_pic(8, 6)
    # Neither image nor anything.
    f["empty"] = b""
    f["one_byte"] = b"\x89"
    f["random_256_bytes"] = bytes(rng.randint(0, 255) for _ in range(256))
    f["text.txt"] = b"this is not an image\n"
    # TIFF (libtiff; last, so that the seeds above keep their random bytes):
    # depths, layouts, compressions, byte orders; the RGBA interface
    # (palette, bilevel); and broken ones.
    f["tiff_gray8_le.tif"] = tiff(16, 12)
    f["tiff_gray8_be_rps3.tif"] = tiff(15, 11, rps=3, big_endian=True)
    f["tiff_gray16_le.tif"] = tiff(12, 9, bps=16)
    f["tiff_gray16_be_deflate.tif"] = tiff(14, 10, bps=16, compression=8, big_endian=True)
    f["tiff_rgb8_packbits.tif"] = tiff(13, 9, spp=3, compression=32773, rps=4)
    f["tiff_rgb16_planar.tif"] = tiff(9, 7, spp=3, bps=16, planar=2, rps=2)
    f["tiff_rgba8_deflate.tif"] = tiff(10, 8, spp=4, compression=8)
    f["tiff_gray_alpha8.tif"] = tiff(8, 8, spp=2)
    f["tiff_float32_gray.tif"] = tiff(9, 6, bps=32, fmt=3)
    f["tiff_float32_rgb_be.tif"] = tiff(6, 5, spp=3, bps=32, fmt=3, big_endian=True)
    f["tiff_tiles16_gray8.tif"] = tiff(20, 18, tile=(16, 16))
    f["tiff_tiles16_rgb16_deflate.tif"] = tiff(17, 5, spp=3, bps=16, tile=(16, 16),
                                               compression=8)
    f["tiff_miniswhite8.tif"] = tiff(11, 7, photometric=0)
    f["tiff_orientation6.tif"] = tiff(7, 5, spp=3, orientation=6)
    f["tiff_palette8.tif"] = tiff(12, 8, photometric=3, colormap=True)
    f["tiff_palette8_orientation3.tif"] = tiff(12, 8, photometric=3, colormap=True,
                                               orientation=3)
    f["tiff_bilevel_1bit.tif"] = tiff(21, 6, bps=1, photometric=0)
    f["tiff_declares_100000x100000.tif"] = tiff(8, 8, override={256: [100000], 257: [100000],
                                                                278: [100000]})
    f["tiff_declares_30000x30000.tif"] = tiff(8, 8, override={256: [30000], 257: [30000],
                                                              278: [30000]})
    f["tiff_strip_offset_past_end.tif"] = tiff(16, 12, override={273: [1 << 30]})
    f["tiff_strip_bytecount_past_end.tif"] = tiff(16, 12, override={279: [1 << 20]})
    f["tiff_zero_strip_bytecount.tif"] = tiff(16, 12, compression=8, override={279: [0]})
    f["tiff_no_strip_offsets.tif"] = tiff(16, 12, drop=(273,))
    f["tiff_no_image_width.tif"] = tiff(16, 12, drop=(256,))
    f["tiff_ifd_offset_past_end.tif"] = b"II*\0" + struct.pack("<I", 1 << 20) + bytes(8)
    f["tiff_truncated_header.tif"] = b"MM\0*\0\0"
    f["tiff_truncated_data.tif"] = tiff(16, 12, cut=150)
    f["tiff_truncated_deflate.tif"] = tiff(24, 16, bps=16, compression=8, cut=200)
    f["tiff_tile_size_huge.tif"] = tiff(20, 18, tile=(16, 16),
                                        override={322: [1 << 15], 323: [1 << 15]})
    f["tiff_float16_unsupported.tif"] = tiff(4, 4, bps=16, fmt=3)
    f["tiff_signed8_unsupported.tif"] = tiff(4, 4, fmt=2)
    # PFM (no random bytes: the seeds above keep theirs).
    f["pfm_rgb_le.pfm"] = pfm(b"PF", 7, 5, -1.0)
    f["pfm_gray_be_scale.pfm"] = pfm(b"Pf", 9, 4, 2.5)
    f["pfm_rgb_special.pfm"] = pfm(b"PF", 3, 2, -1.0, special=True)
    f["pfm_truncated.pfm"] = pfm(b"PF", 7, 5, -1.0)[:-3]
    f["pfm_scale_zero.pfm"] = pfm(b"Pf", 4, 4, 0.0)
    f["pfm_declares_90000x90000.pfm"] = b"Pf\n90000 90000\n-1.0\n" + bytes(16)
    return f


# ---------------------------------------------------------------- TIFF

TIFF_FORMATS = {1: "B", 3: "H", 4: "I"}  # BYTE, SHORT, LONG


def tiff_samples(values, bps, fmt, e):
    """Pack sample values at 8, 16 (unsigned) or 32 bits (IEEE float)."""
    if bps == 8:
        return bytes(values)
    if bps == 16:
        return struct.pack(e + "%dH" % len(values), *values)
    return struct.pack(e + "%df" % len(values), *[v / 255.0 - 0.25 for v in values])


def tiff_bits(row):
    """Pack 0/1 values, most significant bit first, a row to whole bytes."""
    out = bytearray((len(row) + 7) // 8)
    for i, v in enumerate(row):
        if v:
            out[i // 8] |= 0x80 >> (i % 8)
    return bytes(out)


def tiff(w, h, spp=1, bps=8, fmt=1, photometric=None, compression=1, planar=1, tile=None,
         rps=None, big_endian=False, orientation=None, colormap=False, override=None,
         drop=(), cut=None):
    """A TIFF with its directory first, then the strips or tiles. `override`
    replaces tag values (tag -> list), `drop` leaves tags out, `cut` truncates
    the file: the broken seeds."""
    e = ">" if big_endian else "<"
    if photometric is None:
        photometric = 2 if spp >= 3 else 1
    maxval = 1 if bps == 1 else (1 << min(bps, 16)) - 1 if bps != 32 else 255
    rows = gradient(w, h, spp, maxval)
    if colormap:
        rows = [[v % (1 << bps) for v in r] for r in rows]

    def row_bytes(r):
        return tiff_bits(r) if bps == 1 else tiff_samples(r, bps, fmt, e)

    blocks = []
    planes = spp if planar == 2 else 1
    if tile:
        tw, th = tile
        for p in range(planes):
            for ty in range(0, h, th):
                for tx in range(0, w, tw):
                    out = b""
                    for y in range(ty, ty + th):
                        vals = []
                        for x in range(tx, tx + tw):
                            for c in range(spp if planes == 1 else 1):
                                inside = y < h and x < w
                                vals.append(rows[y][x * spp + (c if planes == 1 else p)]
                                            if inside else 0)
                        out += row_bytes(vals)
                    blocks.append(out)
    else:
        rps = rps or h
        for p in range(planes):
            for y0 in range(0, h, rps):
                out = b""
                for y in range(y0, min(h, y0 + rps)):
                    r = rows[y] if planes == 1 else rows[y][p::spp]
                    out += (packbits(row_bytes(r)) if compression == 32773 else row_bytes(r))
                blocks.append(out)
    if compression == 8:
        blocks = [zlib.compress(b) for b in blocks]
    tags = {256: (4, [w]), 257: (4, [h]), 258: (3, [bps] * spp), 259: (3, [compression]),
            262: (3, [photometric]), 277: (3, [spp]), 284: (3, [planar]),
            339: (3, [fmt] * spp)}
    if tile:
        tags[322] = (3, [tile[0]])
        tags[323] = (3, [tile[1]])
    else:
        tags[278] = (4, [rps])
    if orientation:
        tags[274] = (3, [orientation])
    if spp in (2, 4):
        tags[338] = (3, [2])  # unassociated alpha
    if colormap:
        n = 1 << bps
        tags[320] = (3, [(i * 40503 + k * 9000) & 0xFFFF for k in range(3) for i in range(n)])
    off_tag, count_tag = (324, 325) if tile else (273, 279)
    tags[off_tag] = (4, [0] * len(blocks))
    tags[count_tag] = (4, [len(b) for b in blocks])
    for t in drop:
        tags.pop(t, None)

    def build():
        ifd_len = 2 + 12 * len(tags) + 4
        extra_at = 8 + ifd_len
        ifd, extra = b"", b""
        for tag in sorted(tags):
            typ, vals = tags[tag]
            data = struct.pack(e + "%d%s" % (len(vals), TIFF_FORMATS[typ]), *vals)
            if len(data) <= 4:
                field = data + bytes(4 - len(data))
            else:
                field = struct.pack(e + "I", extra_at + len(extra))
                extra += data + bytes(len(data) & 1)
            ifd += struct.pack(e + "HHI", tag, typ, len(vals)) + field
        head = (b"MM\0*" if big_endian else b"II*\0") + struct.pack(e + "I", 8)
        return head + struct.pack(e + "H", len(tags)) + ifd + struct.pack(e + "I", 0) + extra

    data_at = len(build())
    offsets, at = [], data_at
    for b in blocks:
        offsets.append(at)
        at += len(b)
    if off_tag not in drop:
        tags[off_tag] = (4, offsets)
    for t, vals in (override or {}).items():
        tags[t] = (tags[t][0] if t in tags else 4, vals)
    out = build()
    out += bytes(max(0, data_at - len(out)))  # an override may not shrink the directory
    out = out[:data_at] + b"".join(blocks)
    return out[:cut] if cut else out


ARGS = {
    "input_only": ["photo.png"],
    "equalize_and_csv_stdout": ["photo.png", "--equalize", "out.png", "--csv", "-"],
    "equals_forms": ["--csv=hist.csv", "--equalize=eq.png", "in.jpg"],
    "backend_cpu": ["--backend", "cpu", "in.png"],
    "backend_cuda_stdin_verbose": ["--backend=cuda", "-v", "-"],
    "backend_bad": ["--backend=gpu", "x.png"],
    "max_pixels": ["--max-pixels", "1000000", "a.png", "--quiet"],
    "max_pixels_zero": ["--max-pixels=0", "a.png"],
    "max_pixels_negative": ["--max-pixels=-5", "a.png"],
    "max_pixels_overflow": ["--max-pixels=18446744073709551616", "a.png"],
    "max_pixels_trailing": ["--max-pixels", "12abc", "a.png"],
    "double_dash": ["--verbose", "--", "-weird.png"],
    "equalize_to_stdout": ["-", "--equalize", "-"],
    "two_inputs": ["a.png", "b.png"],
    "quiet_and_verbose": ["-q", "-v", "a.png"],
    "help": ["--help"],
    "help_short_with_input": ["-h", "x.png", "--backend=auto"],
    "version": ["--version"],
    "no_arguments": [],
    "missing_value": ["a.png", "--equalize"],
    "empty_equals_value": ["--csv=", "a.png"],
    "empty_value": ["--csv", "", "a.png"],
    "same_output_twice": ["--equalize=same.png", "--csv=same.png", "a.png"],
    "unknown_options": ["-x", "--equalizer", "out.png"],
    "empty_input": ["", "--backend", "auto"],
}


def write_dir(path, files, sep=None):
    os.makedirs(path, exist_ok=True)
    for name in os.listdir(path):
        if not name.startswith(".") and name != "README.md":
            os.remove(os.path.join(path, name))
    for name in sorted(files):
        data = files[name]
        with open(os.path.join(path, name), "wb") as fp:
            fp.write(data)


def main():
    load = load_corpus()
    too_big = [n for n, d in load.items() if len(d) > MAX_SEED_BYTES]
    if too_big:
        sys.exit("make_corpus: seeds over %d bytes: %s" % (MAX_SEED_BYTES, ", ".join(too_big)))
    write_dir(LOAD_DIR, load)
    args = {n: b"".join(a.encode() + b"\n" for a in v) for n, v in ARGS.items()}
    # One list separated by NULs instead of newlines.
    args["nul_separated"] = b"a.png\0--quiet\0--backend\0auto\0"
    write_dir(ARGS_DIR, args)
    print("make_corpus: %d load seeds (%d bytes), %d argument lists" %
          (len(load), sum(map(len, load.values())), len(args)))


if __name__ == "__main__":
    main()

"""imghist's TGA reader (src/io/decode_tga.c) through imghist.load, against
Pillow, on files written here byte by byte: every image type (colour-mapped,
truecolour, gray; raw and run-length), depth, origin corner, colour maps that
start at an index other than 0, run-length packets that cross rows; and the
files it must refuse."""
import io
import struct

import numpy as np
import pytest

import imghist

try:
    from PIL import Image
except ImportError:  # pragma: no cover
    Image = None

needs_pil = pytest.mark.skipif(Image is None, reason="python3-pil is missing")


def header(kind, w, h, bits, desc, map_first=0, map_len=0, map_bits=0, id_len=0):
    return struct.pack("<BBBHHBHHHHBB", id_len, 1 if map_len else 0, kind, map_first, map_len,
                       map_bits, 0, 0, w, h, bits, desc)


def rle_packets(pixels, rng, row=None):
    """Stored pixels (a list of byte strings) as run-length packets: runs of
    equal pixels as repeat packets, the rest as raw ones, lengths up to 128;
    packets end at rows of `row` pixels when given (TGA 2.0 asks for that,
    and Pillow 9.4 needs it), else they cross rows (older writers do)."""
    if row is not None:
        return b"".join(rle_packets(pixels[i:i + row], rng) for i in range(0, len(pixels), row))
    out, i = bytearray(), 0
    while i < len(pixels):
        j = i
        while j + 1 < len(pixels) and pixels[j + 1] == pixels[i] and j + 1 - i < 127:
            j += 1
        if j > i:
            out.append(0x80 | (j - i))
            out += pixels[i]
            i = j + 1
            continue
        n = min(int(rng.integers(1, 129)), len(pixels) - i)
        out.append(n - 1)
        for p in pixels[i:i + n]:
            out += p
        i += n
    return bytes(out)


def make(rng, kind, bits, w, h, desc, map_bits=24, map_first=0, runs=False, id_len=0,
         cross=False):
    """A TGA file with random pixels (long runs in them when runs is set);
    run-length packets cross rows when cross is set."""
    base = kind & 7
    n = w * h
    cmap = b""
    map_len = 0
    if base == 1:
        map_len = int(rng.integers(2, 40))
        eb = (map_bits + 7) // 8
        cmap = rng.integers(0, 256, map_len * eb, dtype=np.uint8).tobytes()
        idx = rng.integers(map_first, map_first + map_len, n)
        if runs:
            idx[: n // 2] = idx[0]  # a long run, across rows
        pix = [struct.pack("<B" if bits == 8 else "<H", int(v)) for v in idx]
    else:
        pb = (bits + 7) // 8
        raw = rng.integers(0, 256, (n, pb), dtype=np.uint8)
        if runs:
            raw[: n // 2] = raw[0]
            raw[n // 2 + 3: n // 2 + 9] = raw[n // 2 + 3]
        pix = [r.tobytes() for r in raw]
    data = rle_packets(pix, rng, None if cross else w) if kind >= 9 else b"".join(pix)
    ident = bytes(range(id_len))
    return (header(kind, w, h, bits, desc, map_first, map_len, map_bits if base == 1 else 0, id_len)
            + ident + cmap + data)


def pil_pixels(data):
    im = Image.open(io.BytesIO(data))
    if im.mode == "P":
        im = im.convert("RGB")
    return np.asarray(im)


CASES = [
    # kind, bits, map_bits
    (1, 8, 24), (1, 8, 16), (9, 8, 24), (9, 8, 16),
    (2, 16, 0), (2, 24, 0), (2, 32, 0), (10, 16, 0), (10, 24, 0), (10, 32, 0),
    (3, 8, 0), (11, 8, 0), (3, 16, 0), (11, 16, 0),
]


@needs_pil
@pytest.mark.parametrize("kind,bits,map_bits", CASES)
@pytest.mark.parametrize("desc", [0x00, 0x10, 0x20, 0x30])
def test_tga_against_pillow(rng, kind, bits, map_bits, desc):
    for w, h, first, runs, id_len in ((13, 7, 0, False, 0), (1, 1, 0, False, 3),
                                      (29, 11, 5, True, 0), (64, 3, 0, True, 255)):
        if kind & 7 != 1 and first:
            continue
        alpha_bits = 8 if bits == 32 or (kind & 7 == 3 and bits == 16) else 0
        data = make(rng, kind, bits, w, h, desc | alpha_bits, map_bits, first, runs, id_len)
        want = pil_pixels(data)
        if kind & 7 == 2 and bits == 16 and want.ndim == 3 and want.shape[2] == 4:
            want = want[..., :3]  # Pillow 10 and later: the attribute bit as alpha
        got = imghist.load(data, channels=True)
        if got.ndim == 3 and got.shape[2] == 1:
            got = got[..., 0]
        assert got.shape == want.shape, (kind, bits, desc, w, h)
        assert np.array_equal(got, want), (kind, bits, desc, w, h, first, runs)


@pytest.mark.parametrize("kind,bits,map_bits", [c for c in CASES if c[0] >= 9])
def test_tga_packets_across_rows(kind, bits, map_bits):
    """Packets that cross rows decode as the same pixels stored raw."""
    for seed in range(4):
        a = make(np.random.default_rng(seed), kind, bits, 23, 9, 0x20, map_bits, 0, True,
                 cross=True)
        b = make(np.random.default_rng(seed), kind - 8, bits, 23, 9, 0x20, map_bits, 0, True)
        assert np.array_equal(imghist.load(a, channels=True), imghist.load(b, channels=True))


def test_tga_32_bit_colour_map(rng):
    """Pillow 9.4 cannot read 32-bit colour maps; the entries are B, G, R, A."""
    cmap = bytes([1, 2, 3, 4, 5, 6, 7, 8])
    data = header(1, 2, 1, 8, 0x20, map_len=2, map_bits=32) + cmap + bytes([1, 0])
    got = imghist.load(data, channels=True)
    assert got.tolist() == [[[7, 6, 5, 8], [3, 2, 1, 4]]]


def test_tga_16_bit_indices():
    """Pillow 9.4 cannot read 16-bit indices; entry i - first, B, G, R."""
    cmap = bytes([10, 20, 30, 40, 50, 60])
    data = (header(9, 3, 1, 16, 0x30, map_first=300, map_len=2, map_bits=24) + cmap +
            bytes([0x81, 0x2d, 0x01, 0x00, 0x2c, 0x01]))  # run of 2 x 301, then 300
    got = imghist.load(data, channels=True)
    # right to left: stored [301, 301, 300] -> [300, 301, 301]
    assert got.tolist() == [[[30, 20, 10], [60, 50, 40], [60, 50, 40]]]


def test_tga_refusals(rng):
    good = make(rng, 10, 24, 9, 5, 0x20, runs=True)
    imghist.load(good)
    for cut in range(18, len(good)):
        with pytest.raises(imghist.ImghistError, match="TGA"):
            imghist.load(good[:cut])
    cmap = bytes(range(6))
    bad_index = header(1, 2, 1, 8, 0x20, map_first=4, map_len=2, map_bits=24) + cmap + bytes([4, 6])
    with pytest.raises(imghist.ImghistError, match="outside the colour map"):
        imghist.load(bad_index)
    below = header(1, 1, 1, 8, 0x20, map_first=4, map_len=2, map_bits=24) + cmap + bytes([3])
    with pytest.raises(imghist.ImghistError, match="outside the colour map"):
        imghist.load(below)
    short_map = header(1, 1, 1, 8, 0x20, map_len=200, map_bits=24) + cmap + bytes([0])
    with pytest.raises(imghist.ImghistError, match="colour map ends early"):
        imghist.load(short_map)

"""imghist's GIF reader (src/io/decode_gif.c, giflib) through imghist.load,
against Pillow, on files written here byte by byte: transparent pixels keep
their palette colour, pixels outside the first frame take the background
colour, local colour maps, interlaced rows, later frames ignored; and the
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


def lzw(indices, min_code):
    """LZW data that never grows the code table: each index its own code,
    with a clear code whenever the next entry would widen the codes."""
    clear, end = 1 << min_code, (1 << min_code) + 1
    size = min_code + 1
    codes, since = [clear], 0
    for v in indices:
        codes.append(int(v))
        since += 1
        if since == (1 << size) - (1 << min_code) - 3:
            codes.append(clear)
            since = 0
    codes.append(end)
    acc = nbits = 0
    out = bytearray()
    for c in codes:
        acc |= c << nbits
        nbits += size
        while nbits >= 8:
            out.append(acc & 0xFF)
            acc >>= 8
            nbits -= 8
    if nbits:
        out.append(acc & 0xFF)
    return bytes(out)


def blocks(data):
    out = bytearray()
    for i in range(0, len(data), 255):
        out.append(len(data[i:i + 255]))
        out += data[i:i + 255]
    return bytes(out) + b"\0"


def table(colours):
    bits = max(1, (len(colours) - 1).bit_length())
    return bits, bytes(np.asarray(colours, np.uint8).ravel()) + bytes(3 * ((1 << bits) - len(colours)))


def frame(rect, indices, local=None, interlace=False, transparent=None, min_code=None):
    x, y, w, h = rect
    out = bytearray()
    if transparent is not None:
        out += b"\x21\xf9\x04\x01\x00\x00" + bytes([transparent]) + b"\x00"
    flags = 0x40 if interlace else 0
    lt = b""
    if local is not None:
        bits, lt = table(local)
        flags |= 0x80 | (bits - 1)
    rows = np.asarray(indices).reshape(h, w)
    if interlace:
        rows = np.concatenate([rows[0::8], rows[4::8], rows[2::4], rows[1::2]])
    out += b"," + struct.pack("<HHHHB", x, y, w, h, flags) + lt
    mc = min_code or 8
    out += bytes([mc]) + blocks(lzw(rows.ravel(), mc))
    return bytes(out)


def gif(size, colours, bg, frames, comment=True):
    bits, gt = table(colours)
    out = b"GIF89a" + struct.pack("<HHBBB", size[0], size[1], 0x80 | 0x70 | (bits - 1), bg, 0) + gt
    if comment:
        out += b"\x21\xfe" + blocks(b"written by test_gif.py")
    return out + b"".join(frames) + b";"


def pil_rgb(data):
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


@needs_pil
def test_gif_full_frames_against_pillow(rng):
    for n, (w, h) in ((2, (1, 1)), (16, (37, 21)), (256, (64, 48)), (5, (9, 17))):
        colours = rng.integers(0, 256, (n, 3))
        for interlace in (False, True):
            for transparent in (None, int(rng.integers(0, n))):
                idx = rng.integers(0, n, w * h)
                data = gif((w, h), colours, 0, [frame((0, 0, w, h), idx, interlace=interlace,
                                                      transparent=transparent)])
                got = imghist.load(data, channels=True)
                assert np.array_equal(got, pil_rgb(data)), (n, w, h, interlace, transparent)


@needs_pil
def test_gif_local_map_and_later_frames(rng):
    colours = rng.integers(0, 256, (4, 3))
    local = rng.integers(0, 256, (8, 3))
    first = frame((0, 0, 10, 6), rng.integers(0, 8, 60), local=local)
    second = frame((0, 0, 10, 6), rng.integers(0, 4, 60))
    data = gif((10, 6), colours, 1, [first, second])
    assert np.array_equal(imghist.load(data, channels=True), pil_rgb(data))


def test_gif_outside_the_first_frame_is_background(rng):
    """Pillow 9.4 fills the uncovered screen with index 0 or the transparent
    index; imghist with the background colour, as GIF defines it."""
    colours = rng.integers(0, 256, (4, 3))
    idx = rng.integers(0, 4, 3 * 2)
    for transparent in (None, 2):
        data = gif((7, 5), colours, 3, [frame((2, 1, 3, 2), idx, transparent=transparent)])
        got = imghist.load(data, channels=True)
        want = np.empty((5, 7, 3), np.uint8)
        want[...] = colours[3]
        want[1:3, 2:5] = colours[idx.reshape(2, 3)]
        assert np.array_equal(got, want)
    # a frame reaching past the screen is cut to it
    data = gif((4, 3), colours, 0, [frame((2, 1, 5, 4), rng.integers(0, 4, 20))])
    assert imghist.load(data, channels=True).shape == (3, 4, 3)


def test_gif_refusals(rng):
    colours = rng.integers(0, 256, (4, 3))
    good = gif((9, 7), colours, 0, [frame((0, 0, 9, 7), rng.integers(0, 4, 63))], comment=False)
    imghist.load(good)
    for cut in range(0, len(good) - 1):
        with pytest.raises(imghist.ImghistError):
            imghist.load(good[:cut])
    # indices 4..7 with a 4-colour map (min code size 3)
    bad = gif((3, 1), colours, 0, [frame((0, 0, 3, 1), [0, 6, 1], min_code=3)])
    with pytest.raises(imghist.ImghistError, match="outside the colour map"):
        imghist.load(bad)
    none = gif((2, 2), colours, 0, [])
    with pytest.raises(imghist.ImghistError, match="no image"):
        imghist.load(none)

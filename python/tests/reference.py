"""Independent references for the tests, from NumPy and the documented rules."""
import numpy as np


def hist(x, bins, lo, hi):
    """numpy.histogram of x's finite samples over [lo, hi] (float32 data as
    float32, the rest as float64), with the below/above/nan counters
    against NumPy's own first and last edges."""
    a = np.asarray(x).ravel()
    if a.dtype != np.float32:
        a = a.astype(np.float64)
    fin = a[np.isfinite(a)]
    want, edges = np.histogram(fin, bins=bins, range=(lo, hi))
    extra = np.array([np.count_nonzero(a < edges[0]), np.count_nonzero(a > edges[-1]),
                      np.count_nonzero(np.isnan(a))])
    return want.astype(np.int64), extra


def natural(x, levels):
    return np.bincount(np.asarray(x).ravel(), minlength=levels).astype(np.int64)


def opencv_lut(h, levels=256):
    """cv2.equalizeHist's table for `levels` levels (imghist_equalize_lut and
    imghist_equalize_lut_u16): single-precision scale, round half to even."""
    h = np.asarray(h, dtype=np.int64)
    nz = np.nonzero(h)[0]
    f = nz[0]
    total = int(h.sum())
    if h[f] == total:  # one value counted: the identity
        return np.arange(levels, dtype=np.uint8 if levels == 256 else np.uint16)
    scale = np.float32(levels - 1) / np.float32(total - h[f])
    c = np.cumsum(h) - np.cumsum(h)[f]
    c[: f + 1] = 0
    v = np.rint(c.astype(np.float32) * scale)
    v = np.minimum(v, levels - 1)
    return v.astype(np.uint8 if levels == 256 else np.uint16)


def pil_lut(h):
    """Pillow's ImageOps.equalize table for one band (torchvision's rule)."""
    h = [int(v) for v in h]
    nonzero = [v for v in h if v]
    if len(nonzero) <= 1:
        return np.arange(256, dtype=np.uint8)
    step = (sum(nonzero) - nonzero[-1]) // 255
    if not step:
        return np.arange(256, dtype=np.uint8)
    n = step // 2
    lut = []
    for i in range(256):
        lut.append(min(255, n // step))
        n += h[i]
    return np.array(lut, dtype=np.uint8)


def equalize(x, method="opencv", mask=None):
    x = np.asarray(x)
    levels = 256 if x.dtype == np.uint8 else 65536
    sel = x if mask is None else x[np.asarray(mask) != 0]
    h = natural(sel, levels)
    lut = pil_lut(h) if method == "pil" else opencv_lut(h, levels)
    return lut[x]


def mutual_information(joint):
    j = np.asarray(joint, dtype=np.float64)
    p = j / j.sum()

    def H(q):
        q = q[q > 0]
        return float(-(q * np.log2(q)).sum())

    ha, hb, hab = H(p.sum(axis=1)), H(p.sum(axis=0)), H(p.ravel())
    return np.array([ha + hb - hab, 2.0 if hab == 0 else (ha + hb) / hab])


def floats(rng, shape):
    """float32 samples with two NaN, +inf and -inf among them."""
    x = (rng.standard_normal(shape) * 100).astype(np.float32)
    flat = x.reshape(-1)
    flat[:4] = [np.nan, np.inf, -np.inf, np.nan]
    rng.shuffle(flat)
    return x

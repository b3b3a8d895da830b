#!/usr/bin/env python3
"""imghist's Python package against the PyTorch-side peers, on the GPU.

    python3 bench/bench_python.py --out DIR [--runs 15] [--shapes 256x640x480,...]
    python3 bench/bench_python.py --dry-run --out DIR     (CPU smoke test, NumPy)

In one run, on the same device tensors (uint8, CUDA, made once per shape):

- equalize: imghist.equalize(batch) with method "opencv" and "pil" (one
  batched call each; also with out= given), torchvision v2
  functional.equalize, kornia enhance.equalize (it takes float in [0, 1]: it
  is timed on a float32 copy made beforehand, 4 bytes a pixel, while GB/s
  counts the uint8 bytes like every row), cuCIM skimage.exposure.equalize_hist
  (one call per image on CuPy views of the same memory, through DLPack; its
  output is float64) and CV-CUDA histogrameq if it imports;
- histogram: imghist.histogram(batch) against torch.bincount per image (a
  loop, stacked to (N, 256)), one batched scatter_add_, one batched bincount
  of offset values (value + 256 * image, int32) and torch.histc per image;
- the ceilings of the same run: the time to read the batch (a CuPy raw kernel
  of 16-byte loads writing one word per block, at several grid sizes, and
  torch.sum over an int64 view: the fastest counts) and to copy it
  (dst.copy_(src)). The equalize reference is read twice + write once =
  read + copy; the histogram reference is one read;
- the Python call's own cost on a 1x1 device tensor (median per call, host
  clock, over many calls, with and without torch.cuda.synchronize() in the
  loop), with torch.bincount and torchvision's equalize beside it.

Correctness comes first: every imghist result is checked before it is timed
(opencv: cv2.equalizeHist on a CPU copy of each image, or of a sample of
--check-max images; pil: torchvision's output, the whole batch bit for bit;
histograms: torch.bincount of each image). A mismatch is printed loudly and
the row marked MISMATCH; one of imghist's makes the exit status 3 (a peer's
is reported the same way but does not change the status).

Timing: each call after --warmup warm-up calls; before each timed call a
256 MB buffer is written (flushing L2); CUDA events (torch.cuda.Event on the
current stream) are recorded around the call. Each sample is taken twice:
"ms" with the call made while the flush still runs (the GPU's time for the
call when the host keeps ahead, as in a pipeline, and the way the C
benchmark bench_batch times the C call), and "ms, GPU idle before" with the
GPU synchronised first, so that the host's time up to the first launch (the
binding's work, launch latency, a peer's own synchronisation) counts too.
Median of --runs (>= 10) calls; the JSON has every sample. Ratios: imghist/peer is imghist's time over the peer's (below 1:
imghist is faster), x ref is the row's time over the reference's.

Peers that do not import give "not installed" rows, errors give "error"
rows; nothing crashes the run. Outputs: DIR/bench_python.md (the table and the
Python package's targets marked met or missed) and DIR/bench_python.json.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import traceback

SHAPES = [(256, 640, 480), (1024, 224, 224), (64, 1920, 1080), (16, 4000, 3000), (1, 4000, 3000)]
DRY_SHAPES = [(6, 64, 48), (1, 40, 30)]
MIB = 1 << 20

IMG_OPENCV = "imghist (opencv)"
IMG_PIL = "imghist (pil)"
IMG_HIST = "imghist"

mismatches = []  # (text, is imghist's)


def log(*a):
    print(*a, flush=True)


def loud(msg, mine=True):
    bar = "!" * 78
    text = f"\n{bar}\n!!! MISMATCH: {msg}\n{bar}\n"
    print(text, flush=True)
    print(text, file=sys.stderr, flush=True)
    mismatches.append((msg, mine))


def short(e):
    s = f"{type(e).__name__}: {e}".replace("\n", " ").replace("|", "/")
    return s if len(s) <= 160 else s[:157] + "..."


def shape_str(s):
    return "x".join(str(v) for v in s)


class NotInstalled(Exception):
    pass


def try_import(name):
    """(module, version) or (None, reason)."""
    try:
        mod = __import__(name, fromlist=["_"])
    except Exception as e:  # ImportError, or a library failing to load
        return None, f"not installed ({short(e)})"
    return mod, str(getattr(mod, "__version__", "?"))


def need(mod, what):
    if mod is None:
        raise NotInstalled(f"{what} not installed")
    return mod


# --------------------------------------------------------------------------
# Reference rules in NumPy (for the dry run's peers, and to describe what
# each method means): OpenCV's cv::equalizeHist and PIL's ImageOps.equalize.

def np_lut_opencv(np, hist):
    total = int(hist.sum())
    nz = np.flatnonzero(hist)
    lut = np.zeros(256, np.uint8)
    if total == 0:
        return lut
    i = int(nz[0])
    if int(hist[i]) == total:
        lut[:] = i
        return lut
    scale = np.float32(255.0) / np.float32(total - int(hist[i]))
    s = np.cumsum(hist[i + 1:].astype(np.int64))
    v = np.rint(s.astype(np.float32) * scale)
    lut[i + 1:] = np.clip(v, 0, 255).astype(np.uint8)
    return lut


def np_lut_pil(np, hist):
    nz = np.flatnonzero(hist)
    ident = np.arange(256, dtype=np.uint8)
    if nz.size == 0:
        return ident
    step = (int(hist.sum()) - int(hist[nz[-1]])) // 255
    if step == 0:
        return ident
    n = step // 2 + np.concatenate(([0], np.cumsum(hist[:-1].astype(np.int64))))
    return np.clip(n // step, 0, 255).astype(np.uint8)


def np_equalize(np, x, rule):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        h = np.bincount(x[i].ravel(), minlength=256)
        out[i] = rule(np, h)[x[i]]
    return out


# --------------------------------------------------------------------------
# Clocks

class CudaClock:
    """CUDA events around one call on an idle GPU with a flushed L2."""

    def __init__(self, torch, flush_mib):
        self.torch = torch
        self.flush_buf = torch.empty(flush_mib * MIB, dtype=torch.uint8, device="cuda")
        self.k = 0
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)

    def sync(self):
        self.torch.cuda.synchronize()

    def flush(self):
        self.k = (self.k + 1) & 0xFF
        self.flush_buf.fill_(self.k)

    def _timed(self, fn, idle):
        self.flush()
        if idle:
            self.sync()
        self.start.record()
        fn()
        self.end.record()
        self.end.synchronize()
        return self.start.elapsed_time(self.end)

    def one(self, fn):
        """(queued, idle) ms of one call. queued: the call is made while the
        flush still runs, as in a pipeline that keeps the GPU busy, so the
        events time the GPU's work (and any host work the GPU waits for);
        idle: the GPU is synchronised first, so the call's host time up to
        its first launch counts too (skipped, = queued, over 20 ms)."""
        queued = self._timed(fn, False)
        return queued, (queued if queued > 20.0 else self._timed(fn, True))


class CpuClock:
    """The dry run's clock: wall time of one call (no GPU)."""

    def __init__(self, np, flush_mib):
        self.flush_buf = np.zeros(flush_mib * MIB, np.uint8)
        self.k = 0

    def sync(self):
        pass

    def flush(self):
        self.k = (self.k + 1) & 0xFF
        self.flush_buf.fill(self.k)

    def one(self, fn):
        self.flush()
        t0 = time.perf_counter()
        fn()
        t = (time.perf_counter() - t0) * 1e3
        return t, t


def time_calls(clock, fn, args):
    """Warm up, then time args.runs calls; fewer (not under args.min_runs)
    when the warm-up says they would take more than args.max_op_seconds."""
    t0 = time.perf_counter()
    for _ in range(args.warmup):
        fn()
    clock.sync()
    per = (time.perf_counter() - t0) / max(args.warmup, 1)
    runs = args.runs
    if per * runs > args.max_op_seconds:
        runs = max(args.min_runs, int(args.max_op_seconds / max(per, 1e-9)))
    pairs = [clock.one(fn) for _ in range(runs)]
    return [q for q, _ in pairs], [i for _, i in pairs]


# --------------------------------------------------------------------------
# Rows

def make_row(shape, op, impl, nbytes, times=None, status="ok", check="", note="", idle=None):
    r = {"shape": shape_str(shape), "images": shape[0], "bytes": nbytes, "op": op, "impl": impl,
         "status": status, "check": check, "note": note, "times_ms": times or []}
    if times:
        r["ms"] = statistics.median(times)
        r["min_ms"] = min(times)
        r["max_ms"] = max(times)
        r["runs"] = len(times)
        r["gbps"] = nbytes / (r["ms"] * 1e-3) / 1e9
    if idle:
        r["idle_ms"] = statistics.median(idle)
        r["idle_times_ms"] = idle
    return r


def run_impls(clock, args, shape, op, nbytes, impls, rows):
    """impls: list of (name, setup) where setup() returns (fn, check, note):
    fn() runs the call and returns its result, check(result) returns
    (True|False|None, text). Every row is checked before it is timed."""
    for name, setup in impls:
        log(f"  {op:9s} {name} ...")
        try:
            fn, check, note = setup()
        except NotInstalled as e:
            rows.append(make_row(shape, op, name, nbytes, status="not installed", note=str(e)))
            continue
        except Exception as e:
            traceback.print_exc()
            rows.append(make_row(shape, op, name, nbytes, status="error", note=short(e)))
            continue
        try:
            res = fn()
            clock.sync()
            ok, text = check(res) if check else (None, "")
            del res
        except Exception as e:
            traceback.print_exc()
            rows.append(make_row(shape, op, name, nbytes, status="error", note=short(e)))
            continue
        mark = {True: "ok", False: "MISMATCH", None: "-"}[ok]
        if ok is False:
            loud(f"{shape_str(shape)} {op} {name}: {text}", name.startswith("imghist"))
        if text:
            mark = f"{mark} ({text})"
        try:
            times, idle = time_calls(clock, fn, args)
        except Exception as e:
            traceback.print_exc()
            rows.append(make_row(shape, op, name, nbytes, status="error", check=mark,
                                 note=short(e)))
            continue
        rows.append(make_row(shape, op, name, nbytes, times, check=mark, note=note, idle=idle))
        log(f"      {statistics.median(times):.4f} ms  check {mark}")


def reference_rows(shape, nbytes, ceil_rows):
    """The references from the ceilings: histogram = the fastest read,
    equalize = that read + the copy (read twice, write once)."""
    reads = [r for r in ceil_rows if r["impl"].startswith("read") and "ms" in r]
    copy = [r for r in ceil_rows if r["impl"] == "copy" and "ms" in r]
    if not reads:
        return []
    best = min(reads, key=lambda r: r["ms"])
    out = [make_row(shape, "ceiling", "ref histogram = read", nbytes, best["times_ms"],
                    note=f"fastest read: {best['impl']}")]
    if copy:
        r = make_row(shape, "ceiling", "ref equalize = read + copy", nbytes,
                     [best["ms"] + copy[0]["ms"]], note="read twice + write once")
        r["times_ms"] = []
        out.append(r)
    return out


def add_ratios(rows):
    """imghist/peer and x ref for each row of a shape."""
    by_shape = {}
    for r in rows:
        by_shape.setdefault(r["shape"], []).append(r)
    for rs in by_shape.values():
        def ms_of(op, impl):
            for r in rs:
                if r["op"] == op and r["impl"] == impl and "ms" in r:
                    return r["ms"]
            return None
        base = {"equalize": ms_of("equalize", IMG_OPENCV), "histogram": ms_of("histogram", IMG_HIST)}
        ref = {"equalize": ms_of("ceiling", "ref equalize = read + copy"),
               "histogram": ms_of("ceiling", "ref histogram = read")}
        for r in rs:
            if "ms" not in r:
                continue
            op = r["op"]
            if op in base and base[op] and not r["impl"].startswith("imghist"):
                r["imghist_over_peer"] = base[op] / r["ms"]
            if op in ref and ref[op]:
                r["x_ref"] = r["ms"] / ref[op]


def fmt(v, spec):
    return "" if v is None else format(v, spec)


def table(rows):
    head = ("| shape | op | impl | ms (median) | GB/s | ms, GPU idle before | imghist/peer | x ref "
            "| check | note |\n|---|---|---|---|---|---|---|---|---|---|\n")
    lines = []
    for r in rows:
        if "ms" in r:
            t, g = fmt(r["ms"], ".4f"), fmt(r["gbps"], ".1f")
        else:
            t, g = r["status"], ""
        lines.append(f"| {r['shape']} | {r['op']} | {r['impl']} | {t} | {g} | "
                     f"{fmt(r.get('idle_ms'), '.4f')} | "
                     f"{fmt(r.get('imghist_over_peer'), '.3f')} | {fmt(r.get('x_ref'), '.3f')} | "
                     f"{r['check']} | {r['note']} |")
    return head + "\n".join(lines) + "\n"


# --------------------------------------------------------------------------
# The Python package's speed targets

def targets(rows, overhead, dry):
    out = []

    def add(what, verdict, detail):
        out.append({"target": what, "verdict": verdict, "detail": detail})

    shapes = []
    for r in rows:
        if r["shape"] not in shapes:
            shapes.append(r["shape"])

    def get(shape, op, impl):
        for r in rows:
            if r["shape"] == shape and r["op"] == op and r["impl"] == impl:
                return r
        return None

    def peers(shape, op):
        return [r for r in rows if r["shape"] == shape and r["op"] == op and "ms" in r
                and not r["impl"].startswith("imghist")]

    for op, mine in (("equalize", IMG_OPENCV), ("histogram", IMG_HIST)):
        for s in shapes:
            me = get(s, op, mine)
            ps = peers(s, op)
            if not me or "ms" not in me or not ps:
                add(f"{op} {s}: faster than every peer", "n/a", "no imghist time or no peer")
                continue
            best = min(ps, key=lambda r: r["ms"])
            ok = me["ms"] < best["ms"]
            add(f"{op} {s}: faster than every peer", "met" if ok else "MISSED",
                f"imghist {me['ms']:.4f} ms, fastest peer {best['impl']} {best['ms']:.4f} ms "
                f"(x{best['ms'] / me['ms']:.2f})")
    s = "256x640x480"
    me, tv = get(s, "equalize", IMG_OPENCV), get(s, "equalize", "torchvision v2 equalize")
    if me and tv and "ms" in me and "ms" in tv:
        sp = tv["ms"] / me["ms"]
        add(f"equalize {s}: >= 10x torchvision", "met" if sp >= 10 else "MISSED", f"x{sp:.2f}")
    else:
        add(f"equalize {s}: >= 10x torchvision", "n/a", "not measured")
    for s in shapes:
        me = get(s, "equalize", IMG_OPENCV)
        if not me or me["bytes"] < 64 * MIB or "x_ref" not in me:
            continue
        add(f"equalize {s} (>= 64 MiB): <= 1.5 x (read + copy)",
            "met" if me["x_ref"] <= 1.5 else "MISSED", f"{me['x_ref']:.3f} x")
    for s in shapes:
        me = get(s, "histogram", IMG_HIST)
        if not me or me["bytes"] < 64 * MIB or "x_ref" not in me:
            continue
        pct = 100.0 / me["x_ref"]
        add(f"histogram {s} (>= 64 MiB): >= 80 % of the read ceiling",
            "met" if pct >= 80 else "MISSED", f"{pct:.1f} %")
    for o in overhead:
        if o["impl"].startswith("imghist") and "host_us" in o:
            add(f"Python call overhead, {o['impl']}: <= 15 us per call (host)",
                "met" if o["host_us"] <= 15 else "MISSED", f"{o['host_us']:.1f} us")
    img_rows = [r for r in rows if r["impl"].startswith("imghist") and r["op"] in
                ("equalize", "histogram")]
    bad = [r for r in img_rows if r["check"].startswith("MISMATCH")]
    good = [r for r in img_rows if r["check"].startswith("ok")]
    not_run = [r for r in img_rows if r["status"] != "ok" and not r["check"]]
    unchecked = len(img_rows) - len(bad) - len(good) - len(not_run)
    add("results bit-identical (opencv vs cv2, pil vs torchvision, histograms vs bincount)",
        "MISSED" if bad else ("met" if good and not unchecked and not not_run else "n/a"),
        f"{len(good)} rows checked ok, {len(bad)} mismatched, {unchecked} unchecked, "
        f"{len(not_run)} not run")
    if dry:
        for t in out:
            t["verdict"] = "dry run: " + t["verdict"]
    return out


# --------------------------------------------------------------------------
# The GPU run

READ_KERNEL = r"""
extern "C" __global__ void read16(const uint4* __restrict__ p, unsigned long long n16,
                                  const unsigned char* __restrict__ tail, unsigned int ntail,
                                  unsigned int* __restrict__ out)
{
    unsigned int acc = 0;
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (; i + 3 * stride < n16; i += 4 * stride) {
        uint4 a = p[i], b = p[i + stride], c = p[i + 2 * stride], d = p[i + 3 * stride];
        acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w;
        acc ^= c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
    }
    for (; i < n16; i += stride) {
        uint4 a = p[i];
        acc ^= a.x ^ a.y ^ a.z ^ a.w;
    }
    if (blockIdx.x == 0)
        for (unsigned int j = threadIdx.x; j < ntail; j += blockDim.x)
            acc ^= tail[j];
    for (int o = 16; o > 0; o >>= 1)
        acc ^= __shfl_xor_sync(0xffffffffu, acc, o);
    __shared__ unsigned int s;
    if (threadIdx.x == 0)
        s = 0;
    __syncthreads();
    if ((threadIdx.x & 31) == 0)
        atomicXor(&s, acc);
    __syncthreads();
    if (threadIdx.x == 0)
        out[blockIdx.x] = s;
}
"""


def make_batch_torch(torch, shape, seed):
    """Gray uint8 images on the GPU: smooth ramps with noise over a random
    sub-range of levels (so equalization has work to do); with 4 or more
    images the first three are a constant image, a two-level image and
    uniform noise (the rules' edge cases)."""
    N, H, W = shape
    dev = "cuda"
    g = torch.Generator(device=dev)
    g.manual_seed(seed)
    x = torch.empty(shape, dtype=torch.uint8, device=dev)
    yy = torch.linspace(0, 1, H, device=dev).view(H, 1)
    xx = torch.linspace(0, 1, W, device=dev).view(1, W)
    p = torch.rand((N, 6), generator=g, device=dev).cpu().tolist()
    for i in range(N):
        a, b, c, sd, lo, sp = p[i]
        if N >= 4 and i == 0:
            x[i].fill_(77)
        elif N >= 4 and i == 1:
            hi = torch.rand((H, W), generator=g, device=dev) >= 0.3
            x[i] = hi.to(torch.uint8) * 160 + 40
        elif N >= 4 and i == 2:
            x[i] = torch.randint(0, 256, (H, W), generator=g, device=dev, dtype=torch.uint8)
        else:
            f = (a - 0.5) * xx + (b - 0.5) * yy + c * 0.5 + 0.25
            f = f + (0.02 + 0.15 * sd) * torch.randn((H, W), generator=g, device=dev)
            lo_v = int(lo * 128)
            span = 16 + sp * (255 - 16 - lo_v)
            x[i] = (lo_v + span * f.clamp_(0, 1)).round_().clamp_(0, 255).to(torch.uint8)
    torch.cuda.synchronize()
    return x


def sample_indices(n, most):
    if n <= most:
        return list(range(n))
    step = n / most
    return sorted({0, 1, 2, n - 1} | {int(k * step) for k in range(most)})


def gpu_run(args):
    try:
        import numpy as np
        import torch
    except ImportError as e:
        log(f"bench_python: {e} (use --dry-run for the CPU smoke test)")
        sys.exit(2)
    if not torch.cuda.is_available():
        log("bench_python: no CUDA device visible to torch (use --dry-run for the CPU smoke test)")
        sys.exit(2)
    imghist, v_img = try_import("imghist")
    cv2, v_cv2 = try_import("cv2")
    tvF, _ = try_import("torchvision.transforms.v2.functional")
    tv, v_tv = try_import("torchvision")
    kornia, v_kornia = try_import("kornia")
    cupy, v_cupy = try_import("cupy")
    cuexp, _ = try_import("cucim.skimage.exposure") if cupy is not None else (None, "")
    cucim, v_cucim = try_import("cucim")
    cvcuda, v_cvcuda = try_import("cvcuda")
    if imghist is None:
        loud(f"imghist does not import: {v_img}")
    props = torch.cuda.get_device_properties(0)
    meta = {
        "device": torch.cuda.get_device_name(0), "sms": props.multi_processor_count,
        "l2_bytes": getattr(props, "L2_cache_size", None),
        "memory_bytes": props.total_memory, "cuda": torch.version.cuda,
        "python": platform.python_version(),
        "versions": {"torch": torch.__version__, "numpy": np.__version__, "imghist": v_img,
                     "opencv": v_cv2, "torchvision": v_tv, "kornia": v_kornia, "cupy": v_cupy,
                     "cucim": v_cucim, "cvcuda": v_cvcuda},
    }
    if imghist is not None:
        lib = sys.modules.get("imghist._lib")
        meta["imghist_library"] = getattr(lib, "library_path", None)
        meta["imghist_module"] = getattr(imghist, "__file__", None)
    log(json.dumps(meta, indent=1))
    clock = CudaClock(torch, args.flush_mib)
    read_kern = None
    if cupy is not None:
        try:
            read_kern = cupy.RawKernel(READ_KERNEL, "read16")
        except Exception as e:
            log(f"bench_python: the CuPy read kernel does not build: {short(e)}")

    def to_cupy(t):
        """A CuPy view of a torch tensor's memory: DLPack, else
        __cuda_array_interface__."""
        try:
            return cupy.from_dlpack(t)
        except Exception:
            return cupy.asarray(t)

    def cupy_stream():
        ptr = torch.cuda.current_stream().cuda_stream
        return cupy.cuda.Stream.null if ptr == 0 else cupy.cuda.ExternalStream(ptr)

    def one_shape(shape):
        N, H, W = shape
        rows = []
        nbytes = N * H * W
        log(f"\n== {shape_str(shape)} ({nbytes / MIB:.1f} MiB)")
        x = make_batch_torch(torch, shape, args.seed + N + H)
        x4 = x.view(N, 1, H, W)
        x_cpu = x.cpu().numpy()
        idx = sample_indices(N, args.check_max)

        # ---- ceilings
        ceil_rows = []

        def read_cupy(blocks_per_sm, threads):
            def setup():
                if read_kern is None:
                    raise NotInstalled("cupy not installed" if cupy is None else "kernel failed")
                flat = to_cupy(x.view(-1))
                n16 = nbytes // 16
                tail = flat[n16 * 16:] if nbytes % 16 else flat
                grid = props.multi_processor_count * blocks_per_sm
                out = cupy.empty(grid, dtype=cupy.uint32)
                args_k = (flat, cupy.uint64(n16), tail, cupy.uint32(nbytes % 16), out)
                cs = cupy_stream()

                def fn():
                    with cs:
                        read_kern((grid,), (threads,), args_k)
                    return out
                return fn, None, f"{blocks_per_sm} blocks/SM x {threads}"
            return setup

        def read_torch_sum():
            if nbytes % 8:
                raise NotInstalled("size not a multiple of 8")
            v = x.view(-1).view(torch.int64)
            return (lambda: v.sum()), None, "int64 view"

        def copy_setup():
            dst = torch.empty_like(x)
            return (lambda: dst.copy_(x)), None, "dst.copy_(src)"

        impls = [(f"read: cupy 16-byte kernel ({b}/SM)", read_cupy(b, 512)) for b in (2, 4, 8)]
        impls += [("read: torch.sum", read_torch_sum), ("copy", copy_setup)]
        run_impls(clock, args, shape, "ceiling", nbytes, impls, ceil_rows)
        rows.extend(ceil_rows + reference_rows(shape, nbytes, ceil_rows))

        # ---- equalize
        tv_out = {}

        def tv_ref():
            if "o" not in tv_out:
                need(tvF, "torchvision")
                tv_out["o"] = tvF.equalize(x4).view(N, H, W)
            return tv_out["o"]

        def check_opencv(o):
            if cv2 is None:
                return None, "unchecked: cv2 not installed"
            oc = o.cpu().numpy()
            bad = 0
            for i in idx:
                ref = cv2.equalizeHist(x_cpu[i])
                if not np.array_equal(ref, oc[i]):
                    bad += 1
                    if bad <= 3:
                        d = int((ref != oc[i]).sum())
                        log(f"      image {i}: {d} of {H * W} pixels differ from cv2")
            what = f"{len(idx)} of {N} images vs cv2.equalizeHist"
            return (bad == 0), (what if bad == 0 else f"{bad} of {what} differ")

        def check_pil(o):
            try:
                ref = tv_ref()
            except NotInstalled:
                return None, "unchecked: torchvision not installed"
            if torch.equal(o, ref):
                return True, f"{N} images vs torchvision"
            diff = (o != ref).view(N, -1).any(dim=1)
            return False, (f"{int(diff.sum())} of {N} images differ from torchvision, "
                           f"{int((o != ref).sum())} pixels")

        def img_eq(method, with_out=False):
            def setup():
                need(imghist, "imghist")
                check = check_opencv if method == "opencv" else check_pil
                if with_out:
                    o = torch.empty_like(x)
                    return (lambda: imghist.equalize(x, method=method, out=o)), check, "out= given"
                return (lambda: imghist.equalize(x, method=method)), check, "one batched call"
            return setup

        def tv_setup():
            need(tvF, "torchvision")
            return (lambda: tvF.equalize(x4)), None, "uint8 (N,1,H,W), PIL's rule"

        def kornia_setup():
            need(kornia, "kornia")
            xf = x4.float().div_(255.0)

            def check(o):
                if tvF is None:
                    return None, ""
                agree = ((o * 255).round_().to(torch.uint8).view(N, H, W) == tv_ref())
                return None, f"{100.0 * agree.float().mean().item():.2f} % of pixels = torchvision"
            return (lambda: kornia.enhance.equalize(xf)), check, \
                "float32 input made beforehand (4 B/px read), float output"

        def cucim_setup():
            need(cupy, "cupy")
            need(cuexp, "cuCIM")
            views = [to_cupy(x[i]) for i in range(N)]
            cs = cupy_stream()

            def fn():
                with cs:
                    return [cuexp.equalize_hist(v) for v in views]

            def check(outs):
                return None, f"output {outs[0].dtype}, not compared"
            return fn, check, "one call per image, CuPy views via DLPack, float output"

        def cvcuda_setup():
            need(cvcuda, "CV-CUDA")
            src = cvcuda.as_tensor(x.view(N, H, W, 1), "NHWC")
            o = torch.empty_like(x)
            dst = cvcuda.as_tensor(o.view(N, H, W, 1), "NHWC")
            try:
                kw = {"stream": cvcuda.as_stream(torch.cuda.current_stream())}
            except Exception:
                kw = {}

            def fn():
                cvcuda.histogrameq_into(dst, src, **kw)
                return o

            def check(out):
                if cv2 is None:
                    return None, ""
                oc = out.cpu().numpy()
                same = sum(np.array_equal(cv2.equalizeHist(x_cpu[i]), oc[i]) for i in idx)
                return None, f"{same} of {len(idx)} images = cv2"
            return fn, check, "NHWC uint8, histogrameq_into"

        impls = [(IMG_OPENCV, img_eq("opencv")), (IMG_PIL, img_eq("pil")),
                 ("imghist (opencv, out=)", img_eq("opencv", True)),
                 ("torchvision v2 equalize", tv_setup), ("kornia enhance.equalize", kornia_setup),
                 ("cuCIM equalize_hist", cucim_setup), ("CV-CUDA histogrameq", cvcuda_setup)]
        eq_rows = []
        run_impls(clock, args, shape, "equalize", nbytes, impls, eq_rows)
        rows.extend(eq_rows)
        tv_out.clear()

        # ---- histogram
        ref_counts = torch.stack([torch.bincount(x[i].view(-1).int(), minlength=256)
                                  for i in range(N)])
        if not bool((ref_counts.sum(dim=1) == H * W).all()):
            loud(f"{shape_str(shape)}: torch.bincount's counts do not add up to H*W", False)

        def check_counts(o):
            o = o.to(torch.int64).reshape(N, 256)
            if torch.equal(o, ref_counts):
                return True, f"{N} images vs torch.bincount"
            bad = (o != ref_counts).any(dim=1)
            return False, f"{int(bad.sum())} of {N} images differ from torch.bincount"

        def img_hist():
            need(imghist, "imghist")
            return (lambda: imghist.histogram(x)), check_counts, "one batched call, int64 (N,256)"

        def bincount_loop():
            views = [x[i].view(-1) for i in range(N)]
            note = "one call per image (each waits for the GPU), stacked"
            try:
                torch.bincount(views[0], minlength=256)
            except Exception:
                note += ", uint8 -> int32 in the loop (uint8 refused)"
                return (lambda: torch.stack([torch.bincount(v.int(), minlength=256)
                                             for v in views])), check_counts, note
            return (lambda: torch.stack([torch.bincount(v, minlength=256) for v in views])), \
                check_counts, note

        def scatter_add():
            flat = x.view(N, H * W)
            ones = torch.ones((1, 1), dtype=torch.int64, device="cuda").expand(N, H * W)
            note = "one call: zeros((N,256)).scatter_add_(1, x.long(), ones)"
            try:
                torch.zeros((1, 256), dtype=torch.int64, device="cuda").scatter_add_(
                    1, flat[:1, :16].long(), ones[:1, :16])
            except Exception:
                ones = torch.ones((N, H * W), dtype=torch.int64, device="cuda")
                note += " (ones made beforehand: an expanded one is refused)"

            def fn():
                o = torch.zeros((N, 256), dtype=torch.int64, device="cuda")
                return o.scatter_add_(1, flat.long(), ones)
            return fn, check_counts, note

        def offset_bincount():
            flat = x.view(N, H * W)
            off = (torch.arange(N, device="cuda", dtype=torch.int32) * 256).view(N, 1)

            def fn():
                return torch.bincount((flat.int() + off).view(-1), minlength=256 * N).view(N, 256)
            return fn, check_counts, "one call: bincount(x.int() + 256*i)"

        def histc_loop():
            # histc counts in its input's dtype (uint8 would wrap): float32
            # copies, made beforehand.
            xf = x.float()
            views = [xf[i] for i in range(N)]
            return (lambda: torch.stack([torch.histc(v, bins=256, min=0, max=255)
                                         for v in views])), check_counts, \
                "one call per image on float32 copies made beforehand (4 B/px read)"

        impls = [(IMG_HIST, img_hist), ("torch.bincount loop", bincount_loop),
                 ("torch scatter_add_ batched", scatter_add),
                 ("torch offset bincount batched", offset_bincount),
                 ("torch.histc loop", histc_loop)]
        h_rows = []
        run_impls(clock, args, shape, "histogram", nbytes, impls, h_rows)
        rows.extend(h_rows)
        return rows

    rows = []
    for shape in args.shape_list:
        try:
            rows.extend(one_shape(shape))
        except Exception as e:  # out of memory, say: the other shapes still run
            traceback.print_exc()
            rows.append(make_row(shape, "all", "(this shape)", shape[0] * shape[1] * shape[2],
                                 status="error", note=short(e)))
        torch.cuda.empty_cache()

    overhead = []
    if "overhead" in args.only_set:
        overhead = overhead_torch(args, torch, imghist, tvF)
    return meta, rows, overhead


def overhead_torch(args, torch, imghist, tvF):
    """Host time per call on a 1x1 device tensor: the median of each call's
    own time over args.overhead_calls calls, queued without waiting (host_us),
    and with torch.cuda.synchronize() after each (sync_us)."""
    x1 = torch.full((1, 1), 7, dtype=torch.uint8, device="cuda")
    cases = []
    if imghist is not None:
        cases += [("imghist.histogram 1x1", lambda: imghist.histogram(x1)),
                  ("imghist.equalize 1x1 (opencv)", lambda: imghist.equalize(x1)),
                  ("imghist.equalize 1x1 (pil)", lambda: imghist.equalize(x1, method="pil"))]
    else:
        cases += [("imghist (not installed)", None)]
    cases += [("torch.bincount 1x1", lambda: torch.bincount(x1.view(-1), minlength=256))]
    if tvF is not None:
        x3 = x1.view(1, 1, 1)
        cases += [("torchvision v2 equalize 1x1", lambda: tvF.equalize(x3))]
    cases += [("torch.cuda.synchronize() alone", lambda: None)]
    return measure_overhead(args, cases, torch.cuda.synchronize)


def measure_overhead(args, cases, sync):
    res = []
    M = args.overhead_calls
    pc = time.perf_counter_ns
    for name, fn in cases:
        if fn is None:
            res.append({"impl": name, "status": "not installed"})
            continue
        try:
            for _ in range(min(200, M)):
                fn()
            sync()
            host = []
            t_all = pc()
            for _ in range(M):
                t0 = pc()
                fn()
                host.append(pc() - t0)
            t_end = pc()
            sync()
            t_drain = pc()
            with_sync = []
            for _ in range(M):
                t0 = pc()
                fn()
                sync()
                with_sync.append(pc() - t0)
        except Exception as e:
            traceback.print_exc()
            res.append({"impl": name, "status": "error", "note": short(e)})
            continue
        r = {"impl": name, "status": "ok", "calls": M,
             "host_us": statistics.median(host) / 1e3,
             "host_mean_us": (t_end - t_all) / M / 1e3,
             "drain_us": (t_drain - t_end) / 1e3,
             "sync_us": statistics.median(with_sync) / 1e3}
        res.append(r)
        log(f"  overhead {name}: host {r['host_us']:.2f} us/call (mean {r['host_mean_us']:.2f}), "
            f"with sync {r['sync_us']:.2f} us")
    return res


def overhead_table(overhead):
    if not overhead:
        return ""
    s = ("| call | host us/call (median, no sync) | host us/call (mean of the loop) | "
         "call + synchronize us (median) |\n|---|---|---|---|\n")
    for o in overhead:
        if o.get("status") != "ok":
            s += f"| {o['impl']} | {o['status']} {o.get('note', '')} | | |\n"
            continue
        s += (f"| {o['impl']} | {o['host_us']:.2f} | {o['host_mean_us']:.2f} | "
              f"{o['sync_us']:.2f} |\n")
    return s


# --------------------------------------------------------------------------
# The dry run: NumPy on the CPU, to exercise the checks, tables and JSON.

def dry_run(args):
    try:
        import numpy as np
    except ImportError:
        log("bench_python: --dry-run needs NumPy")
        sys.exit(2)
    imghist, v_img = try_import("imghist")
    cv2, v_cv2 = try_import("cv2")
    meta = {"device": "CPU (dry run: NumPy, host clock; no GPU figures)",
            "python": platform.python_version(),
            "versions": {"numpy": np.__version__, "imghist": v_img, "opencv": v_cv2}}
    log(json.dumps(meta, indent=1))
    clock = CpuClock(np, args.flush_mib)
    rng = np.random.default_rng(args.seed)
    rows = []
    for shape in args.shape_list:
        N, H, W = shape
        nbytes = N * H * W
        x = rng.integers(20, 180, size=shape, dtype=np.uint8)
        if N >= 4:
            x[0] = 77
            x[1] = np.where(rng.random((H, W)) < 0.3, 40, 200)
        log(f"\n== {shape_str(shape)} (dry run)")
        ref_cv = [np_lut_opencv(np, np.bincount(x[i].ravel(), minlength=256))[x[i]]
                  for i in range(N)]
        if cv2 is not None:
            for i in range(N):
                if not np.array_equal(cv2.equalizeHist(x[i]), ref_cv[i]):
                    loud(f"dry run: the NumPy OpenCV rule differs from cv2 on image {i}", False)
        ceil = []
        dst = np.empty_like(x)
        words = x.reshape(-1)[:nbytes // 8 * 8].view(np.uint64)
        run_impls(clock, args, shape, "ceiling", nbytes,
                  [("read: numpy sum", lambda: ((lambda: words.sum()), None, "uint64 view")),
                   ("copy", lambda: ((lambda: np.copyto(dst, x)), None, ""))], ceil)
        rows.extend(ceil + reference_rows(shape, nbytes, ceil))

        def check_cv(o):
            bad = sum(not np.array_equal(ref_cv[i], o[i]) for i in range(N))
            return bad == 0, f"{N} images vs the OpenCV rule" if bad == 0 else f"{bad} differ"
        pil_ref = np_equalize(np, x, np_lut_pil)

        def check_pil(o):
            return bool(np.array_equal(o, pil_ref)), f"{N} images vs the PIL rule"

        def img_eq(method, check):
            def setup():
                need(imghist, "imghist")
                return (lambda: imghist.equalize(x, method=method)), check, "CPU backend"
            return setup
        eq = [(IMG_OPENCV, img_eq("opencv", check_cv)), (IMG_PIL, img_eq("pil", check_pil)),
              ("numpy LUT (opencv rule)",
               lambda: ((lambda: np_equalize(np, x, np_lut_opencv)), check_cv, "")),
              ("numpy LUT (pil rule)",
               lambda: ((lambda: np_equalize(np, x, np_lut_pil)), check_pil, "")),
              ("absent peer", lambda: need(None, "absent peer"))]
        run_impls(clock, args, shape, "equalize", nbytes, eq, rows)
        ref_counts = np.stack([np.bincount(x[i].ravel(), minlength=256) for i in range(N)])

        def check_counts(o):
            o = np.asarray(o).reshape(N, 256)
            return bool(np.array_equal(o, ref_counts)), f"{N} images vs bincount"

        def img_hist():
            need(imghist, "imghist")
            return (lambda: imghist.histogram(x)), check_counts, "CPU backend"
        off = (np.arange(N, dtype=np.int64) * 256)[:, None]
        hi = [(IMG_HIST, img_hist),
              ("numpy bincount loop", lambda: (
                  (lambda: np.stack([np.bincount(x[i].ravel(), minlength=256) for i in range(N)])),
                  check_counts, "")),
              ("numpy offset bincount", lambda: (
                  (lambda: np.bincount((x.reshape(N, -1) + off).ravel(), minlength=256 * N)),
                  check_counts, ""))]
        run_impls(clock, args, shape, "histogram", nbytes, hi, rows)
    overhead = []
    if "overhead" in args.only_set:
        x1 = np.full((1, 1), 7, np.uint8)
        cases = []
        if imghist is not None:
            cases += [("imghist.histogram 1x1 (NumPy)", lambda: imghist.histogram(x1)),
                      ("imghist.equalize 1x1 (NumPy)", lambda: imghist.equalize(x1))]
        cases += [("numpy.bincount 1x1", lambda: np.bincount(x1.ravel(), minlength=256))]
        overhead = measure_overhead(args, cases, lambda: None)
    return meta, rows, overhead


# --------------------------------------------------------------------------

def parse_shapes(s):
    out = []
    for part in s.split(","):
        part = part.strip().lower()
        if not part:
            continue
        v = tuple(int(t) for t in part.split("x"))
        if len(v) != 3 or min(v) <= 0:
            raise argparse.ArgumentTypeError(f"shape {part!r}: want NxHxW")
        out.append(v)
    return out


def git_commit():
    """The tree's commit: $IMGHIST_COMMIT where set (a copy of the tree whose
    git metadata is older than its files, as the device tool's can be)."""
    if os.environ.get("IMGHIST_COMMIT"):
        return os.environ["IMGHIST_COMMIT"]
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        return subprocess.run(["git", "-C", here, "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10).stdout.strip() or None
    except Exception:
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Shapes default to " +
                                 ",".join(shape_str(s) for s in SHAPES) + ".")
    ap.add_argument("--out", default="bench-python-out", help="folder for the .md and .json")
    ap.add_argument("--shapes", type=parse_shapes, default=None, help="NxHxW,... (default: all)")
    ap.add_argument("--runs", type=int, default=15, help="timed calls per row (median; >= 10)")
    ap.add_argument("--min-runs", type=int, default=10,
                    help="fewest timed calls when a row is slow (default 10)")
    ap.add_argument("--warmup", type=int, default=3, help="warm-up calls per row")
    ap.add_argument("--max-op-seconds", type=float, default=20.0,
                    help="timed calls per row drop towards --min-runs past this")
    ap.add_argument("--flush-mib", type=int, default=256, help="L2 flush buffer, MiB")
    ap.add_argument("--check-max", type=int, default=1024,
                    help="images per batch checked against cv2 (a spread sample beyond)")
    ap.add_argument("--overhead-calls", type=int, default=2000, help="calls per overhead row")
    ap.add_argument("--only", default="bench,overhead",
                    help="bench, overhead or both (comma separated)")
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--dry-run", action="store_true",
                    help="CPU smoke test with NumPy on small shapes: checks, tables, JSON")
    args = ap.parse_args()
    args.only_set = {s.strip() for s in args.only.split(",")}
    if args.runs < args.min_runs:
        ap.error("--runs must be at least --min-runs")
    if args.dry_run:
        args.flush_mib = min(args.flush_mib, 8)
        args.overhead_calls = min(args.overhead_calls, 300)
    args.shape_list = args.shapes or (DRY_SHAPES if args.dry_run else SHAPES)
    if "bench" not in args.only_set:
        args.shape_list = []
    t0 = time.time()
    meta, rows, overhead = (dry_run if args.dry_run else gpu_run)(args)
    meta.update({"commit": git_commit(), "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
                 "args": {k: v for k, v in vars(args).items() if k not in ("only_set",)},
                 "seconds": round(time.time() - t0, 1)})
    add_ratios(rows)
    tg = targets(rows, overhead, args.dry_run)
    md = [f"# bench_python: {meta['device']}", "",
          f"commit {meta['commit']}, {meta['date']}; versions: " +
          ", ".join(f"{k} {v}" for k, v in meta["versions"].items()), "",
          ("Dry run: host clock around NumPy calls on the CPU; the figures mean nothing. "
           if args.dry_run else
           f"Times: CUDA events around one call after {args.warmup} warm-up calls, L2 flushed "
           f"({args.flush_mib} MiB written) before each; median of the runs. 'ms': the call "
           "made while the flush runs (the GPU's time, as bench_batch times the C call); "
           "'ms, GPU idle before': the GPU synchronised first (the host's time to the first "
           "launch counts too). ") +
          "GB/s = the batch's uint8 bytes / time. "
          "imghist/peer = imghist (opencv for equalize) time / the row's (< 1: imghist faster). "
          "x ref = time / reference (equalize: read + copy; histogram: read).", "",
          table(rows)]
    if overhead:
        md += ["## Python call overhead (1x1 " + ("NumPy array" if args.dry_run else "device tensor")
               + ", host clock per call)", "", overhead_table(overhead)]
    md += ["## Targets", "", "| target | verdict | detail |", "|---|---|---|"]
    md += [f"| {t['target']} | {t['verdict']} | {t['detail']} |" for t in tg]
    if mismatches:
        md += ["", "## MISMATCHES", ""] + [f"- {m}" + ("" if mine else " (a peer or the bench)")
                                            for m, mine in mismatches]
    text = "\n".join(md) + "\n"
    log("\n" + text)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "bench_python.md"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, "bench_python.json"), "w") as f:
        json.dump({"meta": meta, "rows": rows, "overhead": overhead, "targets": tg,
                   "mismatches": [{"what": m, "imghist": mine} for m, mine in mismatches]},
                  f, indent=1)
    log(f"bench_python: wrote {args.out}/bench_python.md and .json in {meta['seconds']} s")
    if mismatches:
        mine = sum(1 for _, m in mismatches if m)
        log(f"bench_python: {len(mismatches)} MISMATCH(ES), {mine} of imghist's: see above")
        if mine:
            sys.exit(3)


if __name__ == "__main__":
    main()

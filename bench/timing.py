"""The timing the PyTorch-based Python benches share: CUDA events around each
call after warm-up, the median in milliseconds."""
import statistics


def torch_timed(torch, fn, runs, warmup, flush=None):
    """Median of `runs` calls of fn, each between two CUDA events on the
    current stream, after `warmup` untimed calls; flush (a device tensor
    larger than L2, or None) is overwritten before each timed call so that
    no call finds its input in L2."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts = []
    for k in range(runs):
        if flush is not None:
            flush.fill_(k & 0xFF)
        e0.record()
        fn()
        e1.record()
        e1.synchronize()
        ts.append(e0.elapsed_time(e1))
    return statistics.median(ts)

"""The vendor baselines for `reduce shapes`: torch.sum(dim=...) and CuPy's
sum(axis=...) (CUB accelerator) on the same 1 GiB f32 matrices, and
torch.segment_reduce on power-law segments of 2^28 elements, timed as the
Rust side is: CUDA events around the call only, 5 warm-up calls, the median
of RUNS calls, random data. GB/s count the input bytes read. Run on the GPU
machine in the same command as `reduce shapes`:

    python3 cli/baselines/shapes_vendor.py [RUNS] [SHAPES] [OP]

SHAPES (for example 16777216x16,4096x65536) keeps those matrices and
leaves out the segments; `all` keeps everything. OP `moments` times
torch.var_mean(dim=...) and CuPy's var(axis=...) instead of the sums (what
`reduce shapes --op moments` computes), `logsumexp` torch.logsumexp(dim=...),
on the matrices only.

Prints one JSON object per line: library, case, median_us, gbps.
The segment lengths follow the same laws as `reduce shapes` (log-uniform
from 1 to 10^6; Pareto with exponent 1.5 capped at 10^6), drawn by numpy.
"""
import json
import os
import statistics
import sys

os.environ.setdefault("CUPY_ACCELERATORS", "cub")

import numpy as np  # noqa: E402
import torch  # noqa: E402

try:
    import cupy  # noqa: E402
except Exception as e:  # CuPy missing: torch alone
    cupy = None
    print(json.dumps({"library": "cupy", "error": str(e)}), flush=True)

N = 1 << 28
RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 50
SHAPES = [(16384, 16384), (1 << 20, 256), (256, 1 << 20), (1 << 24, 16), (4096, 65536)]
ONLY = sys.argv[2].split(",") if len(sys.argv) > 2 and sys.argv[2] != "all" else None
OP = sys.argv[3] if len(sys.argv) > 3 else "sum"
if ONLY is not None:
    SHAPES = [s for s in SHAPES if f"{s[0]}x{s[1]}" in ONLY]


def timed(fn):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(RUNS)]
    for a, b in pairs:
        a.record()
        fn()
        b.record()
    torch.cuda.synchronize()
    return statistics.median(a.elapsed_time(b) for a, b in pairs) * 1e3  # µs


def report(library, case, us, elements):
    print(json.dumps({"library": library, "case": case, "median_us": round(us, 2),
                      "gbps": round(elements * 4 / us / 1e3, 1)}), flush=True)


x = torch.rand(N, device="cuda") * 2 - 1
for rows, cols in SHAPES:
    m = x.view(rows, cols)
    for axis in (1, 0):
        case = f"{rows}x{cols} axis {axis}"
        if OP == "moments":
            report("torch", case, timed(lambda: torch.var_mean(m, dim=axis)), N)
        elif OP == "logsumexp":
            report("torch", case, timed(lambda: torch.logsumexp(m, dim=axis)), N)
        else:
            report("torch", case, timed(lambda: torch.sum(m, dim=axis)), N)
        if cupy is not None:
            c = cupy.asarray(m)
            if OP == "moments":
                report("cupy", case, timed(lambda: c.var(axis=axis)), N)
            elif OP == "sum":
                report("cupy", case, timed(lambda: c.sum(axis=axis)), N)


def lengths(pareto, seed):
    rng = np.random.default_rng(seed)
    u = rng.random(1 << 20)
    ls = np.minimum(u ** -2.0, 1e6).astype(np.int64) if pareto else (10.0 ** (6.0 * u)).astype(np.int64)
    keep = np.cumsum(ls) <= N
    return ls[keep]


for name, pareto in (("loguniform", False), ("pareto1.5", True)) if ONLY is None and OP == "sum" else ():
    ls = lengths(pareto, 5)
    total = int(ls.sum())
    data = x[:total]
    lens = torch.from_numpy(ls).cuda()
    case = f"segments {name} ({len(ls)} segments)"
    try:
        report("torch.segment_reduce", case, timed(lambda: torch.segment_reduce(data, "sum", lengths=lens)), total)
    except Exception as e:
        print(json.dumps({"library": "torch.segment_reduce", "case": case, "error": str(e)}), flush=True)
    if cupy is not None:
        # CuPy has no segmented reduce in its public API; cupyx.scatter_add over segment ids
        # is the nearest: one atomic add per element.
        try:
            import cupyx  # noqa: E402
            ids = cupy.asarray(np.repeat(np.arange(len(ls)), ls))
            cd = cupy.asarray(data)
            out = cupy.zeros(len(ls), dtype=cupy.float32)
            report("cupyx.scatter_add", case, timed(lambda: cupyx.scatter_add(out, ids, cd)), total)
        except Exception as e:
            print(json.dumps({"library": "cupyx.scatter_add", "case": case, "error": str(e)}), flush=True)

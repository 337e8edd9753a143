"""The vendor baselines for `reduce shapes`: torch.sum(dim=...) and CuPy's
sum(axis=...) (CUB accelerator) on the same 1 GiB f32 matrices (2^28
elements of another TYPE), and
torch.segment_reduce on the six segment cases of 2^28 elements, timed as
the Rust side is: CUDA events around the call only, 5 warm-up calls, the
median of RUNS calls, random data. GB/s count the bytes moved: the input,
the segments' offsets (8 bytes a segment) and the results. Run on the GPU
machine in the same command as `reduce shapes`:

    python3 cli/baselines/shapes_vendor.py [RUNS] [SHAPES] [OP] [TYPE]

SHAPES (for example 16777216x16,4096x65536) keeps those matrices and
leaves out the segments unless it names `segments` too; `all` keeps
everything. OP, the library's name
(`reduce shapes --op`), times torch's call of the same reduction along
dim= instead of the sums: `moments` torch.var_mean (and CuPy's var),
`argmax` torch.argmax, `aminmax` torch.aminmax, `norm_inf`
torch.linalg.vector_norm(ord=inf), ... (TORCH below; an operation torch
lacks, such as nanmax, prints an error line). Over segments
torch.segment_reduce has sum, mean, min, max and prod. TYPE (f32, f64, f16
or bf16; `reduce shapes --type`) is the element type of the same data
(CuPy has no bf16: torch alone).

Prints one JSON object per line: library, case, type, op, median_us, gbps
(the bytes of the results torch returns counted as moved).
The segment lengths are `reduce shapes`' own: the same generator, seeds
and laws (`cli/src/shapes_bench.rs`). With SEGMENT_LENGTHS_DIR set, each
case's lengths are also written there as NAME.i64 (little-endian int64),
for `cub_segmented_reduce.cu`.
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
TYPES = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16, "bf16": torch.bfloat16}
TYPE = sys.argv[4] if len(sys.argv) > 4 else "f32"
if TYPE not in TYPES:
    sys.exit(f"shapes_vendor.py: unknown type {TYPE} (valid: {', '.join(TYPES)})")
DTYPE = TYPES[TYPE]
ELEM = torch.tensor([], dtype=DTYPE).element_size()
SEGMENTS = ONLY is None or "segments" in ONLY
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


def report(library, case, us, moved):
    print(json.dumps({"library": library, "case": case, "type": TYPE, "op": OP, "median_us": round(us, 2),
                      "gbps": round(moved / us / 1e3, 1)}), flush=True)


def vector_norm(ord):
    return lambda m, d: torch.linalg.vector_norm(m, ord, dim=d)


# the library's operation -> torch's call of it along dim d of matrix m
TORCH = {
    "sum": lambda m, d: torch.sum(m, dim=d),
    "mean": lambda m, d: torch.mean(m, dim=d),
    "min": lambda m, d: torch.amin(m, dim=d),
    "max": lambda m, d: torch.amax(m, dim=d),
    "argmin": lambda m, d: torch.argmin(m, dim=d),
    "argmax": lambda m, d: torch.argmax(m, dim=d),
    "aminmax": lambda m, d: torch.aminmax(m, dim=d),
    "prod": lambda m, d: torch.prod(m, dim=d),
    "all": lambda m, d: torch.all(m, dim=d),
    "any": lambda m, d: torch.any(m, dim=d),
    "count_nonzero": lambda m, d: torch.count_nonzero(m, dim=d),
    "nansum": lambda m, d: torch.nansum(m, dim=d),
    "nanmean": lambda m, d: torch.nanmean(m, dim=d),
    "moments": lambda m, d: torch.var_mean(m, dim=d),
    "logsumexp": lambda m, d: torch.logsumexp(m, dim=d),
    "norm": vector_norm(2),
    "norm1": vector_norm(1),
    "norm_inf": vector_norm(float("inf")),
    "norm_neg_inf": vector_norm(float("-inf")),
}
SEGMENT_REDUCE = {"sum": "sum", "mean": "mean", "min": "min", "max": "max", "prod": "prod"}


def result_bytes(out):
    """Bytes of what a torch call returns (a tensor or a tuple of them)."""
    outs = out if isinstance(out, tuple) else (out,)
    return sum(o.numel() * o.element_size() for o in outs)


x = (torch.rand(N, device="cuda", dtype=torch.float64 if TYPE == "f64" else torch.float32) * 2 - 1).to(DTYPE)
for rows, cols in SHAPES:
    m = x.view(rows, cols)
    for axis in (1, 0):
        case = f"{rows}x{cols} axis {axis}"
        results = rows if axis == 1 else cols
        if OP not in TORCH:
            print(json.dumps({"library": "torch", "case": case, "op": OP, "error": "no such reduction"}), flush=True)
        else:
            call = TORCH[OP]
            # bytes moved: the input and the results as torch returns them
            moved = N * ELEM + result_bytes(call(m, axis))
            report("torch", case, timed(lambda: call(m, axis)), moved)
        if cupy is not None and TYPE != "bf16":
            c = cupy.asarray(m)
            if OP == "moments":
                report("cupy", case, timed(lambda: c.var(axis=axis)), N * ELEM + results * ELEM)
            elif OP == "sum":
                report("cupy", case, timed(lambda: c.sum(axis=axis)), N * ELEM + results * ELEM)


def splitmix64(z):
    """testkit::data::splitmix64 on a numpy uint64 array."""
    z = z + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def lengths_of(draws, seed, law):
    """`shapes_bench::lengths_of`: the same draws (testkit's generator), the
    same law, kept while the sum stays within N."""
    with np.errstate(over="ignore"):
        key = splitmix64(np.array([seed], dtype=np.uint64))[0]
        i = np.arange(draws, dtype=np.uint64) * np.uint64(0x2545F4914F6CDD1D)
        r = splitmix64(key ^ i)
    u = ((r >> np.uint64(11)).astype(np.float64) + 0.5) / float(1 << 53)
    ls = law(u).astype(np.int64)
    return ls[np.cumsum(ls) <= N]


SEGMENT_CASES = {  # `shapes_bench::segment_case`
    "loguniform": lambda: lengths_of(1 << 20, 5, lambda u: 10.0 ** (6.0 * u)),
    "pareto1.5": lambda: lengths_of(1 << 20, 6, lambda u: np.minimum(u ** -2.0, 1e6)),
    "uniform32": lambda: lengths_of(1 << 24, 7, lambda u: u * 32.0),
    "uniform512": lambda: lengths_of(1 << 20, 8, lambda u: u * 512.0),
    "one": lambda: np.array([N], dtype=np.int64),
    "zipf2": lambda: lengths_of(1 << 25, 9, lambda u: np.minimum(1.0 / u, 1e6)),
}
LENGTHS_DIR = os.environ.get("SEGMENT_LENGTHS_DIR")

for name, draw in SEGMENT_CASES.items() if SEGMENTS and OP in SEGMENT_REDUCE else ():
    ls = draw()
    total = int(ls.sum())
    moved = total * ELEM + 8 * (len(ls) + 1) + ELEM * len(ls)  # input, offsets, results
    if LENGTHS_DIR:
        ls.tofile(os.path.join(LENGTHS_DIR, f"{name}.i64"))
    data = x[:total]
    lens = torch.from_numpy(ls).cuda()
    case = f"segments {name} ({len(ls)} segments)"
    try:
        how = SEGMENT_REDUCE[OP]
        report("torch.segment_reduce", case, timed(lambda: torch.segment_reduce(data, how, lengths=lens)), moved)
    except Exception as e:
        print(json.dumps({"library": "torch.segment_reduce", "case": case, "error": str(e)}), flush=True)
    if cupy is not None and OP == "sum":
        # CuPy has no segmented reduce in its public API; cupyx.scatter_add over segment ids
        # is the nearest: one atomic add per element.
        try:
            import cupyx  # noqa: E402
            ids = cupy.asarray(np.repeat(np.arange(len(ls), dtype=np.int32), ls))
            cd = cupy.asarray(data)
            out = cupy.zeros(len(ls), dtype=cd.dtype)
            report("cupyx.scatter_add", case, timed(lambda: cupyx.scatter_add(out, ids, cd)), moved)
        except Exception as e:
            print(json.dumps({"library": "cupyx.scatter_add", "case": case, "error": str(e)}), flush=True)

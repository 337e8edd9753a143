"""The vendor baselines for `reduce ops`: the same operations in PyTorch and
CuPy (CUB), timed as the Rust side is: CUDA events around the call only,
5 warm-up calls, the median of RUNS calls, inputs rotated through copies that
together exceed the L2 four times, random data. GB/s count every input byte
read. Run on the GPU machine beside `reduce ops` in the same command:

    python3 cli/baselines/ops_vendor.py 2^22,2^28 [RUNS] [--timing host-loop|queued|host-loop,queued] [--op OP,...] [--p P]

Prints one JSON object per line: library, operation, type, n, timing,
median_us, gbps. `--op` keeps only these operations (the names of `reduce
ops --op`). `--p P` (default 3) is the order of the p-norm timed beside
`reduce ops --op power_sum --p P`: torch's `vector_norm(x, ord=P)` and
CuPy's `linalg.norm(x, ord=P)`, in rows named `power_sum(P)`.

Timing, as `reduce ops --timing` (cli/src/timing.rs):

* host-loop (the default): the host records (start event, call, stop
  event) run after run while the GPU runs them; a call shorter than its
  submission includes the host's time.
* queued (nvbench's "blocking kernel"): each batch of at most 32 runs is
  queued behind `torch.cuda._sleep(cycles)` on the same stream, long enough
  (about SLEEP_MS) to cover the host's queueing, so the runs go back to back
  and each pair of events holds the GPU's work alone. Checked by a second
  measurement: the sleep's own time between events must exceed the host's
  time to queue the batch (host clock); if it does not, the sleep is made
  four times longer and the case measured again (twice at most), then the
  row is an error. CuPy runs on torch's current stream
  (`cupy.cuda.ExternalStream`), so the same sleep holds it.
"""
import contextlib
import json
import os
import statistics
import sys
import time

os.environ.setdefault("CUPY_ACCELERATORS", "cub")

import torch  # noqa: E402

try:
    import cupy  # noqa: E402
except Exception as e:  # CuPy missing: torch alone
    cupy = None
    print(json.dumps({"library": "cupy", "error": str(e)}), flush=True)

L2 = torch.cuda.get_device_properties(0).L2_cache_size


def count(s):
    if "^" in s:
        b, e = s.split("^")
        return int(b) ** int(e)
    return int(s)


def copies(nbytes):
    return max(1, min(256, -(-4 * L2 // max(nbytes, 1))))


TIMINGS = ("host-loop", "queued")
BATCH = 32  # runs queued behind one sleep, as QUEUED_BATCH in cli/src/timing.rs
SLEEP_MS = 20.0  # the first sleep's length; queueing 32 calls takes ~1-3 ms


def event():
    return torch.cuda.Event(enable_timing=True)


def batches(runs, most=BATCH):
    """runs split into the fewest batches of at most `most`, as even as possible
    (the same split as `batches` in cli/src/timing.rs)."""
    count = -(-runs // most)
    out, start = [], 0
    for k in range(count):
        size = runs // count + (1 if k < runs % count else 0)
        out.append(range(start, start + size))
        start += size
    return out


class NotCovered(Exception):
    """The sleep ended before the host had queued its batch."""


_cycles_per_ms = None


def cycles_per_ms():
    """torch.cuda._sleep's cycles per millisecond on this GPU, measured once."""
    global _cycles_per_ms
    if _cycles_per_ms is None:
        torch.cuda._sleep(1000)
        a, b = event(), event()
        a.record()
        torch.cuda._sleep(20_000_000)
        b.record()
        b.synchronize()
        _cycles_per_ms = 20_000_000 / a.elapsed_time(b)
    return _cycles_per_ms


def timed(fn, sets, runs, timing="host-loop", sleep_ms=SLEEP_MS):
    """The median µs of `runs` calls between CUDA events, after 5 warm-up
    calls; queued: also the smallest margin (ms) by which a sleep outlasted
    the host's queueing of its batch. NotCovered if a sleep did not."""
    for i in range(5):
        fn(*sets[i % len(sets)])
    torch.cuda.synchronize()
    pairs = [(event(), event()) for _ in range(runs)]

    def queue(indices):
        for i in indices:
            a, b = pairs[i]
            args = sets[i % len(sets)]
            a.record()
            fn(*args)
            b.record()

    margin = None
    if timing == "host-loop":
        queue(range(runs))
        torch.cuda.synchronize()
    else:
        cycles = int(sleep_ms * cycles_per_ms())
        for batch in batches(runs):
            s0, s1 = event(), event()
            s0.record()
            torch.cuda._sleep(cycles)
            s1.record()
            t0 = time.perf_counter()
            queue(batch)
            host_ms = (time.perf_counter() - t0) * 1e3
            torch.cuda.synchronize()
            held_ms = s0.elapsed_time(s1)
            if held_ms <= host_ms:
                raise NotCovered(f"a {held_ms:.2f} ms sleep, but {host_ms:.2f} ms to queue {len(batch)} runs")
            margin = held_ms - host_ms if margin is None else min(margin, held_ms - host_ms)
    us = statistics.median(a.elapsed_time(b) for a, b in pairs) * 1e3
    return us, margin


def timed_covered(fn, sets, runs, timing):
    """`timed`, queued with a sleep four times longer after each NotCovered
    (twice at most); returns (µs, margin ms, sleep ms)."""
    sleep_ms = SLEEP_MS
    for attempt in range(3):
        try:
            us, margin = timed(fn, sets, runs, timing, sleep_ms)
            return us, margin, (sleep_ms if timing == "queued" else None)
        except NotCovered:
            if attempt == 2:
                raise
            sleep_ms *= 4


def torch_cases(n, p=3.0):
    g = torch.Generator(device="cuda").manual_seed(1)
    f32 = lambda: torch.rand(n, device="cuda", generator=g) * 2 - 1  # noqa: E731
    yield "sum", "bf16", 1, lambda: (f32().to(torch.bfloat16),), lambda x: torch.sum(x, dtype=torch.float32)
    yield "sum", "f16", 1, lambda: (f32().to(torch.float16),), lambda x: torch.sum(x, dtype=torch.float32)
    yield "sum", "f32", 1, lambda: (f32(),), torch.sum
    for ty, make in (("f32", lambda: (f32(),)), ("bf16", lambda: (f32().to(torch.bfloat16),)),
                     ("f16", lambda: (f32().to(torch.float16),))):
        yield "argmax", ty, 1, make, torch.argmax
        yield "argmin", ty, 1, make, torch.argmin
        yield "max", ty, 1, make, torch.amax
        yield "min", ty, 1, make, torch.amin
    yield "dot", "f32", 2, lambda: (f32(), f32()), torch.dot
    yield "norm", "f32", 1, lambda: (f32(),), torch.linalg.vector_norm
    yield "norm", "bf16", 1, lambda: (f32().to(torch.bfloat16),), lambda x: torch.linalg.vector_norm(x, dtype=torch.float32)
    bf16 = lambda: (f32().to(torch.bfloat16),)  # noqa: E731
    f16 = lambda: (f32().to(torch.float16),)  # noqa: E731
    for ty, make in (("f32", lambda: (f32(),)), ("bf16", bf16), ("f16", f16)):
        yield "prod", ty, 1, make, torch.prod
        yield "all", ty, 1, make, torch.all
        yield "any", ty, 1, make, torch.any
        yield "count_nonzero", ty, 1, make, torch.count_nonzero
        yield "aminmax", ty, 1, make, torch.aminmax
        yield "nansum", ty, 1, make, torch.nansum
        yield "nanmean", ty, 1, make, torch.nanmean
        yield "norm1", ty, 1, make, lambda x: torch.linalg.vector_norm(x, ord=1)
        yield "norm_inf", ty, 1, make, lambda x: torch.linalg.vector_norm(x, ord=float("inf"))
        yield "norm_neg_inf", ty, 1, make, lambda x: torch.linalg.vector_norm(x, ord=float("-inf"))
        # the library's `moments` is var, std, var_mean and std_mean in one pass
        yield "moments", ty, 1, make, torch.var_mean
        yield "logsumexp", ty, 1, make, lambda x: torch.logsumexp(x, 0)
        # the p-norm: the library's `power_sum` and one root on the host
        yield f"power_sum({p:g})", ty, 1, make, lambda x: torch.linalg.vector_norm(x, ord=p, dtype=torch.float32)
    # f64, where the library's exponential and logarithm are its own (the GPU has none in hardware)
    f64 = lambda: (f32().double(),)  # noqa: E731
    yield "logsumexp", "f64", 1, f64, lambda x: torch.logsumexp(x, 0)
    yield f"power_sum({p:g})", "f64", 1, f64, lambda x: torch.linalg.vector_norm(x, ord=p)


def cupy_cases(n, p=3.0):
    rng = cupy.random.default_rng(1)
    f32 = lambda: rng.random(n, dtype=cupy.float32) * 2 - 1  # noqa: E731
    yield "sum", "f16", 1, lambda: (f32().astype(cupy.float16),), lambda x: cupy.sum(x, dtype=cupy.float32)
    yield "sum", "f32", 1, lambda: (f32(),), cupy.sum
    yield "argmax", "f32", 1, lambda: (f32(),), cupy.argmax
    yield "argmin", "f32", 1, lambda: (f32(),), cupy.argmin
    yield "dot", "f32", 2, lambda: (f32(), f32()), cupy.dot
    yield "norm", "f32", 1, lambda: (f32(),), cupy.linalg.norm
    yield "prod", "f32", 1, lambda: (f32(),), cupy.prod
    yield "all", "f32", 1, lambda: (f32(),), cupy.all
    yield "any", "f32", 1, lambda: (f32(),), cupy.any
    yield "count_nonzero", "f32", 1, lambda: (f32(),), cupy.count_nonzero
    yield "nansum", "f32", 1, lambda: (f32(),), cupy.nansum
    yield "nanmean", "f32", 1, lambda: (f32(),), cupy.nanmean
    yield "moments", "f32", 1, lambda: (f32(),), cupy.var
    yield "nanmin", "f32", 1, lambda: (f32(),), cupy.nanmin
    yield "nanmax", "f32", 1, lambda: (f32(),), cupy.nanmax
    yield f"power_sum({p:g})", "f32", 1, lambda: (f32(),), lambda x: cupy.linalg.norm(x, ord=p)


def arguments(argv):
    """(sizes, runs, timings, ops, p) from `SIZES [RUNS] [--timing LIST] [--op LIST] [--p P]` (ops: None for all)."""
    timings = ["host-loop"]
    ops = None
    p = 3.0
    rest = []
    it = iter(argv)

    def value(a):  # `--name=value` or `--name value`
        return a.split("=", 1)[1] if "=" in a else next(it, "")

    for a in it:
        if a == "--op" or a.startswith("--op="):
            ops = {o for o in value(a).split(",") if o}
            if not ops:
                sys.exit("error: --op: a comma-separated list of operations")
        elif a == "--p" or a.startswith("--p="):
            v = value(a)
            try:
                p = float(v)
            except ValueError:
                sys.exit(f"error: --p {v!r}: a number")
        elif a == "--timing" or a.startswith("--timing="):
            v = value(a)
            timings = [t for t in v.split(",") if t]
            bad = [t for t in timings if t not in TIMINGS]
            if bad or not timings:
                sys.exit(f"error: --timing {v!r}: valid: {', '.join(TIMINGS)}, comma-separated")
        else:
            rest.append(a)
    if not rest:
        sys.exit("usage: ops_vendor.py SIZES [RUNS] [--timing host-loop|queued|host-loop,queued] [--op OP,...] [--p P]")
    sizes = [count(s) for s in rest[0].split(",")]
    runs = int(rest[1]) if len(rest) > 1 else 100
    return sizes, runs, list(dict.fromkeys(timings)), ops, p


def main():
    sizes, runs, timings, ops, p = arguments(sys.argv[1:])
    for n in sizes:
        libs = [("torch", torch_cases(n, p))] + ([("cupy", cupy_cases(n, p))] if cupy is not None else [])
        for lib, cases in libs:
            # CuPy on torch's current stream: torch's events and sleep order its calls too
            same_stream = (cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream) if lib == "cupy"
                           else contextlib.nullcontext())
            with same_stream:
                # `--op power_sum` keeps the p-norm's rows, `power_sum(P)`
                wanted = (c for c in cases if ops is None or c[0].split("(")[0] in ops)
                run_cases(lib, wanted, n, runs, timings)
            if lib == "cupy":
                cupy.get_default_memory_pool().free_all_blocks()
            torch.cuda.empty_cache()


def run_cases(lib, cases, n, runs, timings):
    """Measure each case of `lib` at size `n` with each timing; print the rows."""
    for op, ty, inputs, make, fn in cases:
        sets = []
        try:
            first = make()
            nbytes = sum(x.nbytes for x in first)
            sets = [first] + [make() for _ in range(copies(nbytes) - 1)]
        except Exception as e:
            row = {"library": lib, "op": op, "ty": ty, "n": n, "error": str(e)[:200]}
            print(json.dumps(row), flush=True)
            continue
        for timing in timings:
            row = {"library": lib, "op": op, "ty": ty, "n": n, "timing": timing}
            try:
                us, margin, sleep_ms = timed_covered(fn, sets, runs, timing)
                row.update(median_us=round(us, 2), gbps=round(nbytes / (us * 1e-6) / 1e9, 1))
                if timing == "queued":
                    row.update(sleep_ms=sleep_ms, margin_ms=round(margin, 2))
            except Exception as e:
                row["error"] = str(e)[:200]
            print(json.dumps(row), flush=True)
        del sets


if __name__ == "__main__":
    main()

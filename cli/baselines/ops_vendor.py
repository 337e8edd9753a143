"""The vendor baselines for `reduce ops`: the same operations in PyTorch and
CuPy (CUB), timed as the Rust side is: CUDA events around the call only,
5 warm-up calls, the median of RUNS calls, inputs rotated through copies that
together exceed the L2 four times, random data. GB/s count every input byte
read. Run on the GPU machine beside `reduce ops` in the same command:

    python3 cli/baselines/ops_vendor.py 2^22,2^28 [RUNS]

Prints one JSON object per line: library, operation, type, n, median_us, gbps.
"""
import json
import os
import statistics
import sys

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


def timed(fn, sets, runs):
    for i in range(5):
        fn(*sets[i % len(sets)])
    torch.cuda.synchronize()
    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(runs)]
    for i, (a, b) in enumerate(pairs):
        args = sets[i % len(sets)]
        a.record()
        fn(*args)
        b.record()
    torch.cuda.synchronize()
    return statistics.median(a.elapsed_time(b) for a, b in pairs) * 1e3  # µs


def torch_cases(n):
    g = torch.Generator(device="cuda").manual_seed(1)
    f32 = lambda: torch.rand(n, device="cuda", generator=g) * 2 - 1  # noqa: E731
    yield "sum", "bf16", 1, lambda: (f32().to(torch.bfloat16),), lambda x: torch.sum(x, dtype=torch.float32)
    yield "sum", "f16", 1, lambda: (f32().to(torch.float16),), lambda x: torch.sum(x, dtype=torch.float32)
    yield "sum", "f32", 1, lambda: (f32(),), torch.sum
    yield "argmax", "f32", 1, lambda: (f32(),), torch.argmax
    yield "dot", "f32", 2, lambda: (f32(), f32()), torch.dot
    yield "norm", "f32", 1, lambda: (f32(),), torch.linalg.vector_norm
    yield "norm", "bf16", 1, lambda: (f32().to(torch.bfloat16),), lambda x: torch.linalg.vector_norm(x, dtype=torch.float32)


def cupy_cases(n):
    rng = cupy.random.default_rng(1)
    f32 = lambda: rng.random(n, dtype=cupy.float32) * 2 - 1  # noqa: E731
    yield "sum", "f16", 1, lambda: (f32().astype(cupy.float16),), lambda x: cupy.sum(x, dtype=cupy.float32)
    yield "sum", "f32", 1, lambda: (f32(),), cupy.sum
    yield "argmax", "f32", 1, lambda: (f32(),), cupy.argmax
    yield "dot", "f32", 2, lambda: (f32(), f32()), cupy.dot
    yield "norm", "f32", 1, lambda: (f32(),), cupy.linalg.norm


def main():
    sizes = [count(s) for s in sys.argv[1].split(",")]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    for n in sizes:
        libs = [("torch", torch_cases(n))] + ([("cupy", cupy_cases(n))] if cupy is not None else [])
        for lib, cases in libs:
            for op, ty, inputs, make, fn in cases:
                try:
                    first = make()
                    nbytes = sum(x.nbytes for x in first)
                    sets = [first] + [make() for _ in range(copies(nbytes) - 1)]
                    us = timed(fn, sets, runs)
                    row = {"library": lib, "op": op, "ty": ty, "n": n, "median_us": round(us, 2),
                           "gbps": round(nbytes / (us * 1e-6) / 1e9, 1)}
                except Exception as e:
                    row = {"library": lib, "op": op, "ty": ty, "n": n, "error": str(e)[:200]}
                print(json.dumps(row), flush=True)
                del sets
            if lib == "cupy":
                cupy.get_default_memory_pool().free_all_blocks()
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()

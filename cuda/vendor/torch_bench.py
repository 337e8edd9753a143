"""Vendor baseline: torch.sum on the GPU, timed like the Rust
kernels: CUDA events around each call, warm-up, median of 100 runs, inputs
rotated over buffers that together exceed the L2 cache.

Run on the GPU machine: python3 cuda/vendor/torch_bench.py
Prints CSV: library,type,n,median_us,min_us,max_us,GB_per_s
(torch.sum of int32 returns int64, as torch defines it.)
"""
import statistics

import torch

props = torch.cuda.get_device_properties(0)
l2 = props.L2_cache_size
print("library,type,n,median_us,min_us,max_us,GB_per_s")
for n in (1 << 16, 1 << 22, 1 << 25, 1 << 28):
    for name, dtype in (("i32", torch.int32), ("f32", torch.float32)):
        nbytes = n * 4
        copies = max(1, -(-4 * l2 // nbytes))
        if dtype == torch.int32:
            bufs = [torch.randint(-(2**31), 2**31 - 1, (n,), dtype=dtype, device="cuda") for _ in range(copies)]
        else:
            bufs = [torch.rand(n, dtype=dtype, device="cuda") * 2 - 1 for _ in range(copies)]
        for i in range(5):
            torch.sum(bufs[i % copies])
        runs = 100
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(runs)]
        for i, (start, stop) in enumerate(events):
            start.record()
            torch.sum(bufs[i % copies])
            stop.record()
        torch.cuda.synchronize()
        ms = sorted(start.elapsed_time(stop) for start, stop in events)
        med = statistics.median(ms)
        print(f"torch,{name},{n},{med * 1e3:.2f},{ms[0] * 1e3:.2f},{ms[-1] * 1e3:.2f},{nbytes / (med * 1e-3) / 1e9:.1f}")
        del bufs

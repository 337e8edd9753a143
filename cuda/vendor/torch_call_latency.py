"""Vendor baseline for `reduce latency`: what the same user-level call
costs in PyTorch, `x.sum().item()` (a reduction whose result reaches the
host), on the host clock, median of 300 calls after 5 warm-up calls,
inputs rotated over buffers that together exceed the L2.

Run on the GPU machine: python3 cuda/vendor/torch_call_latency.py
Prints CSV: library,type,n,median_us
"""
import statistics
import time

import torch

l2 = torch.cuda.get_device_properties(0).L2_cache_size
print("library,type,n,median_us")
for name, dtype in (("f32", torch.float32), ("i32", torch.int32)):
    for n in (1 << 10, 1 << 16, 1 << 20, 1 << 22):
        copies = min(256, max(1, -(-4 * l2 // (4 * n))))
        if dtype == torch.int32:
            bufs = [torch.randint(-1000, 1000, (n,), dtype=dtype, device="cuda") for _ in range(copies)]
        else:
            bufs = [torch.rand(n, dtype=dtype, device="cuda") * 2 - 1 for _ in range(copies)]
        torch.cuda.synchronize()
        times = []
        for i in range(305):
            t = time.perf_counter()
            bufs[i % copies].sum().item()
            if i >= 5:
                times.append(time.perf_counter() - t)
        print(f"torch,{name},{n},{statistics.median(times) * 1e6:.1f}")
        del bufs

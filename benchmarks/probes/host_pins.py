"""Probe: the caller's pages registered chunk by chunk (staging.hpp: HostPins) against pinned
staging (APSP_CUDA_REGISTER=0), end to end from NumPy at n = 10000 int32: in place and the public
call, calls taken in turn, medians of 9 after a warm-up; one traced call of each (APSP_CUDA_TRACE
stages on stderr); the results equal. Needs benchmarks/probes/host_pins.patch applied
(measured, not landed: GPU_NOTES.md, fiftieth session).
Usage: python benchmarks/probes/host_pins.py [N] [REPS]"""
import os
import sys
import time

import numpy as np
import torch

import apsp
from apsp import _core

n = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 10
os.environ["APSP_CUDA_NARROW"] = "0"  # the int32 kernels, as the benchmark's end-to-end rows
rng = np.random.default_rng(1)
g = rng.integers(1, 100, (n, n), dtype=np.int32)
g[rng.random((n, n)) < 0.7] = apsp.INT32_INF
np.fill_diagonal(g, 0)
dev = torch.from_numpy(g).cuda()
for rep in range(3):
    d = dev.clone()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    apsp.solve(d, overwrite=True)
    torch.cuda.synchronize()
    device_ms = 1e3 * (time.perf_counter() - t0)
print(f"device solve {device_ms:.1f} ms (wall, last of 3)")
want = d.cpu().numpy()
work = np.empty_like(g)
ways = {"in place registered": ("1", True), "in place staged": ("0", True),
        "public registered": ("1", False), "public staged": ("0", False)}
times = {k: [] for k in ways}
for rep in range(reps):
    for name, (register, in_place) in ways.items():
        os.environ["APSP_CUDA_REGISTER"] = register
        if rep == 1:
            os.environ["APSP_CUDA_TRACE"] = "1"
            print(f"-- traced: {name}", file=sys.stderr, flush=True)
        if in_place:
            np.copyto(work, g)
            t0 = time.perf_counter()
            _core.solve_host(work, None, "cuda", 0, True, False, True, True, None)
            times[name].append(time.perf_counter() - t0)
            out = work
        else:
            t0 = time.perf_counter()
            out = apsp.solve(g, device="cuda")
            times[name].append(time.perf_counter() - t0)
        os.environ.pop("APSP_CUDA_TRACE", None)
        if rep < 2:
            assert np.array_equal(out, want), name
for name, t in times.items():
    t = 1e3 * np.array(t[1:])
    print(f"{name:22s} median {np.median(t):6.1f} ms  min {t.min():6.1f}  max {t.max():6.1f}  "
          + " ".join(f"{x:.0f}" for x in t))

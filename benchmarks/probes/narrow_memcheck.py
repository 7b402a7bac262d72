"""Probe: solves of the narrow plan forced (src/cuda/narrow.cuh) for compute-sanitizer (memcheck
and racecheck), int32 and int64: ragged and odd n, rows on 16 bytes and on 4 (one-word copies),
super-rounds of 2 and 4 blocks; each equal to the CPU engine's.
Usage: compute-sanitizer --tool memcheck python benchmarks/probes/narrow_memcheck.py"""
import os

import numpy as np
import torch

import apsp

os.environ["APSP_CUDA_TILES"] = "narrow2"
bad = 0
for dtype in (torch.int32, torch.int64):
    for n, pad, plan in ((1, 3, "narrow2"), (129, 0, "narrow2"), (129, 3, "narrow2"),
                         (300, 4, "narrow4"), (301, 1, "narrow4")):
        os.environ["APSP_CUDA_TILES"] = plan
        g = torch.randint(0, 40, (n, n), dtype=dtype, device="cuda")
        g[torch.rand((n, n), device="cuda") < 0.7] = apsp.INT32_INF if dtype == torch.int32 \
            else apsp.INT64_INF
        buf = torch.zeros((n, n + pad), dtype=dtype, device="cuda")
        buf[:, :n] = g
        got = apsp.solve(buf[:, :n])
        want = apsp.solve(g.cpu().numpy(), device="cpu")
        bad += not np.array_equal(got.cpu().numpy(), want)
print(f"narrow solves checked, mismatches: {bad}")

"""Probe (forty-fourth session): a host int32 solve with predecessors whose plan (positive
integer weights, the argmin plan) needs no hop counts, with just over the matrix and the
predecessors free on the GPU: refused by the precheck before this session (it counted n^2 x 8
bytes for predecessors), solved now. Usage: host_precheck.py [N]"""
import sys

import numpy as np
import torch

import apsp

n = int(sys.argv[1]) if len(sys.argv) > 1 else 15000
g = np.random.default_rng(0).integers(1, 100, (n, n)).astype(np.int32)
free, _ = torch.cuda.mem_get_info()
keep = 2 * n * n * 4 + (200 << 20)  # matrix + predecessors + 200 MB, < the old n^2 x 12 bound
blob = torch.empty(free - keep, dtype=torch.uint8, device="cuda")
print(f"n={n}: {torch.cuda.mem_get_info()[0]} bytes free; the old precheck asked "
      f"{3 * n * n * 4 + n * 8 + (8 << 20)}, the matrix and predecessors take {2 * n * n * 4}")
try:
    dist, pred = apsp.solve(g, return_predecessors=True)
    print("solved; predecessor of (0, 1):", pred[0, 1], "distance", dist[0, 1])
except MemoryError as e:
    print("MemoryError:", str(e)[:200])

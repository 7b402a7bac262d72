"""Probe (forty-sixth session): the round loop's graph recorded node by node (src/cuda/graph.cuh)
against the graph that stream capture made of the same round loop, on builds with the
APSP_CUDA_GRAPH_COMPARE hook of `graph_compare.patch` (which applies to commit 41c795b): for each case the engine prints
"graph compare n=N: A nodes recorded, B captured, D differ" (kernel, grid, block, shared memory,
priority, the arguments' bytes and every incoming edge with its type and port). Each result is
also checked against the CPU engine. Usage: graph_compare.py"""
import os

import numpy as np
import torch

import apsp

rng = np.random.default_rng(7)
os.environ["APSP_CUDA_GRAPH_COMPARE"] = "1"


def graph(n, dtype, kind="int"):
    if kind == "frac":
        w = rng.uniform(0.5, 10.0, (n, n))
    elif kind == "neg":  # w + p(i) - p(j): negative edges, no negative cycle
        p = rng.integers(0, 50, n)
        w = rng.integers(1, 100, (n, n)) + 0.25 + p[:, None] - p[None, :]
    else:
        w = rng.integers(1, 100, (n, n))
    g = np.where(rng.random((n, n)) < 0.3, w, np.inf if np.dtype(dtype).kind == "f" else 0)
    if np.dtype(dtype).kind == "i":
        g = np.where(g == 0, apsp.INT32_INF if dtype == np.int32 else apsp.INT64_INF, g)
    np.fill_diagonal(g, 0)
    return g.astype(dtype)


cases = [  # (n, dtype, weights, forced plan, stream priority, padded rows)
    (2000, np.int32, "int", None, 0, False),     # k64w, the chain launched early
    (3000, np.int32, "int", None, 0, False),     # k64d, chain_pdl
    (3500, np.int32, "int", None, 0, False),     # k64d without chain_pdl
    (4096, np.int32, "int", None, 0, False),
    (2000, np.int32, "int", None, -1, False),    # a high-priority stream
    (1999, np.int32, "int", None, 0, True),      # rows not on 16 bytes: no TMA
    (1500, np.int32, "int", "k64q", 0, False),
    (1500, np.int32, "int", "k64o", 0, False),
    (1000, np.int32, "int", "k64w", 0, False),
    (1000, np.int64, "int", None, 0, False),     # 8-byte k64w: no PDL
    (2000, np.int64, "int", None, 0, False),     # k64d, chain_pdl
    (3000, np.int64, "int", None, 0, False),
    (300, np.float64, "frac", None, 0, False),
    (2000, np.float64, "frac", None, 0, False),
    (2000, np.float32, "frac", None, 0, False),  # min3
    (2000, np.float32, "neg", None, 0, False),
    (2000, np.float32, "int", None, 0, False),   # the int32 twin
]
for n, dtype, kind, tiles, priority, padded in cases:
    if tiles:
        os.environ["APSP_CUDA_TILES"] = tiles
    else:
        os.environ.pop("APSP_CUDA_TILES", None)
    g = graph(n, dtype, kind)
    expected = apsp.solve(g, device="cpu")
    stream = torch.cuda.Stream(priority=priority)
    with torch.cuda.stream(stream):
        if padded:
            buf = torch.empty((n, n + 1), dtype=getattr(torch, np.dtype(dtype).name), device="cuda")
            buf[:, :n] = torch.from_numpy(g)
            t = buf[:, :n]
        else:
            t = torch.from_numpy(g).cuda()
        got = apsp.solve(t).cpu().numpy()
        again = apsp.solve(t).cpu().numpy()  # the cached graph
    stream.synchronize()
    # Fractional float weights: the engines sum in different orders, so within rounding; the
    # replayed graph's result is the recorded one's, bit for bit.
    if kind == "frac":
        rtol = 1e-5 if dtype == np.float32 else 1e-12
        right = np.allclose(got, expected, rtol=rtol, atol=0)
    else:
        right = np.array_equal(got, expected)
    ok = right and np.array_equal(got, again)
    print(f"case n={n} {np.dtype(dtype).name} {kind} tiles={tiles} priority={priority} "
          f"padded={padded}: {'right' if ok else 'WRONG'}", flush=True)

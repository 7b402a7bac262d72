"""Probe (forty-sixth session): what a buffer's first solve pays to build the round loop's CUDA
graph (recorded node by node and instantiated: src/cuda/graph.cuh) against the solves that replay
it. Per case, a new torch buffer each time, solved in place: the first solve's wall time (host,
synchronized), then the median of 20 solves of the same buffer; medians over 5 buffers. Then a
loop that keeps every result (`apsp.solve(t)`, a new output buffer each call): past four
buffers of one shape a new buffer takes an older one's graph with its arguments set anew; the
median of 20 such calls after 8 against the in-place replays.
Usage: graph_first_call.py"""
import statistics
import time

import numpy as np
import torch

import apsp

rng = np.random.default_rng(3)


def wall(f):
    torch.cuda.synchronize()
    t = time.perf_counter()
    f()
    torch.cuda.synchronize()
    return time.perf_counter() - t


for dtype, n in (("int64", 1024), ("int32", 2048), ("int32", 4096), ("float64", 2048)):
    firsts, replays, buffers = [], [], []  # every buffer kept: a new address, a new graph each
    for _ in range(5):
        t = torch.from_numpy(rng.integers(1, 100, (n, n)).astype(dtype)).cuda()
        buffers.append(t)

        def solve():
            apsp.solve(t, overwrite=True, check=False)

        firsts.append(wall(solve))
        replays.append(statistics.median(wall(solve) for _ in range(20)))
    first, replay = statistics.median(firsts), statistics.median(replays)
    print(f"{dtype:8s} n={n:5d}: first solve {first * 1e3:8.3f} ms, replay {replay * 1e3:8.3f} ms, "
          f"graph building {1e3 * (first - replay):7.3f} ms", flush=True)

for dtype, n in (("int64", 1024), ("int32", 2048), ("int32", 4096), ("float64", 2048)):
    t = torch.from_numpy(rng.integers(1, 100, (n, n)).astype(dtype)).cuda()
    kept = []

    def keep():
        kept.append(apsp.solve(t, check=False))

    calls = [wall(keep) for _ in range(28)][8:]
    replay = statistics.median(wall(lambda: apsp.solve(t, overwrite=True, check=False))
                               for _ in range(20))
    new = statistics.median(calls)
    print(f"{dtype:8s} n={n:5d}: results kept, a new buffer a call {new * 1e3:8.3f} ms, in place "
          f"{replay * 1e3:8.3f} ms, difference {1e3 * (new - replay):7.3f} ms", flush=True)

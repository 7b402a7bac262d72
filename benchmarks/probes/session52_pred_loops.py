# Fifty-second session: do the CUDA engine's float predecessors loop around zero-weight cycles when
# sums round (as the CPU engine's did before src/core/pred_repair.hpp)? Counts, over the same
# graphs, the solves whose chains do not all lead back: host arrays (mended on the host) and torch
# device arrays (not mended), by dtype and direction; and what the mend costs a host solve.
import os
import sys
import time

import numpy as np
import torch

import apsp

sys.path.insert(0, "tests")
from graphs import assert_chains_lead_back, rounding_zero_cycles, zero_cycle_loop_case  # noqa: E402


def loops(g, dist, pred, directed):
    try:
        assert_chains_lead_back(g, dist, pred, directed=directed)
        return 0
    except AssertionError:
        return 1


graphs = [zero_cycle_loop_case()] + [rounding_zero_cycles((40, 65, 100, 130, 300, 700)[s % 6], s)
                                     for s in range(240)]
for dtype in ("float32", "float64"):
    for directed in (True, False):
        host = device = 0
        for g in graphs:
            g = g.astype(dtype)
            d, p = apsp.solve(g, return_predecessors=True, directed=directed, device="cuda")
            host += loops(g, d, p, directed)
            t = torch.from_numpy(g).cuda()
            d, p = apsp.solve(t, return_predecessors=True, directed=directed)
            device += loops(g, d.cpu().numpy(), p.cpu().numpy(), directed)
        print(f"{dtype} directed={directed}: {len(graphs)} graphs, chains that loop: host {host}, "
              f"torch device {device}", flush=True)

rng = np.random.default_rng(0)
for n in (4096, 8192):
    g = np.where(rng.random((n, n)) < 0.01, rng.random((n, n)) * 100, np.inf).astype(np.float32)
    times = {"1": [], "0": []}
    for _ in range(3):
        for mend in ("1", "0"):  # in turn: the mend on, and off (APSP_PRED_REPAIR=0)
            os.environ["APSP_PRED_REPAIR"] = mend
            t0 = time.perf_counter()
            apsp.solve(g, return_predecessors=True, device="cuda")
            times[mend].append(time.perf_counter() - t0)
    on, off = np.median(times["1"]), np.median(times["0"])
    print(f"float32 n={n} host solve with predecessors: median {on * 1e3:.1f} ms with the mend, "
          f"{off * 1e3:.1f} ms without ({(on / off - 1) * 100:+.1f}%)", flush=True)

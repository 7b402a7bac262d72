# Fifty-third session: the predecessor mend on the device (src/cuda/pred_repair.cu). Counts, over
# the fifty-second session's graphs (float sums that round, zero-weight cycles), the solves whose
# chains do not all lead back, from host arrays and from torch device arrays (both mended on the
# device now); then what the mend costs, in turn with APSP_PRED_REPAIR=0: device time of torch
# solves (CUDA events) and wall time of host solves, on graphs whose rows have no suspect (positive
# weights: one pass a row) and on graphs where most rows have suspects (a tenth of the edges weigh
# 0, or some are negative: the chains are followed by pointer jumping). It replaces the
# fifty-second session's session52_pred_loops.py (in git history), whose count it repeats.
# --cost-only: the cost part alone.
import os
import sys
import time

import numpy as np
import torch

import apsp

sys.path.insert(0, "tests")
from graphs import assert_chains_lead_back, zero_weight_graphs  # noqa: E402


def loops(g, dist, pred, directed):
    try:
        assert_chains_lead_back(g, dist, pred, directed=directed)
        return 0
    except AssertionError:
        return 1


graphs = zero_weight_graphs(240, (40, 65, 100, 130, 300, 700))
for dtype in () if "--cost-only" in sys.argv else ("float32", "float64"):
    for directed in (True, False):
        host = device = 0
        for g in graphs:
            g = g.astype(dtype)
            d, p = apsp.solve(g, return_predecessors=True, directed=directed, device="cuda")
            host += loops(g, d, p, directed)
            t = torch.from_numpy(g).cuda()
            d, p = apsp.solve(t, return_predecessors=True, directed=directed)
            device += loops(g, d.cpu().numpy(), p.cpu().numpy(), directed)
        print(f"{dtype} directed={directed}: {len(graphs)} graphs, solves whose chains loop: "
              f"host {host}, torch device {device}", flush=True)


def family(kind, n, rng):
    w = np.round(rng.random((n, n)) * 100, 2)
    if kind == "zero edges":
        w[rng.random((n, n)) < 0.1] = 0.0
    if kind == "negative edges":  # potentials keep every cycle non-negative
        pot = rng.random(n) * 50
        w = w + pot[:, None] - pot[None, :]
    return np.where(rng.random((n, n)) < 0.01, w, np.inf).astype(np.float32)


def device_ms(t):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    apsp.solve(t, return_predecessors=True)
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def host_ms(g):
    t0 = time.perf_counter()
    apsp.solve(g, return_predecessors=True, device="cuda")
    return (time.perf_counter() - t0) * 1e3


rng = np.random.default_rng(0)
for kind in ("positive", "zero edges", "negative edges"):
    for n in (1024, 4096, 8192):
        g = family(kind, n, rng)
        t = torch.from_numpy(g).cuda()
        dev = {"1": [], "0": []}
        host = {"1": [], "0": []}
        for _ in range(5):
            for mend in ("1", "0"):  # in turn: the mend on, and off
                os.environ["APSP_PRED_REPAIR"] = mend
                dev[mend].append(device_ms(t))
                host[mend].append(host_ms(g))
        os.environ["APSP_PRED_REPAIR"] = "1"
        don, doff = np.median(dev["1"]), np.median(dev["0"])
        hon, hoff = np.median(host["1"]), np.median(host["0"])
        print(f"float32 {kind:14s} n={n:5d} with predecessors, medians of 5: torch device "
              f"{don:8.2f} ms with the mend, {doff:8.2f} without ({(don / doff - 1) * 100:+5.1f}%); "
              f"NumPy host {hon:8.2f} / {hoff:8.2f} ms ({(hon / hoff - 1) * 100:+5.1f}%)",
              flush=True)

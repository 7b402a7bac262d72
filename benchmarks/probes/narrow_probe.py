"""Probe of the narrow plan (src/cuda/narrow.cuh), forty-seventh session.
  check: forced narrow2 and narrow4 solves of int32 and int64 graphs (small weights, zeros, no
         edges; unweighted; undirected; views with ld > n) equal to the CPU engine's, and the
         engine's trace naming the plan.
  time:  device times (bench_gpu.py's time_device, checks on: the scan chooses the plan) of graphs
         whose paths fit 15 bits, narrow (the engine's choice, and each depth forced) against the
         32- and 64-bit plans on the same graph (APSP_CUDA_NARROW=0).
  floats: the same for float32 and float64 matrices of whole weights (forty-eighth session):
         where the narrow plan starts to beat their own plans.
Usage: python benchmarks/probes/narrow_probe.py check|time|floats"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import numpy as np  # noqa: E402
import torch  # noqa: E402

import apsp  # noqa: E402
from bench_gpu import INT_INF, env_set, time_device  # noqa: E402


def graph(n, dtype, top, seed=1, none=0.7, device="cuda"):
    """Weights 0..top (zeros included), `none` of the pairs without an edge."""
    g = torch.Generator(device=device).manual_seed(seed)
    w = torch.randint(0, top + 1, (n, n), generator=g, device=device, dtype=torch.int64)
    t = w.to(getattr(torch, dtype))
    t[torch.rand((n, n), generator=g, device=device) < none] = INT_INF.get(dtype, float("inf"))
    return t


def check():
    bad = 0
    cases = []
    for dtype in ("int32", "int64"):
        for n in (1, 2, 3, 31, 127, 128, 129, 255, 256, 257, 300, 1000, 1001, 2049, 4097):
            cases.append((dtype, n, "narrow2", {}))
        for n in (383, 640, 2111, 6145):
            cases.append((dtype, n, "narrow4", {}))
        cases.append((dtype, 1001, "narrow2", {"unweighted": True}))
        cases.append((dtype, 1000, "narrow4", {"directed": False}))
        cases.append((dtype, 777, "narrow2", {"ld": 800}))
        cases.append((dtype, 1501, "narrow4", {"ld": 1536}))
        for n in (1, 3, 129, 1001, 2049):  # rows on 4 bytes: the one-word copies
            cases.append((dtype, n, "narrow2" if n < 2000 else "narrow4", {"plain": True}))
        cases.append((dtype, 1001, "narrow2", {"chain": 32}))  # dist[0][1000] = 32000
        cases.append((dtype, 2049, "narrow4", {"chain": 15}))  # 30720
    for dtype, n, plan, kw in cases:
        top = max(1, min(50, 32766 // max(n - 1, 1)))
        # rows on 16 bytes unless the case asks for ld = n (then on 4 bytes where n is odd)
        ld = kw.pop("ld", n if kw.pop("plain", False) else -(-n // 4) * 4)
        chain = kw.pop("chain", 0)
        base = graph(n, dtype, top, seed=n, none=0.9 if n > 500 else 0.6)
        if chain:  # the longest paths the plan takes: a chain of heavy edges, nothing shorter
            top = chain
            base[:] = INT_INF[dtype]
            idx = torch.arange(n - 1, device="cuda")
            base[idx, idx + 1] = chain
        buf = torch.full((n, ld), 7, dtype=base.dtype, device="cuda")
        buf[:, :n] = base
        view = buf[:, :n]
        with env_set(APSP_CUDA_TILES=plan):
            got = apsp.solve(view, **kw)
        want = apsp.solve(base.cpu().numpy(), device="cpu", **kw)
        same = np.array_equal(got.cpu().numpy(), want)
        pad_kept = bool((buf[:, n:] == 7).all()) if ld > n else True
        ok = same and pad_kept
        bad += not ok
        print(f"{dtype} n={n} {plan} {kw} ld={ld} max w={top}: {'ok' if ok else 'MISMATCH'}"
              f"{'' if pad_kept else ' (padding changed)'}", flush=True)
    # The trace names the plan the engine chose by itself.
    code = ("import torch, apsp; g = torch.ones((3000, 3000), dtype=torch.int32, device='cuda');"
            "apsp.solve(g)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, "APSP_CUDA_TRACE": "1"})
    print("trace:", [ln for ln in r.stderr.splitlines() if "plan" in ln], flush=True)
    print("mismatches:", bad)


def timing(cases=(("int32", 3328, 9), ("int32", 3584, 9), ("int32", 3840, 8), ("int32", 10000, 3),
                  ("int32", 10001, 3), ("int64", 256, 99), ("int64", 384, 80), ("int64", 512, 60),
                  ("int64", 768, 40), ("int64", 1024, 30), ("int64", 2048, 15))):
    for dtype, n, top in cases:
        g = graph(n, dtype, top)
        g[g == 0] = 1
        row = []
        for name, env in [("auto", {}), ("narrow2", {"APSP_CUDA_TILES": "narrow2"}),
                          ("narrow4", {"APSP_CUDA_TILES": "narrow4"}),
                          ("wide", {"APSP_CUDA_NARROW": "0"})]:
            with env_set(**env):
                s = min(time_device(g, 3, True) for _ in range(2))
            row.append(f"{name} {s * 1e3:9.3f} ms {n ** 3 / s / 1e12:6.2f} T")
        print(f"{dtype} n={n} w<={top}: " + " | ".join(row), flush=True)
        del g
        torch.cuda.empty_cache()


def floats():
    timing((("float32", 2816, 11), ("float32", 3072, 10), ("float32", 3328, 9),
            ("float32", 3584, 9), ("float32", 4096, 7), ("float32", 10000, 3),
            ("float64", 256, 99), ("float64", 320, 99), ("float64", 384, 80),
            ("float64", 512, 60), ("float64", 1024, 30), ("float64", 10000, 3)))


if __name__ == "__main__":
    {"check": check, "time": timing, "floats": floats}[sys.argv[1]]()

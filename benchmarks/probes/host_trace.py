"""Where the host path's time goes at n = 10000 int32 (probe): the device time alone, then the
public call and the in-place solve with the upload overlapped with the rounds and without
(APSP_CUDA_OVERLAP=0), calls taken in turn, each stage timed by APSP_CUDA_TRACE=1 (stderr)."""
import os
import sys
import time

import numpy as np
import torch

import apsp
from apsp import _core

n = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 6
rng = np.random.default_rng(0)
g = rng.integers(1, 1000, size=(n, n), dtype=np.int32)
g[rng.random((n, n)) > 0.05] = apsp.INT32_INF
np.fill_diagonal(g, 0)
dev = torch.from_numpy(g).cuda()
for rep in range(4):
    d = dev.clone()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    apsp.solve(d, overwrite=True)
    torch.cuda.synchronize()
    print(f"device solve {1e3 * (time.perf_counter() - t0):.1f} ms", file=sys.stderr, flush=True)
want = d.cpu().numpy()
os.environ["APSP_CUDA_TRACE"] = "1"
work = np.empty_like(g)
times = {}
for rep in range(reps):
    for overlap in ("1", "0"):
        os.environ["APSP_CUDA_OVERLAP"] = overlap
        t0 = time.perf_counter()
        out = apsp.solve(g, device="cuda")
        t1 = time.perf_counter()
        np.copyto(work, g)
        t2 = time.perf_counter()
        _core.solve_host(work, None, "cuda", 0, True, False, True, True, None)
        t3 = time.perf_counter()
        assert np.array_equal(out, want) and np.array_equal(work, want)
        times.setdefault(("public", overlap), []).append(t1 - t0)
        times.setdefault(("in place", overlap), []).append(t3 - t2)
        print(f"== overlap={overlap} public {1e3 * (t1 - t0):.1f} ms, in place {1e3 * (t3 - t2):.1f} ms",
              file=sys.stderr, flush=True)
for k, v in sorted(times.items()):
    v = np.array(v[1:]) * 1e3
    print(f"SUMMARY {k[0]:8s} overlap={k[1]}: median {np.median(v):.1f} ms, min {v.min():.1f}, max {v.max():.1f}",
          file=sys.stderr, flush=True)

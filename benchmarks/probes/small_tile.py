# Fifty-ninth session: the small plan's 32 x 32 tile for n <= 32 (small.cuh) against the 64 x 64
# one it had. GPU time only: a spin kernel goes first so that the whole call is enqueued before
# the GPU reaches the start event (check=False: no host syncs), as bench_gpu.py's time_device.
# Run once per build (PYTHONPATH), label first:
#   python benchmarks/probes/small_tile.py LABEL [cross]
import os
import sys

import numpy as np
import torch

import apsp

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from bench_batch import events  # noqa: E402


def gpu_time(prepare, call) -> float:
    """Median µs of 20 calls by CUDA events (bench_batch.events), prepare() and a spin kernel
    ahead of each start event."""
    return events(torch, call, 20, before=lambda: (prepare(), torch.cuda._sleep(2_000_000))) * 1e6


# (graphs, n); `cross` (second argument): around the 32 x 32 tile's threshold, 2 x the SMs
SIZES = ((1, 32), (1, 64), (1024, 16), (1024, 32), (8192, 32), (65535, 32), (1024, 48), (8192, 64))
CROSS = ((1, 32), (66, 32), (132, 32), (198, 32), (264, 32), (396, 32), (528, 32), (1024, 32))


def main() -> None:
    label, cross = sys.argv[1], sys.argv[2:] == ["cross"]
    rng = np.random.default_rng(3)
    print(f"{label}: {torch.cuda.get_device_name()}, GPU µs, median of 20, check=False, in place")
    for dtype in (np.int32, np.float32) if cross else (np.int32, np.float32, np.float64):
        for count, n in CROSS if cross else SIZES:
            host = rng.integers(1, 100, size=(count, n, n)).astype(dtype)
            orig = torch.from_numpy(host).cuda()
            work = orig.clone()
            if count == 1:
                call = lambda: apsp.solve(work[0], overwrite=True, check=False)  # noqa: E731
            else:
                call = lambda: apsp.solve_batch(work, overwrite=True, check=False)  # noqa: E731
            t = gpu_time(lambda: work.copy_(orig), call)
            want = apsp.solve_batch(host[:64], device="cpu")
            work.copy_(orig)
            call()
            ok = np.array_equal(work[:64].cpu().numpy(), want)
            print(f"{label} {np.dtype(dtype).name:8s} {count:6d} x n={n:3d}: {t:9.1f} µs "
                  f"equal {ok}", flush=True)


if __name__ == "__main__":
    main()

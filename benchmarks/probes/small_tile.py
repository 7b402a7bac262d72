# Fifty-ninth session: the small plan's 32 x 32 tile for n <= 32 (small.cuh) against the 64 x 64
# one it had. GPU time only: a spin kernel goes first so that the whole call is enqueued before
# the GPU reaches the start event (check=False: no host syncs), as bench_gpu.py's time_device.
# Run once per build (PYTHONPATH), label first:
#   python benchmarks/probes/small_tile.py LABEL [cross]
import sys

import numpy as np
import torch

import apsp


def gpu_time(prepare, call, reps=20) -> float:
    s = torch.cuda.current_stream()
    times = []
    for rep in range(reps + 1):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        prepare()
        torch.cuda._sleep(2_000_000)
        start.record(s)
        call()
        end.record(s)
        end.synchronize()
        if rep:
            times.append(start.elapsed_time(end) * 1e3)
    return float(np.median(times))


# (graphs, n); `cross` (second argument): around the 32 x 32 tile's threshold, 2 x the SMs
SIZES = ((1, 32), (1, 64), (1024, 16), (1024, 32), (8192, 32), (65535, 32), (1024, 48), (8192, 64))
CROSS = ((1, 32), (66, 32), (132, 32), (198, 32), (264, 32), (396, 32), (528, 32), (1024, 32))


def main() -> None:
    global SIZES
    label = sys.argv[1]
    if sys.argv[2:] == ["cross"]:
        SIZES = CROSS
    rng = np.random.default_rng(3)
    print(f"{label}: {torch.cuda.get_device_name()}, GPU µs, median of 20, check=False, in place")
    for dtype in (np.int32, np.float32, np.float64)[:2 if SIZES is CROSS else 3]:
        for count, n in SIZES:
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

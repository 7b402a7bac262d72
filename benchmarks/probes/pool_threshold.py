# Fifty-ninth session: do checked solves pay for the stream-ordered pool giving its memory back?
# The default pool's release threshold is 0: at every synchronization the driver returns unused
# pool memory to the OS, so each checked call's cudaMallocAsync (statistics, negative-vertex
# list) maps fresh memory while the GPU waits. Times checked solves (device arrays, CUDA events,
# the calls' own host syncs inside) as the pool comes, then with the threshold raised through
# libcuda (CU_MEMPOOL_ATTR_RELEASE_THRESHOLD), and prints both.
#   python benchmarks/probes/pool_threshold.py [THRESHOLD_BYTES]
import ctypes
import os
import sys

import numpy as np
import torch

import apsp

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from bench_batch import events  # noqa: E402

RELEASE_THRESHOLD = 4  # CU_MEMPOOL_ATTR_RELEASE_THRESHOLD (cuda.h), a cuuint64_t


def set_threshold(value: int) -> None:
    cuda = ctypes.CDLL("libcuda.so.1")
    dev, pool = ctypes.c_int(), ctypes.c_void_p()
    assert cuda.cuDeviceGet(ctypes.byref(dev), torch.cuda.current_device()) == 0
    assert cuda.cuDeviceGetDefaultMemPool(ctypes.byref(pool), dev) == 0
    v = ctypes.c_uint64(value)
    assert cuda.cuMemPoolSetAttribute(pool, RELEASE_THRESHOLD, ctypes.byref(v)) == 0


def timed(call) -> float:
    """Median µs of 30 calls by CUDA events (bench_batch.events)."""
    return events(torch, call, 30) * 1e6


def cases():
    rng = np.random.default_rng(1)
    for n in (64, 256, 1024):
        g = torch.from_numpy(rng.integers(1, 100, size=(n, n)).astype(np.int32)).cuda()
        yield f"solve int32 n={n}", lambda g=g: apsp.solve(g)
    for count, n in ((1024, 32), (4096, 64), (256, 256)):
        g = torch.from_numpy(rng.integers(1, 100, size=(count, n, n)).astype(np.int32)).cuda()
        yield f"solve_batch int32 {count}x{n}", lambda g=g: apsp.solve_batch(g)


def main() -> None:
    threshold = int(sys.argv[1]) if len(sys.argv) > 1 else 64 << 20
    rows = list(cases())
    before = {name: timed(call) for name, call in rows}
    set_threshold(threshold)
    after = {name: timed(call) for name, call in rows}
    print(f"{torch.cuda.get_device_name()}: checked calls, median µs (CUDA events, 30 reps)")
    print(f"{'call':32s} {'threshold 0':>12s} {'threshold ' + str(threshold >> 20) + ' MiB':>18s}")
    for name, _ in rows:
        print(f"{name:32s} {before[name]:12.1f} {after[name]:18.1f}")


if __name__ == "__main__":
    main()

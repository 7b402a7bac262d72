"""Unchecked device-array splits back to back with the helper GPU nearly full (run alone: its
ballast would starve tests running beside it). The host does not wait for a split's helper
buffers to go back (engine.cu: enqueue_split), so the next split's memory check finds them still
taken; it must wait for that work (require_helper_memory) instead of raising MemoryError.
Usage: python benchmarks/probes/split_memory_limit.py [n]"""
import sys

import numpy as np
import torch

sys.path.insert(0, "benchmarks")
import apsp  # noqa: E402
from timing import engine_trace  # noqa: E402

n = int(sys.argv[1]) if len(sys.argv) > 1 else 16384
rng = np.random.default_rng(0)
g = rng.integers(1, 100, size=(n, n)).astype(np.int32)
g[rng.random((n, n)) < 0.7] = apsp.INT32_INF
t = torch.from_numpy(g).cuda(0)
want = apsp.solve(t, device="cuda:0")
torch.cuda.synchronize(1)
copy_bytes = n * n * 4
free = torch.cuda.mem_get_info(1)[0]
ballast = torch.empty(max(0, free - copy_bytes * 3 // 2), dtype=torch.uint8, device="cuda:1")
print(f"cuda:1 left with {torch.cuda.mem_get_info(1)[0] / 2**30:.2f} GiB for copies of "
      f"{copy_bytes / 2**30:.2f} GiB", flush=True)
results, lines = engine_trace(
    lambda: [apsp.solve(t, device=["cuda:0", "cuda:1"], check=False) for _ in range(3)],
    "apsp cuda: rounds split")
torch.cuda.synchronize(0)
torch.cuda.synchronize(1)
del ballast
ok = all(torch.equal(r, want) for r in results) and len(lines) == 3
print(f"three unchecked splits back to back, n = {n}: no MemoryError, {len(lines)} split, equal "
      f"to one GPU's: {ok}")
sys.exit(0 if ok else 1)

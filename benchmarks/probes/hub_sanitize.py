"""Probe (forty-ninth session): hub-bound solves for compute-sanitizer (memcheck, racecheck):
float64 at n = 1024 (the 8-byte threshold), taken (random weights, directed and undirected, a
view with ld > n) and refused (a lonely hub), each checked against the CPU engine's own solve."""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests"))
import apsp  # noqa: E402
from graphs import random_graph  # noqa: E402

n = 1024
rng = np.random.default_rng(5)
for case in ("directed", "undirected", "view", "lonely hub"):
    w = random_graph(rng, n, np.float64)
    if case == "lonely hub":
        w[0, 1:] = w[1:, 0] = np.inf
    directed = case != "undirected"
    os.environ["APSP_CPU_NARROW"] = "0"
    want = apsp.solve(w, device="cpu", directed=directed)
    if case == "view":
        buf = torch.full((n, n + 5), 7.0, dtype=torch.float64, device="cuda")
        t = buf[:, 2:2 + n]
        t.copy_(torch.from_numpy(w))
        got = apsp.solve(t, overwrite=True).cpu().numpy()
        assert bool((buf[:, :2] == 7).all()) and bool((buf[:, 2 + n:] == 7).all())
    else:
        got = apsp.solve(w, device="cuda", directed=directed)
    assert np.array_equal(got, want), case
    print(case, "equal to the CPU engine", flush=True)

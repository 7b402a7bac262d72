"""compute-sanitizer's memcheck over host solves through registered pages (session50.sh
sanitize): in place and into a new array, upload first and solved while it arrives, chunks of
less than a page, a view with ld > n, pages refused (registered by the caller) and staged.
Needs benchmarks/probes/host_pins.patch applied (measured, not landed)."""
import os

import cupy
import numpy as np

import apsp
from apsp import _core

os.environ["APSP_CUDA_REGISTER"] = "1"
rng = np.random.default_rng(3)


def graph(n, dtype):
    g = rng.integers(1, 60, (n, n)).astype(dtype)
    g[rng.random((n, n)) > 0.3] = np.inf if np.dtype(dtype).kind == "f" else apsp.INT32_INF
    np.fill_diagonal(g, 0)
    return g


for n, dtype, rows in ((200, np.float32, "3"), (4200, np.int32, "700")):
    os.environ["APSP_CUDA_STAGING_ROWS"] = rows
    g = graph(n, dtype)
    buf = np.full((n, n + 5), 7, dtype)
    buf[:, :n] = g
    _core.solve_host(buf[:, :n], None, "cuda", 0, True, False, True, True, None, None)
    out = np.empty_like(g)
    _core.solve_host(g, None, "cuda", 0, True, False, True, True, None, out)
    assert np.array_equal(out, buf[:, :n]) and (buf[:, n:] == 7).all()
    cupy.cuda.runtime.hostRegister(g.ctypes.data, g.nbytes, 0)
    again = np.empty_like(g)
    _core.solve_host(g, None, "cuda", 0, True, False, True, True, None, again)
    cupy.cuda.runtime.hostUnregister(g.ctypes.data)
    assert np.array_equal(again, out)
print("host pins under the sanitizer: ok")

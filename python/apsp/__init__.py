"""apsp: all-pairs shortest paths by blocked Floyd-Warshall on NVIDIA GPUs, with a fast
multi-threaded CPU engine where there is no GPU.

>>> import numpy as np, apsp
>>> g = np.array([[0, 4, np.inf], [np.inf, 0, 1], [2, np.inf, 0]])
>>> apsp.solve(g)
array([[0., 4., 5.],
       [3., 0., 1.],
       [2., 6., 0.]])
"""
from ._core import INT32_INF, INT64_INF
from ._errors import NegativeCycleError
from ._batch import solve_batch
from ._info import info
from ._paths import path
from ._scipy_compat import floyd_warshall
from ._solve import solve
from ._validate import VALIDATE_MAX_N, validate
from . import io

__version__ = "0.1.0"

__all__ = [
    "INT32_INF",
    "INT64_INF",
    "NegativeCycleError",
    "VALIDATE_MAX_N",
    "floyd_warshall",
    "info",
    "io",
    "path",
    "solve",
    "solve_batch",
    "validate",
]

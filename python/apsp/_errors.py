"""apsp's own exception types (the others are Python's built-ins, see DESIGN's error contract)."""
from __future__ import annotations

try:  # so that existing `except scipy.sparse.csgraph.NegativeCycleError` clauses keep working
    from scipy.sparse.csgraph import NegativeCycleError as _ScipyNegativeCycleError
except ImportError:  # pragma: no cover - SciPy is a dependency, but stay importable without it
    _ScipyNegativeCycleError = Exception  # type: ignore[misc, assignment]


class NegativeCycleError(ValueError, _ScipyNegativeCycleError):  # type: ignore[misc]
    """The graph has a negative cycle, so shortest paths are undefined.

    ``vertices`` lists vertices whose shortest closed walk is negative (each lies on or reaches
    back through a negative cycle).
    """

    vertices: list[int]

    def __init__(self, message: str = "", vertices: list[int] | None = None) -> None:
        super().__init__(message)
        self.vertices = list(vertices) if vertices is not None else []

    def __reduce__(self) -> tuple:  # keep `vertices` across pickling (multiprocessing)
        return (type(self), (str(self), self.vertices))

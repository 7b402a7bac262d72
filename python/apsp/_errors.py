"""apsp's own exception types (the others are Python's built-ins, see DESIGN's error contract)."""
from __future__ import annotations

try:  # so that existing `except scipy.sparse.csgraph.NegativeCycleError` clauses keep working
    from scipy.sparse.csgraph import NegativeCycleError as _ScipyNegativeCycleError
except ImportError:  # pragma: no cover - SciPy is a dependency, but stay importable without it
    _ScipyNegativeCycleError = Exception  # type: ignore[misc, assignment]


class NegativeCycleError(ValueError, _ScipyNegativeCycleError):  # type: ignore[misc]
    """The graph has a negative cycle, so shortest paths are undefined.

    ``vertices`` lists the vertices found on negative closed walks (each lies on or reaches back
    through a negative cycle; every vertex of a negative simple cycle is among them). For integer
    inputs of up to 4096 vertices it is exact, every vertex whose strong component holds a
    negative cycle, since the engines' integer walks can wrap around the dtype; past that, or
    with ``overwrite=True``, it is the engines' list (see README's error contract).
    ``cycle`` is one negative cycle in path order (``cycle[0] -> cycle[1] -> ... -> cycle[0]``)
    when :func:`apsp.solve` or :func:`apsp.floyd_warshall` could find one in the untouched
    input, else ``[]`` (``overwrite=True``, over 4096 vertices in ``vertices``, or a search past
    its work bound).
    ``graph`` is the index of the graph in a batch (:func:`apsp.solve_batch`), ``None`` for one
    graph; ``vertices`` and ``cycle`` are then that graph's.
    """

    vertices: list[int]
    cycle: list[int]
    graph: int | None

    def __init__(self, message: str = "", vertices: list[int] | None = None,
                 cycle: list[int] | None = None, graph: int | None = None) -> None:
        super().__init__(message)
        self.vertices = list(vertices) if vertices is not None else []
        self.cycle = list(cycle) if cycle is not None else []
        self.graph = graph

    def add_cycle(self, cycle: list[int], weight: float) -> None:
        """Put one negative cycle, in order, first in the message."""
        path = " -> ".join(str(v) for v in [*cycle, cycle[0]])
        rest = str(self).removeprefix("the graph has a negative cycle: ")
        self.args = (f"the graph has a negative cycle: {path} (total weight {weight:g}); {rest}",)
        self.cycle = list(cycle)

    def set_vertices(self, vertices: list[int]) -> None:
        """Replace the engine's list by the exact one (every vertex on a negative closed walk)."""
        shown = ", ".join(str(v) for v in vertices[:10])
        more = f", ... ({len(vertices)} in all)" if len(vertices) > 10 else ""
        self.args = (f"the graph has a negative cycle: vertices on negative closed walks: "
                     f"{shown}{more}",)
        self.vertices = list(vertices)

    def __reduce__(self) -> tuple:  # keep the attributes across pickling (multiprocessing)
        return (type(self), (str(self), self.vertices, self.cycle, self.graph))

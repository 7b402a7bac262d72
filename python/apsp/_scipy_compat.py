"""apsp.floyd_warshall: a drop-in for scipy.sparse.csgraph.floyd_warshall with SciPy's input
semantics, computed by apsp's engines. It translates SciPy's conventions into apsp's (non-edges
become +inf, the diagonal 0) and then calls the same solve as apsp.solve; no algorithm here."""
from __future__ import annotations

from typing import Any

import numpy as np

from ._memory import check_host_memory, new_arrays
from ._sparse import densify


# SciPy reads a plain dense input through np.ma.masked_values(graph, 0): for floating dtypes
# that masks every entry np.isclose to 0 (|w| <= 1e-8 at its default tolerances), so a weight
# that small is not an edge there. Evaluated a block of rows at a time, in the input's own dtype
# as NumPy does, to keep its temporaries small.
_ROWS_ELEMENTS = 1 << 22


def _clear_zeros(src: np.ndarray, data: np.ndarray) -> None:
    """data[i, j] = +inf where SciPy's dense reading of src[i, j] is "no edge" (zero, or for
    floating dtypes within np.isclose's default tolerance of it)."""
    rows = max(1, _ROWS_ELEMENTS // max(src.shape[1], 1))
    floating = src.dtype.kind == "f"
    for r in range(0, src.shape[0], rows):
        block = src[r:r + rows]
        zero = np.isclose(block, 0) if floating else block == 0
        data[r:r + rows][zero] = np.inf


def _scipy_dense_graph(csgraph: Any, in_place: bool) -> np.ndarray:
    """float64 (n, n) with +inf for non-edges and 0 on the diagonal, as SciPy's floyd_warshall
    sees its input: sparse stored entries are edges (explicit zeros too, duplicates -> minimum,
    a NaN among them ignored); for dense arrays, zeros (and floats within np.isclose of zero)
    are non-edges, for masked arrays exact zeros; masked entries, NaN and +-inf are non-edges
    everywhere. `in_place`: rewrite `csgraph`'s own memory (a float64 C-ordered ndarray)."""
    from ._intake import classify

    if classify(csgraph) == "sparse":
        data = densify(csgraph, np.dtype(np.float64), skip_nan=True)
        if np.isneginf(data).any():  # SciPy would spread the -inf; apsp computes finite weights
            i, j = (int(v) for v in np.argwhere(np.isneginf(data))[0])
            raise ValueError(f"csgraph[{i}, {j}] is a stored -inf edge: apsp computes with finite "
                             "weights (SciPy would report -inf for every path through it); store "
                             "a finite weight, or drop the entry if it is not an edge")
    else:
        src = np.asarray(csgraph)  # once: a list is converted here only (a masked array's view)
        if src.dtype.kind in "mM":  # SciPy refuses these too
            raise TypeError(f"csgraph has dtype {src.dtype}: dates and time spans are not "
                            "weights; pass numbers (for example .astype(np.float64))")
        if isinstance(csgraph, np.ma.MaskedArray):
            data = np.ascontiguousarray(csgraph.astype(np.float64).filled(np.inf))  # a new plain ndarray
            data[data == 0] = np.inf
        elif in_place:
            data = src  # the caller's memory (a base-class view of a subclass)
            _clear_zeros(data, data)
        else:
            data = np.array(src, dtype=np.float64, order="C")  # always a copy: SciPy never writes its input here
            _clear_zeros(src if src.dtype.kind == "f" else data, data)
    data[~np.isfinite(data)] = np.inf
    np.fill_diagonal(data, 0.0)
    return data


def _scipy_subgraph(csgraph: Any, idx: np.ndarray) -> np.ndarray:
    """_scipy_dense_graph of the subgraph between vertices `idx` (for the negative-cycle search)."""
    from ._cycles import sparse_subgraph
    from ._intake import classify

    if classify(csgraph) == "sparse":
        return _scipy_dense_graph(sparse_subgraph(csgraph, idx), False)
    if isinstance(csgraph, np.ma.MaskedArray):
        return _scipy_dense_graph(csgraph[np.ix_(idx, idx)], False)
    return _scipy_dense_graph(np.asarray(csgraph)[np.ix_(idx, idx)], False)


def floyd_warshall(
    csgraph: Any,
    directed: bool = True,
    return_predecessors: bool = False,
    unweighted: bool = False,
    overwrite: bool = False,
) -> Any:
    """Same inputs and results as :func:`scipy.sparse.csgraph.floyd_warshall`, only faster.

    Parameters and results are SciPy's: ``csgraph`` is a dense array (zeros, +-inf and NaN are
    non-edges; as in SciPy, so are float weights within ``np.isclose``'s default tolerance of
    zero, ``|w| <= 1e-8``), a masked array (masked entries and zeros are non-edges) or a
    scipy.sparse matrix (stored entries are edges, explicit zeros too; duplicates take the
    minimum). The diagonal is forced to 0 (so a negative self-loop is ignored, as in SciPy),
    the result is float64 with +inf where there is no path, and ``return_predecessors=True``
    adds an int32 ``pred`` with -9999 where there is none. Where several shortest paths tie,
    ``pred`` may pick another one than SciPy does. Runs on the first usable GPU, else on the
    CPU engine.

    ``overwrite=True`` computes in ``csgraph`` itself when it is a writable, C-ordered float64
    ndarray, subclasses such as ``np.memmap`` included (as in SciPy, where it only applies
    then); otherwise it is ignored.

    Raises :class:`apsp.NegativeCycleError`, which is also a
    ``scipy.sparse.csgraph.NegativeCycleError``, so existing ``except`` clauses keep working;
    its ``cycle`` is one negative cycle in order (not with ``overwrite=True``). Unlike SciPy,
    raises ``OverflowError`` where path lengths could pass float64's largest finite value
    ((n - 1) * max|w| near 1.8e308), instead of letting sums round to inf: use +inf, not a huge
    finite value, for a missing edge.
    """
    from ._errors import NegativeCycleError
    from ._solve import check_square, solve_host

    shape = tuple(getattr(csgraph, "shape", np.shape(csgraph)))
    check_square(shape, "csgraph")
    in_place = (overwrite and isinstance(csgraph, np.ndarray)
                and not isinstance(csgraph, np.ma.MaskedArray) and csgraph.dtype == np.float64
                and csgraph.flags.c_contiguous and csgraph.flags.writeable
                and csgraph.flags.aligned)
    need, what = new_arrays(shape[0], None if in_place else "float64", return_predecessors)
    check_host_memory(need, what, "use a machine with more memory" if in_place else
                      "overwrite=True on a writable C-ordered float64 array computes in it instead")
    work = _scipy_dense_graph(csgraph, in_place)
    try:
        return solve_host(work, directed=directed, unweighted=unweighted,
                          return_predecessors=return_predecessors, overwrite=True, device=None,
                          progress=False)
    except NegativeCycleError as exc:
        from ._cycles import MAX_VERTICES, cycle_in

        if not in_place and 0 < len(exc.vertices) <= MAX_VERTICES:  # csgraph is untouched
            idx = np.asarray(exc.vertices, dtype=np.int64)
            sub = _scipy_subgraph(csgraph, idx)
            found = cycle_in(sub, sub < np.inf, idx, directed)
            if found is not None:
                exc.add_cycle(*found)
        raise

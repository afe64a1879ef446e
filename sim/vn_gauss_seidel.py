"""Gauss-Seidel settle of a float VN graph: the fast solver (the Engine's Jacobi ISTA models the chip).

The Engine runs VN atoms synchronously (Jacobi ISTA, units_vn.py): every atom moves eta = 1/L
of the way along its gradient per step and its change event arrives one step later, as on the
chip. That is the mode for chip equivalence, event counting and Lava export. This module solves
the same energy 1/2 g^T H g - b^T g + sum_i lam_i |g_i| on the same graph (H: the projections'
weights, b: the drives) by cyclic coordinate descent: atom i in turn jumps to the exact minimum
along its own coordinate,

    g_i <- soft(g_i + (b_i - c_i) / H_ii, lam_i / H_ii),     c = H g,

and its change event d = g_i(new) - g_i(old) is applied at once (c += H[:, i] d), so the next
atom sees it. Sweeps stop when the largest change in a sweep is at most `tol` times the largest
|g| (or g stays zero). Each change is one event and costs one column of H (its synaptic ops).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from atomspark.sim.core import AtomsparkError, as_finite_array, require_int, require_positive
from atomspark.sim.dtypes import FLOAT_DTYPES
from atomspark.sim.graph import Graph
from atomspark.sim.units.vn import VNParams
from numba import njit


@dataclass(frozen=True)
class SettleResult:
    """codes: {population: g}; sweeps run; events (nonzero changes) and synaptic ops applied;
    converged: the stopping rule was met within max_sweeps."""

    codes: dict[str, np.ndarray]
    sweeps: int
    events: int
    synops: int
    converged: bool


class GaussSeidelSettle:
    """Coordinate-descent settle of a graph of float VN populations (built once per graph)."""

    def __init__(self, graph: Graph) -> None:
        if not isinstance(graph, Graph):
            raise AtomsparkError(f"graph: expected a Graph, got {type(graph).__name__}")
        for pop in graph.populations:
            par = pop.params
            if not isinstance(par, VNParams):
                raise AtomsparkError(
                    f"graph: population {pop.name!r} is not a float VN population; the "
                    f"Gauss-Seidel settle solves VN graphs only (use Engine for others)"
                )
            if par.topk is not None:
                raise AtomsparkError(
                    f"graph: population {pop.name!r} has topk; the Gauss-Seidel settle solves "
                    f"the l1 problem only (use Engine for top-k)"
                )
        dtypes = {pop.params.dtype for pop in graph.populations}
        if len(dtypes) != 1:
            raise AtomsparkError(f"graph: populations mix dtypes {sorted(dtypes)}; use one")
        self.graph = graph
        self.dtype = FLOAT_DTYPES[dtypes.pop()]
        self.offsets = np.concatenate([[0], np.cumsum(graph.sizes)]).astype(np.int64)
        self.indptr, self.indices, self.data = self._joint_columns()
        self.diag = self._diagonal()
        lam = [
            np.broadcast_to(np.asarray(p.params.lam, np.float64), (p.size,))
            for p in graph.populations
        ]
        self.lam = np.concatenate(lam)
        self._inv_diag = (1 / self.diag).astype(self.dtype)
        self._thresh = (self.lam / self.diag).astype(self.dtype)

    def _joint_columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """H's columns as one CSR by source atom over all populations (global indices)."""
        g = self.graph
        if len(g.populations) == 1 and len(g.projections) == 1:
            p = g.projections[0]  # one layer: the projection's own arrays, no copy
            return p.indptr, p.indices, np.ascontiguousarray(p.data, dtype=self.dtype)
        rows, cols, vals = [], [], []
        for p in g.projections:
            s0, t0 = self.offsets[g.index[p.source]], self.offsets[g.index[p.target]]
            counts = np.diff(p.indptr)
            rows.append(s0 + np.repeat(np.arange(counts.size), counts))
            cols.append(t0 + p.indices.astype(np.int64))
            vals.append(np.asarray(p.data, np.float64))
        n = int(self.offsets[-1])
        mat = sp.csr_matrix(
            (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n)
        )  # duplicates summed, as the engine adds both
        mat.sort_indices()
        return (
            mat.indptr.astype(np.int64),
            mat.indices.astype(np.int64),
            mat.data.astype(self.dtype),
        )

    def _diagonal(self) -> np.ndarray:
        diag = _diagonal_of(self.indptr, self.indices, self.data)
        bad = np.flatnonzero(diag <= 0)
        if bad.size:
            raise AtomsparkError(
                f"graph: atom {int(bad[0])} has H_ii = {float(diag[bad[0]]):g} <= 0 (no exact "
                f"coordinate minimum); every atom needs a positive self-weight (a Gram diagonal)"
            )
        return diag

    def run(
        self,
        state: dict[str, dict[str, np.ndarray]] | None = None,
        tol: float = 1e-6,
        max_sweeps: int = 10_000,
    ) -> SettleResult:
        """Settle one sample. state: {population: {"drive" and/or "g": array}} overriding the
        graph's drives and initial codes (as Engine.reset); tol: relative max-change stopping
        rule; max_sweeps: at most this many sweeps over all atoms."""
        tol = float(require_positive("tol", tol, allow_zero=True))
        max_sweeps = require_int("max_sweeps", max_sweeps, minimum=1)
        g, drive = self._initial(state or {})
        c = np.zeros_like(g)
        counts = np.zeros(2, np.int64)
        _add_columns(self.indptr, self.indices, self.data, g, c)  # c = H g0
        sweeps = _sweeps(self.indptr, self.indices, self.data, self._inv_diag, self._thresh, g,
                         c, drive, self.dtype(tol), max_sweeps, counts)  # fmt: skip
        converged = sweeps > 0
        codes = {
            p.name: g[self.offsets[i] : self.offsets[i + 1]].copy()
            for i, p in enumerate(self.graph.populations)
        }
        return SettleResult(codes, abs(int(sweeps)), int(counts[0]), int(counts[1]), converged)

    def _initial(self, state: dict) -> tuple[np.ndarray, np.ndarray]:
        g_parts, b_parts = [], []
        for pop in self.graph.populations:
            init = pop.params.init_state(pop.size)
            given = dict(state.get(pop.name, {}))
            for var in given:
                if var not in ("drive", "g"):
                    raise AtomsparkError(
                        f"state[{pop.name!r}][{var!r}]: a sample may set 'drive' and 'g'"
                    )
            for var in ("g", "drive"):
                if var in given:
                    arr = as_finite_array(f"state[{pop.name!r}][{var!r}]", given[var], ndim=1)
                    if arr.shape != (pop.size,):
                        raise AtomsparkError(
                            f"state[{pop.name!r}][{var!r}]: expected shape ({pop.size},), "
                            f"got {arr.shape}"
                        )
                    init[var] = arr
            g_parts.append(init["g"])
            b_parts.append(init["drive"])
        for name in state:
            self.graph.population(name)  # an unknown population name is a clear error
        return (np.concatenate(g_parts).astype(self.dtype),
                np.concatenate(b_parts).astype(self.dtype))  # fmt: skip


@njit(cache=True)
def _diagonal_of(indptr, indices, data):
    """H_ii for every atom i (0 where column i has no entry i)."""
    n = indptr.size - 1
    diag = np.zeros(n, np.float64)
    for i in range(n):
        for k in range(indptr[i], indptr[i + 1]):
            if indices[k] == i:
                diag[i] += data[k]
    return diag


@njit(cache=True)
def _axpy(acc, w, d):
    """acc += w * d elementwise, on two 1-D views of equal length."""
    for i in range(acc.size):
        acc[i] += w[i] * d


@njit(cache=True)
def _column_axpy(indptr, indices, data, i, d, c):
    """c += H[:, i] * d; a column whose targets are consecutive is a contiguous multiply-add."""
    start, stop = indptr[i], indptr[i + 1]
    if stop == start:
        return 0
    if indices[stop - 1] - indices[start] == stop - start - 1:
        lo = indices[start]
        _axpy(c[lo : lo + stop - start], data[start:stop], d)  # slices: LLVM vectorises it
    else:
        for k in range(start, stop):
            c[indices[k]] += data[k] * d
    return stop - start


@njit(cache=True)
def _add_columns(indptr, indices, data, g, c):
    """c += H g (the initial codes' events)."""
    for i in range(g.size):
        if g[i] != 0:
            _column_axpy(indptr, indices, data, i, g[i], c)


@njit(cache=True)
def _sweeps(indptr, indices, data, inv_diag, thresh, g, c, drive, tol, max_sweeps, counts):
    """Cyclic coordinate descent; returns the sweeps run (negative: not converged).
    counts[0] += events (nonzero changes), counts[1] += synaptic ops."""
    for sweep in range(max_sweeps):
        biggest = 0.0
        largest = 0.0
        for i in range(g.size):
            z = g[i] + (drive[i] - c[i]) * inv_diag[i]
            t = thresh[i]
            new = z - t if z > t else (z + t if z < -t else 0.0 * z)
            d = new - g[i]
            if d != 0:
                g[i] = new
                counts[1] += _column_axpy(indptr, indices, data, i, d, c)
                counts[0] += 1
                biggest = max(biggest, abs(d))
            largest = max(largest, abs(new))
        if biggest <= tol * largest:
            return sweep + 1
    return -max_sweeps

"""Working-set settle of a float VN graph: coordinate descent on the support and its violators.

The Gauss-Seidel settle (sim/vn_gauss_seidel.py) visits all K atoms every sweep and pays a
whole column of H for every change. A sparse code has few non-zero atoms, so this solver keeps a
working set W (the atoms allowed to move; the rest stay at zero) and alternates two phases:

1. **Check**: c = H[:, W] g_W over all atoms (one pass over the columns of W's non-zero atoms),
   and for every atom i outside W the move its exact coordinate minimum would make,
   v_i = max(|b_i - c_i| / H_ii - lam_i / H_ii, 0). When every v_i is at most `tol` times the
   largest |g| (the Gauss-Seidel settle's own stopping rule), the codes are returned.
2. **Grow and solve**: the violators with the largest v_i join W (at least MIN_GROWTH, and as
   many as W already holds, so W at most doubles per check), the block H_WW is completed with
   their rows and columns, and cyclic coordinate descent runs on W alone, each change costing one
   column of the |W| x |W| block, until the largest change in a sweep is at most tol max|g|.

The codes satisfy the same stopping rule as the full sweeps (every atom outside W would move by
at most tol max|g|), so the two settles reach the same minimiser to that tolerance; the work per
sweep is |W|^2 instead of K |W|, and the K-wide work is one pass per check. When the code is not
sparse (W grows to most of K) the block costs as much as the full Gram and the checks are extra:
that is where the working set stops paying (benchmarks/bench_vn_batch.py reports it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from atomspark.sim.core import require_int, require_positive
from atomspark.sim.vn_gauss_seidel import GaussSeidelSettle, SettleResult
from numba import njit

MIN_GROWTH = 32  # atoms added to the working set per check at least (or all violators if fewer)


@dataclass(frozen=True)
class WorkingSetResult(SettleResult):
    """SettleResult plus checks (full optimality passes) and working_set (final |W|).
    synops: block columns applied by changes, plus the columns read by the checks."""

    checks: int = 0
    working_set: int = 0


class WorkingSetSettle(GaussSeidelSettle):
    """Working-set coordinate-descent settle of a graph of float VN populations (built once per
    graph; same graphs, inputs and codes as GaussSeidelSettle). symmetric: H equals its
    transpose (a VN graph's Hessian does), checked once here; it lets a new atom's block entries
    come from its own column alone."""

    def __init__(self, graph) -> None:
        super().__init__(graph)
        self.symmetric = bool(is_symmetric(self.indptr, self.indices, self.data))

    def run(
        self,
        state: dict[str, dict[str, np.ndarray]] | None = None,
        tol: float = 1e-6,
        max_sweeps: int = 10_000,
    ) -> WorkingSetResult:
        """Settle one sample. state: {population: {"drive" and/or "g": array}} as in
        GaussSeidelSettle.run; tol: relative max-change stopping rule (checked on every atom at
        the end); max_sweeps: at most this many sweeps over the working set in all."""
        tol = float(require_positive("tol", tol, allow_zero=True))
        max_sweeps = require_int("max_sweeps", max_sweeps, minimum=1)
        g, drive = self._initial(state or {})
        counts = np.zeros(5, np.int64)  # events, synops, sweeps, checks, |W|
        ok = _settle(self.indptr, self.indices, self.data, self.symmetric, self._inv_diag, self._thresh, g,
                     drive, self.dtype(tol), max_sweeps, MIN_GROWTH, counts)  # fmt: skip
        codes = {
            p.name: g[self.offsets[i] : self.offsets[i + 1]].copy()
            for i, p in enumerate(self.graph.populations)
        }
        return WorkingSetResult(codes, int(counts[2]), int(counts[0]), int(counts[1]), bool(ok),
                                int(counts[3]), int(counts[4]))  # fmt: skip


@njit(cache=True, inline="always")
def _entry(indptr, indices, data, row, col):
    """H[row, col] from H's columns (sorted target indices); 0 where absent."""
    start, stop = indptr[col], indptr[col + 1]
    if stop == start:
        return data.dtype.type(0)
    first = indices[start]
    if indices[stop - 1] - first == stop - start - 1:  # a contiguous column: direct index
        k = start + row - first
        if start <= k < stop:
            return data[k]
        return data.dtype.type(0)
    k = start + np.searchsorted(indices[start:stop], row)
    if k < stop and indices[k] == row:
        return data[k]
    return data.dtype.type(0)


@njit(cache=True)
def _column_axpy(indptr, indices, data, i, d, c):
    """c += H[:, i] * d; returns the entries read."""
    start, stop = indptr[i], indptr[i + 1]
    if stop > start and indices[stop - 1] - indices[start] == stop - start - 1:
        lo = indices[start]
        for k in range(stop - start):
            c[lo + k] += data[start + k] * d
    else:
        for k in range(start, stop):
            c[indices[k]] += data[k] * d
    return stop - start


@njit(cache=True)
def _grow_block(block, ws, m_old, m_new, indptr, indices, data, symmetric):
    """Complete block (row j: column ws[j] of H restricted to W) for the atoms m_old..m_new.
    Symmetric H: every new entry is read from the new atoms' own columns (one region of memory
    each), the old atoms' rows mirrored; otherwise old columns are searched for the new rows."""
    for j in range(m_old, m_new):
        col = ws[j]
        for r in range(m_new):
            block[j, r] = _entry(indptr, indices, data, ws[r], col)
        if symmetric:
            for r in range(m_old):
                block[r, j] = block[j, r]
    if not symmetric:
        for j in range(m_old):
            for r in range(m_old, m_new):
                block[j, r] = _entry(indptr, indices, data, ws[r], ws[j])


@njit(cache=True)
def is_symmetric(indptr, indices, data):
    """H == H^T exactly (every stored entry equals its mirror; absent entries are 0). Dense
    contiguous columns are compared in 64 x 64 tiles (cache friendly)."""
    n = indptr.size - 1
    dense = True
    for i in range(n):
        if indptr[i + 1] - indptr[i] != n or (n and indices[indptr[i]] != 0):
            dense = False
            break
    if dense:
        tile = 64
        for a in range(0, n, tile):
            for b in range(a, n, tile):
                for i in range(a, min(a + tile, n)):
                    for j in range(b, min(b + tile, n)):
                        if data[indptr[i] + j] != data[indptr[j] + i]:
                            return False
        return True
    for i in range(n):
        for k in range(indptr[i], indptr[i + 1]):
            if data[k] != _entry(indptr, indices, data, i, indices[k]):
                return False
    return True


@njit(cache=True)
def _solve_block(block, ws, m, g, cw, drive, inv_diag, thresh, tol, max_sweeps, counts):
    """Cyclic coordinate descent on the working set; cw = (H_WW g_W) on entry. Returns True
    when the max-change rule was met within max_sweeps (counted in counts[2])."""
    while counts[2] < max_sweeps:
        counts[2] += 1
        biggest = 0.0
        largest = 0.0
        for j in range(m):
            i = ws[j]
            z = g[i] + (drive[i] - cw[j]) * inv_diag[i]
            t = thresh[i]
            new = z - t if z > t else (z + t if z < -t else 0.0 * z)
            d = new - g[i]
            if d != 0:
                g[i] = new
                row = block[j]
                for r in range(m):
                    cw[r] += row[r] * d
                counts[0] += 1
                counts[1] += m
                biggest = max(biggest, abs(d))
            largest = max(largest, abs(new))
        if biggest <= tol * largest:
            return True
    return False


@njit(cache=True)
def _settle(indptr, indices, data, symmetric, inv_diag, thresh, g, drive, tol, max_sweeps,
            min_growth, counts):  # fmt: skip
    """The working-set settle of one sample (module docstring); g is updated in place.
    counts: events, synops, sweeps, checks, final |W|. Returns True when converged."""
    n = g.size
    pos = np.full(n, -1, np.int64)
    ws = np.empty(n, np.int64)
    m = 0
    for i in range(n):  # atoms non-zero at the start are in W from the start
        if g[i] != 0:
            pos[i], ws[m] = m, i
            m += 1
    cap = max(2 * min_growth, 2 * m)
    block = np.zeros((cap, cap), data.dtype)
    _grow_block(block, ws, 0, m, indptr, indices, data, symmetric)
    c = np.zeros(n, g.dtype)
    viol = np.empty(n, g.dtype)
    cand = np.empty(n, np.int64)
    while True:
        counts[3] += 1
        c[:] = 0
        largest = 0.0
        for j in range(m):
            i = ws[j]
            if g[i] != 0:
                counts[1] += _column_axpy(indptr, indices, data, i, g[i], c)
            largest = max(largest, abs(g[i]))
        n_cand = 0
        limit = tol * largest
        for i in range(n):
            if pos[i] < 0:
                v = abs(drive[i] - c[i]) * inv_diag[i] - thresh[i]
                if v > limit:
                    viol[n_cand], cand[n_cand] = v, i
                    n_cand += 1
        if n_cand == 0:
            counts[4] = m
            return True
        if counts[2] >= max_sweeps:
            counts[4] = m
            return False
        grow = min(n_cand, max(min_growth, m))
        if grow < n_cand:
            order = np.argsort(-viol[:n_cand])[:grow]
        else:
            order = np.arange(n_cand)
        m_old = m
        for k in order:
            i = cand[k]
            pos[i], ws[m] = m, i
            m += 1
        if m > cap:
            cap = min(n, max(2 * cap, m))
            bigger = np.zeros((cap, cap), data.dtype)
            bigger[:m_old, :m_old] = block[:m_old, :m_old]
            block = bigger
        _grow_block(block, ws, m_old, m, indptr, indices, data, symmetric)
        cw = np.empty(m, g.dtype)
        for j in range(m):
            cw[j] = c[ws[j]]
        if not _solve_block(block, ws, m, g, cw, drive, inv_diag, thresh, tol, max_sweeps,
                            counts):  # fmt: skip
            counts[4] = m
            return False

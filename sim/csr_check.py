"""Check the index arrays of a compressed sparse matrix before any kernel or scipy routine reads
them: the one guard that keeps a crafted file from making a Numba kernel read out of bounds."""

from __future__ import annotations

import numpy as np
from atomspark.sim.core import AtomsparkError


def check_csr_structure(
    label: str, indptr, indices, n_rows: int, n_cols: int, n_data: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(indptr, indices) as int64 arrays after checking that they describe an n_rows x n_cols
    compressed matrix: integer 1-D arrays, indptr of length n_rows + 1 starting at 0,
    nondecreasing and ending at len(indices) (== n_data when given), every index in [0, n_cols).
    Raises one AtomsparkError naming `label` and the first fault."""
    ptr, idx = np.asarray(indptr), np.asarray(indices)
    for name, arr in (("indptr", ptr), ("indices", idx)):
        if arr.ndim != 1 or arr.dtype.kind not in "iu":
            raise AtomsparkError(
                f"{label} {name}: must be a 1-D integer array, got {arr.dtype} of shape {arr.shape}"
            )
    if ptr.size != n_rows + 1:
        raise AtomsparkError(
            f"{label} indptr: needs {n_rows + 1} entries (rows + 1), got {ptr.size}"
        )
    ptr, idx = ptr.astype(np.int64), idx.astype(np.int64)
    if ptr[0] != 0 or np.any(np.diff(ptr) < 0):
        raise AtomsparkError(f"{label} indptr: must start at 0 and never decrease")
    if ptr[-1] != idx.size or (n_data is not None and n_data != idx.size):
        raise AtomsparkError(
            f"{label}: indptr ends at {int(ptr[-1])} but there are {idx.size} indices"
            + ("" if n_data is None else f" and {n_data} values")
        )
    if idx.size and (idx.min() < 0 or idx.max() >= n_cols):
        raise AtomsparkError(
            f"{label} indices: must lie in [0, {n_cols}), got [{int(idx.min())}, {int(idx.max())}]"
        )
    return ptr, idx


def check_sparse_matrix(label: str, matrix) -> None:
    """Check a scipy CSR/CSC matrix's index arrays (other formats are checked by scipy when they
    are built, or cannot hold a bad index)."""
    fmt = getattr(matrix, "format", None)
    if fmt not in ("csr", "csc"):
        return
    n_rows, n_cols = matrix.shape if fmt == "csr" else matrix.shape[::-1]
    check_csr_structure(label, matrix.indptr, matrix.indices, n_rows, n_cols, matrix.data.size)

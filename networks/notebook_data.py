"""The RSGN paper's two data sets drawn exactly as its released notebook draws them.

`networks/datasets.py` follows the notebook's distributions with NumPy's Generator, so its
sequences are other draws from the same distributions. Those draws differ enough to matter: the
mean-token floor scores 20.4 % on ours and 24.3 % on the notebook's hierarchical data. To put a
result beside the paper's on the very same sequences, this module replays the notebook's legacy
`np.random` stream: the global generator seeded with `seed`, and the values drawn in the
notebook's order (written here from that order, as the docs describe it):

hierarchical: noise randn(n, length, dim) * noise; labels randint(0, classes, n); local patterns
randn(classes, 8, 5, dim) * 0.15; markers randn(classes, 4, dim) * 0.10; class bias
randn(classes, dim) * 0.08, added * 0.05; then per sequence: the number of local patterns
randint(2, 5), for each a start randint(0, length - 5) and an id randint(0, 8); then per quarter
p a jitter randint(0, length // 8), the marker at p * (length // 4) + jitter.

long-range: noise randn(n, length, dim) * noise; start and end patterns
randn(classes, 8, dim) * 0.5 each; then per sequence its label randint(0, classes).

split: the global generator re-seeded with the split seed, one permutation of n, the first
int(n * train_fraction) indices for training.
"""

from __future__ import annotations

import numpy as np
from atomspark.networks.datasets import SequenceDataset
from atomspark.sim.core import AtomsparkError, require_int, require_positive


def _sizes(n: int, length: int, dim: int, n_classes: int) -> tuple[int, int, int, int]:
    return tuple(
        require_int(k, v, 1)
        for k, v in (("n", n), ("length", length), ("dim", dim), ("n_classes", n_classes))
    )


def notebook_hierarchical(
    n: int = 5000,
    length: int = 64,
    dim: int = 32,
    n_classes: int = 20,
    noise: float = 0.3,
    seed: int = 42,
) -> SequenceDataset:
    """The notebook's hierarchical data set (module docstring: the draw order)."""
    n, length, dim, n_classes = _sizes(n, length, dim, n_classes)
    require_positive("noise", noise, allow_zero=True)
    if length < 8:
        raise AtomsparkError(
            f"length: must be >= 8 for 5-step patterns and quarter markers, got {length}"
        )
    rs = np.random.RandomState(require_int("seed", seed, minimum=0))
    tokens = rs.randn(n, length, dim) * noise
    labels = rs.randint(0, n_classes, n)
    patterns = rs.randn(n_classes, 8, 5, dim) * 0.15
    markers = rs.randn(n_classes, 4, dim) * 0.10
    bias = rs.randn(n_classes, dim) * 0.08  # added x 0.05 below: std 0.004
    for i in range(n):  # one sequence's draws depend on the previous one's count: a loop
        c = labels[i]
        for _ in range(rs.randint(2, 5)):
            start = rs.randint(0, max(1, length - 5))
            pattern = rs.randint(0, 8)
            stop = min(start + 5, length)
            tokens[i, start:stop] += patterns[c, pattern, : stop - start]
        for p in range(4):
            pos = min((length // 4) * p + rs.randint(0, max(1, length // 8)), length - 1)
            tokens[i, pos] += markers[c, p]
        tokens[i] += bias[c] * 0.05
    return SequenceDataset(tokens, labels.astype(np.int64), n_classes)


def notebook_long_range(
    n: int = 3000,
    length: int = 128,
    dim: int = 32,
    n_classes: int = 10,
    noise: float = 0.3,
    seed: int = 42,
) -> SequenceDataset:
    """The notebook's long-range data set (module docstring: the draw order)."""
    n, length, dim, n_classes = _sizes(n, length, dim, n_classes)
    require_positive("noise", noise, allow_zero=True)
    if length < 16:
        raise AtomsparkError(f"length: must be >= 16 for a start and an end pattern, got {length}")
    rs = np.random.RandomState(require_int("seed", seed, minimum=0))
    tokens = rs.randn(n, length, dim) * noise
    start_pat = rs.randn(n_classes, 8, dim) * 0.5
    end_pat = rs.randn(n_classes, 8, dim) * 0.5
    labels = np.array([rs.randint(0, n_classes) for _ in range(n)], dtype=np.int64)
    tokens[:, :8] += start_pat[labels]
    tokens[:, -8:] += end_pat[labels]
    return SequenceDataset(tokens, labels, n_classes)


def notebook_split(
    ds: SequenceDataset, train_fraction: float = 0.8, seed: int = 42
) -> tuple[SequenceDataset, SequenceDataset]:
    """The notebook's split: permutation of a legacy generator seeded with `seed`, the first
    int(n * train_fraction) for training (it truncates where SequenceDataset.split rounds)."""
    if not 0.0 < float(train_fraction) < 1.0:
        raise AtomsparkError(f"train_fraction: must lie in (0, 1), got {train_fraction}")
    order = np.random.RandomState(require_int("seed", seed, minimum=0)).permutation(len(ds.labels))
    cut = int(len(order) * train_fraction)
    parts = order[:cut], order[cut:]
    return tuple(SequenceDataset(ds.tokens[i], ds.labels[i], ds.n_classes) for i in parts)

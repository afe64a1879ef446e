"""Built-in synthetic data sets: the RSGN paper's two sequence tasks and sparse-dictionary data for VN.

The RSGN generators follow the task descriptions of Hays (arXiv:2601.18064) and its released code
as docs/maths.md restates them; sizes are parameters so tests and demos can use small versions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from atomspark.sim.core import AtomsparkError, require_int, require_positive
from atomspark.sim.memory import require_memory


@dataclass(frozen=True)
class SequenceDataset:
    """Token sequences (n, length, dim) with integer class labels (n,)."""

    tokens: np.ndarray
    labels: np.ndarray
    n_classes: int

    def split(
        self, train_fraction: float = 0.8, seed: int = 0
    ) -> tuple[SequenceDataset, SequenceDataset]:
        """Shuffle once with `seed` and split into (train, validation), 80/20 by default."""
        if not 0.0 < float(train_fraction) < 1.0:
            raise AtomsparkError(f"train_fraction: must lie in (0, 1), got {train_fraction}")
        order = np.random.default_rng(require_int("seed", seed, minimum=0)).permutation(
            len(self.labels)
        )
        cut = int(round(train_fraction * len(order)))
        parts = order[:cut], order[cut:]
        return tuple(SequenceDataset(self.tokens[i], self.labels[i], self.n_classes) for i in parts)


# The released notebook draws the class-wide pattern as N(0, 1) x 0.08 and adds it x 0.05.
RELEASED_GLOBAL_BIAS = 0.08 * 0.05


@dataclass(frozen=True)
class HierarchicalLayout:
    """Where the hierarchical generator puts its signals, one row per sequence: `n_local` (2-4)
    local patterns, the first n_local columns of `pattern_starts`/`pattern_ids` used (ids drawn
    with replacement from the class's 8), and the 4 quarter-marker positions."""

    n_local: np.ndarray  # (n,)
    pattern_starts: np.ndarray  # (n, 4)
    pattern_ids: np.ndarray  # (n, 4)
    marker_positions: np.ndarray  # (n, 4)


def hierarchical_layout(rng: np.random.Generator, n: int, length: int) -> HierarchicalLayout:
    """Draw the released notebook's layout: 2-4 local 5-step patterns per sequence, each
    starting uniformly in [0, length - 6] with its id drawn with replacement; marker p at
    p * (length // 4) plus a jitter uniform in [0, length // 8)."""
    n_local = rng.integers(2, 5, size=n)
    starts = rng.integers(0, max(1, length - 5), size=(n, 4))
    ids = rng.integers(0, 8, size=(n, 4))
    jitter = rng.integers(0, max(1, length // 8), size=(n, 4))
    markers = np.minimum(np.arange(4) * (length // 4) + jitter, length - 1)
    return HierarchicalLayout(n_local, starts, ids, markers)


def _require_tokens_memory(n: int, length: int, dim: int) -> None:
    """Token tensors (n, length, dim) in float64: the draw, its noise and the result."""
    require_memory(
        f"n {n} x length {length} x dim {dim}",
        3 * 8.0 * n * length * dim,
        "use a smaller n (or length, dim)",
    )


def hierarchical_sequences(
    n: int = 5000,
    length: int = 64,
    dim: int = 32,
    n_classes: int = 20,
    noise: float = 0.3,
    seed: int = 0,
    global_bias: float = RELEASED_GLOBAL_BIAS,
) -> SequenceDataset:
    """Hierarchical classification: per class 8 local 5-step patterns (x0.15), 2-4 of them
    (drawn with replacement) inserted at random starts, 4 quarter markers (x0.10) jittered by up
    to length // 8 steps, and a weak class-wide bias (std `global_bias`), over noise.

    The layout follows the released notebook (`hierarchical_layout`); the random stream is
    NumPy's Generator, not the notebook's legacy np.random, so the sequences themselves differ.
    A larger global bias makes the class readable from the mean token alone (0.05 does: a
    logistic regression on it scores 100 %; see docs/paper_reproduction.md), which bypasses the
    propagation the benchmark is meant to test."""
    n, length, dim, n_classes = (
        require_int(k, v, 1)
        for k, v in (("n", n), ("length", length), ("dim", dim), ("n_classes", n_classes))
    )
    require_positive("noise", noise, allow_zero=True)
    require_positive("global_bias", global_bias, allow_zero=True)
    _require_tokens_memory(n, length, dim)
    if length < 8:
        raise AtomsparkError(
            f"length: must be >= 8 for 5-step patterns and quarter markers, got {length}"
        )
    rng = np.random.default_rng(require_int("seed", seed, minimum=0))
    patterns = rng.standard_normal((n_classes, 8, 5, dim)) * 0.15
    markers = rng.standard_normal((n_classes, 4, dim)) * 0.10
    bias = rng.standard_normal((n_classes, dim)) * global_bias
    labels = rng.integers(0, n_classes, size=n)
    tokens = rng.standard_normal((n, length, dim)) * noise + bias[labels][:, None, :]
    lay = hierarchical_layout(rng, n, length)
    rows = np.arange(n)
    for slot in range(4):
        use = rows[lay.n_local > slot]
        for k in range(5):  # (row, position) pairs are unique within one slot and step
            tokens[use, lay.pattern_starts[use, slot] + k] += patterns[
                labels[use], lay.pattern_ids[use, slot], k
            ]
    for p in range(4):
        tokens[rows, lay.marker_positions[:, p]] += markers[labels, p]
    return SequenceDataset(tokens, labels.astype(np.int64), n_classes)


def long_range_sequences(
    n: int = 3000,
    length: int = 128,
    dim: int = 32,
    n_classes: int = 10,
    noise: float = 0.3,
    seed: int = 0,
) -> SequenceDataset:
    """Long-range dependency: a class-specific 8-step pattern (x0.5) at the start and at the end of
    each sequence over noise; the middle carries no information."""
    n, length, dim, n_classes = (
        require_int(k, v, 1)
        for k, v in (("n", n), ("length", length), ("dim", dim), ("n_classes", n_classes))
    )
    require_positive("noise", noise, allow_zero=True)
    _require_tokens_memory(n, length, dim)
    if length < 16:
        raise AtomsparkError(f"length: must be >= 16 for a start and an end pattern, got {length}")
    rng = np.random.default_rng(require_int("seed", seed, minimum=0))
    start_pat = rng.standard_normal((n_classes, 8, dim)) * 0.5
    end_pat = rng.standard_normal((n_classes, 8, dim)) * 0.5
    labels = rng.integers(0, n_classes, size=n)
    tokens = rng.standard_normal((n, length, dim)) * noise
    tokens[:, :8] += start_pat[labels]
    tokens[:, -8:] += end_pat[labels]
    return SequenceDataset(tokens, labels.astype(np.int64), n_classes)


@dataclass(frozen=True)
class SparseDictionaryData:
    """Signals y = D g + noise from a known dictionary D (d x K, unit columns) and sparse codes g."""

    signals: np.ndarray
    dictionary: np.ndarray
    codes: np.ndarray


def sparse_dictionary_data(
    n: int = 2000,
    dim: int = 32,
    n_atoms: int = 24,
    active: int = 3,
    noise: float = 0.01,
    seed: int = 0,
) -> SparseDictionaryData:
    """Draw `n` signals, each a combination of `active` random atoms with magnitudes in [0.5, 1.5]
    and random signs: the standard test of dictionary recovery."""
    n, dim, n_atoms, active = (
        require_int(k, v, 1)
        for k, v in (("n", n), ("dim", dim), ("n_atoms", n_atoms), ("active", active))
    )
    if active > n_atoms:
        raise AtomsparkError(f"active: {active} atoms per signal but only n_atoms={n_atoms}")
    # signals, codes and the argsort that draws the supports: float64 / int64, (n, n_atoms)
    require_memory(
        f"n {n} x n_atoms {n_atoms} x dim {dim}",
        8.0 * n * (dim + 3 * n_atoms),
        "use a smaller n",
    )
    require_positive("noise", noise, allow_zero=True)
    rng = np.random.default_rng(require_int("seed", seed, minimum=0))
    dictionary = rng.standard_normal((dim, n_atoms))
    dictionary /= np.linalg.norm(dictionary, axis=0)
    codes = np.zeros((n, n_atoms))
    support = np.argsort(rng.random((n, n_atoms)), axis=1)[:, :active]
    mags = rng.uniform(0.5, 1.5, (n, active)) * rng.choice([-1.0, 1.0], (n, active))
    np.put_along_axis(codes, support, mags, axis=1)
    signals = codes @ dictionary.T + noise * rng.standard_normal((n, dim))
    return SparseDictionaryData(signals, dictionary, codes)

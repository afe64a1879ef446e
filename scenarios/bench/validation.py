"""The protocol's data facts shared by every family: an ID validation split held out of the
training signals, and each split's distance from the span of the ID training signals.

Validation: the last VAL_FRACTION of a seed's clean ID training signals are held out (never
trained on); they get the family's noise and hidden parts drawn like the masked task's, so the
validation split scores the same two tasks as the test splits. Every model's hyperparameters are
chosen on it, and the baselines stop early on it.

Span residual: the fraction of a split's clean signal energy outside the linear span of the clean
ID training signals (rank cut at SPAN_RTOL of the largest singular value). 0 means a linear model
of the training data can represent the split exactly; a split far above 0 leaves the training
span, which is what tests extrapolation rather than recombination.

Where the training signals span (nearly) the whole space (bumps2d: 1700 images of 1024 pixels),
the exact span residual is 0 for every split and says nothing. The principal residual does: the
fraction of a split's clean energy outside the top principal directions that hold PC_ENERGY of
the training signals' energy (uncentred, like the span). A split far above the ID split's value
puts its energy where the training signals had almost none.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from atomspark.scenarios.bench.family import BenchData, Split

VAL_FRACTION = 0.15
SPAN_RTOL = 1e-8
PC_ENERGY = 0.99


def hold_out_validation(data: BenchData, random_hidden, seed: int) -> BenchData:
    """data with the last VAL_FRACTION of its training signals moved to data.val (a Split)."""
    n_val = max(1, int(round(VAL_FRACTION * data.train.shape[0])))
    train, clean = data.train[:-n_val], data.train[-n_val:]
    rng = np.random.default_rng([seed, 4242])
    noisy = clean + data.noise * rng.standard_normal(clean.shape)
    val = Split(clean, noisy, random_hidden(rng, n_val))
    extra = {}
    if getattr(data, "train_labels", None) is not None:  # mnist-comp: labels follow the signals
        extra["train_labels"] = data.train_labels[:-n_val]
    return replace(data, train=train, val=val, **extra)


def prepare_data(family, sizes, seed: int) -> BenchData:
    """A family's data for one seed with the validation split held out (what every cell uses)."""
    data = family.make_data(sizes, seed)
    return hold_out_validation(data, lambda rng, n: family.random_hidden(rng, n, sizes), seed)


def span_basis(train: np.ndarray) -> np.ndarray:
    """Orthonormal basis (d, r) of the span of the training signals (rows of train)."""
    _, s, vt = np.linalg.svd(train, full_matrices=False)
    rank = int(np.sum(s > SPAN_RTOL * s[0])) if s.size and s[0] > 0 else 0
    return vt[:rank].T


def principal_basis(train: np.ndarray, energy: float = PC_ENERGY) -> np.ndarray:
    """Orthonormal basis (d, r) of the fewest principal directions of the (uncentred) training
    signals that hold `energy` of their total energy."""
    _, s, vt = np.linalg.svd(train, full_matrices=False)
    share = np.cumsum(s**2) / max(float(np.sum(s**2)), 1e-300)
    rank = int(np.searchsorted(share, energy) + 1)
    return vt[: min(rank, vt.shape[0])].T


def principal_facts(data: BenchData, energy: float = PC_ENERGY) -> dict:
    """The rank that holds `energy` of the training energy, and each split's (and the validation
    split's) residual energy outside those directions (module docstring)."""
    basis = principal_basis(data.train, energy)
    splits = dict(data.splits)
    if data.val is not None:
        splits["validation"] = data.val
    return {
        "energy": energy,
        "rank": int(basis.shape[1]),
        "residual": {name: span_residual(basis, split.clean) for name, split in splits.items()},
    }


def span_residual(basis: np.ndarray, clean: np.ndarray) -> float:
    """||(I - P) X||^2 / ||X||^2 for the split's clean signals X and the projector P = B B^T."""
    inside = (clean @ basis) @ basis.T
    total = float(np.sum(clean**2))
    return float(np.sum((clean - inside) ** 2) / total) if total > 0 else 0.0


def data_facts(data: BenchData) -> dict:
    """Per split: residual energy outside the ID training span, and the split's variance over
    the whole signal (for the MSE / ID-variance metric)."""
    basis = span_basis(data.train)
    return {
        "train_rank": int(basis.shape[1]),
        "n_train": int(data.train.shape[0]),
        "n_val": int(data.val.n) if data.val is not None else 0,
        "span_residual": {
            name: span_residual(basis, split.clean) for name, split in data.splits.items()
        },
    }

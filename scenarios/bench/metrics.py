"""Scores: squared error normalised by the variance of the target entries of a split.

For a split with targets t and scored entries E (all entries for "recon", the hidden ones for
"masked"): NMSE = mean_{E} (p - t)^2 / var_{E}(t). Normalising by the split's variance (not each
sample's) keeps nearly flat samples from dominating; 1.0 is the score of predicting the split's
mean value everywhere, 0.0 is perfect.
"""

from __future__ import annotations

import numpy as np


def per_sample_nmse(pred: np.ndarray, clean: np.ndarray, scored: np.ndarray) -> np.ndarray:
    """Each sample's mean squared error over its scored entries / the split's target variance."""
    var = float(np.var(clean[scored])) if scored.any() else 1.0
    sq = np.where(scored, (pred - clean) ** 2, 0.0).sum(axis=1)
    counts = np.maximum(scored.sum(axis=1), 1)
    return sq / counts / max(var, 1e-12)


def nmse(pred: np.ndarray, clean: np.ndarray, scored: np.ndarray) -> float:
    """Split-level NMSE (see module docstring)."""
    var = float(np.var(clean[scored])) if scored.any() else 1.0
    return float(np.mean((pred - clean)[scored] ** 2) / max(var, 1e-12))


def mse_over_reference(
    pred: np.ndarray, clean: np.ndarray, scored: np.ndarray, reference_var: float
) -> float:
    """MSE over the scored entries / a fixed reference variance (the ID split's, per task): unlike
    NMSE, it does not reward a split for having a larger variance of its own."""
    return float(np.mean((pred - clean)[scored] ** 2) / max(reference_var, 1e-12))


def validation_score(val_metrics: dict[str, float]) -> float:
    """The one number every model is tuned and early-stopped on: the mean over the two tasks of
    the NMSE on the ID validation split."""
    return float(np.mean(list(val_metrics.values())))


def mean_std(values) -> dict:
    """Mean and (population) standard deviation over seeds, with the per-seed values."""
    arr = np.asarray(values, dtype=float)
    return {"mean": float(arr.mean()), "std": float(arr.std()), "per_seed": arr.tolist()}

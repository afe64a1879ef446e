"""Atomic-Hebb learning: local dictionary updates at the settled codes, and a training loop.

For every layer, with residuals r^x = m * (x_l - S_l g*) and r^h = h_l - U_l g* at the settled
codes g* (messages x_l, h_l as in hierarchy.py), averaged over the batch:
    S_l <- S_l + rho_S mean_b r^x g*^T,    U_l <- U_l + rho_U mean_b r^h g*^T.
By Danskin's theorem this is exactly -rho times the gradient of the mean free energy
F(S, U) = min_g F(g; S, U) (joint energy, hierarchy.py), when g* is the unique minimiser.
A layer without a top-down target (the top layer without h_top) leaves U unchanged.

Only atoms with a nonzero code somewhere in the batch are touched; all others stay
bit-identical. Scale control: with `normalize=True` (default) each touched column of S and of U
is then rescaled to unit norm, which makes the update a projected gradient step onto unit-norm
atoms (the l1 penalty would otherwise be evaded by growing atoms and shrinking codes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from atomspark.networks.vn.hierarchy import layer_input, layer_target
from atomspark.networks.vn.model import VNModel, unit_columns
from atomspark.networks.vn.settle import SettleResult, settle
from atomspark.sim.core import (
    AtomsparkError,
    as_finite_array,
    require_int,
    require_positive,
    require_shape,
)


def hebb_layer_update(
    S: np.ndarray,
    U: np.ndarray,
    x: np.ndarray,
    h: np.ndarray | None,
    g: np.ndarray,
    rho_S: float,
    rho_U: float,
    mask: np.ndarray | None = None,
    normalize: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One layer's Atomic-Hebb step at codes g (B, K); returns (S_new, U_new, touched (K,) bool)."""
    touched = np.any(g != 0, axis=0)
    S_new, U_new = S.copy(), U.copy()
    if not np.any(touched):
        return S_new, U_new, touched
    g_t = g[:, touched]
    B = g.shape[0]
    r_x = x - g @ S.T
    if mask is not None:
        r_x = r_x * mask
    S_new[:, touched] += (rho_S / B) * (r_x.T @ g_t)
    if h is not None:
        r_h = h - g @ U.T
        U_new[:, touched] += (rho_U / B) * (r_h.T @ g_t)
    if normalize:
        S_new[:, touched] = unit_columns(S_new[:, touched])
        if h is not None:
            U_new[:, touched] = unit_columns(U_new[:, touched])
    return S_new, U_new, touched


def atomic_hebb(
    model: VNModel,
    x: np.ndarray,
    result: SettleResult,
    rho_S: float,
    rho_U: float | None = None,
    mask: np.ndarray | None = None,
    h_top: np.ndarray | None = None,
    normalize: bool = True,
) -> VNModel:
    """Apply Atomic-Hebb to every layer at the codes of `result` (settled on the same x, mask,
    h_top); returns a new model. rho_U defaults to rho_S."""
    rho_S = require_positive("rho_S", rho_S, allow_zero=True)
    rho_U = rho_S if rho_U is None else require_positive("rho_U", rho_U, allow_zero=True)
    x = as_finite_array("x", x, ndim=(1, 2), dtype=model.dtype)
    x = x[None, :] if x.ndim == 1 else x
    require_shape("x", x, (result.codes[0].shape[0], model.input_dim))
    if mask is not None:
        mask = as_finite_array("mask", mask, ndim=(1, 2), dtype=model.dtype)
    if h_top is not None:
        h_top = as_finite_array("h_top", h_top, ndim=(1, 2), dtype=model.dtype)
        h_top = h_top[None, :] if h_top.ndim == 1 else h_top
    if len(result.codes) != model.n_layers:
        raise AtomsparkError(
            f"result: has codes for {len(result.codes)} layers, model has {model.n_layers}"
        )
    codes = result.codes
    new_S, new_U = [], []
    for l, layer in enumerate(model.layers):
        S, U, _ = hebb_layer_update(
            layer.S,
            layer.U,
            layer_input(model, codes, x, l),
            layer_target(model, codes, h_top, l),
            codes[l],
            rho_S,
            rho_U,
            mask if l == 0 else None,
            normalize,
        )
        new_S.append(S)
        new_U.append(U)
    return model.replace_dictionaries(new_S, new_U)


@dataclass
class LearnResult:
    """Trained model and the mean settled energy F over each epoch's batches (before the update)."""

    model: VNModel
    epoch_energy: list[float] = field(default_factory=list)


def learn_dictionary(
    model: VNModel,
    data: np.ndarray,
    *,
    epochs: int = 10,
    batch_size: int = 64,
    rho_S: float = 1.0,
    rho_U: float | None = None,
    normalize: bool = True,
    seed: int = 0,
    settle_kwargs: dict | None = None,
    progress: Callable[[int, int, float], None] | None = None,
) -> LearnResult:
    """Alternate settle and Atomic-Hebb over shuffled mini-batches of data (N, d).

    progress(epoch, batch_index, mean_energy) is called after every batch if given.
    Warm starts are not used: every batch settles from zero codes.
    """
    data = as_finite_array("data", data, ndim=2, dtype=model.dtype)
    require_shape("data", data, (None, model.input_dim))
    epochs = require_int("epochs", epochs, minimum=1)
    batch_size = require_int("batch_size", batch_size, minimum=1)
    kwargs = dict(settle_kwargs or {})
    rng = np.random.default_rng(require_int("seed", seed, minimum=0))
    history = []
    for epoch in range(epochs):
        order = rng.permutation(data.shape[0])
        energies = []
        for i, start in enumerate(range(0, data.shape[0], batch_size)):
            batch = data[order[start : start + batch_size]]
            result = settle(model, batch, **kwargs)
            energies.append(float(np.mean(result.energy)))
            model = atomic_hebb(model, batch, result, rho_S, rho_U, normalize=normalize)
            if progress is not None:
                progress(epoch, i, energies[-1])
        history.append(float(np.mean(energies)))
    return LearnResult(model=model, epoch_energy=history)

"""Messages between VN layers and the energies of a whole model.

Our reading of the hierarchy (docs/maths.md): x_1 is the data; x_{l+1} = U_l g_l goes up;
h_l = S_{l+1} g_{l+1} comes down; the top layer's target is h_top or absent.
The interface term 1/2 ||U_l g_l - S_{l+1} g_{l+1}||^2 is both layer l's top-down term and
layer l+1's input term. The model's total (joint) energy counts it once:
    F(g_1..g_L) = 1/2 ||m * (x_1 - S_1 g_1)||^2 + sum_{l<L} 1/2 ||U_l g_l - S_{l+1} g_{l+1}||^2
                  [+ 1/2 ||h_top - U_L g_L||^2] + sum_l lam_l ||g_l||_1,
so minimising layer l's local energy E_l with the other layers fixed is exactly a block
coordinate step on F. The per-layer energies E_l therefore add up to more than F.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from atomspark.networks.vn.energy import layer_energy
from atomspark.networks.vn.model import VNModel


def layer_input(model: VNModel, codes: Sequence[np.ndarray], x: np.ndarray, l: int) -> np.ndarray:
    """Input x_l of layer l (0-based): the data for l = 0, else U_{l-1} g_{l-1}."""
    return x if l == 0 else codes[l - 1] @ model.layers[l - 1].U.T


def layer_target(
    model: VNModel, codes: Sequence[np.ndarray], h_top: np.ndarray | None, l: int
) -> np.ndarray | None:
    """Top-down target h_l of layer l (0-based): S_{l+1} g_{l+1}, or h_top on the top layer."""
    return h_top if l == model.n_layers - 1 else codes[l + 1] @ model.layers[l + 1].S.T


def layer_inputs(model: VNModel, codes: Sequence[np.ndarray], x: np.ndarray) -> list[np.ndarray]:
    """Bottom-up inputs [x_1, U_1 g_1, ..., U_{L-1} g_{L-1}], each (B, d_l)."""
    inputs = [x]
    for layer, g in zip(model.layers[:-1], codes[:-1]):
        inputs.append(g @ layer.U.T)
    return inputs


def layer_targets(
    model: VNModel, codes: Sequence[np.ndarray], h_top: np.ndarray | None
) -> list[np.ndarray | None]:
    """Top-down targets [S_2 g_2, ..., S_L g_L, h_top], each (B, m_l) (last may be None)."""
    targets: list[np.ndarray | None] = [
        g @ layer.S.T for layer, g in zip(model.layers[1:], codes[1:])
    ]
    targets.append(h_top)
    return targets


def layer_energies(
    model: VNModel,
    codes: Sequence[np.ndarray],
    x: np.ndarray,
    mask: np.ndarray | None = None,
    h_top: np.ndarray | None = None,
) -> np.ndarray:
    """Local energy E_l of every layer at the given codes, shape (B, L)."""
    xs = layer_inputs(model, codes, x)
    hs = layer_targets(model, codes, h_top)
    cols = [
        layer_energy(layer.S, layer.U, xl, hl, layer.lam, g, mask if i == 0 else None)
        for i, (layer, g, xl, hl) in enumerate(zip(model.layers, codes, xs, hs))
    ]
    return np.stack(cols, axis=1)


def total_energy(
    model: VNModel,
    codes: Sequence[np.ndarray],
    x: np.ndarray,
    mask: np.ndarray | None = None,
    h_top: np.ndarray | None = None,
) -> np.ndarray:
    """Joint energy F of the whole model per sample, shape (B,) (interface terms counted once)."""
    xs = layer_inputs(model, codes, x)
    total = np.zeros(x.shape[0], dtype=x.dtype)
    for i, (layer, g, xl) in enumerate(zip(model.layers, codes, xs)):
        # Each layer's input term and l1 term; the top layer also its h_top term.
        h = h_top if i == model.n_layers - 1 else None
        total = total + layer_energy(
            layer.S, layer.U, xl, h, layer.lam, g, mask if i == 0 else None
        )
    return total

"""Compile a Vector Network settle into an event-driven simulator Graph of VN atoms.

The hierarchical settle minimises the joint energy
  J = 1/2 ||m*(x - S_1 g_1)||^2 + sum_{l<L} 1/2 ||U_l g_l - S_{l+1} g_{l+1}||^2
      [+ 1/2 ||h_top - U_L g_L||^2] + sum_l lam_l ||g_l||_1,
whose gradient wrt g_l equals that of the local energy E_l. The gradient is linear in the codes:
Gram G_l = S_l^T diag(m) S_l (mask on layer 1 only) + U_l^T U_l (if l < L or h_top is given),
up coupling -S_{l+1}^T U_l, down coupling -U_l^T S_{l+1}, drive b_1 = S_1^T (m*x) and
b_L += U_L^T h_top. Atoms become VN units, the Grams lateral projections, the couplings
inter-layer projections, the drives biases; Jacobi ISTA with eta = 1/L_J (largest eigenvalue of
the joint Hessian) then has the same fixed point as the dense reference.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from atomspark.sim.core import AtomsparkError, as_finite_array, require_int, require_positive
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.units.vn import VNParams


def layer_name(l: int) -> str:
    """Population name of layer l (0-based)."""
    return f"vn_layer{l}"


def joint_system(S_list, U_list, x, mask=None, h_top=None):
    """Return (blocks, drives): blocks[(a, b)] is the Hessian block d grad_a / d g_b of J
    (only nonzero blocks), drives[l] the constant drive b_l. Inputs are validated."""
    n_layers = len(S_list)
    if n_layers < 1 or len(U_list) != n_layers:
        raise AtomsparkError(
            f"S_list, U_list: need one S and one U per layer (>= 1), got {len(S_list)} and "
            f"{len(U_list)}"
        )
    S = [as_finite_array(f"S_list[{i}]", s, ndim=2) for i, s in enumerate(S_list)]
    U = [as_finite_array(f"U_list[{i}]", u, ndim=2) for i, u in enumerate(U_list)]
    for i in range(n_layers):
        if U[i].shape[1] != S[i].shape[1]:
            raise AtomsparkError(f"U_list[{i}]: needs {S[i].shape[1]} columns like S_list[{i}]")
        if i + 1 < n_layers and U[i].shape[0] != S[i + 1].shape[0]:
            raise AtomsparkError(
                f"U_list[{i}] has {U[i].shape[0]} rows but S_list[{i + 1}] has "
                f"{S[i + 1].shape[0]}: x_(l+1) = U_l g_l needs them equal"
            )
    x = as_finite_array("x", x, ndim=1)
    if x.shape[0] != S[0].shape[0]:
        raise AtomsparkError(f"x: expected length {S[0].shape[0]}, got {x.shape[0]}")
    m = np.ones_like(x) if mask is None else as_finite_array("mask", mask, ndim=1)
    if m.shape != x.shape:
        raise AtomsparkError(f"mask: expected shape {x.shape}, got {m.shape}")
    if h_top is not None:
        h_top = as_finite_array("h_top", h_top, ndim=1)
        if h_top.shape[0] != U[-1].shape[0]:
            raise AtomsparkError(f"h_top: expected length {U[-1].shape[0]}, got {h_top.shape[0]}")
    blocks = {}
    for l in range(n_layers):
        gram = S[l].T @ (m[:, None] * S[l]) if l == 0 else S[l].T @ S[l]
        if l + 1 < n_layers or h_top is not None:
            gram = gram + U[l].T @ U[l]
        if l + 1 < n_layers:
            blocks[(l + 1, l)] = -S[l + 1].T @ U[l]
            blocks[(l, l + 1)] = -U[l].T @ S[l + 1]
        blocks[(l, l)] = gram
    return blocks, layer_drives(S, U, x, m, h_top)


def layer_drives(S, U, x, mask=None, h_top=None) -> list[np.ndarray]:
    """The constant drive b_l of each layer: b_1 = S_1^T (m*x), b_L += U_L^T h_top (arrays as
    joint_system validated them; the only part of the joint system that depends on x)."""
    m = np.ones_like(x) if mask is None else mask
    drives = []
    for l in range(len(S)):
        drive = S[0].T @ (m * x) if l == 0 else np.zeros(S[l].shape[1])
        if l == len(S) - 1 and h_top is not None:
            drive = drive + U[l].T @ h_top
        drives.append(drive)
    return drives


def dense_hessian(blocks: dict, sizes: Sequence[int]) -> np.ndarray:
    """Assemble the joint Hessian from its blocks."""
    offs = np.concatenate([[0], np.cumsum(sizes)])
    H = np.zeros((offs[-1], offs[-1]))
    for (a, b), blk in blocks.items():
        H[offs[a] : offs[a + 1], offs[b] : offs[b + 1]] = blk
    return H


def largest_eigenvalue(H: np.ndarray, iterations: int = 1000, tol: float = 1e-10) -> float:
    """Largest eigenvalue of a symmetric PSD matrix by power iteration (seeded, deterministic)."""
    v = np.random.default_rng(0).standard_normal(H.shape[0])
    v /= np.linalg.norm(v)
    lam = 0.0
    for _ in range(iterations):
        w = H @ v
        new = float(np.linalg.norm(w))
        if new == 0.0:
            return 0.0
        v = w / new
        if abs(new - lam) <= tol * new:
            return new
        lam = new
    return lam


def compile_vn(
    S_list: Sequence[np.ndarray],
    U_list: Sequence[np.ndarray],
    lams: float | Sequence[float],
    x: np.ndarray,
    mask: np.ndarray | None = None,
    h_top: np.ndarray | None = None,
    topk: int | None = None,
    eta: float | None = None,
    event_threshold: float = 0.0,
    dtype: str = "float64",
) -> Graph:
    """Graph whose Jacobi event-driven ISTA settles the joint VN energy (see module docstring).

    One population per layer (layer_name(l)); topk applies to the top layer; eta defaults to
    1 / largest eigenvalue of the joint Hessian."""
    blocks, drives = joint_system(S_list, U_list, x, mask, h_top)
    n_layers = len(drives)
    sizes = [d.size for d in drives]
    lam_arr = (
        np.broadcast_to(np.asarray(lams, dtype=np.float64), (n_layers,))
        if np.ndim(lams) == 0
        else as_finite_array("lams", lams, ndim=1)
    )
    if lam_arr.shape != (n_layers,):
        raise AtomsparkError(
            f"lams: expected one value per layer ({n_layers}), got {lam_arr.shape}"
        )
    if eta is None:
        L = largest_eigenvalue(dense_hessian(blocks, sizes))
        if L <= 0:
            raise AtomsparkError("S_list, U_list: the joint Hessian is zero; no step size exists")
        eta = 1.0 / L
    eta = require_positive("eta", eta)
    if topk is not None:
        topk = require_int("topk", topk, minimum=1)
    pops = [
        Population(
            layer_name(l),
            sizes[l],
            VNParams(
                eta=eta,
                lam=float(lam_arr[l]),
                drive=drives[l],
                event_threshold=event_threshold,
                topk=topk if l == n_layers - 1 else None,
                dtype=dtype,
            ),
        )
        for l in range(n_layers)
    ]
    projs = [
        Projection(layer_name(b), layer_name(a), blk)  # weights (K_a x K_b): source b -> target a
        for (a, b), blk in sorted(blocks.items())
    ]
    return Graph(pops, projs)


def compile_vn_model(model, x, mask=None, h_top=None, eta=None, event_threshold=0.0) -> Graph:
    """Adaptor: compile an atomspark.networks.vn.model.VNModel (layers with S, U, lam, topk)."""
    layers = getattr(model, "layers", None)
    if not layers:
        raise AtomsparkError(f"model: expected a VNModel with layers, got {type(model).__name__}")
    return compile_vn(
        [ly.S for ly in layers],
        [ly.U for ly in layers],
        [ly.lam for ly in layers],
        x,
        mask=mask,
        h_top=h_top,
        topk=layers[-1].topk,
        eta=eta,
        event_threshold=event_threshold,
    )

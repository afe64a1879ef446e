"""VN layer energy and the quantities the event engine needs (drive, Gram matrix, step, prox).

Batched convention: a batch of B samples is a (B, n) array; codes g are (B, K). S g for every
sample is therefore ``g @ S.T``.

Layer energy (docs/maths.md), with an optional 0/1 mask m on the input entries:
    E(g) = 1/2 ||m * (x - S g)||^2 + 1/2 ||h - U g||^2 + lam ||g||_1
The top-down term is dropped entirely when h is None (not the same as h = 0).
Its smooth part is the quadratic 1/2 g^T G g - b^T g + const with
    drive b = S^T (m * x) + U^T h,   Gram G = S^T diag(m) S + U^T U,
so one ISTA step is g <- prox_{eta lam}(g + eta (b - G g)) with eta = 1/L, L = lambda_max(G),
the Lipschitz constant of the smooth part's gradient (the largest step that keeps ISTA monotone).
"""

from __future__ import annotations

import numpy as np
from atomspark.sim.core import require_int


def layer_energy(
    S: np.ndarray,
    U: np.ndarray | None,
    x: np.ndarray,
    h: np.ndarray | None,
    lam: float,
    g: np.ndarray,
    mask: np.ndarray | None = None,
) -> np.ndarray:
    """Per-sample energy E(g), shape (B,), computed from the residuals (no cancellation)."""
    rx = x - g @ S.T
    if mask is not None:
        rx = rx * mask
    energy = 0.5 * np.sum(rx * rx, axis=1) + lam * np.sum(np.abs(g), axis=1)
    if h is not None:
        rh = h - g @ U.T
        energy = energy + 0.5 * np.sum(rh * rh, axis=1)
    return energy


def drive(
    S: np.ndarray,
    U: np.ndarray | None,
    x: np.ndarray,
    h: np.ndarray | None,
    mask: np.ndarray | None = None,
) -> np.ndarray:
    """Feed-forward drive b = S^T (m * x) + U^T h per sample, shape (B, K)."""
    b = (x if mask is None else x * mask) @ S
    if h is not None:
        b = b + h @ U
    return b


def gram(S: np.ndarray, U: np.ndarray | None = None, mask: np.ndarray | None = None) -> np.ndarray:
    """Gram matrix G = S^T diag(m) S + U^T U: (K, K), or (B, K, K) for a per-sample (B, d) mask.

    Pass U=None when the layer has no top-down term. A 1-D mask is shared by all samples.
    """
    if mask is None:
        G = S.T @ S
    elif mask.ndim == 1:
        G = S.T @ (mask[:, None] * S)
    else:
        G = np.einsum("dk,bd,dj->bkj", S, mask, S)
    if U is not None:
        G = G + U.T @ U
    return G


def lipschitz_constant(G: np.ndarray) -> np.ndarray | float:
    """Largest eigenvalue of G (or of each G[b]): the Lipschitz constant of the gradient."""
    return np.linalg.eigvalsh(G)[..., -1]


def step_size(G: np.ndarray) -> np.ndarray | float:
    """ISTA step eta = 1/L; an all-zero G (no signal reaches the layer) gets eta = 1."""
    L = np.asarray(lipschitz_constant(G), dtype=G.dtype)
    eta = 1.0 / np.where(L > 0, L, 1.0)
    return eta if eta.ndim else float(eta)


def soft_threshold(v: np.ndarray, threshold: float | np.ndarray) -> np.ndarray:
    """Proximal map of threshold * ||.||_1: sign(v) max(|v| - threshold, 0)."""
    return np.sign(v) * np.maximum(np.abs(v) - threshold, 0.0)


def keep_top_k(v: np.ndarray, k: int) -> np.ndarray:
    """Zero all but the k largest |v| in each row (ties broken by index order of argpartition)."""
    K = v.shape[-1]
    k = require_int("k", k, minimum=1)
    if k >= K:
        return v
    drop = np.argpartition(np.abs(v), K - k, axis=-1)[..., : K - k]
    out = v.copy()
    np.put_along_axis(out, drop, 0.0, axis=-1)
    return out


def prox(v: np.ndarray, threshold: float | np.ndarray, topk: int | None = None) -> np.ndarray:
    """Proximal map of threshold*||.||_1 (+ the constraint ||g||_0 <= topk when given).

    With the top-k constraint the exact prox is: soft-threshold, then keep the k largest
    magnitudes (each kept entry lowers the prox objective by soft(v_i)^2 / 2).
    """
    out = soft_threshold(v, threshold)
    return out if topk is None else keep_top_k(out, topk)


def gram_matvec(g: np.ndarray, G: np.ndarray) -> np.ndarray:
    """Row-wise G g for codes (B, K) and G (K, K) or (B, K, K)."""
    if G.ndim == 2:
        return g @ G
    return np.einsum("bk,bkj->bj", g, G)

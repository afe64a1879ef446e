"""Poincare-ball geometry with curvature -c (c > 0): the space RSGN nodes and spark points live in.

The ball is {x : c ||x||^2 < 1}. Formulas follow Ganea, Becigneul & Hofmann, "Hyperbolic Neural
Networks" (NeurIPS 2018); at c = 1 the distance is arcosh(1 + 2||p-q||^2/((1-||p||^2)(1-||q||^2))).
Every function checks that its points lie strictly inside the ball and names the offender otherwise.
"""

from __future__ import annotations

import numpy as np
from atomspark.sim.core import AtomsparkError, as_finite_array, require_positive


def check_in_ball(name: str, points, c: float = 1.0) -> np.ndarray:
    """Return `points` (..., d) as a float array; raise if any point is on or outside the ball."""
    c = require_positive("curvature c", c)
    x = as_finite_array(name, points)
    if x.ndim == 0:
        raise AtomsparkError(f"{name}: expected points of shape (..., d), got a scalar")
    sq = np.atleast_1d(np.sum(x * x, axis=-1))
    bad = np.argwhere(c * sq >= 1.0)
    if bad.size:
        idx = tuple(int(i) for i in bad[0])
        raise AtomsparkError(
            f"{name}: {len(bad)} point(s) on or outside the Poincare ball of curvature {c}; "
            f"first at index {idx} with norm {float(np.sqrt(sq[idx])):.6g} "
            f"(must be < {1.0 / np.sqrt(c):.6g})"
        )
    return x


def mobius_add(x, y, c: float = 1.0) -> np.ndarray:
    """Mobius addition x (+)_c y, the ball's analogue of vector addition (broadcasts over ...)."""
    x = check_in_ball("mobius_add x", x, c)
    y = check_in_ball("mobius_add y", y, c)
    xy = np.sum(x * y, axis=-1, keepdims=True)
    x2 = np.sum(x * x, axis=-1, keepdims=True)
    y2 = np.sum(y * y, axis=-1, keepdims=True)
    num = (1.0 + 2.0 * c * xy + c * y2) * x + (1.0 - c * x2) * y
    den = 1.0 + 2.0 * c * xy + c * c * x2 * y2
    return num / den


def poincare_distance(x, y, c: float = 1.0) -> np.ndarray:
    """Geodesic distance d_c(x, y) = arcosh(1 + 2c||x-y||^2 / ((1-c||x||^2)(1-c||y||^2))) / sqrt(c)."""
    x = check_in_ball("poincare_distance x", x, c)
    y = check_in_ball("poincare_distance y", y, c)
    if np.shape(x)[-1:] != np.shape(y)[-1:]:
        raise AtomsparkError(
            f"poincare_distance: x and y must be points of one ball (same last dimension), got "
            f"shapes {np.shape(x)} and {np.shape(y)}"
        )
    diff2 = np.sum((x - y) ** 2, axis=-1)
    den = (1.0 - c * np.sum(x * x, axis=-1)) * (1.0 - c * np.sum(y * y, axis=-1))
    arg = 1.0 + 2.0 * c * diff2 / den
    return np.arccosh(np.maximum(arg, 1.0)) / np.sqrt(c)


def pairwise_distances(p, q=None, c: float = 1.0) -> np.ndarray:
    """All geodesic distances between rows of p (n, d) and q (m, d) (q defaults to p): (n, m)."""
    p = check_in_ball("pairwise_distances p", as_finite_array("p", p, ndim=2), c)
    q = (
        p
        if q is None
        else check_in_ball("pairwise_distances q", as_finite_array("q", q, ndim=2), c)
    )
    if p.shape[1] != q.shape[1]:
        raise AtomsparkError(f"pairwise_distances: dimension mismatch {p.shape[1]} vs {q.shape[1]}")
    p2 = np.sum(p * p, axis=1)
    q2 = np.sum(q * q, axis=1)
    diff2 = np.maximum(p2[:, None] + q2[None, :] - 2.0 * (p @ q.T), 0.0)
    den = (1.0 - c * p2)[:, None] * (1.0 - c * q2)[None, :]
    d = np.arccosh(np.maximum(1.0 + 2.0 * c * diff2 / den, 1.0)) / np.sqrt(c)
    if q is p:
        np.fill_diagonal(d, 0.0)
    return d


def exp_map0(v, c: float = 1.0) -> np.ndarray:
    """Exponential map at the origin: tangent vector v -> tanh(sqrt(c)|v|) v / (sqrt(c)|v|)."""
    c = require_positive("curvature c", c)
    v = as_finite_array("exp_map0 v", v)
    sc = np.sqrt(c)
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    safe = np.where(n > 0, n, 1.0)
    return np.where(n > 0, np.tanh(sc * safe) * v / (sc * safe), 0.0)


def log_map0(y, c: float = 1.0) -> np.ndarray:
    """Logarithmic map at the origin (inverse of exp_map0): y -> artanh(sqrt(c)|y|) y/(sqrt(c)|y|)."""
    y = check_in_ball("log_map0 y", y, c)
    sc = np.sqrt(c)
    n = np.linalg.norm(y, axis=-1, keepdims=True)
    safe = np.where(n > 0, n, 1.0)
    return np.where(n > 0, np.arctanh(sc * safe) * y / (sc * safe), 0.0)


def project_to_ball(
    x, max_norm: float, c: float = 1.0, trigger_norm: float | None = None
) -> np.ndarray:
    """Rescale points whose norm is >= trigger_norm (default max_norm) to norm max_norm.

    Norms are in units of the ball radius 1/sqrt(c). trigger_norm=1.0 reproduces the released RSGN
    code, which only rescales points that left the ball (to 0.95 for nodes, 0.9 for sparks).
    """
    c = require_positive("curvature c", c)
    if not 0.0 < max_norm < 1.0:
        raise AtomsparkError(f"max_norm: must lie in (0, 1), got {max_norm!r}")
    trig = max_norm if trigger_norm is None else float(trigger_norm)
    if not max_norm <= trig <= 1.0:
        raise AtomsparkError(f"trigger_norm: must lie in [max_norm, 1], got {trigger_norm!r}")
    x = as_finite_array("project_to_ball x", x)
    n = np.linalg.norm(x, axis=-1, keepdims=True) * np.sqrt(c)
    scale = np.where(n >= trig, max_norm / np.where(n > 0, n, 1.0), 1.0)
    return x * scale

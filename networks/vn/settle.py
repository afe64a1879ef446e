"""VN inference ("settle"): proximal-gradient block solves, layer by layer, to a sparse fixed point.

Reference (oracle) implementation in plain NumPy, batched over samples.

* `solve_layer` minimises one layer's energy E(g) (see energy.py) with the other layers'
  messages held fixed. Methods: "ista" (g <- prox(g - eta grad), monotone) and "fista": FISTA
  (Beck & Teboulle 2009) with function-value restart (O'Donoghue & Candes 2015): a momentum
  step that would raise E is dropped and momentum restarts, so neither method increases E.
  A sample stops when an accepted proximal step moves its codes by at most `tol` (max-abs):
  a fixed point of the prox map to within tol.
* `settle` runs the hierarchy by block coordinate descent on the joint energy F (hierarchy.py):
  one sweep updates layers 1..L (upward) then L-1..2 (downward); sweeps repeat until no code of a
  sample moved by more than `tol` during a whole sweep, or `sweeps` is reached. Because every
  block solve is monotone, F never increases from sweep to sweep.
* Top-k (top layer only): the prox becomes soft-threshold then keep the k largest magnitudes,
  the exact prox of lam||g||_1 + indicator(||g||_0 <= k). The problem is then non-convex: the
  proximal steps still never increase E (step 1/L majorisation argument) and stop at a fixed
  point of the prox map, which is a local, not necessarily global, minimum; ISTA and FISTA may
  reach different fixed points, and which atoms survive can depend on the starting codes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from atomspark.networks.vn.energy import drive, gram, gram_matvec, layer_energy, prox, step_size
from atomspark.networks.vn.hierarchy import (
    layer_energies,
    layer_input,
    layer_target,
    total_energy,
)
from atomspark.networks.vn.model import VNModel
from atomspark.sim.core import (
    AtomsparkError,
    as_finite_array,
    require_int,
    require_positive,
    require_shape,
)

METHODS = ("ista", "fista")


@dataclass(frozen=True)
class LayerSolution:
    """Result of one layer's block solve: codes (B, K), energy (B,), iterations (B,), converged (B,)."""

    codes: np.ndarray
    energy: np.ndarray
    iterations: np.ndarray
    converged: np.ndarray


@dataclass(frozen=True)
class SettleResult:
    """Result of a hierarchical settle over a batch of B samples.

    codes: per layer, (B, K_l). energy: joint energy F per sample (B,). layer_energies: local
    E_l per sample (B, L) (interface terms appear in two layers). sweeps: sweeps run per sample.
    iterations: proximal steps summed over all block solves, per sample and layer (B, L).
    converged: per sample. energy_trace: F after 0, 1, 2, ... sweeps, (n_sweeps + 1, B); a
    sample that stopped early repeats its last value.
    """

    codes: list[np.ndarray]
    energy: np.ndarray
    layer_energies: np.ndarray
    sweeps: np.ndarray
    iterations: np.ndarray
    converged: np.ndarray
    energy_trace: np.ndarray


def solve_layer(
    S: np.ndarray,
    U: np.ndarray | None,
    x: np.ndarray,
    h: np.ndarray | None = None,
    lam: float = 0.0,
    mask: np.ndarray | None = None,
    *,
    method: str = "fista",
    tol: float = 1e-8,
    max_iter: int = 1000,
    g0: np.ndarray | None = None,
    topk: int | None = None,
) -> LayerSolution:
    """Minimise one layer's energy E(g) for x (B, d) or (d,), target h (B, m) or None.

    U may be None when h is None (no top-down term). A 1-D x gives B = 1.
    """
    S = as_finite_array("S", S, ndim=2)
    d, K = S.shape
    x = _batch("x", x, d, S.dtype)
    B = x.shape[0]
    if h is not None:
        if U is None:
            raise AtomsparkError("U: required when a top-down target h is given")
        U = as_finite_array("U", U, ndim=2, dtype=S.dtype)
        require_shape("U", U, (None, K))
        h = _batch("h", h, U.shape[0], S.dtype, batch=B)
    lam = require_positive("lam", lam, allow_zero=True)
    mask = _mask(mask, d, B, S.dtype)
    _check_method(method)
    tol = require_positive("tol", tol, allow_zero=True)
    max_iter = require_int("max_iter", max_iter, minimum=1)
    if topk is not None:
        topk = require_int("topk", topk, minimum=1)
        if topk > K:
            raise AtomsparkError(f"topk: must be <= number of atoms {K}, got {topk}")
    g = np.zeros((B, K), S.dtype) if g0 is None else _batch("g0", g0, K, S.dtype, batch=B).copy()
    U_used = U if h is not None else None
    G = gram(S, U_used, mask)
    b = drive(S, U_used, x, h, mask)
    g, iters, conv = proximal_descent(G, b, lam, g, method, tol, max_iter, topk)
    energy = layer_energy(S, U_used, x, h, lam, g, mask)
    return LayerSolution(codes=g, energy=energy, iterations=iters, converged=conv)


def proximal_descent(
    G: np.ndarray,
    b: np.ndarray,
    lam: float,
    g0: np.ndarray,
    method: str,
    tol: float,
    max_iter: int,
    topk: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ISTA / monotone FISTA on 1/2 g^T G g - b^T g + lam ||g||_1 (+ top-k), batched.

    G is (K, K) or (B, K, K); b and g0 are (B, K). Converged samples are frozen.
    Returns (codes, iterations per sample, converged per sample).
    """
    B = b.shape[0]
    eta = np.broadcast_to(np.asarray(step_size(G), dtype=b.dtype), (B,))
    g = g0.copy()
    y = g0.copy()
    t = np.ones(B, dtype=b.dtype)
    iterations = np.zeros(B, dtype=np.int64)
    converged = np.zeros(B, dtype=bool)
    active = np.arange(B)
    fista = method == "fista"
    for _ in range(max_iter):
        if active.size == 0:
            break
        Ga = G if G.ndim == 2 else G[active]
        ba, ga, ya = b[active], g[active], y[active]
        step = eta[active][:, None]
        z = prox(ya - step * (gram_matvec(ya, Ga) - ba), step * lam, topk)
        if fista:
            # Function-value restart: a momentum step that would raise E is dropped and the
            # next step is a plain ISTA step from g (t = 1 means y == g, always accepted).
            t_a = t[active]
            accept = (_energy_change(ga, z, Ga, ba, lam) <= 0.0) | (t_a == 1.0)
            t_next = np.where(accept, 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t_a * t_a)), 1.0)
            g_new = np.where(accept[:, None], z, ga)
            y[active] = g_new + ((t_a - 1.0) / t_next)[:, None] * (g_new - ga)
            t[active] = t_next
        else:
            accept = np.ones(active.size, dtype=bool)
            g_new = z
            y[active] = z
        g[active] = g_new
        iterations[active] += 1
        done = accept & (np.max(np.abs(z - ya), axis=1) <= tol)
        converged[active[done]] = True
        active = active[~done]
    return g, iterations, converged


def settle(
    model: VNModel,
    x: np.ndarray,
    mask: np.ndarray | None = None,
    h_top: np.ndarray | None = None,
    *,
    method: str = "fista",
    tol: float = 1e-6,
    max_iter: int = 1000,
    sweeps: int = 100,
    init: Sequence[np.ndarray] | None = None,
) -> SettleResult:
    """Hierarchical settle of `model` on x (B, d) or (d,): block coordinate descent on F.

    mask (d,) or (B, d), 0/1: layer 1 sees only observed entries. h_top (B, m_L): optional
    top-down target of the top layer. max_iter caps each block solve, sweeps the sweeps.
    init: optional starting codes per layer (default zeros).
    """
    if not isinstance(model, VNModel):
        raise AtomsparkError(f"model: expected a VNModel, got {type(model).__name__}")
    dtype = model.dtype
    x = _batch("x", x, model.input_dim, dtype)
    B = x.shape[0]
    mask = _mask(mask, model.input_dim, B, dtype)
    if h_top is not None:
        h_top = _batch("h_top", h_top, model.layers[-1].output_dim, dtype, batch=B)
    _check_method(method)
    tol = require_positive("tol", tol, allow_zero=True)
    max_iter = require_int("max_iter", max_iter, minimum=1)
    sweeps = require_int("sweeps", sweeps, minimum=1)
    codes = _initial_codes(model, init, B)

    L = model.n_layers
    order = list(range(L)) + list(range(L - 2, 0, -1))  # up 1..L, then down L-1..2
    n_sweeps = np.zeros(B, dtype=np.int64)
    iterations = np.zeros((B, L), dtype=np.int64)
    converged = np.zeros(B, dtype=bool)
    trace = [total_energy(model, codes, x, mask, h_top)]
    active = np.arange(B)
    for _ in range(sweeps):
        if active.size == 0:
            break
        sub = [c[active] for c in codes]
        x_a = x[active]
        m_a = mask if mask is None or mask.ndim == 1 else mask[active]
        h_a = None if h_top is None else h_top[active]
        change = np.zeros(active.size, dtype=dtype)
        blocks_ok = np.ones(active.size, dtype=bool)
        for l in order:
            layer = model.layers[l]
            x_l = layer_input(model, sub, x_a, l)
            h_l = layer_target(model, sub, h_a, l)
            U_used = layer.U if h_l is not None else None
            m_l = m_a if l == 0 else None
            G = gram(layer.S, U_used, m_l)
            b = drive(layer.S, U_used, x_l, h_l, m_l)
            g, its, ok = proximal_descent(
                G, b, layer.lam, sub[l], method, tol, max_iter, layer.topk
            )
            change = np.maximum(change, np.max(np.abs(g - sub[l]), axis=1))
            blocks_ok &= ok
            iterations[active, l] += its
            sub[l] = g
        for l in range(L):
            codes[l][active] = sub[l]
        n_sweeps[active] += 1
        trace.append(total_energy(model, codes, x, mask, h_top))
        # One layer: its converged block solve is the whole problem; no confirming sweep.
        done = blocks_ok if L == 1 else (change <= tol) & blocks_ok
        converged[active[done]] = True
        active = active[~done]
    return SettleResult(
        codes=codes,
        energy=trace[-1],
        layer_energies=layer_energies(model, codes, x, mask, h_top),
        sweeps=n_sweeps,
        iterations=iterations,
        converged=converged,
        energy_trace=np.stack(trace),
    )


def predict_masked(model: VNModel, x: np.ndarray, mask: np.ndarray, **settle_kwargs) -> np.ndarray:
    """Masked prediction: settle on the observed entries (mask == 1), return S_1 g_1.

    The result has x's shape; its entries where mask == 0 are the prediction (values of x there
    are ignored, but must be finite). Keyword arguments go to `settle`.
    """
    result = settle(model, x, mask=mask, **settle_kwargs)
    prediction = result.codes[0] @ model.layers[0].S.T
    return prediction[0] if np.ndim(x) == 1 else prediction


def _batch(name: str, value, dim: int, dtype, batch: int | None = None) -> np.ndarray:
    """Read a (B, dim) or (dim,) array as (B, dim), checking B against `batch` if given."""
    arr = as_finite_array(name, value, ndim=(1, 2), dtype=dtype)
    if arr.ndim == 1:
        arr = arr[None, :]
    require_shape(name, arr, (batch, dim))
    return arr


def _mask(mask, dim: int, batch: int, dtype) -> np.ndarray | None:
    """Check a 0/1 mask of shape (dim,) or (batch, dim); returned as `dtype`."""
    if mask is None:
        return None
    m = as_finite_array("mask", mask, ndim=(1, 2), dtype=dtype)
    require_shape("mask", m, (dim,) if m.ndim == 1 else (batch, dim))
    if not np.all((m == 0) | (m == 1)):
        raise AtomsparkError("mask: entries must be 0/1 (or boolean): 1 = observed")
    return m


def _check_method(method: str) -> None:
    if method not in METHODS:
        raise AtomsparkError(f"method: must be one of {METHODS}, got {method!r}")


def _initial_codes(model: VNModel, init, B: int) -> list[np.ndarray]:
    if init is None:
        return [np.zeros((B, layer.n_atoms), model.dtype) for layer in model.layers]
    if len(init) != model.n_layers:
        raise AtomsparkError(f"init: need codes for {model.n_layers} layers, got {len(init)}")
    return [
        _batch(f"init[{i}]", g, layer.n_atoms, model.dtype, batch=B).copy()
        for i, (g, layer) in enumerate(zip(init, model.layers))
    ]


def _energy_change(g: np.ndarray, z: np.ndarray, G: np.ndarray, b: np.ndarray, lam: float):
    """E(z) - E(g) per row for the quadratic-plus-l1 energy, without forming E (no cancellation)."""
    dz = z - g
    smooth = np.sum(dz * (0.5 * gram_matvec(z + g, G) - b), axis=1)
    return smooth + lam * (np.sum(np.abs(z), axis=1) - np.sum(np.abs(g), axis=1))

"""RSGN forward dynamics in plain NumPy: ignition, K propagation steps, inhibition, readout.

This is the oracle the event-driven engine and the torch path are tested against. Shapes: tokens
(B, L, d_in); activations alpha (B, N); node states h (B, N, d_hidden). The weight matrix W has the
sender on the row: node j receives m_j = sum_i W_ij x_i, i.e. m = W^T x.

One step (both modes, from the released code):
  gate = alpha > cutoff;  x = h * alpha * gate;  m = W^T x;  h_new = m W_h + b_h
  alpha' = sigmoid((alpha + gain ||h_new|| - theta) / T);  h <- LayerNorm(h_new + h) * alpha'
  alpha <- clamp(alpha'_i |N_i| / sum_{j in N_i} alpha'_j, 0, 1)   (divisive inhibition)
Sparse mode adds the event rule: only nodes that are active or receive a message are updated,
and any activation <= cutoff is set to exactly 0 (with its state h), so silent nodes cost nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from atomspark.networks.rsgn.geometry import pairwise_distances, project_to_ball
from atomspark.networks.rsgn.model import RSGNConfig, RSGNParams, check_config, validate_params
from atomspark.sim.core import AtomsparkError, as_finite_array, require_shape
from scipy.special import erf, expit

_INHIBITION_EPS = 1e-6  # released code: neighbour sum + 1e-6


@dataclass
class PropagationResult:
    """Final activations/states and the per-step message counts.

    messages[k, b]: nonzero-weight messages sent at step k for sequence b (the sum of the
    out-degrees of the nodes whose activation passed the gate/cutoff at the start of the step).
    active[k, b]: nodes above the cutoff after step k.
    """

    alpha: np.ndarray
    h: np.ndarray
    messages: np.ndarray
    active: np.ndarray


@dataclass
class ForwardResult:
    """Class scores plus everything the propagation produced."""

    scores: np.ndarray  # (B, n_classes)
    features: np.ndarray  # (B, d_hidden): sum_i alpha_i h_i
    alpha0: np.ndarray  # (B, N) ignition
    propagation: PropagationResult


def check_tokens(tokens, config: RSGNConfig) -> np.ndarray:
    """Tokens as a finite (B, L, d_in) array."""
    check_config(config)
    x = as_finite_array("tokens", tokens, ndim=3)
    require_shape("tokens", x, (None, None, config.d_in))
    if x.shape[0] == 0 or x.shape[1] == 0:
        raise AtomsparkError(f"tokens: need at least one sequence and one token, got {x.shape}")
    return x


def gelu(x: np.ndarray) -> np.ndarray:
    """Exact GELU, x Phi(x), as in torch.nn.GELU()."""
    return 0.5 * x * (1.0 + erf(x / np.sqrt(2.0)))


def layer_norm(x: np.ndarray, gain: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm over the last axis (biased variance, as torch)."""
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * gain + bias


def connection_weights(params: RSGNParams, config: RSGNConfig) -> np.ndarray | sp.csr_matrix:
    """W_ij = affinity_ij * exp(-d_H(p_i, p_j)/tau) * softplus(l_i - l_j + 1), no self loops.

    published: dense (N, N) with affinity sigmoid(u_i . v_j); sparse: CSR on the graph's edges.
    """
    c, tau = config.curvature, config.tau
    if config.mode == "published":
        d = pairwise_distances(params.positions, c=c)
        aff = expit(params.affinity_u @ params.affinity_v.T)
        level = np.logaddexp(0.0, params.levels[:, None] - params.levels[None, :] + 1.0)
        w = aff * np.exp(-d / tau) * level
        np.fill_diagonal(w, 0.0)
        return w
    g = params.edge_affinity
    rows = np.repeat(np.arange(config.n_nodes), np.diff(g.indptr))
    cols = g.indices
    p = params.positions
    pr, pc = p[rows], p[cols]
    diff2 = np.sum((pr - pc) ** 2, axis=1)
    den = (1.0 - c * np.sum(pr * pr, axis=1)) * (1.0 - c * np.sum(pc * pc, axis=1))
    d = np.arccosh(np.maximum(1.0 + 2.0 * c * diff2 / den, 1.0)) / np.sqrt(c)
    level = np.logaddexp(0.0, params.levels[rows] - params.levels[cols] + 1.0)
    data = g.data * np.exp(-d / tau) * level
    return sp.csr_matrix((data, g.indices.copy(), g.indptr.copy()), shape=g.shape)


def out_degrees(params: RSGNParams, config: RSGNConfig) -> np.ndarray:
    """Number of nonzero outgoing weights per node (N - 1 in published mode)."""
    if config.mode == "published":
        return np.full(config.n_nodes, config.n_nodes - 1, dtype=np.int64)
    return np.diff(params.edge_affinity.indptr).astype(np.int64)


def spark_points(params: RSGNParams, config: RSGNConfig, tokens) -> np.ndarray:
    """Token -> MLP(d_in -> 4 dim, GELU -> dim, tanh) * spark_scale -> ball: (B, L, dim).

    published: rescaled to norm 0.9 only if it left the ball (released code); sparse: clipped.
    """
    x = check_tokens(tokens, config)
    z = np.tanh(gelu(x @ params.embed_w1 + params.embed_b1) @ params.embed_w2 + params.embed_b2)
    z = z * params.spark_scale
    trigger = 1.0 if config.mode == "published" else None
    return project_to_ball(z, config.spark_max_norm, config.curvature, trigger_norm=trigger)


def ignition(params: RSGNParams, config: RSGNConfig, tokens) -> np.ndarray:
    """Initial activation alpha_i = exp(-min_t dist(spark_t, p_i)^2 / (2 sigma^2)): (B, N).

    published: Euclidean distance (released code); sparse: geodesic distance, then the cutoff.
    """
    sparks = spark_points(params, config, tokens)
    b, l, dim = sparks.shape
    flat = sparks.reshape(b * l, dim)
    if config.mode == "published":
        diff = flat[:, None, :] - params.positions[None, :, :]
        d2 = np.sum(diff * diff, axis=-1)
    else:
        d2 = pairwise_distances(flat, params.positions, c=config.curvature) ** 2
    d2min = d2.reshape(b, l, -1).min(axis=1)
    alpha = np.exp(-d2min / (2.0 * config.ignition_sigma**2))
    if config.mode == "sparse":
        alpha = np.where(alpha > config.cutoff, alpha, 0.0)
    return alpha


def initial_state(params: RSGNParams, config: RSGNConfig, tokens, alpha0) -> np.ndarray:
    """h_i = (mean_t x_t W_init + b_init) * alpha0_i: (B, N, d_hidden)."""
    x = check_tokens(tokens, config)
    h0 = x.mean(axis=1) @ params.init_w + params.init_b
    return h0[:, None, :] * np.asarray(alpha0)[:, :, None]


def inhibition_neighbourhood(params: RSGNParams, config: RSGNConfig) -> np.ndarray | sp.csr_matrix:
    """0/1 matrix of divisive-inhibition neighbourhoods, self included.

    published: Euclidean distance < inhibition_radius (dense); sparse: self plus graph neighbours
    in either direction (CSR), so inhibition stays as local and as the messages.
    """
    if config.mode == "published":
        p = params.positions
        d = np.sqrt(np.sum((p[:, None, :] - p[None, :, :]) ** 2, axis=-1))
        return (d < config.inhibition_radius).astype(np.float64)
    pattern = params.edge_affinity.copy()
    pattern.data[:] = 1.0
    nb = pattern + pattern.T + sp.identity(config.n_nodes, format="csr")
    nb.data[:] = 1.0
    return nb.tocsr()


def divisive_inhibition(alpha: np.ndarray, neighbourhood) -> np.ndarray:
    """alpha_i <- clamp(alpha_i |N_i| / (sum_{j in N_i} alpha_j + 1e-6), 0, 1)."""
    size = np.asarray(neighbourhood.sum(axis=1)).ravel()
    total = np.asarray(neighbourhood @ alpha.T).T + _INHIBITION_EPS
    return np.clip(alpha * size / total, 0.0, 1.0)


def resting_activation(params: RSGNParams, config: RSGNConfig) -> np.ndarray:
    """Per node, what threshold_rule subtracts: r = sigma((gain ||b_h|| - theta) / T), the soft
    threshold of a node with alpha = 0 whose summed message is zero (h_new = b_h); zeros for the
    released "sigmoid" rule, so that both rules share one formula."""
    if config.threshold_rule == "sigmoid":
        return np.zeros(config.n_nodes)
    rest = config.signal_gain * np.linalg.norm(params.b_h) - params.thresholds
    return expit(rest / config.temperature)


def soft_threshold(drive: np.ndarray, params: RSGNParams, config: RSGNConfig) -> np.ndarray:
    """alpha' = max(sigma((drive - theta) / T) - r, 0) / (1 - r), r = resting_activation (0 for
    the released rule, which leaves sigma unchanged bit for bit)."""
    r = resting_activation(params, config)
    a = expit((drive - params.thresholds) / config.temperature)
    return np.maximum(a - r, 0.0) / (1.0 - r)


def check_state(params: RSGNParams, config: RSGNConfig, alpha, h) -> tuple[np.ndarray, np.ndarray]:
    """alpha (B, N) in [0, 1] and h (B, N, d_hidden), both finite."""
    a = as_finite_array("alpha", alpha, ndim=2)
    require_shape("alpha", a, (None, config.n_nodes))
    if np.any(a < 0) or np.any(a > 1):
        raise AtomsparkError("alpha: activations must lie in [0, 1]")
    hh = as_finite_array("h", h, ndim=3)
    require_shape("h", hh, (a.shape[0], config.n_nodes, config.d_hidden))
    return a, hh


def propagate(
    params: RSGNParams, config: RSGNConfig, alpha, h, n_steps: int | None = None
) -> PropagationResult:
    """Run K (default config.n_steps) propagation steps with inhibition; count messages.
    K = 0 returns the ignition state unchanged (the no-propagation control)."""
    alpha, h = check_state(params, config, alpha, h)
    k_steps = config.n_steps if n_steps is None else int(n_steps)
    if k_steps < 0:
        raise AtomsparkError(f"n_steps (K): must be >= 0, got {n_steps!r}")
    sparse = config.mode == "sparse"
    w = connection_weights(params, config)
    wt = w.T.tocsr() if sparse else w.T
    neighbourhood = inhibition_neighbourhood(params, config)
    degree = out_degrees(params, config)
    pattern_t = None
    if sparse:
        pattern_t = wt.copy()
        pattern_t.data[:] = 1.0
    b, n, dh = h.shape
    messages = np.zeros((k_steps, b), dtype=np.int64)
    active = np.zeros((k_steps, b), dtype=np.int64)
    for k in range(k_steps):
        gate = alpha > config.cutoff
        messages[k] = gate.astype(np.int64) @ degree
        x = h * (alpha * gate)[:, :, None]
        # m[b, j, :] = sum_i W[i, j] x[b, i, :]
        m = (wt @ x.transpose(1, 0, 2).reshape(n, b * dh)).reshape(n, b, dh).transpose(1, 0, 2)
        h_new = m @ params.w_h + params.b_h
        drive = alpha + config.signal_gain * np.linalg.norm(h_new, axis=-1)
        alpha_new = soft_threshold(drive, params, config)
        if sparse:
            received = np.asarray(pattern_t @ gate.T.astype(np.float64)).T > 0
            alpha_new = np.where((gate | received) & (alpha_new > config.cutoff), alpha_new, 0.0)
        h = layer_norm(h_new + h, params.ln_gain, params.ln_bias, config.layer_norm_eps)
        h = h * alpha_new[:, :, None]
        alpha = divisive_inhibition(alpha_new, neighbourhood)
        if sparse:
            alpha = np.where(alpha > config.cutoff, alpha, 0.0)
            h = h * (alpha > 0)[:, :, None]
        active[k] = np.count_nonzero(alpha > config.cutoff, axis=1)
    return PropagationResult(alpha=alpha, h=h, messages=messages, active=active)


def readout(params: RSGNParams, alpha: np.ndarray, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """features = sum_i alpha_i h_i; scores = features W_cls + b_cls."""
    features = np.einsum("bn,bnd->bd", alpha, h)
    return features @ params.cls_w + params.cls_b, features


def forward(
    params: RSGNParams, config: RSGNConfig, tokens, n_steps: int | None = None
) -> ForwardResult:
    """Tokens (B, L, d_in) -> class scores (B, n_classes), with ignition and propagation records.
    The parameters are checked against the config first (sizes, mode, NaN/Inf)."""
    validate_params(params, config)
    x = check_tokens(tokens, config)
    alpha0 = ignition(params, config, x)
    h0 = initial_state(params, config, x, alpha0)
    prop = propagate(params, config, alpha0, h0, n_steps=n_steps)
    scores, features = readout(params, prop.alpha, prop.h)
    return ForwardResult(scores=scores, features=features, alpha0=alpha0, propagation=prop)

"""RSGN node unit: a soft-threshold node with a vector state, on the event-driven engine.

Node j holds an activation alpha_j in [0, 1] and a state vector h_j (width d). One RSGN step
(networks/rsgn/dynamics.py, both modes) as the unit computes it:
  m_j = sum of the vector events received (sender i sends x_i = alpha_i h_i, weighted by W_ij)
  h_new = m_j W_h + b_h;  a_j = sigmoid((alpha_j + gain ||h_new|| - theta_j) / T)
  h_j <- LayerNorm(h_new + h_j) * a_j
  alpha_j <- clamp(a_j |P_j| / (sum_{i in P_j} a_i + 1e-6), 0, 1)    (divisive-normalisation pool)
Event rule (sparse mode, event_rule=True): only nodes that are active (alpha > cutoff) or received
an event are updated; a node whose activation is at or below the cutoff, before or after the
pool, is set to exactly 0 with its state and emits nothing. Published mode (event_rule=False):
every node is updated every step and the cutoff is only the send gate alpha > cutoff.

Events carry the node's full output x_j = alpha_j h_j, not its change: the reference recomputes
m = W^T x from scratch each step (h_new depends on this step's messages only), so a receiver
must not accumulate across steps; change-coding would also make nodes that fall silent send
retraction events, i.e. events from nodes below the cutoff that the reference does not count.

The pools are node-local lateral inhibition inside the population (like a core-local reduction):
each node with a > 0 sends a to the pools it belongs to. Its cost (pool messages) is returned by
the kernel and kept in the state entry "pool_messages" (shape (1,), last update), not in synops.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from atomspark.sim.core import AtomsparkError, as_finite_array, require_positive
from atomspark.sim.kernels import rsgn as kr
from atomspark.sim.unit_model import UnitModel, UnitParams, bookkeeping, register
from atomspark.sim.units.per_unit import per_unit
from numba import njit

INHIBITION_EPS = 1e-6  # released code: neighbour sum + 1e-6


@dataclass(frozen=True)
class RSGNKernelArrays:
    """Contiguous float64/int64 arrays the update kernel reads (built once per parameter set)."""

    thresholds: np.ndarray  # (N,)
    w_h: np.ndarray  # (d, d), acts on row vectors: h_new = m @ w_h + b_h
    b_h: np.ndarray  # (d,)
    ln_gain: np.ndarray  # (d,)
    ln_bias: np.ndarray  # (d,)
    pool_indptr: np.ndarray  # (N + 1,) fan-out CSR: node j -> pools i that contain j
    pool_indices: np.ndarray
    pool_size: np.ndarray  # (N,) |P_i| as float64
    consts: np.ndarray  # [temperature, signal_gain, cutoff, layer_norm_eps, inhibition_eps]
    resting: np.ndarray  # (N,) subtracted from the soft threshold (zeros: the plain sigmoid)


@dataclass(frozen=True, eq=False)
class RSGNNodeParams(UnitParams):
    """Parameters of a population of RSGN nodes (size N, state width d = w_h.shape[0]).

    thresholds: theta (scalar or (N,)); w_h, b_h: the shared state transform; ln_gain, ln_bias:
    LayerNorm; pool: (N, N) 0/1 matrix (dense or scipy sparse), row i = the nodes in node i's
    inhibition pool; event_rule: True = sparse mode's exact silence at/below the cutoff, False =
    published mode (all nodes update, cutoff only gates sending); alpha_init (N,) in [0, 1] and
    h_init (N, d): the ignition (initial state)."""

    thresholds: object
    w_h: object
    b_h: object
    ln_gain: object
    ln_bias: object
    pool: object
    temperature: float = 1.0
    signal_gain: float = 0.1
    cutoff: float = 0.01
    layer_norm_eps: float = 1e-5
    event_rule: bool = True
    resting: object = 0.0  # r (scalar or (N,)) in [0, 1): alpha' = max(sigma - r, 0) / (1 - r)
    alpha_init: object = 0.0
    h_init: object = 0.0

    is_fixed_point = False
    n_channels = 1
    dtype = "float64"

    @property
    def width(self) -> int:
        """Length d of the state vector and of every event's payload."""
        return int(np.shape(self.w_h)[0]) if np.ndim(self.w_h) == 2 else 0

    @property
    def payload_shape(self) -> tuple[int, ...]:
        """Events carry a vector x_j = alpha_j h_j of length d."""
        return (self.width,)

    @property
    def macs_per_update(self) -> int:
        """Multiply-adds inside one node update: the shared d x d transform W_h."""
        return self.width * self.width

    @property
    def payload_bits(self) -> int:
        return 64 * self.width

    def check_size(self, name: str, size: int) -> None:
        """Validate every array against the population size; errors name the field."""
        w_h = as_finite_array(f"{name}.w_h", self.w_h, ndim=2)
        d = w_h.shape[0]
        if d < 1 or w_h.shape != (d, d):
            raise AtomsparkError(f"{name}.w_h: expected a square (d, d) matrix, got {w_h.shape}")
        for key in ("b_h", "ln_gain", "ln_bias"):
            arr = as_finite_array(f"{name}.{key}", getattr(self, key), ndim=1)
            if arr.shape != (d,):
                raise AtomsparkError(f"{name}.{key}: expected shape ({d},), got {arr.shape}")
        _per_node(f"{name}.thresholds", self.thresholds, size)
        require_positive(f"{name}.temperature", self.temperature)
        require_positive(f"{name}.signal_gain", self.signal_gain, allow_zero=True)
        require_positive(f"{name}.layer_norm_eps", self.layer_norm_eps)
        cut = float(self.cutoff)
        if not 0.0 <= cut < 1.0:
            raise AtomsparkError(f"{name}.cutoff: must lie in [0, 1), got {self.cutoff!r}")
        if not isinstance(self.event_rule, (bool, np.bool_)):
            raise AtomsparkError(f"{name}.event_rule: must be True or False")
        _pool_fan_out(f"{name}.pool", self.pool, size)
        rest = _per_node(f"{name}.resting", self.resting, size)
        if np.any(rest < 0) or np.any(rest >= 1):
            raise AtomsparkError(f"{name}.resting: must lie in [0, 1)")
        alpha = _per_node(f"{name}.alpha_init", self.alpha_init, size)
        if np.any(alpha < 0) or np.any(alpha > 1):
            raise AtomsparkError(f"{name}.alpha_init: activations must lie in [0, 1]")
        _per_node_vector(f"{name}.h_init", self.h_init, size, d)

    @cached_property
    def kernel_arrays(self) -> RSGNKernelArrays:
        """The arrays the Numba kernel reads (cached: parameters are immutable)."""
        n = int(np.shape(self.pool)[0])
        indptr, indices, pool_size = _pool_fan_out("pool", self.pool, n)
        consts = np.array(
            [
                self.temperature,
                self.signal_gain,
                self.cutoff,
                self.layer_norm_eps,
                INHIBITION_EPS,
            ],
            dtype=np.float64,
        )
        return RSGNKernelArrays(
            thresholds=_per_node("thresholds", self.thresholds, n),
            w_h=np.ascontiguousarray(self.w_h, dtype=np.float64),
            b_h=np.ascontiguousarray(self.b_h, dtype=np.float64),
            ln_gain=np.ascontiguousarray(self.ln_gain, dtype=np.float64),
            ln_bias=np.ascontiguousarray(self.ln_bias, dtype=np.float64),
            pool_indptr=indptr,
            pool_indices=indices,
            pool_size=pool_size,
            consts=consts,
            resting=_per_node("resting", self.resting, n),
        )

    def init_state(self, size: int) -> dict[str, np.ndarray]:
        """alpha (N,), h (N, d), scratch for the pre-pool activation and pool sums, the count of
        pool messages of the last update, and `ignited` (0 until the first step has emitted the
        initial outputs)."""
        return {
            "alpha": _per_node("alpha_init", self.alpha_init, size),
            "h": _per_node_vector("h_init", self.h_init, size, self.width),
            "alpha_pre": np.zeros(size, np.float64),
            "pool_sum": np.zeros(size, np.float64),
            "pool_messages": np.zeros(1, np.int64),
            "ignited": np.zeros(1, np.int64),
        }

    @staticmethod
    def initially_pending(state: dict[str, np.ndarray]) -> np.ndarray:
        """Nodes the first update must visit: every node with a nonzero activation or state."""
        return (state["alpha"] != 0) | np.any(state["h"] != 0, axis=1)


def _per_node(label: str, value, size: int) -> np.ndarray:
    return per_unit(label, as_finite_array(label, value), size)


def _per_node_vector(label: str, value, size: int, width: int) -> np.ndarray:
    return per_unit(label, as_finite_array(label, value), (size, width))


def _pool_fan_out(label: str, pool, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Check a 0/1 pool matrix (row i = members of pool i) and return its fan-out CSR
    (row j = pools containing j) with each pool's size."""
    if sp.issparse(pool):
        mat = sp.csr_matrix(pool, dtype=np.float64, copy=True)
    else:
        mat = sp.csr_matrix(as_finite_array(label, pool, ndim=2))
    if mat.shape != (size, size):
        raise AtomsparkError(f"{label}: expected shape ({size}, {size}), got {mat.shape}")
    mat.sum_duplicates()
    if not np.all(np.isfinite(mat.data)) or np.any((mat.data != 0) & (mat.data != 1)):
        raise AtomsparkError(f"{label}: entries must be 0 or 1 (pool membership)")
    mat.eliminate_zeros()
    pool_size = np.asarray(mat.sum(axis=1), dtype=np.float64).ravel()
    fan = mat.T.tocsr()
    fan.sort_indices()
    return (
        np.asarray(fan.indptr, dtype=np.int64),
        np.asarray(fan.indices, dtype=np.int64),
        pool_size,
    )


def rsgn_emitted(alpha: np.ndarray, h: np.ndarray, cutoff: float) -> np.ndarray:
    """The events a node population sends, (N, d): x_j = h_j alpha_j for alpha_j > cutoff, else 0
    (the product in the kernel's order, so equal to its emitted payloads bit for bit)."""
    return np.where((alpha > cutoff)[:, None], h * alpha[:, None], 0.0)


def rsgn_node_step(
    alpha: np.ndarray,
    h: np.ndarray,
    m: np.ndarray,
    received: np.ndarray,
    k: RSGNKernelArrays,
    event_rule: bool,
) -> tuple[np.ndarray, np.ndarray, int]:
    """One update of every node in plain NumPy: the arithmetic of kernels_rsgn.rsgn_step (after
    ignition), for callers without the engine's ring buffers (Lava's ProcessModel, the NumPy
    reference of Lava's timing). Equal to the kernel up to the summation order of m @ W_h and of
    the pool sums.

    alpha (N,), h (N, d): state; m (N, d): summed vector input; received (N,): whether any event
    arrived (a stored zero-weight synapse counts). In sparse mode (event_rule) updating every
    node is the kernel's update of the visited ones, because an unvisited node has alpha = 0,
    h = 0, no input, and the update leaves it there. Returns (alpha, h, pool messages)."""
    temperature, gain, cutoff, ln_eps, inh_eps = k.consts
    h_new = m @ k.w_h + k.b_h
    norm = np.sqrt(np.sum(h_new * h_new, axis=1))
    a = 1.0 / (1.0 + np.exp(-((alpha + gain * norm - k.thresholds) / temperature)))
    a = np.maximum(a - k.resting, 0.0) / (1.0 - k.resting)
    if event_rule:
        a = np.where(((alpha > cutoff) | received) & (a > cutoff), a, 0.0)
    z = h_new + h
    mu = np.sum(z, axis=1, keepdims=True) / z.shape[1]
    std = np.sqrt(np.sum((z - mu) ** 2, axis=1, keepdims=True) / z.shape[1] + ln_eps)
    h_out = np.where(
        (a == 0.0)[:, None], 0.0, ((z - mu) / std * k.ln_gain + k.ln_bias) * a[:, None]
    )
    degree = np.diff(k.pool_indptr)
    sending = a > 0.0
    pool_sum = np.bincount(
        k.pool_indices, weights=np.repeat(a, degree), minlength=alpha.size
    ).astype(np.float64)
    alpha_out = np.where(sending, np.clip(a * k.pool_size / (pool_sum + inh_eps), 0.0, 1.0), 0.0)
    if event_rule:
        silent = alpha_out <= cutoff
        alpha_out[silent] = 0.0
        h_out[silent] = 0.0
    return alpha_out, h_out, int(degree[sending].sum())


# --- the unit-model declaration (sim/unit_model.py): kernel adapter, arguments, registration ---
# buf: unit_model.Buffers; every general kernel takes bookkeeping(buf), then its own arguments,
# then the two emit buffers.


class RSGNArgs(NamedTuple):
    """The kernel's own arguments (sim/kernels/rsgn.rsgn_step), read by name."""

    alpha: np.ndarray  # (N,)
    h: np.ndarray  # (N, d)
    alpha_pre: np.ndarray  # (N,) pre-pool activation
    pool_sum: np.ndarray  # (N,) scratch: each pool's sum of alpha_pre
    pool_messages: np.ndarray  # (1,): pool messages of the last update
    ignited: np.ndarray  # (1,): 0 until the first step has sent the ignition
    thresholds: np.ndarray
    w_h: np.ndarray
    b_h: np.ndarray
    ln_gain: np.ndarray
    ln_bias: np.ndarray
    pool_indptr: np.ndarray
    pool_indices: np.ndarray
    pool_size: np.ndarray
    consts: np.ndarray
    resting: np.ndarray
    event_rule: bool


@njit(cache=True)
def _rsgn_update(slot, buf, a):
    n, n_emit, active = kr.rsgn_step(
        slot, *bookkeeping(buf), a.alpha, a.h, a.alpha_pre, a.pool_sum, a.pool_messages,
        a.ignited, a.thresholds, a.w_h, a.b_h, a.ln_gain, a.ln_bias, a.pool_indptr,
        a.pool_indices, a.pool_size, a.consts, a.resting, a.event_rule, buf.emit_idx,
        buf.emit_val,
    )  # fmt: skip
    return n, n_emit, active, 0, 0


def _rsgn_args(par: RSGNNodeParams, st: dict, counter: np.ndarray, dense_min: int) -> RSGNArgs:
    a = par.kernel_arrays
    return RSGNArgs(
        st["alpha"], st["h"], st["alpha_pre"], st["pool_sum"], st["pool_messages"],
        st["ignited"], a.thresholds, a.w_h, a.b_h, a.ln_gain, a.ln_bias, a.pool_indptr,
        a.pool_indices, a.pool_size, a.consts, a.resting, bool(par.event_rule),
    )  # fmt: skip


RSGN = register(
    UnitModel(
        name="rsgn",
        params_type=RSGNNodeParams,
        update=_rsgn_update,
        kernel_args=_rsgn_args,
        initially_pending=lambda par, st: par.initially_pending(st),
        sample_state=("alpha", "h"),
        graded=True,
        accepts_input=False,  # ignition is the initial state (alpha, h)
    )
)

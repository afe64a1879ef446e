"""RSGN node in Loihi fixed point, declared through the unit-model interface (sim/unit_model.py):
parameters, the whole-population step and payloads for callers outside the engine (Lava's
ProcessModel, the bundle's reference), the kernel's named arguments and the registration. The
integer arithmetic, its number formats and trade-offs are the kernel's: sim/kernels/rsgn_fixed.py.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cached_property
from typing import NamedTuple

import numpy as np
from atomspark.sim.core import AtomsparkError, require_int
from atomspark.sim.kernels.rsgn_fixed import (  # noqa: F401 (the formats and kernels, named here too)
    ALPHA_FRAC,
    DIV_BITS,
    EXP2_BITS,
    H_FRAC,
    INHIBITION_EPS,
    INV_STD_BITS,
    LOG2E_Q16,
    LUT_BITS,
    LUT_SHIFT,
    LUT_SIZE,
    MAX_M_SHIFT,
    PAYLOAD_BITS,
    PRE_FRAC,
    PRE_SHIFT,
    RD_SHIFT,
    SIGMOID_LUT,
    STATE_LIMIT,
    activation,
    emitted,
    isqrt,
    node_update,
    pool_normalise,
    population_step,
    rsgn_fixed_step,
    sigmoid_lut,
)
from atomspark.sim.unit_model import UnitModel, UnitParams, bookkeeping, register
from atomspark.sim.units.rsgn import _pool_fan_out
from numba import njit


def step_nodes(
    alpha: np.ndarray,
    h: np.ndarray,
    m: np.ndarray,
    received: np.ndarray,
    k: dict,
    event_rule: bool,
) -> tuple[int, int, int]:
    """One update of every node, in place on alpha (N,) and h (N, d), with the arrays of
    RSGNFixedParams.kernel_arrays `k`: population_step for callers that step a whole population
    from its summed raw messages m (N, d) and received flags (N,) (Lava's ProcessModel, the
    bundle's NumPy reference). Returns (wraps, clips, pool messages)."""
    zeros = np.zeros_like(alpha)
    return population_step(
        m, received, alpha, h, zeros, zeros.copy(), k["thresholds"], k["m_shift"], k["wh"],
        k["wh_shift"],
        k["bh"], k["lng"], k["lnb"], k["consts"], k["lut"], bool(event_rule), k["pool_indptr"],
        k["pool_indices"], k["pool_size"],
    )  # fmt: skip


def emitted_payloads(alpha: np.ndarray, h: np.ndarray, cutoff: int) -> np.ndarray:
    """The (N, d) payloads `emitted` sends for alpha (N,) and h (N, d)."""
    out = np.zeros(np.shape(h), np.int64)
    emitted(np.asarray(alpha, np.int64), np.asarray(h, np.int64), int(cutoff), out)
    return out


def _int_array(label: str, value, shape) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype.kind not in "iu":
        raise AtomsparkError(f"{label}: must be integers, got dtype {arr.dtype}")
    arr = np.broadcast_to(arr.astype(np.int64), shape) if arr.ndim == 0 else arr.astype(np.int64)
    if arr.shape != tuple(shape):
        raise AtomsparkError(f"{label}: expected shape {tuple(shape)}, got {arr.shape}")
    if arr.size and int(np.abs(arr).max()) > STATE_LIMIT:
        raise AtomsparkError(f"{label}: values exceed the 24-bit word (|x| <= {STATE_LIMIT})")
    return np.ascontiguousarray(arr)


@dataclass(frozen=True, eq=False)
class RSGNFixedParams(UnitParams):
    """Integer RSGN nodes (formats in the module docstring): thresholds (N,) Q.12; w_h_mant (d, d)
    8-bit mantissas with w_h_shift; b_h, ln_bias (d,) Q.10; ln_gain (d,) Q.12; m_shift: right
    shift of the raw message to Q.10, one for every node or (N,) one per node (W's exponent per
    target node); signal_gain Q.12; inv_t_mant / inv_t_shift: 1/T; cutoff
    Q.12; layer_norm_eps Q.20 (>= 1); pool (N, N) 0/1; alpha_init (N,) Q.12; h_init (N, d) Q.10."""

    thresholds: object
    w_h_mant: object
    w_h_shift: int
    b_h: object
    ln_gain: object
    ln_bias: object
    pool: object
    m_shift: object
    signal_gain: int
    inv_t_mant: int
    inv_t_shift: int
    cutoff: int
    layer_norm_eps: int = 10
    event_rule: bool = True
    alpha_init: object = 0
    h_init: object = 0

    is_fixed_point = True
    n_channels = 1
    dtype = "int64"

    @property
    def width(self) -> int:
        return int(np.shape(self.w_h_mant)[0])

    @property
    def payload_shape(self) -> tuple[int, ...]:
        return (self.width,)

    @property
    def macs_per_update(self) -> int:
        return self.width * self.width

    @property
    def payload_bits(self) -> int:
        return PAYLOAD_BITS * self.width

    def check_size(self, name: str, size: int) -> None:
        """Validate every field against the population size and Loihi's words."""
        d = self.width
        wh = _int_array(f"{name}.w_h_mant", self.w_h_mant, (d, d))
        if wh.size and int(np.abs(wh).max()) > 256:
            raise AtomsparkError(f"{name}.w_h_mant: 8-bit mantissas expected (|w| <= 256)")
        for key in ("b_h", "ln_gain", "ln_bias"):
            _int_array(f"{name}.{key}", getattr(self, key), (d,))
        _int_array(f"{name}.thresholds", self.thresholds, (size,))
        for key in ("w_h_shift", "inv_t_shift"):
            require_int(f"{name}.{key}", getattr(self, key), 0)
        shifts = _int_array(f"{name}.m_shift", self.m_shift, (size,))
        if shifts.min(initial=0) < 0 or shifts.max(initial=0) > MAX_M_SHIFT:
            raise AtomsparkError(f"{name}.m_shift: shifts must lie in [0, {MAX_M_SHIFT}]")
        require_int(f"{name}.inv_t_mant", self.inv_t_mant, 1)
        require_int(f"{name}.signal_gain", self.signal_gain, 0)
        require_int(f"{name}.layer_norm_eps", self.layer_norm_eps, 1)
        cut = require_int(f"{name}.cutoff", self.cutoff, 0)
        if cut >= 1 << ALPHA_FRAC:
            raise AtomsparkError(f"{name}.cutoff: must be below 4096 (1.0 in Q.12), got {cut}")
        _pool_fan_out(f"{name}.pool", self.pool, size)
        alpha = _int_array(f"{name}.alpha_init", self.alpha_init, (size,))
        if alpha.min(initial=0) < 0 or alpha.max(initial=0) > 1 << ALPHA_FRAC:
            raise AtomsparkError(f"{name}.alpha_init: activations must lie in [0, 4096]")
        _int_array(f"{name}.h_init", self.h_init, (size, d))

    @cached_property
    def kernel_arrays(self) -> dict:
        """The arrays and constants both the engine kernel and Lava's model read."""
        n = int(np.shape(self.pool)[0])
        indptr, indices, pool_size = _pool_fan_out("pool", self.pool, n)
        d = self.width
        consts = np.array(
            [self.signal_gain, self.inv_t_mant, self.inv_t_shift, self.cutoff,
             self.layer_norm_eps, int(round(2**RD_SHIFT / d))], np.int64)  # fmt: skip
        return {
            "thresholds": _int_array("thresholds", self.thresholds, (n,)),
            "m_shift": _int_array("m_shift", self.m_shift, (n,)),
            "wh": _int_array("w_h_mant", self.w_h_mant, (d, d)),
            "wh_shift": int(self.w_h_shift),
            "bh": _int_array("b_h", self.b_h, (d,)),
            "lng": _int_array("ln_gain", self.ln_gain, (d,)),
            "lnb": _int_array("ln_bias", self.ln_bias, (d,)),
            "consts": consts,
            "lut": SIGMOID_LUT,
            "pool_indptr": indptr,
            "pool_indices": indices,
            "pool_size": pool_size.astype(np.int64),
        }

    def integer_fields(self) -> dict:
        """Every field but the pool and the initial state, as ints, bools or int64 arrays: what an
        export stores; type(self)(pool=..., **fields) rebuilds the parameters (any variant)."""
        out = {}
        for f in fields(self):
            if f.name in ("pool", "alpha_init", "h_init"):
                continue
            value = getattr(self, f.name)
            if np.ndim(value):
                out[f.name] = np.asarray(value, np.int64).copy()
            else:
                out[f.name] = bool(value) if f.name == "event_rule" else int(value)
        return out

    def init_state(self, size: int) -> dict[str, np.ndarray]:
        return {
            "alpha": _int_array("alpha_init", self.alpha_init, (size,)).copy(),
            "h": _int_array("h_init", self.h_init, (size, self.width)).copy(),
            "a_pre": np.zeros(size, np.int64),
            "pool_sum": np.zeros(size, np.int64),
            "ignited": np.zeros(1, np.int64),
        }


class RSGNFixedArgs(NamedTuple):
    """The kernel's own arguments (sim/kernels/rsgn_fixed.rsgn_fixed_step), read by name."""

    alpha: np.ndarray  # (N,) Q.12
    h: np.ndarray  # (N, d) Q.10
    a_pre: np.ndarray  # (N,) pre-pool activation, Q.40
    pool_sum: np.ndarray  # (N,) scratch: each pool's sum of a
    ignited: np.ndarray  # (1,): 0 until the first step has sent the ignition
    thresholds: np.ndarray
    m_shift: np.ndarray
    wh: np.ndarray
    wh_shift: int
    bh: np.ndarray
    lng: np.ndarray
    lnb: np.ndarray
    consts: np.ndarray
    lut: np.ndarray
    event_rule: bool
    pool_indptr: np.ndarray
    pool_indices: np.ndarray
    pool_size: np.ndarray


@njit(cache=True)
def _update(slot, buf, a):
    return rsgn_fixed_step(
        slot, *bookkeeping(buf), a.alpha, a.h, a.a_pre, a.pool_sum, a.ignited, a.thresholds,
        a.m_shift, a.wh, a.wh_shift, a.bh, a.lng, a.lnb, a.consts, a.lut, a.event_rule,
        a.pool_indptr, a.pool_indices, a.pool_size, buf.emit_idx, buf.emit_val,
    )  # fmt: skip


def _args(par: RSGNFixedParams, st: dict, counter: np.ndarray, dense_min: int) -> RSGNFixedArgs:
    k = par.kernel_arrays
    return RSGNFixedArgs(
        st["alpha"], st["h"], st["a_pre"], st["pool_sum"], st["ignited"], k["thresholds"],
        k["m_shift"], k["wh"], k["wh_shift"], k["bh"], k["lng"], k["lnb"], k["consts"], k["lut"],
        bool(par.event_rule), k["pool_indptr"], k["pool_indices"], k["pool_size"],
    )  # fmt: skip


RSGN_FIXED = register(
    UnitModel(
        name="rsgn_fixed",
        params_type=RSGNFixedParams,
        update=_update,
        kernel_args=_args,
        initially_pending=lambda par, st: (st["alpha"] != 0) | np.any(st["h"] != 0, axis=1),
        sample_state=("alpha", "h"),
        graded=True,
        accepts_input=False,
    )
)

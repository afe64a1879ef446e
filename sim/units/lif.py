"""Current-based LIF unit parameters: float (Lava's float model plus refractoriness and a second
current channel) and Loihi fixed point (Lava's bit-accurate model). Kernels live in sim/kernels/lif.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from atomspark.sim import fixed_point as fx
from atomspark.sim.core import AtomsparkError, as_finite_array, require_int
from atomspark.sim.dtypes import FLOAT_DTYPES  # noqa: F401 (named here too)
from atomspark.sim.kernels import lif as kl
from atomspark.sim.kernels import lif_lean as kll
from atomspark.sim.unit_model import (
    DirectKernel,
    LeanKernel,
    UnitModel,
    UnitParams,
    bookkeeping,
    register,
)
from atomspark.sim.units.per_unit import per_unit
from numba import njit


@dataclass(frozen=True)
class LIFParams(UnitParams):
    """Float LIF: u <- u(1-du) + in0, u2 <- u2(1-du2) + in1, v <- v(1-dv) + u + u2 + bias,
    spike if v > vth, then v = v_reset and v is held for `refractory` steps (Lava: 0).

    Channel 1 (u2, decay du2) exists only when du2 is given (e.g. inhibitory synapses, CUBA)."""

    du: float
    dv: float
    vth: float
    bias: object = 0.0
    v_reset: float = 0.0
    refractory: int = 0
    du2: float | None = None
    dtype: str = "float64"
    v_init: object = 0.0
    u_init: object = 0.0

    is_fixed_point = False
    payload_bits = 0  # binary spikes

    @property
    def n_channels(self) -> int:
        return 1 if self.du2 is None else 2

    def check_size(self, name: str, size: int) -> None:
        if self.dtype not in FLOAT_DTYPES:
            raise AtomsparkError(f"{name}.dtype: must be one of {list(FLOAT_DTYPES)}")
        for key in ("du", "dv") + (("du2",) if self.du2 is not None else ()):
            val = float(as_finite_array(f"{name}.{key}", getattr(self, key), ndim=0))
            if not 0.0 <= val <= 1.0:
                raise AtomsparkError(f"{name}.{key}: decay must be in [0, 1], got {val}")
        as_finite_array(f"{name}.vth", self.vth, ndim=0)
        as_finite_array(f"{name}.v_reset", self.v_reset, ndim=0)
        if require_int(f"{name}.refractory", self.refractory, minimum=0) >= 2**31:
            raise AtomsparkError(f"{name}.refractory: must be below 2**31 steps")
        for key in ("bias", "v_init", "u_init"):
            per_unit(
                f"{name}.{key}",
                as_finite_array(f"{name}.{key}", getattr(self, key)),
                size,
                np.float64,
            )

    def init_state(self, size: int) -> dict[str, np.ndarray]:
        dt = FLOAT_DTYPES[self.dtype]
        return {
            "u": per_unit("u_init", self.u_init, size, dt),
            "u2": np.zeros(size, dt),
            "v": per_unit("v_init", self.v_init, size, dt),
            "refr": np.zeros(size, np.int32),  # steps left in the refractory period
            "bias": per_unit("bias", self.bias, size, dt),
        }


@dataclass(frozen=True)
class LIFFixedParams(UnitParams):
    """Loihi LIF, bit-exact with Lava's PyLifModelBitAcc (see fixed_point.py). Widths are checked:
    du, dv 12-bit unsigned, vth 17-bit unsigned, bias_mant 13-bit signed, bias_exp 0..7."""

    du: int
    dv: int
    vth: int
    bias_mant: object = 0
    bias_exp: object = 0
    v_init: object = 0
    u_init: object = 0

    is_fixed_point = True
    payload_bits = 0
    n_channels = 1
    dtype = "fixed"

    def check_size(self, name: str, size: int) -> None:
        for key in ("du", "dv", "vth"):
            if np.ndim(getattr(self, key)) != 0:
                raise AtomsparkError(f"{name}.{key}: must be a scalar")
            fx.check_bit_range(name, key, getattr(self, key))
        for key in ("bias_mant", "bias_exp"):
            per_unit(
                f"{name}.{key}", fx.check_bit_range(name, key, getattr(self, key)), size, np.int64
            )
        for key, limit in (("u_init", fx.STATE_MAX), ("v_init", fx.V_LIMIT)):
            arr = per_unit(f"{name}.{key}", getattr(self, key), size, np.int64)
            if np.abs(arr).max() > limit:
                raise AtomsparkError(f"{name}.{key}: must fit 24 bits (|x| <= {limit})")

    def init_state(self, size: int) -> dict[str, np.ndarray]:
        mant = per_unit("bias_mant", self.bias_mant, size, np.int64)
        exp = per_unit("bias_exp", self.bias_exp, size, np.int64)
        return {
            "u": per_unit("u_init", self.u_init, size, np.int64),
            "v": per_unit("v_init", self.v_init, size, np.int64),
            "bias": mant << exp,
        }


# --- the unit-model declaration (sim/unit_model.py): kernel adapter, arguments, registration ---
# buf: unit_model.Buffers; every general kernel takes bookkeeping(buf), then its own arguments,
# then the two emit buffers. The adapters are inlined into the run loop (Numba IR inlining):
# called, each step paid for passing the two named tuples of arrays (measured on CUBA at 4000
# neurons in float32: ~15 % of the run).


class LIFArgs(NamedTuple):
    """The float LIF kernel's own arguments (kernels/lif.py lif_float_step), read by name."""

    u: np.ndarray
    u2: np.ndarray
    v: np.ndarray
    refr: np.ndarray
    bias: np.ndarray
    consts: np.ndarray  # [1-du, 1-du2, 1-dv, vth, v_reset] in the state dtype
    refractory: int
    dense_min: int  # touched units from which the kernel sweeps all units instead of a list


@njit(cache=True, inline="always")
def _lif_update(slot, buf, a):
    n, n_emit = kl.lif_float_step(
        slot, *bookkeeping(buf), a.u, a.u2, a.v, a.refr, a.bias, a.consts, a.refractory,
        a.dense_min, buf.emit_idx, buf.emit_val,
    )  # fmt: skip
    return n, n_emit, buf.pcount[0], 0, 0


class LeanLIFArgs(NamedTuple):
    """The lean LIF kernel's own arguments (kernels/lif_lean.py lif_lean_step), in its order."""

    u: np.ndarray
    u2: np.ndarray
    v: np.ndarray
    refr: np.ndarray
    bias: object  # an n-long array, or one scalar when every unit has the same bias
    consts: np.ndarray  # [1-du, 1-du2, 1-dv, vth, v_reset] in the state dtype
    refractory: int
    flags: np.ndarray  # uint8 spike flags, padded to a multiple of 8


@njit(cache=True, inline="always")
def _lif_lean_update(slot, buf, args):
    n_emit = kll.lif_lean_step(
        slot, buf.ring, args.u, args.u2, args.v, args.refr, args.bias, args.consts,
        args.refractory, args.flags, buf.emit_idx, buf.emit_val,
    )  # fmt: skip
    n = args.u.size  # every unit has a bias: all are updated and stay pending
    buf.pcount[0] = n
    buf.pcount[1] = 1  # the pending list is stale, as after a dense sweep
    return n, n_emit, n, 0, 0


@njit(cache=True, inline="always")
def _lif_direct_update(slot, buf, args):
    n_emit = kll.lif_direct_step(
        args.u, args.u2, args.v, args.refr, args.bias, args.consts, args.refractory, args.flags,
        buf.emit_idx, buf.emit_val,
    )  # fmt: skip
    n = args.u.size
    buf.pcount[0] = n
    buf.pcount[1] = 1
    return n, n_emit, n, 0, 0


def _lif_direct_channels(args: LeanLIFArgs) -> list[tuple[np.ndarray, float]]:
    """Channel 0 accumulates into u (decay 1-du), channel 1 into u2 (1-du2); none when a decay
    factor is 0 (du = 1: no weight can be divided by it)."""
    ku, ku2 = float(args.consts[0]), float(args.consts[1])
    return [(args.u, ku), (args.u2, ku2)] if ku > 0 and ku2 > 0 else []


class LIFFixedArgs(NamedTuple):
    """The fixed-point LIF kernel's own arguments (kernels/lif.py lif_fixed_step), by name."""

    u: np.ndarray
    v: np.ndarray
    bias: np.ndarray
    du: int  # 12-bit decays
    dv: int
    vth_scaled: int  # threshold mantissa, shifted into the state's scale
    dense_min: int


@njit(cache=True, inline="always")
def _lif_fixed_update(slot, buf, a):
    n, n_emit, wraps, clips = kl.lif_fixed_step(
        slot, *bookkeeping(buf), a.u, a.v, a.bias, a.du, a.dv, a.vth_scaled, a.dense_min, buf.emit_idx,
        buf.emit_val,
    )  # fmt: skip
    return n, n_emit, buf.pcount[0], wraps, clips


def _lif_args(par: LIFParams, st: dict, counter: np.ndarray, dense_min: int) -> LIFArgs:
    dt = FLOAT_DTYPES[par.dtype]
    consts = np.array([1 - par.du, 1 - (par.du2 or 0.0), 1 - par.dv, par.vth, par.v_reset], dt)
    return LIFArgs(st["u"], st["u2"], st["v"], st["refr"], st["bias"], consts,
                   int(par.refractory), dense_min)  # fmt: skip


def _lif_lean_args(par: LIFParams, st: dict, flags: np.ndarray) -> LeanLIFArgs:
    dt = FLOAT_DTYPES[par.dtype]
    consts = np.array([1 - par.du, 1 - (par.du2 or 0.0), 1 - par.dv, par.vth, par.v_reset], dt)
    bias = st["bias"]
    if bias.size and np.all(bias == bias[0]):
        bias = dt(bias[0])  # uniform: one scalar instead of an n-long array
    return LeanLIFArgs(st["u"], st["u2"], st["v"], st["refr"], bias, consts,
                       st["refr"].dtype.type(par.refractory), flags)  # fmt: skip


def _every_unit_biased(par: LIFParams, st: dict) -> bool:
    """Every unit has a nonzero bias, so every unit is updated and pending at every step."""
    return bool(np.all(st["bias"] != 0))


def _lif_fixed_args(
    par: LIFFixedParams, st: dict, counter: np.ndarray, dense_min: int
) -> LIFFixedArgs:
    return LIFFixedArgs(st["u"], st["v"], st["bias"], int(par.du), int(par.dv),
                        int(par.vth) << fx.VTH_SHIFT, dense_min)  # fmt: skip


def _lif_nonzero(par, st: dict) -> np.ndarray:
    """LIF units with a current, voltage or bias start pending."""
    return (st["u"] != 0) | (st["v"] != 0) | (st["bias"] != 0)


LIF = register(
    UnitModel(
        name="lif",
        params_type=LIFParams,
        update=_lif_update,
        kernel_args=_lif_args,
        initially_pending=_lif_nonzero,
        sample_state=("u", "v", "bias"),
        graded=False,
        lean=LeanKernel(
            _lif_lean_update,
            _lif_lean_args,
            _every_unit_biased,
            direct=DirectKernel(_lif_direct_update, _lif_direct_channels),
        ),
    )
)
LIF_FIXED = register(
    UnitModel(
        name="lif_fixed",
        params_type=LIFFixedParams,
        update=_lif_fixed_update,
        kernel_args=_lif_fixed_args,
        initially_pending=_lif_nonzero,
        sample_state=("u", "v", "bias"),
        graded=False,
    )
)


def lif_float_reference_step(u, v, a_in, du: float, dv: float, vth: float, bias):
    """One float LIF step as Lava's floating-point LIF computes it, in plain NumPy (one current,
    no refractory period, reset to 0): returns (u, v, spikes). The oracle of the engine's float
    kernel without refractoriness and of the Lava bundle's reference run."""
    u = u * (1 - du) + a_in
    v = v * (1 - dv) + u + bias
    spikes = v > vth
    return u, np.where(spikes, 0.0, v), spikes

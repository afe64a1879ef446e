"""The built-in unit models, declared through the unit-model interface (unit_model.py).

Each declaration names the parameter class, the kernel adapter the compiled run loop calls
(uniform signature: update(slot, buf, args) -> (updates, events, active, wraps, clips)), how the
kernel's argument tuple is built from parameters and state, and what a sample may set. A new
model adds its declaration in its own module and one import line at the bottom of this file.
"""

from __future__ import annotations

import numpy as np
from atomspark.sim import fixed_point as fx
from atomspark.sim import kernels as k
from atomspark.sim import kernels_lif as kl
from atomspark.sim import kernels_rsgn as kr
from atomspark.sim import kernels_vn_fixed as kvf
from atomspark.sim.unit_model import UnitModel, add_hook, model_of, register, registered_models
from atomspark.sim.units_lif import FLOAT_DTYPES, LIFFixedParams, LIFParams
from atomspark.sim.units_rsgn import RSGNNodeParams
from atomspark.sim.units_vn import VNParams
from atomspark.sim.units_vn_fixed import VNFixedParams, lava_weight_mantissas
from numba import njit

__all__ = ["add_hook", "model_of", "register", "registered_models"]

# buf = (ring, tflag, tidx, tcount, pend, pcount, work, emit_idx, emit_val): every kernel takes
# the first seven, then its own arguments, then the two emit buffers.


@njit(cache=True)
def _vn_update(slot, buf, args):
    n, n_emit = k.vn_step(slot, *buf[:7], *args, *buf[7:])
    return n, n_emit, args[8][0], 0, 0


@njit(cache=True)
def _vn_fixed_update(slot, buf, args):
    n, n_emit, wraps, clips = kvf.vn_fixed_kernel(slot, *buf[:7], *args, *buf[7:])
    return n, n_emit, args[7][0], wraps, clips


@njit(cache=True)
def _lif_update(slot, buf, args):
    n, n_emit = kl.lif_float_step(slot, *buf[:7], *args, *buf[7:])
    return n, n_emit, buf[5][0], 0, 0


@njit(cache=True)
def _lif_fixed_update(slot, buf, args):
    n, n_emit, wraps, clips = kl.lif_fixed_step(slot, *buf[:7], *args, *buf[7:])
    return n, n_emit, buf[5][0], wraps, clips


@njit(cache=True)
def _rsgn_update(slot, buf, args):
    n, n_emit, active = kr.rsgn_step(slot, *buf[:7], *args, *buf[7:])
    return n, n_emit, active, 0, 0


def _vn_args(par: VNParams, st: dict, counter: np.ndarray, dense_min: int) -> tuple:
    dt = FLOAT_DTYPES[par.dtype]
    return (st["g"], st["g_sent"], st["c"], st["drive"], st["thresh"], dt(par.eta),
            dt(par.event_threshold), int(par.topk or 0), counter)  # fmt: skip


def _vn_fixed_args(par: VNFixedParams, st: dict, counter: np.ndarray, dense_min: int) -> tuple:
    return (st["g"], st["g_sent"], st["c"], st["drive"], st["thresh"], int(par.eta_mant),
            int(par.eta_shift), counter)  # fmt: skip


def _lif_args(par: LIFParams, st: dict, counter: np.ndarray, dense_min: int) -> tuple:
    dt = FLOAT_DTYPES[par.dtype]
    consts = np.array([1 - par.du, 1 - (par.du2 or 0.0), 1 - par.dv, par.vth, par.v_reset], dt)
    return (st["u"], st["u2"], st["v"], st["refr"], st["bias"], consts, int(par.refractory),
            dense_min)  # fmt: skip


def _lif_fixed_args(par: LIFFixedParams, st: dict, counter: np.ndarray, dense_min: int) -> tuple:
    return (st["u"], st["v"], st["bias"], int(par.du), int(par.dv),
            int(par.vth) << fx.VTH_SHIFT, dense_min)  # fmt: skip


def _rsgn_args(par: RSGNNodeParams, st: dict, counter: np.ndarray, dense_min: int) -> tuple:
    a = par.kernel_arrays
    return (st["alpha"], st["h"], st["alpha_pre"], st["pool_sum"], st["pool_messages"],
            st["ignited"], a.thresholds, a.w_h, a.b_h, a.ln_gain, a.ln_bias, a.pool_indptr,
            a.pool_indices, a.pool_size, a.consts, bool(par.event_rule))  # fmt: skip


def _code_or_drive(par, st: dict) -> np.ndarray:
    """VN atoms with a drive or an initial code start pending."""
    return (st["drive"] != 0) | (st["g"] != 0)


def _lif_nonzero(par, st: dict) -> np.ndarray:
    """LIF units with a current, voltage or bias start pending."""
    return (st["u"] != 0) | (st["v"] != 0) | (st["bias"] != 0)


VN = register(
    UnitModel(
        name="vn",
        params_type=VNParams,
        update=_vn_update,
        kernel_args=_vn_args,
        initially_pending=_code_or_drive,
        sample_state=("drive", "g"),
        graded=True,
    )
)
VN_FIXED = register(
    UnitModel(
        name="vn_fixed",
        params_type=VNFixedParams,
        update=_vn_fixed_update,
        kernel_args=_vn_fixed_args,
        initially_pending=_code_or_drive,
        sample_state=("drive", "g"),
        graded=True,
        initial_counter=lambda st: int(np.count_nonzero(st["g"])),
        check_weights=lava_weight_mantissas,  # Lava's Sparse keeps 8-bit mantissas
    )
)
LIF = register(
    UnitModel(
        name="lif",
        params_type=LIFParams,
        update=_lif_update,
        kernel_args=_lif_args,
        initially_pending=_lif_nonzero,
        sample_state=("u", "v", "bias"),
        graded=False,
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

from atomspark.sim import units_rsgn_fixed  # noqa: E402, F401  (registers "rsgn_fixed")

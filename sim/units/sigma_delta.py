"""Sigma-delta units: Lava's Sigma, Delta and SigmaDelta neurons (lava.proc.sdn), in float and in
Loihi fixed point, bit-exact with Lava 0.10's own ProcessModels (kernels in
sim/kernels/sigma_delta.py).

Per step and unit (kind "sigma_delta"; "sigma" stops after the first line and sends sigma,
"delta" skips it and encodes its input):

    sigma   <- sigma + a_in                         sigma: accumulate the weighted deltas received
    x       <- act_fn(sigma + bias)                 act_fn: ReLU or the identity ("unit")
    delta   <- x - act + residue
    send    <- delta if |delta| >= vth else 0       cum_error: if |error + delta| >= vth, with
                                                    error <- error + delta, reset after a send
    residue <- delta - send;  act <- x;  out <- send (fixed point: send >> state_exp)

Fixed point follows Lava's scaling: vth and bias are given in output units and held times
2**(spike_exp + state_exp); a Delta unit shifts its input left by spike_exp + state_exp; the
state words are int32 (Lava's Python variables) and wrap, and each wrap is counted. The sent
value `out` is a graded spike; a unit sends an event when it is nonzero.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from atomspark.sim.core import AtomsparkError, as_finite_array, require_int
from atomspark.sim.fixed_point import ACCUMULATOR_BITS, wrap_signed
from atomspark.sim.kernels import sigma_delta as ksd
from atomspark.sim.unit_model import UnitModel, UnitParams, bookkeeping, register
from atomspark.sim.units.per_unit import per_unit
from numba import njit

KINDS = {"sigma": ksd.KIND_SIGMA, "delta": ksd.KIND_DELTA, "sigma_delta": ksd.KIND_SIGMA_DELTA}
ACTIVATIONS = ("relu", "unit")
EXP_RANGE = (0, 7)  # Lava declares spike_exp and state_exp as 3-bit words
WORD_LIMIT = 2**23 - 1  # vth and bias, once scaled, must fit Loihi's 24-bit signed state word


@dataclass(frozen=True)
class _SigmaDeltaBase(UnitParams):
    """Shared fields: kind ("sigma" | "delta" | "sigma_delta"), vth (output units), bias (per
    unit or one value; sigma_delta only), act ("relu" | "unit"; sigma_delta only), cum_error,
    spike_exp and state_exp (Lava's scaling exponents)."""

    kind: str = "sigma_delta"
    vth: object = 0
    bias: object = 0
    act: str = "relu"
    cum_error: bool = False
    spike_exp: int = 0
    state_exp: int = 0

    n_channels = 1

    @property
    def scale(self) -> int:
        return 1 << (int(self.spike_exp) + int(self.state_exp))

    def _check_common(self, name: str) -> None:
        if self.kind not in KINDS:
            raise AtomsparkError(f"{name}.kind: must be one of {list(KINDS)}, got {self.kind!r}")
        if self.act not in ACTIVATIONS:
            raise AtomsparkError(
                f"{name}.act: must be one of {list(ACTIVATIONS)}, got {self.act!r}"
            )
        if not isinstance(self.cum_error, (bool, np.bool_)):
            raise AtomsparkError(f"{name}.cum_error: must be True or False")
        for key in ("spike_exp", "state_exp"):
            val = require_int(f"{name}.{key}", getattr(self, key), minimum=EXP_RANGE[0])
            if val > EXP_RANGE[1]:
                raise AtomsparkError(f"{name}.{key}: must lie in {list(EXP_RANGE)}, got {val}")
        if self.kind != "sigma_delta" and (
            np.any(np.asarray(self.bias) != 0) or self.act != "relu"
        ):
            raise AtomsparkError(
                f"{name}: bias and act belong to kind 'sigma_delta' (Lava's {self.kind} has none)"
            )


@dataclass(frozen=True)
class SigmaDeltaParams(_SigmaDeltaBase):
    """Float sigma-delta units (Lava's floating_pt models): the exponents only scale vth and
    bias, as Lava's Process does."""

    dtype: str = "float64"
    is_fixed_point = False
    payload_bits = 64

    def check_size(self, name: str, size: int) -> None:
        self._check_common(name)
        if self.dtype != "float64":
            raise AtomsparkError(f"{name}.dtype: sigma-delta units run in float64 only")
        vth = float(as_finite_array(f"{name}.vth", self.vth, ndim=0))
        if vth < 0:
            raise AtomsparkError(f"{name}.vth: must be >= 0, got {vth}")
        per_unit(f"{name}.bias", as_finite_array(f"{name}.bias", self.bias), size)

    def init_state(self, size: int) -> dict[str, np.ndarray]:
        zeros = lambda: np.zeros(size)  # noqa: E731
        return {"sigma": zeros(), "act": zeros(), "residue": zeros(), "error": zeros(),
                "bias": per_unit("bias", self.bias, size) * self.scale}  # fmt: skip


@dataclass(frozen=True)
class SigmaDeltaFixedParams(_SigmaDeltaBase):
    """Loihi fixed-point sigma-delta units (Lava's fixed_pt models): integer vth >= 0 and bias,
    scaled by 2**(spike_exp + state_exp) into 24-bit words; int32 state that wraps."""

    is_fixed_point = True
    payload_bits = 24  # graded spikes
    dtype = "fixed"

    def check_size(self, name: str, size: int) -> None:
        self._check_common(name)
        vth = np.asarray(self.vth)
        if vth.ndim != 0 or vth.dtype.kind not in "iu" or int(vth) < 0:
            raise AtomsparkError(f"{name}.vth: must be one integer >= 0, got {self.vth!r}")
        bias = np.asarray(self.bias)
        if bias.dtype.kind not in "iub":
            raise AtomsparkError(f"{name}.bias: must be integer(s), got dtype {bias.dtype}")
        bias = per_unit(f"{name}.bias", bias, size, np.int64)
        for key, val in (("vth", int(vth)), ("bias", int(np.abs(bias).max(initial=0)))):
            if val * self.scale > WORD_LIMIT:
                raise AtomsparkError(
                    f"{name}.{key}: {key} * 2**(spike_exp + state_exp) must fit 24 bits "
                    f"(<= {WORD_LIMIT}); lower it or the exponents"
                )

    def init_state(self, size: int) -> dict[str, np.ndarray]:
        zeros = lambda: np.zeros(size, np.int64)  # noqa: E731
        return {"sigma": zeros(), "act": zeros(), "residue": zeros(), "error": zeros(),
                "bias": per_unit("bias", self.bias, size, np.int64) * self.scale}  # fmt: skip


class SigmaDeltaStep(NamedTuple):
    """One reference step's sent values and wrap count (state is updated in place)."""

    out: np.ndarray
    wraps: int


def sigma_delta_reference_step(par: _SigmaDeltaBase, st: dict, a_in) -> SigmaDeltaStep:
    """One step of every unit in plain NumPy, as Lava's ProcessModel of par.kind computes it
    (fixed point: int32 words that wrap). Updates `st` (init_state's dict) in place; the
    oracle of the kernels and of the Lava bundle's reference run."""
    fixed = par.is_fixed_point
    wraps = 0

    def wrap(x):
        nonlocal wraps
        if not fixed:
            return x
        w = wrap_signed(np.asarray(x, np.int64), ACCUMULATOR_BITS)
        wraps += int(np.count_nonzero(w != x))
        return w

    vth = (int(par.vth) if fixed else float(par.vth)) * par.scale
    x = wrap(np.asarray(a_in, np.int64 if fixed else np.float64))
    if par.kind == "delta":
        if fixed:
            x = wrap(x << (int(par.spike_exp) + int(par.state_exp)))
    else:
        st["sigma"] = x = wrap(x + st["sigma"])
        if par.kind == "sigma":
            return SigmaDeltaStep(x.copy(), wraps)
        x = wrap(x + st["bias"])
        if par.act == "relu":
            x = np.maximum(x, 0)
    delta = wrap(x - st["act"] + st["residue"])
    if par.cum_error:
        st["error"] = wrap(st["error"] + delta)
        send = np.where(np.abs(st["error"]) >= vth, delta, 0)
        st["error"] = np.where(send != 0, 0, st["error"])
    else:
        send = np.where(np.abs(delta) >= vth, delta, 0)
    st["residue"] = wrap(delta - send)
    st["act"] = x
    return SigmaDeltaStep(send >> int(par.state_exp) if fixed else send, wraps)


# --- the unit-model declaration (sim/unit_model.py): kernel adapter, arguments, registration ---


class SigmaDeltaArgs(NamedTuple):
    """The sigma-delta kernels' arguments (kernels/sigma_delta.py), read by name."""

    sigma: np.ndarray
    act: np.ndarray
    residue: np.ndarray
    error: np.ndarray
    bias: np.ndarray
    vth: object  # int (scaled) or float
    kind: int
    relu: bool
    cum_error: bool
    in_shift: int  # fixed-point Delta: input << spike_exp + state_exp
    out_shift: int  # fixed point: sent value >> state_exp


def _args(par: _SigmaDeltaBase, st: dict, counter: np.ndarray, dense_min: int) -> SigmaDeltaArgs:
    fixed = par.is_fixed_point
    vth = int(par.vth) * par.scale if fixed else float(par.vth) * par.scale
    return SigmaDeltaArgs(
        st["sigma"], st["act"], st["residue"], st["error"], st["bias"], vth, KINDS[par.kind],
        par.act == "relu", bool(par.cum_error),
        int(par.spike_exp) + int(par.state_exp) if fixed else 0,
        int(par.state_exp) if fixed else 0,
    )  # fmt: skip


@njit(cache=True)
def _fixed_update(slot, buf, args):
    n, n_emit, wraps = ksd.sigma_delta_fixed_kernel(
        slot, *bookkeeping(buf), args, buf.emit_idx, buf.emit_val
    )
    return n, n_emit, buf.pcount[0], wraps, 0


@njit(cache=True)
def _float_update(slot, buf, args):
    n, n_emit = ksd.sigma_delta_float_kernel(
        slot, *bookkeeping(buf), args, buf.emit_idx, buf.emit_val
    )
    return n, n_emit, buf.pcount[0], 0, 0


def _all_units(par, st: dict) -> np.ndarray:
    """Every unit computes its first activation (a bias or a set state sends at step 0)."""
    return np.ones(st["sigma"].size, bool)


_SAMPLE_STATE = ("sigma", "act", "bias")
SIGMA_DELTA = register(
    UnitModel(
        name="sigma_delta",
        params_type=SigmaDeltaParams,
        update=_float_update,
        kernel_args=_args,
        initially_pending=_all_units,
        sample_state=_SAMPLE_STATE,
        graded=True,
    )
)
SIGMA_DELTA_FIXED = register(
    UnitModel(
        name="sigma_delta_fixed",
        params_type=SigmaDeltaFixedParams,
        update=_fixed_update,
        kernel_args=_args,
        initially_pending=_all_units,
        sample_state=_SAMPLE_STATE,
        graded=True,
    )
)

"""Fixed-point VN atom (event-driven ISTA / LCA unit) in Loihi-style integer arithmetic.

One definition used three ways: the engine's Numba kernel (sim/kernels/vn_fixed.py) performs the same
integer operations on its event lists, and the Lava ProcessModel (mapping/lava/procs/vn_atom.py)
and the NumPy reference run (mapping/lava_net.reference_run) call `vn_fixed_step` below.

Per step and atom, all values int64 holding Loihi's words:

    a   <- sum_k wrap32(A_k)     A_k: connection k's (W_k @ payload) << weight_exp; Lava's Sparse
                                 sends it through an int32 port (wraps), the atom adds them in int64
    c   <- wrap24(c + a)                                  two's complement, like Loihi's current u
    x   <- g + ((eta_mant * (drive - c)) >> eta_shift)    arithmetic shift = floor
    g   <- clip(soft_threshold(x, thresh), +-(2**23 - 1)) saturates, like Loihi's voltage v
    dg  <- clip(g - g_sent, +-(2**23 - 1)); sent as a 24-bit graded spike when nonzero;
           g_sent <- g_sent + dg

Why c wraps but g saturates: c only moves by received events, so a modular c stays congruent to
G g_sent (mod 2**24) and is exact again once the codes are back in range; a saturated c would be
wrong for good. g and the payload are the code itself, so they saturate; a clipped payload leaves
g != g_sent and the rest is sent on the next step, so the receivers' c never loses track. A
32-bit input wrap never changes c (2**32 is a multiple of 2**24) but is an accumulator overflow
all the same. Every wrap and clip is counted (engine Profile wraps/clips; the engine counts them
in the atoms it updates, and a settled atom is not updated); parameters that do not fit their
words are rejected. eta_mant * (drive - c) is a 37-bit product held in int64, as in Lava's
Python model.

Units: g, thresh in 2**-frac_bits; c, drive in the finer 2**-(frac_bits + c_shift) so that the
graded sums of 8-bit Gram mantissas arrive without rounding; eta = eta_mant 2**-(eta_shift -
c_shift).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from atomspark.sim import fixed_point as fx
from atomspark.sim.core import AtomsparkError, require_int
from atomspark.sim.fixed_point import ACCUMULATOR_BITS, CODE_LIMIT, STATE_BITS, wrap_signed
from atomspark.sim.kernels import vn_fixed as kvf
from atomspark.sim.unit_model import UnitModel, UnitParams, bookkeeping, register
from atomspark.sim.units.vn import code_or_drive
from numba import njit

# c wraps in 24-bit two's complement (STATE_BITS); g, drive, thresh, g_init and payloads keep
# |x| <= CODE_LIMIT; Lava's Sparse/Dense output port is int32 (ACCUMULATOR_BITS): sim/fixed_point.py.
PAYLOAD_BITS = 24  # Loihi 2 graded spikes carry the change dg as a 24-bit payload
ETA_MANT_BITS = 12  # unsigned, like Loihi's 12-bit decay constants
MAX_SHIFT = 63  # an int64 shift by 64 or more is undefined


def _int_per_unit(label: str, value, size: int | None = None) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype.kind not in "iu":
        raise AtomsparkError(f"{label}: must be integer(s), got dtype {arr.dtype}")
    if arr.ndim > 1:
        raise AtomsparkError(f"{label}: expected a scalar or a 1-D array, got shape {arr.shape}")
    arr = arr.astype(np.int64)
    if arr.size and int(np.abs(arr).max()) > CODE_LIMIT:
        raise AtomsparkError(
            f"{label}: value {int(np.abs(arr).max())} does not fit Loihi's {STATE_BITS}-bit signed "
            f"word (|x| <= {CODE_LIMIT}); lower frac_bits or rescale the model"
        )
    if size is None:
        return arr
    if arr.ndim == 0:
        return np.full(size, arr, np.int64)
    if arr.shape != (size,):
        raise AtomsparkError(f"{label}: expected a scalar or shape ({size},), got {arr.shape}")
    return arr.copy()


@dataclass(frozen=True)
class VNFixedParams(UnitParams):
    """Integer VN population (units in the module docstring). drive, thresh, g_init: int or int
    array per atom; n_inputs: input channels, one per incoming connection, each with its own
    32-bit accumulator as one Lava Sparse process has (Projection.channel picks it)."""

    frac_bits: int
    eta_mant: int
    eta_shift: int
    drive: object
    thresh: object
    c_shift: int = 0
    g_init: object = 0
    n_inputs: int = 1

    is_fixed_point = True
    payload_bits = PAYLOAD_BITS
    dtype = "fixed"

    def __post_init__(self) -> None:
        require_int("frac_bits", self.frac_bits, minimum=0)
        mant = require_int("eta_mant", self.eta_mant, minimum=1)
        if mant >= 2**ETA_MANT_BITS:
            raise AtomsparkError(
                f"eta_mant: must fit {ETA_MANT_BITS} unsigned bits (< {2**ETA_MANT_BITS}), "
                f"got {mant}"
            )
        require_int("c_shift", self.c_shift, minimum=0)
        shift = require_int("eta_shift", self.eta_shift, minimum=self.c_shift)
        if shift > MAX_SHIFT:
            raise AtomsparkError(f"eta_shift: must be <= {MAX_SHIFT} (int64 shift), got {shift}")
        require_int("n_inputs", self.n_inputs, minimum=1)
        for key in ("drive", "thresh", "g_init"):
            object.__setattr__(self, key, _int_per_unit(key, getattr(self, key)))
        if np.any(self.thresh < 0):
            raise AtomsparkError("thresh: must be >= 0")

    @property
    def n_channels(self) -> int:
        return int(self.n_inputs)

    @property
    def eta(self) -> float:
        """The step size this integer eta stands for."""
        return self.eta_mant * 2.0 ** -(self.eta_shift - self.c_shift)

    def check_size(self, name: str, size: int) -> None:
        for key in ("drive", "thresh", "g_init"):
            _int_per_unit(f"{name}.{key}", getattr(self, key), size)

    def init_state(self, size: int) -> dict[str, np.ndarray]:
        return {
            "g": _int_per_unit("g_init", self.g_init, size),
            "g_sent": np.zeros(size, np.int64),  # an initial code is sent as the first event
            "c": np.zeros(size, np.int64),
            "drive": _int_per_unit("drive", self.drive, size),
            "thresh": _int_per_unit("thresh", self.thresh, size),
        }


class VNFixedStep(NamedTuple):
    """Result of one integer VN step: new state, the sent changes, overflow counts."""

    g: np.ndarray
    g_sent: np.ndarray
    c: np.ndarray
    dg: np.ndarray
    wraps: int
    clips: int


def vn_fixed_step(g, g_sent, c, a_in, drive, thresh, eta_mant: int, eta_shift: int) -> VNFixedStep:
    """One integer VN step over all atoms (inputs unchanged). a_in: the summed input of this
    step, each connection already wrapped to 32 bits (see `lava_sparse_accumulate`)."""
    g, g_sent, c = (np.asarray(v, np.int64) for v in (g, g_sent, c))
    drive, thresh = np.asarray(drive, np.int64), np.asarray(thresh, np.int64)
    c_raw = c + np.asarray(a_in, np.int64)
    c_new = wrap_signed(c_raw, STATE_BITS)
    x = g + ((np.int64(eta_mant) * (drive - c_new)) >> np.int64(eta_shift))
    soft = np.sign(x) * np.maximum(np.abs(x) - thresh, 0)
    g_new = np.clip(soft, -CODE_LIMIT, CODE_LIMIT)
    d_raw = g_new - g_sent
    dg = np.clip(d_raw, -CODE_LIMIT, CODE_LIMIT)
    wraps = int(np.count_nonzero(c_new != c_raw))
    clips = int(np.count_nonzero(g_new != soft) + np.count_nonzero(dg != d_raw))
    return VNFixedStep(g_new, g_sent + dg, c_new, dg, wraps, clips)


def lava_sparse_accumulate(weights, payload, weight_exp: int) -> tuple[np.ndarray, int]:
    """One step of Lava's bit-accurate Sparse/Dense output: (W @ payload) in int64, shifted by
    weight_exp (right shifts floor), then wrapped to 32 bits by its int32 output port.
    Returns (values, number of wrapped entries)."""
    acc = np.asarray(weights @ np.asarray(payload, np.int64), np.int64).ravel()
    acc = acc << weight_exp if weight_exp > 0 else acc >> -weight_exp
    out = wrap_signed(acc, ACCUMULATOR_BITS)
    return out, int(np.count_nonzero(out != acc))


def lava_weight_mantissas(label: str, weights) -> np.ndarray:
    """Integer weights as int64, raising if Lava's 8-bit clip and sign-mode truncation would
    change any of them (mixed signs: even numbers in [-256, 254]; one sign: [0, 255])."""
    w = np.asarray(weights, dtype=np.float64)
    if np.any(w != np.round(w)):
        raise AtomsparkError(f"{label} weights: fixed point needs integers")
    w = w.astype(np.int64)
    if w.size == 0:
        return w
    lava_w = fx.lava_dense_weights(w)
    if not np.array_equal(lava_w, w):
        bad = w[lava_w != w]
        raise AtomsparkError(
            f"{label} weights: {bad.size} value(s) (e.g. {int(bad[0])}) do not fit Loihi's 8-bit "
            "weights (mixed-sign weights must be even numbers in [-256, 254], one-sign weights "
            "in [0, 255] or [-255, 0]); quantise with atomspark.mapping.quantize first"
        )
    return w


# --- the unit-model declaration (sim/unit_model.py): kernel adapter, arguments, registration ---
# buf: unit_model.Buffers; every general kernel takes bookkeeping(buf), then its own arguments,
# then the two emit buffers.


class VNFixedArgs(NamedTuple):
    """The fixed-point VN kernel's own arguments (kernels/vn_fixed.py), in its order."""

    g: np.ndarray
    g_sent: np.ndarray
    c: np.ndarray
    drive: np.ndarray
    thresh: np.ndarray
    eta_mant: int
    eta_shift: int
    nnz: np.ndarray  # (1,): nonzero codes, the population's counter


@njit(cache=True)
def _vn_fixed_update(slot, buf, args):
    n, n_emit, wraps, clips = kvf.vn_fixed_kernel(
        slot, *bookkeeping(buf), args.g, args.g_sent, args.c, args.drive, args.thresh,
        args.eta_mant, args.eta_shift, args.nnz, buf.emit_idx, buf.emit_val,
    )  # fmt: skip
    return n, n_emit, args.nnz[0], wraps, clips


def _vn_fixed_args(par: VNFixedParams, st: dict, counter: np.ndarray, dense_min: int) -> tuple:
    return VNFixedArgs(st["g"], st["g_sent"], st["c"], st["drive"], st["thresh"],
                       int(par.eta_mant), int(par.eta_shift), counter)  # fmt: skip


VN_FIXED = register(
    UnitModel(
        name="vn_fixed",
        params_type=VNFixedParams,
        update=_vn_fixed_update,
        kernel_args=_vn_fixed_args,
        initially_pending=code_or_drive,
        sample_state=("drive", "g"),
        graded=True,
        initial_counter=lambda st: int(np.count_nonzero(st["g"])),
        check_weights=lava_weight_mantissas,  # Lava's Sparse keeps 8-bit mantissas
    )
)

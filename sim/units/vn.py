"""VN atom parameters: the event-driven ISTA/LCA unit (docs/maths.md, "The event-driven form").

Atom i keeps c_i (sum of weighted change events received, = (G g)_i) and a constant drive b_i;
an update is g_i <- soft_threshold(g_i + eta (b_i - c_i), eta lam_i). The atom sends the change
of its code since its last event when that change is nonzero (or exceeds event_threshold), so the
receivers' c stays exactly G g_sent. Optional hard top-k keeps the k largest |g| in the population.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from atomspark.sim.core import AtomsparkError, as_finite_array, require_int, require_positive
from atomspark.sim.dtypes import FLOAT_DTYPES
from atomspark.sim.kernels import common as k
from atomspark.sim.unit_model import UnitModel, UnitParams, bookkeeping, register
from atomspark.sim.units.per_unit import per_unit
from numba import njit


@dataclass(frozen=True)
class VNParams(UnitParams):
    """eta: ISTA step; lam: l1 weights (scalar or per atom); drive: b; event_threshold: send-on-
    delta threshold (0 = exact); topk: keep only the k largest |g| after each update (or None)."""

    eta: float
    lam: object
    drive: object = 0.0
    event_threshold: float = 0.0
    topk: int | None = None
    dtype: str = "float64"
    g_init: object = 0.0

    is_fixed_point = False
    n_channels = 1

    @property
    def payload_bits(self) -> int:
        return 8 * np.dtype(FLOAT_DTYPES[self.dtype]).itemsize

    def check_size(self, name: str, size: int) -> None:
        if self.dtype not in FLOAT_DTYPES:
            raise AtomsparkError(f"{name}.dtype: must be one of {list(FLOAT_DTYPES)}")
        require_positive(f"{name}.eta", self.eta)
        require_positive(f"{name}.event_threshold", self.event_threshold, allow_zero=True)
        lam = as_finite_array(f"{name}.lam", self.lam)
        if np.any(lam < 0):
            raise AtomsparkError(f"{name}.lam: must be >= 0")
        per_unit(f"{name}.lam", lam, size, np.float64)
        per_unit(f"{name}.drive", as_finite_array(f"{name}.drive", self.drive), size, np.float64)
        per_unit(f"{name}.g_init", as_finite_array(f"{name}.g_init", self.g_init), size, np.float64)
        if self.topk is not None:
            k = require_int(f"{name}.topk", self.topk, minimum=1)
            if k > size:
                raise AtomsparkError(f"{name}.topk: must be <= population size {size}, got {k}")

    def init_state(self, size: int) -> dict[str, np.ndarray]:
        dt = FLOAT_DTYPES[self.dtype]
        g = per_unit("g_init", self.g_init, size, dt)
        return {
            "g": g,
            "g_sent": np.zeros(size, dt),  # an initial code is sent as the first event
            "c": np.zeros(size, dt),
            "drive": per_unit("drive", self.drive, size, dt),
            "thresh": per_unit("lam", self.lam, size, dt) * dt(self.eta),
        }


# --- the unit-model declaration (sim/unit_model.py): kernel adapter, arguments, registration ---
# buf: unit_model.Buffers; every general kernel takes bookkeeping(buf), then its own arguments,
# then the two emit buffers.


class VNArgs(NamedTuple):
    """The VN kernel's own arguments (kernels/common.py vn_step), in its order."""

    g: np.ndarray
    g_sent: np.ndarray
    c: np.ndarray
    drive: np.ndarray
    thresh: np.ndarray
    eta: float
    event_threshold: float
    topk: int
    nnz: np.ndarray  # (1,): nonzero codes, the population's counter


@njit(cache=True)
def _vn_update(slot, buf, args):
    n, n_emit = k.vn_step(
        slot, *bookkeeping(buf), args.g, args.g_sent, args.c, args.drive, args.thresh, args.eta,
        args.event_threshold, args.topk, args.nnz, buf.emit_idx, buf.emit_val,
    )  # fmt: skip
    return n, n_emit, args.nnz[0], 0, 0


def _vn_args(par: VNParams, st: dict, counter: np.ndarray, dense_min: int) -> VNArgs:
    dt = FLOAT_DTYPES[par.dtype]
    return VNArgs(st["g"], st["g_sent"], st["c"], st["drive"], st["thresh"], dt(par.eta),
                  dt(par.event_threshold), int(par.topk or 0), counter)  # fmt: skip


def code_or_drive(par, st: dict) -> np.ndarray:
    """VN atoms with a drive or an initial code start pending."""
    return (st["drive"] != 0) | (st["g"] != 0)


VN = register(
    UnitModel(
        name="vn",
        params_type=VNParams,
        update=_vn_update,
        kernel_args=_vn_args,
        initially_pending=code_or_drive,
        sample_state=("drive", "g"),
        graded=True,
    )
)


def vn_float_reference_step(g, g_sent, c, a_in, drive, thresh, eta: float, event_threshold: float):
    """One float VN atom step in plain NumPy, the rule every float VN backend follows:
    c += a_in (change events weighted by the Gram matrix); g <- soft(g + eta (drive - c), thresh);
    send dg = g - g_sent where it is nonzero (or above event_threshold). Returns
    (g, g_sent, c, dg) with dg = 0 for atoms that sent nothing."""
    c = c + a_in
    x = g + eta * (drive - c)
    g = np.sign(x) * np.maximum(np.abs(x) - thresh, 0.0)
    d = g - g_sent
    send = d != 0 if event_threshold == 0 else np.abs(d) > event_threshold
    return g, np.where(send, g, g_sent), c, np.where(send, d, 0.0)

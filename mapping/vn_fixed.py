"""Fixed-point VN atom (event-driven ISTA) in Loihi-style integer arithmetic, plain NumPy.

The engine (sim/) has a float VN atom only; this is the integer unit that the Lava export runs
(mapping/lava_procs/vn_atom.py calls `vn_fixed_step`, so Lava and this reference are the same
code path). Values are integers (see VNFixedParams for their units). Per step, as the float unit:

    c  <- c + a_in                                  (a_in: graded events G dg, already scaled)
    x  <- g + ((eta_mant * (drive - c)) >> eta_shift)   (arithmetic shift = floor)
    g  <- sign(x) * max(|x| - thresh, 0)            (soft threshold, thresh = eta*lam in units)
    dg <- g - g_sent, sent as a graded spike when nonzero; g_sent <- g

State words are 24-bit signed like Loihi's u/v; a value that leaves that range is an error, not
a silent wrap, because the float model it stands for has no wrap either.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from atomspark.sim.validation import AtomsparkError, require_int

STATE_BITS = 24
STATE_LIMIT = 2 ** (STATE_BITS - 1) - 1
PAYLOAD_BITS = 24  # Loihi 2 graded spikes carry up to 24-bit payloads in this export
ETA_MANT_BITS = 12  # eta mantissa: unsigned, like Loihi's 12-bit decay constants


@dataclass(frozen=True)
class VNFixedParams:
    """Integer VN population. g and thresh are in units of 2**-frac_bits; c and drive in the
    finer units 2**-(frac_bits + c_shift), so the graded sums of 8-bit Gram mantissas arrive
    without any rounding; eta_shift includes c_shift (eta = eta_mant * 2**-(eta_shift - c_shift)).
    """

    frac_bits: int
    eta_mant: int
    eta_shift: int
    drive: np.ndarray
    thresh: np.ndarray
    c_shift: int = 0

    def __post_init__(self) -> None:
        require_int("frac_bits", self.frac_bits, minimum=0)
        mant = require_int("eta_mant", self.eta_mant, minimum=1)
        if mant >= 2**ETA_MANT_BITS:
            raise AtomsparkError(
                f"eta_mant: must fit {ETA_MANT_BITS} unsigned bits (< {2**ETA_MANT_BITS}), got {mant}"
            )
        require_int("c_shift", self.c_shift, minimum=0)
        require_int("eta_shift", self.eta_shift, minimum=self.c_shift)
        for key in ("drive", "thresh"):
            arr = np.asarray(getattr(self, key))
            if arr.dtype.kind not in "iu":
                raise AtomsparkError(f"{key}: must be an integer array, got dtype {arr.dtype}")
            check_state_range(key, arr)
            object.__setattr__(self, key, arr.astype(np.int64))
        if self.drive.shape != self.thresh.shape or self.drive.ndim != 1:
            raise AtomsparkError(
                f"drive, thresh: need equal 1-D shapes, got {self.drive.shape}, {self.thresh.shape}"
            )
        if np.any(self.thresh < 0):
            raise AtomsparkError("thresh: must be >= 0")

    @property
    def size(self) -> int:
        return int(self.drive.size)


def check_state_range(name: str, values: np.ndarray, bits: int = STATE_BITS) -> None:
    """Raise if any value does not fit a signed `bits`-bit word."""
    limit = 2 ** (bits - 1) - 1
    if values.size and int(np.abs(values).max()) > limit:
        raise AtomsparkError(
            f"{name}: value {int(np.abs(values).max())} does not fit Loihi's {bits}-bit signed "
            f"word (|x| <= {limit}); lower frac_bits or rescale the model"
        )


def vn_fixed_step(
    g: np.ndarray,
    g_sent: np.ndarray,
    c: np.ndarray,
    a_in: np.ndarray,
    drive: np.ndarray,
    thresh: np.ndarray,
    eta_mant: int,
    eta_shift: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One integer VN step; returns new (g, g_sent, c, dg). All arrays int64, inputs unchanged."""
    c_new = c + np.asarray(a_in, dtype=np.int64)
    x = g + ((np.int64(eta_mant) * (drive - c_new)) >> np.int64(eta_shift))
    g_new = np.sign(x) * np.maximum(np.abs(x) - thresh, 0)
    dg = g_new - g_sent
    return g_new, g_new.copy(), c_new, dg


def sparse_graded_accumulate(weights, payload: np.ndarray, weight_exp: int) -> np.ndarray:
    """Lava's bit-accurate Sparse/Dense with graded input: (W @ payload) shifted by weight_exp,
    right shifts flooring. Raises if the int32 accumulator Lava uses would overflow."""
    acc = np.asarray(weights @ np.asarray(payload, dtype=np.int64), dtype=np.int64).ravel()
    bound = np.asarray(abs(weights) @ np.abs(np.asarray(payload, dtype=np.int64))).ravel()
    if bound.size and int(bound.max()) >= 2**31:
        raise AtomsparkError(
            f"graded accumulation: |W| @ |payload| reaches {int(bound.max())}, which overflows "
            "Lava's 32-bit synaptic accumulator"
        )
    return acc << weight_exp if weight_exp > 0 else acc >> -weight_exp

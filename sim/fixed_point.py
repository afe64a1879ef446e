"""Loihi fixed-point arithmetic as in Lava 0.10's bit-accurate models (PyLifModelBitAcc, Dense).

Constants and helpers shared by the LIF fixed-point kernel, its parameter checks, and the plain
NumPy reference `lif_fixed_reference_step` used to test the kernel.
"""

from __future__ import annotations

import numpy as np
from atomspark.sim.core import AtomsparkError

STATE_BITS = 24
STATE_MAX = 2 ** (STATE_BITS - 1)  # u wraps when it leaves (-2**23, 2**23]
V_LIMIT = STATE_MAX - 1  # v is clipped to +-(2**23 - 1)
CODE_LIMIT = STATE_MAX - 1  # graded payloads and VN codes: |x| <= 2**23 - 1
ACCUMULATOR_BITS = 32  # Lava's bit-accurate Sparse/Dense output port is int32
DECAY_SHIFT = 12
DECAY_UNITY = 2**DECAY_SHIFT
ACT_SHIFT = 6  # synaptic input << 6
VTH_SHIFT = 6  # threshold << 6
CURRENT_DECAY_OFFSET = 1  # Lava's ds_offset: effective du = du + 1
VOLTAGE_DECAY_OFFSET = 0  # Lava's dm_offset

# Declared widths of Lava's LIF (not enforced by Lava itself; we check them).
BIT_RANGES = {
    "du": (0, 2**12 - 1),
    "dv": (0, 2**12 - 1),
    "vth": (0, 2**17 - 1),
    "bias_mant": (-(2**12), 2**12 - 1),
    "bias_exp": (0, 7),
}


# Loihi's synaptic weight exponent is a signed 4-bit field: [-8, 7] (Intel NxSDK's
# weightExponent; nengo-loihi's discretize.py searches w_exp from 0 down to -8). Lava 0.10's Python
# Dense/Sparse shift by any integer, so the export checks the range itself.
WEIGHT_EXP_RANGE = (-8, 7)


def check_weight_exp(label: str, weight_exp) -> int:
    """`weight_exp` as an int, raising (one line, naming `label`) outside Loihi's [-8, 7]."""
    lo, hi = WEIGHT_EXP_RANGE
    exp = int(weight_exp)
    if exp != weight_exp or not lo <= exp <= hi:
        raise AtomsparkError(
            f"{label} weight_exp: {weight_exp} is outside Loihi's weight exponent range "
            f"[{lo}, {hi}]; requantise the weights (mapping.quantize.quantize_weights picks an "
            f"exponent in range) or rescale the model"
        )
    return exp


def check_bit_range(label: str, key: str, value) -> np.ndarray:
    """Return `value` as int64, raising if it is not integral or outside the declared bit width."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "iub" and not (
        arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))
    ):
        raise AtomsparkError(f"{label}.{key}: must be integer(s), got {value!r}")
    arr = arr.astype(np.int64)
    lo, hi = BIT_RANGES[key]
    if arr.size and (arr.min() < lo or arr.max() > hi):
        raise AtomsparkError(
            f"{label}.{key}: must lie in [{lo}, {hi}] (its Loihi bit width), "
            f"got range [{arr.min()}, {arr.max()}]"
        )
    return arr


def lava_dense_weights(
    weights: np.ndarray, num_weight_bits: int = 8, sign_mode: str | None = None
) -> np.ndarray:
    """Integer weights exactly as Lava's bit-accurate Dense uses them: clip to 8 bits by sign mode
    ('excitatory', 'inhibitory', 'mixed'; default from the signs), then drop the low
    8 - num_weight_bits (+1 if mixed) bits by an arithmetic shift."""
    w = np.asarray(weights)
    if w.dtype.kind == "f" and not np.all(np.isfinite(w)):
        raise AtomsparkError("weights: contain NaN or Inf")
    if not 1 <= int(num_weight_bits) <= 8:
        raise AtomsparkError(f"num_weight_bits: must be in [1, 8], got {num_weight_bits}")
    w = w.astype(np.int64)
    if sign_mode is None:
        sign_mode = "excitatory" if w.min() >= 0 else "inhibitory" if w.max() <= 0 else "mixed"
    if sign_mode not in ("excitatory", "inhibitory", "mixed"):
        raise AtomsparkError(f"sign_mode: unknown {sign_mode!r}")
    mixed = int(sign_mode == "mixed")
    sign = -1 if sign_mode == "inhibitory" else 1
    w = np.clip(sign * w, -(2**8) * mixed, 2**8 - 1)
    shift = 8 - int(num_weight_bits) + mixed
    return sign * ((w >> shift) << shift)


def wrap_signed(x: np.ndarray | int, bits: int) -> np.ndarray | int:
    """Two's-complement wrap of int64 value(s) to `bits` bits. Plain enough for Numba too: the
    kernels jit this same function, so engine and reference share one expression."""
    half = np.int64(1) << np.int64(bits - 1)
    return ((x + half) & ((half << np.int64(1)) - np.int64(1))) - half


def wrap_int32(x: np.ndarray) -> np.ndarray:
    """Two's-complement wrap to 32 bits (what int32 numpy arithmetic does in Lava)."""
    return wrap_signed(np.asarray(x, np.int64), 32)


def decay(x: np.ndarray, d: int) -> np.ndarray:
    """Lava's decay: |x| * (4096 - d) >> 12 with the sign restored (int64)."""
    prod = np.asarray(x, np.int64) * (DECAY_UNITY - d)
    return np.sign(prod) * (np.abs(prod) >> DECAY_SHIFT)


def lif_fixed_reference_step(u, v, a_in, du, dv, vth, bias):
    """One step of PyLifModelBitAcc in plain NumPy: returns (u, v, spikes, n_wraps, n_clips).

    a_in is the summed integer synaptic input (already weight-exp scaled), bias = bias_mant <<
    bias_exp. Wraps count the 24-bit current wrap plus any int32 overflow of the input path.
    """
    a32 = wrap_int32(a_in)
    a_shift = wrap_int32(a32 << ACT_SHIFT)
    raw = np.asarray(decay(u, du + CURRENT_DECAY_OFFSET), np.int64) + a_shift
    cur = wrap_int32(raw)
    wraps = int(np.count_nonzero(a32 != a_in) + np.count_nonzero(a_shift != (a32 << ACT_SHIFT)))
    wraps += int(np.count_nonzero(cur != raw))
    hi, lo = cur > STATE_MAX, cur <= -STATE_MAX
    wraps += int(np.count_nonzero(hi | lo))
    u_new = np.where(hi, cur - 2 * STATE_MAX, np.where(lo, cur + 2 * STATE_MAX, cur))
    v_raw = decay(v, dv + VOLTAGE_DECAY_OFFSET) + u_new + bias
    v_new = np.clip(v_raw, -V_LIMIT, V_LIMIT)
    clips = int(np.count_nonzero(v_new != v_raw))
    spikes = v_new > (np.int64(vth) << VTH_SHIFT)
    v_new = np.where(spikes, 0, v_new)
    return u_new.astype(np.int64), v_new.astype(np.int64), spikes, wraps, clips

"""Plain NumPy reference of the integer RSGN node update (sim/units/rsgn_fixed.py and its split-W_h
variant, sim/units/rsgn_fixed_split.py): whole-population int64 array arithmetic, written apart
from the Numba node loop so that a test can hold the kernel (and so the engine and Lava's
ProcessModel, which share it) to it bit for bit."""

from __future__ import annotations

import math

import numpy as np
from atomspark.sim.fixed_point import wrap_signed
from atomspark.sim.units import rsgn_fixed as rf


def _isqrt(x: np.ndarray) -> np.ndarray:
    return np.array([math.isqrt(int(v)) for v in x], np.int64)


def _round_shift(x, k):
    """x / 2**k to the nearest integer, halves up (the unit's shifts; k may be per row)."""
    k = np.asarray(k, np.int64)
    half = np.where(k > 0, np.int64(1) << np.maximum(k - 1, 0), 0)
    return (x + half) >> k


def _saturate(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    out = np.clip(x, -rf.STATE_LIMIT, rf.STATE_LIMIT)
    return out, out != x


def reference_activation(u: np.ndarray, lut: np.ndarray) -> np.ndarray:
    """sigmoid(u) in Q.40 for u = s/T in Q.12: the table over [-8, 8), exp(u) below."""
    idx = (u >> rf.LUT_SHIFT) + rf.LUT_SIZE // 2
    table = lut[np.clip(idx, 0, rf.LUT_SIZE - 1)] << (rf.PRE_FRAC - rf.LUT_BITS)
    v = (u * rf.LOG2E_Q16) >> 16
    frac = (v & ((1 << rf.ALPHA_FRAC) - 1)) >> (rf.ALPHA_FRAC - 6)
    shift = (v >> rf.ALPHA_FRAC) + rf.PRE_FRAC - rf.EXP2_BITS
    base = lut[rf.LUT_SIZE + frac]
    tail = np.where(shift >= 0, base << np.maximum(shift, 0), base >> np.clip(-shift, 0, 63))
    tail = np.where(shift <= -62, 0, tail)
    return np.where(idx >= 0, table, tail)


def _pool(a: np.ndarray, k: dict) -> tuple[np.ndarray, int]:
    """Divisive normalisation (alpha in Q.12) and the pool messages sent."""
    n = a.size
    degree = np.diff(k["pool_indptr"])
    pool_sum = np.zeros(n, np.int64)
    np.add.at(pool_sum, k["pool_indices"], np.repeat(a, degree))
    alpha = np.zeros(n, np.int64)
    for j in np.flatnonzero(a > 0):
        num, den = int(a[j]) * int(k["pool_size"][j]), int(pool_sum[j]) + rf.INHIBITION_EPS
        if num >= den:
            alpha[j] = 1 << rf.ALPHA_FRAC
            continue
        while den >= 1 << rf.DIV_BITS:
            num, den = num >> 1, den >> 1
        alpha[j] = ((num << rf.ALPHA_FRAC) + den // 2) // den
    return alpha, int(degree[a > 0].sum())


def reference_step(alpha, h, m, received, k: dict, event_rule: bool) -> tuple:
    """One update of every node from the raw summed messages m (N, d) and received flags (N,),
    with kernel_arrays `k`: returns (alpha, h, wraps, clips, pool messages), new arrays."""
    gain, inv_t_mant, inv_t_shift, cutoff, ln_eps, rd = (int(c) for c in k["consts"])
    alpha, h, m = (np.asarray(x, np.int64) for x in (alpha, h, m))
    wrapped = wrap_signed(m, 32)
    wraps = int(np.count_nonzero(wrapped != m))
    shifted = _round_shift(wrapped, k["m_shift"][:, None])  # each node's own shift
    h_new, clipped = _saturate(_round_shift(shifted @ k["wh"], k["wh_shift"]) + k["bh"])
    clips = int(np.count_nonzero(clipped))
    norm = _isqrt(np.sum(h_new * h_new, axis=1))
    s = alpha + ((gain * norm) >> rf.H_FRAC) - k["thresholds"]
    a = reference_activation((s * inv_t_mant) >> inv_t_shift, k["lut"])
    if event_rule:
        a = np.where(((alpha > cutoff) | received) & (a > (cutoff << rf.PRE_SHIFT)), a, 0)
    z = h_new + h
    mu = (z.sum(axis=1) * rd) >> rf.RD_SHIFT
    dz = z - mu[:, None]
    var = ((((dz * dz).sum(axis=1) >> 12) * rd) >> (rf.RD_SHIFT - 12)) + ln_eps
    inv = (1 << rf.INV_STD_BITS) // _isqrt(var)
    y = _round_shift(_round_shift(dz * inv[:, None], 20) * k["lng"], rf.ALPHA_FRAC) + k["lnb"]
    a12 = _round_shift(a, rf.PRE_SHIFT)
    h_out, clipped = _saturate(_round_shift(y * a12[:, None], rf.ALPHA_FRAC))
    live = a != 0
    clips += int(np.count_nonzero(clipped[live]))
    h_out[~live] = 0
    alpha_out, sent = _pool(a, k)
    if event_rule:
        silent = alpha_out <= cutoff
        alpha_out[silent] = 0
        h_out[silent] = 0
    return alpha_out, h_out, wraps, clips, sent

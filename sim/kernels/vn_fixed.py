"""Numba kernel of the fixed-point VN atom: the integer step of units_vn_fixed.vn_fixed_step,
applied only to the atoms that received events or are still pending (event-driven)."""

from __future__ import annotations

from atomspark.sim.fixed_point import ACCUMULATOR_BITS, CODE_LIMIT, STATE_BITS
from atomspark.sim.kernels.common import _collect, wrap_signed
from numba import njit


@njit(cache=True)
def _saturate(x, lim):
    """x clipped to [-lim, lim], and 1 if it was clipped (counted as a clip) else 0."""
    if x > lim:
        return lim, 1
    if x < -lim:
        return -lim, 1
    return x, 0


@njit(cache=True)
def vn_fixed_kernel(
    slot,
    ring,
    tflag,
    tidx,
    tcount,
    pend,
    pcount,
    work,
    g,
    g_sent,
    c,
    drive,
    thresh,
    eta_mant,
    eta_shift,
    nnz,
    emit_idx,
    emit_val,
):
    """Integer ISTA update of the collected atoms, then graded change events. ring has one
    channel per incoming connection (each wrapped to 32 bits). nnz[0] tracks nonzero codes.
    Returns (updates, events, wraps, clips); pending = atoms whose code changed or is unsent."""
    n = _collect(slot, tflag, tidx, tcount, pend, pcount, work)
    n_ch = ring.shape[0]
    lim = CODE_LIMIT
    n_emit = 0
    n_pend = 0
    wraps = 0
    clips = 0
    for j in range(n):
        i = work[j]
        a = 0
        for ch in range(n_ch):
            raw = ring[ch, slot, i]
            ring[ch, slot, i] = 0
            val = wrap_signed(raw, ACCUMULATOR_BITS)
            if val != raw:
                wraps += 1
            a += val
        tflag[slot, i] = 0
        c_raw = c[i] + a
        ci = wrap_signed(c_raw, STATE_BITS)
        if ci != c_raw:
            wraps += 1
        c[i] = ci
        x = g[i] + ((eta_mant * (drive[i] - ci)) >> eta_shift)
        t = thresh[i]
        if x > t:
            gi = x - t
        elif x < -t:
            gi = x + t
        else:
            gi = 0
        gi, clipped = _saturate(gi, lim)
        clips += clipped
        old = g[i]
        if old != 0:
            nnz[0] -= 1
        if gi != 0:
            nnz[0] += 1
        g[i] = gi
        d = gi - g_sent[i]
        d, clipped = _saturate(d, lim)
        clips += clipped
        if d != 0:
            emit_idx[n_emit] = i
            emit_val[n_emit] = d
            n_emit += 1
            g_sent[i] += d
        if gi != old or gi != g_sent[i]:
            pend[n_pend] = i
            n_pend += 1
    tcount[slot] = 0
    pcount[0] = n_pend
    return n, n_emit, wraps, clips

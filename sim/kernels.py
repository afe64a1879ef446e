"""Numba kernels of the event-driven engine: input collection and unit updates.

Per population and step the engine calls one update kernel and then one fan-out kernel per
outgoing projection (kernels_fanout.py). Ring buffers are indexed by delivery step modulo the
ring length; each slot keeps a list of the units it touched, so a step only visits units that
received input or are still pending (nonzero state or changed last step).
"""

from __future__ import annotations

import numpy as np
from atomspark.sim import fixed_point as fx
from numba import njit


@njit(cache=True)
def _collect(slot, tflag, tidx, tcount, pend, pcount, work):
    """Units to update: those touched in this slot, then pending ones not touched (no repeats)."""
    n = 0
    for j in range(tcount[slot]):
        work[n] = tidx[slot, j]
        n += 1
    for j in range(pcount[0]):
        i = pend[j]
        if tflag[slot, i] == 0:
            work[n] = i
            n += 1
    return n


@njit(cache=True)
def add_input(slot, values, ring_ch, tflag, tidx, tcount):
    """Add an external input vector to a ring slot (only its nonzero entries)."""
    for i in range(values.size):
        if values[i] != 0:
            ring_ch[slot, i] += values[i]
            if tflag[slot, i] == 0:
                tflag[slot, i] = 1
                tidx[slot, tcount[slot]] = i
                tcount[slot] += 1


@njit(cache=True)
def count_events(emit_idx, n_emit, unit_events):
    for e in range(n_emit):
        unit_events[emit_idx[e]] += 1


@njit(cache=True)
def lif_float_step(
    slot,
    ring,
    tflag,
    tidx,
    tcount,
    pend,
    pcount,
    work,
    u,
    u2,
    v,
    refr,
    bias,
    consts,
    refractory,
    emit_idx,
    emit_val,
):
    """Float LIF update of the collected units. consts = [1-du, 1-du2, 1-dv, vth, v_reset] in the
    state dtype. Returns (updates, events); rebuilds the pending list (nonzero state)."""
    n = _collect(slot, tflag, tidx, tcount, pend, pcount, work)
    ku, ku2, kv, vth, v_reset = consts[0], consts[1], consts[2], consts[3], consts[4]
    two = ring.shape[0] == 2
    n_emit = 0
    n_pend = 0
    for j in range(n):
        i = work[j]
        u[i] = u[i] * ku + ring[0, slot, i]
        ring[0, slot, i] = 0
        if two:
            u2[i] = u2[i] * ku2 + ring[1, slot, i]
            ring[1, slot, i] = 0
        tflag[slot, i] = 0
        if refr[i] > 0:
            refr[i] -= 1
            v[i] = v_reset
        else:
            v[i] = v[i] * kv + u[i] + u2[i] + bias[i]
            if v[i] > vth:
                v[i] = v_reset
                refr[i] = refractory
                emit_idx[n_emit] = i
                emit_val[n_emit] = 1
                n_emit += 1
        if u[i] != 0 or u2[i] != 0 or v[i] != 0 or refr[i] > 0 or bias[i] != 0:
            pend[n_pend] = i
            n_pend += 1
    tcount[slot] = 0
    pcount[0] = n_pend
    return n, n_emit


@njit(cache=True)
def _wrap32(x):
    return ((x + 2147483648) % 4294967296) - 2147483648


@njit(cache=True)
def _decay(x, d):
    p = x * (fx.DECAY_UNITY - d)
    if p >= 0:
        return p >> fx.DECAY_SHIFT
    return -((-p) >> fx.DECAY_SHIFT)


@njit(cache=True)
def lif_fixed_step(
    slot,
    ring,
    tflag,
    tidx,
    tcount,
    pend,
    pcount,
    work,
    u,
    v,
    bias,
    du,
    dv,
    vth_scaled,
    emit_idx,
    emit_val,
):
    """Bit-exact PyLifModelBitAcc update (int64 holding Lava's int32/24-bit values).
    Returns (updates, events, wraps, clips)."""
    n = _collect(slot, tflag, tidx, tcount, pend, pcount, work)
    smax = fx.STATE_MAX
    vlim = fx.V_LIMIT
    n_emit = 0
    n_pend = 0
    wraps = 0
    clips = 0
    for j in range(n):
        i = work[j]
        a_in = ring[0, slot, i]
        ring[0, slot, i] = 0
        tflag[slot, i] = 0
        a32 = _wrap32(a_in)
        shifted = a32 << fx.ACT_SHIFT
        a_sh = _wrap32(shifted)
        raw = _decay(u[i], du + fx.CURRENT_DECAY_OFFSET) + a_sh
        cur = _wrap32(raw)
        wraps += (a32 != a_in) + (a_sh != shifted) + (cur != raw)
        if cur > smax:
            cur -= 2 * smax
            wraps += 1
        elif cur <= -smax:
            cur += 2 * smax
            wraps += 1
        u[i] = cur
        vv = _decay(v[i], dv + fx.VOLTAGE_DECAY_OFFSET) + cur + bias[i]
        if vv > vlim:
            vv = vlim
            clips += 1
        elif vv < -vlim:
            vv = -vlim
            clips += 1
        if vv > vth_scaled:
            vv = 0
            emit_idx[n_emit] = i
            emit_val[n_emit] = 1
            n_emit += 1
        v[i] = vv
        if u[i] != 0 or v[i] != 0 or bias[i] != 0:
            pend[n_pend] = i
            n_pend += 1
    tcount[slot] = 0
    pcount[0] = n_pend
    return n, n_emit, wraps, clips


@njit(cache=True)
def vn_step(
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
    eta,
    event_threshold,
    topk,
    nnz,
    emit_idx,
    emit_val,
):
    """Event-driven ISTA update of the collected atoms (all atoms when topk > 0), then send-on-
    delta events. nnz[0] tracks the number of nonzero codes. Returns (updates, events)."""
    size = g.size
    if topk > 0:
        for i in range(size):
            work[i] = i
        n = size
    else:
        n = _collect(slot, tflag, tidx, tcount, pend, pcount, work)
    old = np.empty(n, g.dtype)
    for j in range(n):
        i = work[j]
        c[i] += ring[0, slot, i]
        ring[0, slot, i] = 0
        tflag[slot, i] = 0
        old[j] = g[i]
        x = g[i] + eta * (drive[i] - c[i])
        t = thresh[i]
        if x > t:
            g[i] = x - t
        elif x < -t:
            g[i] = x + t
        else:
            g[i] = 0
    if topk > 0:
        cand = np.empty(size, np.int64)
        m = 0
        for i in range(size):
            if g[i] != 0:
                cand[m] = i
                m += 1
        if m > topk:
            keys = np.empty(m, g.dtype)
            for j in range(m):
                keys[j] = -abs(g[cand[j]])
            order = np.argsort(keys, kind="mergesort")
            for j in range(topk, m):
                g[cand[order[j]]] = 0
    n_emit = 0
    n_pend = 0
    for j in range(n):
        i = work[j]
        if old[j] != 0:
            nnz[0] -= 1
        if g[i] != 0:
            nnz[0] += 1
        d = g[i] - g_sent[i]
        if (event_threshold == 0 and d != 0) or abs(d) > event_threshold:
            emit_idx[n_emit] = i
            emit_val[n_emit] = d
            n_emit += 1
            g_sent[i] = g[i]
        if g[i] != old[j]:
            pend[n_pend] = i
            n_pend += 1
    tcount[slot] = 0
    pcount[0] = n_pend
    return n, n_emit

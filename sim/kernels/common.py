"""Numba kernels of the event-driven engine: input collection and the VN atom update.

Per population and step the engine calls one update kernel (LIF: sim/kernels/lif.py) and then one
fan-out kernel per outgoing projection (sim/kernels/fanout.py). Ring buffers are indexed by
delivery step modulo the ring length; each slot keeps a list of the units it touched, so a step only visits units that
received input or are still pending (nonzero state or changed last step).
"""

from __future__ import annotations

import numpy as np
from atomspark.sim.fixed_point import wrap_signed as _wrap_signed_py
from numba import njit

wrap_signed = njit(cache=True)(_wrap_signed_py)  # the fixed-point wrap, jitted for the kernels


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
def mark_touched(tflag, tidx, tcount, slot, t):
    """List unit t in a slot's touched list the first time it receives input in that slot."""
    if tflag[slot, t] == 0:
        tflag[slot, t] = 1
        tidx[slot, tcount[slot]] = t
        tcount[slot] += 1


@njit(cache=True)
def add_input(slot, values, ring_ch, tflag, tidx, tcount):
    """Add an external input vector to a ring slot (only its nonzero entries)."""
    for i in range(values.size):
        if values[i] != 0:
            ring_ch[slot, i] += values[i]
            mark_touched(tflag, tidx, tcount, slot, i)


@njit(cache=True)
def count_events(emit_idx, n_emit, unit_events):
    """Add one to each emitting unit's event count (per-unit traffic for placement)."""
    for e in range(n_emit):
        unit_events[emit_idx[e]] += 1


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

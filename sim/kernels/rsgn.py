"""Numba kernels of the RSGN node unit (sim/units/rsgn.py): the node update and vector-event fan-out.

rsgn_step runs one RSGN step over the nodes that need it (sparse: received or pending; published:
all), in three passes over that list: (1) each node turns its summed vector input into h_new,
its pre-pool activation and its new state; (2) nodes with a nonzero pre-pool activation send it
to their pools; (3) each node divides by its pool sum, applies the cutoff and emits its output.
Per updated node: d^2 multiply-adds (W_h) + O(d) (norm, LayerNorm); per pool message: one add.
"""

from __future__ import annotations

import numpy as np
from atomspark.sim.kernels.common import _collect, mark_touched
from numba import njit


@njit(cache=True)
def fan_out_vector(
    emit_idx, emit_val, n_emit, indptr, indices, data, delay, step, ring_ch, tflag, tidx, tcount
):
    """Like kernels_fanout.fan_out for vector payloads: emit_val (events, d), ring_ch (slots, N, d).
    One synaptic operation per synapse per event (each a d-wide multiply-add); returns the count."""
    n_slots = ring_ch.shape[0]
    width = ring_ch.shape[2]
    synops = 0
    for e in range(n_emit):
        s = emit_idx[e]
        for k in range(indptr[s], indptr[s + 1]):
            slot = (step + delay[k]) % n_slots
            t = indices[k]
            w = data[k]
            for c in range(width):
                ring_ch[slot, t, c] += w * emit_val[e, c]
            mark_touched(tflag, tidx, tcount, slot, t)
        synops += indptr[s + 1] - indptr[s]
    return synops


@njit(cache=True)
def _emit_initial(pend, pcount, alpha, h, cutoff, emit_idx, emit_val):
    """Ignition step: nodes above the cutoff send their initial output alpha h; nothing updates."""
    n_emit = 0
    for j in range(pcount[0]):
        i = pend[j]
        if alpha[i] > cutoff:
            emit_idx[n_emit] = i
            for c in range(h.shape[1]):
                emit_val[n_emit, c] = h[i, c] * alpha[i]
            n_emit += 1
    return n_emit


@njit(cache=True)
def _node_dynamics(j, slot, ring, received, alpha, h, thresholds, w_h, b_h, ln_gain, ln_bias,
                   consts, resting, event_rule, hn):  # fmt: skip
    """Pass 1 for node j: returns its pre-pool activation and writes its new state h[j]."""
    temperature, gain, cutoff, ln_eps = consts[0], consts[1], consts[2], consts[3]
    d = h.shape[1]
    for c in range(d):
        hn[c] = 0.0
    for r in range(d):
        m = ring[0, slot, j, r]
        ring[0, slot, j, r] = 0.0
        for c in range(d):
            hn[c] += m * w_h[r, c]
    sq = 0.0
    for c in range(d):
        hn[c] += b_h[c]
        sq += hn[c] * hn[c]
    a = 1.0 / (1.0 + np.exp(-((alpha[j] + gain * np.sqrt(sq) - thresholds[j]) / temperature)))
    a = max(a - resting[j], 0.0) / (1.0 - resting[j])  # resting 0: the plain sigmoid, exactly
    if event_rule and not ((alpha[j] > cutoff or received) and a > cutoff):
        a = 0.0
    if a == 0.0:
        for c in range(d):
            h[j, c] = 0.0
        return a
    mu = 0.0
    for c in range(d):
        hn[c] += h[j, c]
        mu += hn[c]
    mu /= d
    var = 0.0
    for c in range(d):
        var += (hn[c] - mu) * (hn[c] - mu)
    std = np.sqrt(var / d + ln_eps)
    for c in range(d):
        h[j, c] = ((hn[c] - mu) / std * ln_gain[c] + ln_bias[c]) * a
    return a


@njit(cache=True)
def rsgn_step(slot, ring, tflag, tidx, tcount, pend, pcount, work, alpha, h, alpha_pre, pool_sum,
              pool_messages, ignited, thresholds, w_h, b_h, ln_gain, ln_bias, pool_indptr,
              pool_indices, pool_size, consts, resting, event_rule, emit_idx, emit_val):  # fmt: skip
    """One RSGN step of a node population (see module docstring). The first call after
    construction only emits the initial outputs (ignition). Returns (updates, events, active);
    pool_messages[0] receives the number of pool messages of this update."""
    cutoff, inh_eps = consts[2], consts[4]
    pool_messages[0] = 0
    if ignited[0] == 0:
        ignited[0] = 1
        n_emit = _emit_initial(pend, pcount, alpha, h, cutoff, emit_idx, emit_val)
        return 0, n_emit, n_emit
    size = alpha.size
    if event_rule:
        n = _collect(slot, tflag, tidx, tcount, pend, pcount, work)
    else:
        for i in range(size):
            work[i] = i
        n = size
    hn = np.empty(h.shape[1])
    for jj in range(n):
        j = work[jj]
        received = tflag[slot, j] != 0
        tflag[slot, j] = 0
        alpha_pre[j] = _node_dynamics(
            j, slot, ring, received, alpha, h, thresholds, w_h, b_h, ln_gain, ln_bias, consts,
            resting, event_rule, hn,
        )  # fmt: skip
    tcount[slot] = 0
    sent = 0
    for jj in range(n):
        j = work[jj]
        if alpha_pre[j] > 0.0:
            for k in range(pool_indptr[j], pool_indptr[j + 1]):
                pool_sum[pool_indices[k]] += alpha_pre[j]
            sent += pool_indptr[j + 1] - pool_indptr[j]
    pool_messages[0] = sent
    n_emit = 0
    n_pend = 0
    for jj in range(n):
        j = work[jj]
        v = 0.0
        if alpha_pre[j] > 0.0:
            v = min(max(alpha_pre[j] * pool_size[j] / (pool_sum[j] + inh_eps), 0.0), 1.0)
        if event_rule and v <= cutoff:
            v = 0.0
            for c in range(h.shape[1]):
                h[j, c] = 0.0
        alpha[j] = v
        if v > cutoff:
            emit_idx[n_emit] = j
            for c in range(h.shape[1]):
                emit_val[n_emit, c] = h[j, c] * v
            n_emit += 1
        if v != 0.0:
            pend[n_pend] = j
            n_pend += 1
    for jj in range(n):
        j = work[jj]
        if alpha_pre[j] > 0.0:
            for k in range(pool_indptr[j], pool_indptr[j + 1]):
                pool_sum[pool_indices[k]] = 0.0
    pcount[0] = n_pend
    return n, n_emit, n_emit

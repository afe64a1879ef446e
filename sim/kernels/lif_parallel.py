"""The direct lean LIF step on several threads: neuron blocks in parallel, spikes delivered by
target block.

The units are cut into blocks fixed by the population size alone (never by the thread count).
A step is two parallel loops over the blocks:
1. each block updates its own units (the arithmetic of lif_lean._sweep_direct) and lists its
   spikes, in ascending order, in its own part of the event list;
2. each block adds, for every spike of the step (blocks in order, so sources ascend), the
   weights of the synapses that land in that block: a projection is stored once more as a CSR
   by (target block, source), so a thread writes the state of its own block only.
Every target receives its inputs in the order the one-thread direct path adds them (projection
by projection, sources ascending), so the states are bit-identical for every thread count and to
the serial engine (tests/test_parallel_lif.py).
"""

from __future__ import annotations

import numpy as np
from atomspark.sim.kernels.lif_lean import value_at
from numba import njit, prange


@njit(cache=True)
def split_by_target_block(indptr, indices, blocks, out_indices):
    """(n_blocks, n_source + 1) offsets of a fan-out CSR regrouped by (target block, source);
    out_indices receives the target indices in that order (within a source, ascending)."""
    n_src = indptr.size - 1
    nb = blocks.size - 1
    block_of = np.empty(blocks[-1], np.int64)
    for b in range(nb):
        block_of[blocks[b] : blocks[b + 1]] = b
    ptr = np.zeros((nb, n_src + 1), np.int64)
    for s in range(n_src):
        for k in range(indptr[s], indptr[s + 1]):
            ptr[block_of[indices[k]], s + 1] += 1
    total = 0
    for b in range(nb):
        ptr[b, 0] = total
        for s in range(n_src):
            total += ptr[b, s + 1]
            ptr[b, s + 1] = total
    fill = ptr[:, :-1].copy()
    order = np.empty(indices.size, np.int64)  # position of each original synapse
    for s in range(n_src):
        for k in range(indptr[s], indptr[s + 1]):
            b = block_of[indices[k]]
            out_indices[fill[b, s]] = indices[k]
            order[k] = fill[b, s]
            fill[b, s] += 1
    return ptr, order


@njit(cache=True, inline="always")
def _sweep_block(lo, hi, u, u2, v, refr, bias, consts, refractory, emit):
    """lif_lean._sweep_direct on units lo..hi-1; lists their spikes at emit[lo:]."""
    ku, ku2, kv, vth, v_reset = consts[0], consts[1], consts[2], consts[3], consts[4]
    n_spike = 0
    for i in range(lo, hi):
        uu = u[i] * ku
        uu2 = u2[i] * ku2
        r = refr[i]
        held = r > 0
        vn = v[i] * kv + uu + uu2 + value_at(bias, i)
        fire = (not held) & (vn > vth)
        u[i] = uu
        u2[i] = uu2
        v[i] = v_reset if held | fire else vn
        refr[i] = r - 1 if held else (refractory if fire else r)
        if fire:
            emit[lo + n_spike] = i
            n_spike += 1
    return n_spike


@njit(cache=True, parallel=True)
def run_blocks(steps, blocks, u, u2, v, refr, bias, consts, refractory, emit, n_spikes,
               ptr, indices, weights, uniform, channel, spikes, synops):  # fmt: skip
    """`steps` steps of the direct LIF population on its blocks. Projections p (all from the
    population to itself): ptr[p] (n_blocks, n + 1) offsets into indices / weights (per
    synapse; uniform[p] is the scalar used instead when not NaN), channel[p] 0 (u) or 1 (u2).
    spikes[t], synops[t]: the step's spikes and synaptic operations."""
    nb = blocks.size - 1
    n_proj = ptr.shape[0]
    for t in range(steps):
        for b in prange(nb):
            n_spikes[b] = _sweep_block(blocks[b], blocks[b + 1], u, u2, v, refr, bias, consts,
                                       refractory, emit)  # fmt: skip
        total = 0
        for b in range(nb):
            total += n_spikes[b]
        spikes[t] = total
        if total == 0:
            continue
        ops = np.zeros(nb, np.int64)
        for tb in prange(nb):
            done = 0
            for p in range(n_proj):
                acc = u if channel[p] == 0 else u2
                w = uniform[p]
                scalar = not np.isnan(w)
                for sb in range(nb):
                    base = blocks[sb]
                    for e in range(n_spikes[sb]):
                        s = emit[base + e]
                        start, stop = ptr[p, tb, s], ptr[p, tb, s + 1]
                        done += stop - start
                        if scalar:
                            for k in range(start, stop):
                                acc[indices[k]] += w
                        else:
                            for k in range(start, stop):
                                acc[indices[k]] += weights[k]
            ops[tb] = done
        synops[t] = ops.sum()

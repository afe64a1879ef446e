"""The direct lean LIF step on several threads: neuron blocks in parallel, spikes delivered by
target block.

The units are cut into blocks (sim/parallel_lif.py: one per thread, each a multiple of 8 units).
Each step is ONE parallel loop over the blocks (one fork and join per step); block b
1. adds the weights of the previous step's spikes that land in it (every block's list, blocks in
   order, so sources ascend): a projection is stored once more as a CSR by (target block,
   source), so a thread writes the state of its own block only;
2. updates its own units (lif_lean.sweep_direct on its slice, one uint8 flag per unit) and lists its spikes, ascending, in its own part of this step's event list.
The event lists alternate between two buffers, so a block never reads a list being written. A
last loop delivers the final step's spikes. Every target receives its inputs in the order the
one-thread direct path adds them (projection by projection, sources ascending), whatever the
blocking, so the states are bit-identical for every thread count and block count and to the
serial engine (tests/test_parallel_lif.py).
"""

from __future__ import annotations

import numpy as np
from atomspark.sim.kernels.lif_lean import SCAN_WORDS, part_of, sweep_direct
from numba import njit, prange


@njit(cache=True)
def split_by_target_block(indptr, indices, blocks, out_indices, weights, out_weights):
    """(n_blocks, n_source + 1) offsets of a fan-out CSR regrouped by (target block, source);
    out_indices receives the target indices in that order (within a source, ascending) and
    out_weights the per-synapse weights when it is not empty (uniform weights: nothing copied)."""
    n_src = indptr.size - 1
    nb = blocks.size - 1
    block_of = np.empty(blocks[-1], np.int32)  # 4 bytes a unit: the lookup stays in cache longer
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
    copy_weights = out_weights.size > 0
    for s in range(n_src):
        for k in range(indptr[s], indptr[s + 1]):
            b = block_of[indices[k]]
            out_indices[fill[b, s]] = indices[k]
            if copy_weights:
                out_weights[fill[b, s]] = weights[k]
            fill[b, s] += 1
    return ptr


@njit(cache=True, inline="always")
def _list_block(lo, hi, flags, emit, n_set):
    """The n_set flagged units of lo..hi-1, ascending, at emit[lo:]; lo is a multiple of 8 and
    flags is padded with zeros to one. As lif_lean.list_flagged: SCAN_WORDS 64-bit words (8
    flags each) tested at a time, stopping after the last set flag; never past the block."""
    words = flags.view(np.uint64)
    first, last = lo // 8, (hi + 7) // 8
    full = first + (last - first) // SCAN_WORDS * SCAN_WORDS
    n = 0
    for chunk in range(first, full, SCAN_WORDS):
        any_set = np.uint64(0)
        for w in range(chunk, chunk + SCAN_WORDS):
            any_set |= words[w]
        if any_set != 0:
            n = _list_block_words(flags, words, chunk, chunk + SCAN_WORDS, emit, lo, n)
            if n == n_set:
                return n
    return _list_block_words(flags, words, full, last, emit, lo, n)


@njit(cache=True, inline="always")
def _list_block_words(flags, words, first, last, emit, lo, n):
    """Append the set flags of words first..last-1 at emit[lo + n:]; returns the new count."""
    for w in range(first, last):
        if words[w] != 0:
            for j in range(8 * w, 8 * w + 8):
                if flags[j]:
                    emit[lo + n] = j
                    n += 1
    return n


@njit(cache=True, inline="always")
def _deliver_block(tb, blocks, emit, n_spikes, u, u2, ptr, indices, weights, uniform, channel):
    """Add the weights of the listed spikes (every block's, in block order) that land in block
    tb; returns the synaptic operations."""
    done = 0
    for p in range(ptr.shape[0]):
        acc = u if channel[p] == 0 else u2
        w = uniform[p]
        scalar = not np.isnan(w)
        for sb in range(blocks.size - 1):
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
    return done


@njit(cache=True, parallel=True)
def run_blocks(steps, blocks, u, u2, v, refr, bias, consts, refractory, flags, emit, n_spikes,
               ops, ptr, indices, weights, uniform, channel, spikes, synops):  # fmt: skip
    """`steps` steps of the direct LIF population on its blocks. Projections p (all from the
    population to itself): ptr[p] (n_blocks, n + 1) offsets into indices / weights (per
    synapse; uniform[p] is the scalar used instead when not NaN), channel[p] 0 (u) or 1 (u2).
    flags: n uint8 padded to a multiple of 8; emit (2, n) and n_spikes (2, n_blocks): the two
    alternating event lists; ops (n_blocks,) scratch. spikes[t], synops[t]: the step's spikes
    and the synaptic operations of delivering them."""
    nb = blocks.size - 1
    for t in range(steps + 1):
        cur, prev = t % 2, (t + 1) % 2
        for b in prange(nb):
            ops[b] = 0
            if t > 0:
                ops[b] = _deliver_block(b, blocks, emit[prev], n_spikes[prev], u, u2, ptr,
                                        indices, weights, uniform, channel)  # fmt: skip
            if t < steps:
                lo, hi = blocks[b], blocks[b + 1]
                n_set = sweep_direct(
                    u[lo:hi],
                    u2[lo:hi],
                    v[lo:hi],
                    refr[lo:hi],
                    part_of(bias, lo, hi),
                    consts,
                    refractory,
                    flags[lo:hi],
                )
                n_spikes[cur, b] = _list_block(lo, hi, flags, emit[cur], n_set) if n_set else 0
        if t > 0:
            synops[t - 1] = ops.sum()
        if t < steps:
            spikes[t] = n_spikes[cur].sum()

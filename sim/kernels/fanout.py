"""Numba kernels that deliver scalar events along a projection's synapses (fan-out).

Two paths, chosen per projection by the engine:
- `fan_out_uniform`: every synapse has the same delay (the common case, e.g. delay 1), so the
  delivery slot is computed once per call and the kernel writes into that slot's 1-D accumulator.
  A full row (a source connected to every target) is a contiguous multiply-add that the compiler
  vectorises; before the first full row of a call every target of the slot is marked touched once,
  so the row itself needs no per-synapse touched-flag checks (nor do the rows after it).
- `fan_out`: heterogeneous delays; the slot is read per synapse from the compact delay array.

Both add `weight * payload` to each target in the same order (events in emission order, synapses
in index order) and list the touched targets in the same order, so they give bit-identical
results; fastmath stays off (no reassociation, no fused multiply-add).
"""

from __future__ import annotations

from atomspark.sim.kernels.common import mark_touched
from numba import njit


@njit(cache=True)
def has_repeated_targets(indptr, indices) -> bool:
    """True when some source lists a target twice (indices sorted within each row). Full-row
    fast paths assume a row of length n_targets covers every target, i.e. no repeats."""
    for s in range(indptr.size - 1):
        for k in range(indptr[s] + 1, indptr[s + 1]):
            if indices[k] == indices[k - 1]:
                return True
    return False


@njit(cache=True)
def _mark_all(flag, tidx, tcount, slot):
    """List every not-yet-touched target of a slot, in ascending order (what a full row's
    per-synapse checks would have listed)."""
    n = tcount[slot]
    for t in range(flag.size):
        if flag[t] == 0:
            flag[t] = 1
            tidx[n] = t
            n += 1
    tcount[slot] = n


@njit(cache=True)
def _axpy(acc, w, val):
    """acc += w * val elementwise (contiguous; vectorised by LLVM without reassociation)."""
    for i in range(acc.size):
        acc[i] += w[i] * val


@njit(cache=True)
def fan_out_uniform(
    emit_idx, emit_val, n_emit, indptr, indices, data, full_rows, acc, flag, tidx, tcount, slot
):
    """Deliver events along a projection whose synapses all share one delay.

    acc, flag, tidx: the delivery slot's rows of the target's ring (this channel), touched flags
    and touched list; tcount[slot] is that list's length. full_rows: the projection repeats no
    target within a row, so a row with one synapse per target is a contiguous multiply-add.
    Returns the number of synaptic operations."""
    n_tgt = acc.size
    all_marked = False
    synops = 0
    for e in range(n_emit):
        s = emit_idx[e]
        val = emit_val[e]
        start = indptr[s]
        stop = indptr[s + 1]
        synops += stop - start
        if full_rows and stop - start == n_tgt:
            if not all_marked:
                _mark_all(flag, tidx, tcount, slot)
                all_marked = True
            _axpy(acc, data[start:stop], val)
        elif all_marked:
            for k in range(start, stop):
                acc[indices[k]] += data[k] * val
        else:
            n = tcount[slot]
            for k in range(start, stop):
                t = indices[k]
                acc[t] += data[k] * val
                if flag[t] == 0:
                    flag[t] = 1
                    tidx[n] = t
                    n += 1
            tcount[slot] = n
    return synops


@njit(cache=True)
def flush_shifted(stage, sflag, stidx, stcount, shift, acc, flag, tidx, tcount, slot):
    """Add each staged per-target sum, arithmetically shifted right (floor, as Lava's
    np.right_shift), to a delivery slot; clear the stage. Used for weight_exp < 0."""
    n = tcount[slot]
    for j in range(stcount[0]):
        t = stidx[j]
        acc[t] += stage[t] >> shift
        stage[t] = 0
        sflag[t] = 0
        if flag[t] == 0:
            flag[t] = 1
            tidx[n] = t
            n += 1
    tcount[slot] = n
    stcount[0] = 0


@njit(cache=True)
def fan_out(
    emit_idx, emit_val, n_emit, indptr, indices, data, delay, step, ring_ch, tflag, tidx, tcount
):
    """Deliver each emitted (unit, value) event along its synapses into the slot of its own
    delay (delay: per-synapse steps, any unsigned width); returns the number of synaptic ops."""
    n_slots = ring_ch.shape[0]
    synops = 0
    for e in range(n_emit):
        s = emit_idx[e]
        val = emit_val[e]
        for k in range(indptr[s], indptr[s + 1]):
            slot = (step + delay[k]) % n_slots
            t = indices[k]
            ring_ch[slot, t] += data[k] * val
            mark_touched(tflag, tidx, tcount, slot, t)
        synops += indptr[s + 1] - indptr[s]
    return synops

"""The lean float LIF sweep: every unit, every step, none of the event bookkeeping.

Used (engine.lean_populations) for a float LIF population whose every unit has a nonzero bias
(e.g. CUBA): then every unit is updated and pending at every step anyway, so the touched flags,
touched lists and pending list of the general kernels (sim/kernels/lif.py) carry no information.
This sweep reads each channel's ring slot and zeroes it, updates u, u2, v and the refractory
counter with the same arithmetic in the same order as the general dense sweep, and writes one
uint8 spike flag per unit; spikes are then listed by scanning the flags eight at a time (one
64-bit word per eight units). A uniform bias is one scalar instead of an n-long array.
Projections into a lean population skip the touched marking (`fan_out_plain`).

Results are bit-identical to the general path: same states, spikes in ascending unit order,
and the same counters (every unit is an update and stays pending, since its bias is nonzero).

The direct variant (`lif_direct_step`, `fan_out_plain` into u or u2, `add_input_direct`) is for
a lean population whose every input arrives one step later (delay-1 projections, external
input): a spike adds its weight divided by the channel's one-step decay straight into u (or u2),
so the next sweep's u * (1 - du) carries it, and the sweep reads and zeroes no ring slot (two
fewer streams per unit and step). (u + w / k) * k equals u * k + w only up to rounding, and
several inputs in one step are summed in another order, so this variant is not bit-identical to
the general path: its spikes are tested against it statistically (tests/test_sim_lif_lean.py).
Between steps u and u2 then include the next step's pending input (divided by the decay).
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload

SCAN_WORDS = 16  # 64-bit words (128 units) OR-ed per test; a compile-time constant, so that
# LLVM unrolls and vectorises the test (a runtime count made the scan ~2.4x slower)


@njit(cache=True)
def list_flagged(flags, emit_idx, emit_val, n_set):
    """List the n_set units whose uint8 flag is set, in ascending order, as binary events; flags
    is padded to a multiple of 8 (padding stays 0) and scanned SCAN_WORDS 64-bit words at a
    time, stopping after the last set flag (a step has a few spikes among thousands of units)."""
    words = flags.view(np.uint64)
    n_emit = 0
    full = words.size // SCAN_WORDS * SCAN_WORDS
    for first in range(0, full, SCAN_WORDS):
        any_set = np.uint64(0)
        for w in range(first, first + SCAN_WORDS):
            any_set |= words[w]
        if any_set != 0:
            n_emit = _list_words(
                flags, words, first, first + SCAN_WORDS, emit_idx, emit_val, n_emit
            )
            if n_emit == n_set:
                return n_emit
    return _list_words(flags, words, full, words.size, emit_idx, emit_val, n_emit)


@njit(cache=True)
def _list_words(flags, words, first, last, emit_idx, emit_val, n_emit):
    """Append the set flags of words first..last-1 to the event list; returns its new length."""
    for w in range(first, last):
        if words[w] != 0:
            for j in range(8 * w, 8 * w + 8):
                if flags[j]:
                    emit_idx[n_emit] = j
                    emit_val[n_emit] = 1
                    n_emit += 1
    return n_emit


def value_at(values, i):
    """Entry i of a per-unit (or per-synapse) array, or the value itself when it is a uniform
    scalar (Numba compiles one specialisation for each, so a uniform value costs no loads)."""
    return values[i] if np.ndim(values) else values


@overload(value_at, jit_options={"cache": True})
def _value_at(values, i):
    if isinstance(values, types.Array):
        return lambda values, i: values[i]
    return lambda values, i: values


def part_of(values, lo, hi):
    """values[lo:hi] of a per-unit array, or the uniform scalar itself (as value_at)."""
    return values[lo:hi] if np.ndim(values) else values


@overload(part_of, jit_options={"cache": True})
def _part_of(values, lo, hi):
    if isinstance(values, types.Array):
        return lambda values, lo, hi: values[lo:hi]
    return lambda values, lo, hi: values


@njit(cache=True)
def lif_lean_step(slot, ring, u, u2, v, refr, bias, consts, refractory, flags, emit_idx, emit_val):
    """Update every unit (consts = [1-du, 1-du2, 1-dv, vth, v_reset] in the state dtype; bias:
    an n-long array, or one scalar when it is uniform); returns the number of events."""
    if ring.shape[0] == 2:
        n_spike = _sweep(ring[0, slot], ring[1, slot], u, u2, v, refr, bias, consts, refractory,
                         flags)  # fmt: skip
    else:
        n_spike = _sweep(ring[0, slot], None, u, u2, v, refr, bias, consts, refractory, flags)
    if n_spike == 0:
        return 0
    return list_flagged(flags, emit_idx, emit_val, n_spike)


@njit(cache=True)
def _sweep(r0, r1, u, u2, v, refr, bias, consts, refractory, flags):
    """The branch-free loop (specialised by Numba for one or two channels and for an array or
    scalar bias, so that LLVM vectorises it); same arithmetic as sim/kernels/lif.py's dense sweep."""
    ku, ku2, kv, vth, v_reset = consts[0], consts[1], consts[2], consts[3], consts[4]
    n_spike = 0
    for i in range(u.size):
        uu = u[i] * ku + r0[i]
        r0[i] = 0
        uu2 = u2[i]
        if r1 is not None:
            uu2 = uu2 * ku2 + r1[i]
            r1[i] = 0
        r = refr[i]
        held = r > 0
        vn = v[i] * kv + uu + uu2 + value_at(bias, i)
        fire = (not held) & (vn > vth)
        u[i] = uu
        u2[i] = uu2
        v[i] = v_reset if held | fire else vn
        refr[i] = r - 1 if held else (refractory if fire else r)
        flags[i] = fire
        n_spike += fire
    return n_spike


@njit(cache=True)
def lif_direct_step(u, u2, v, refr, bias, consts, refractory, flags, emit_idx, emit_val):
    """The direct variant of lif_lean_step: the input is already in u and u2; returns the
    number of events."""
    n_spike = sweep_direct(u, u2, v, refr, bias, consts, refractory, flags)
    if n_spike == 0:
        return 0
    return list_flagged(flags, emit_idx, emit_val, n_spike)


@njit(cache=True)
def sweep_direct(u, u2, v, refr, bias, consts, refractory, flags):
    """_sweep without ring slots: u <- u (1-du), u2 <- u2 (1-du2), then the same membrane,
    threshold and refractory arithmetic. With one channel 1-du2 is 1 (LIFParams), and u2 * 1
    is u2 exactly: u2 holds still, as in the general path."""
    ku, ku2, kv, vth, v_reset = consts[0], consts[1], consts[2], consts[3], consts[4]
    n_spike = 0
    for i in range(u.size):  # every load before any store: lets LLVM vectorise (no aliasing)
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
        flags[i] = fire
        n_spike += fire
    return n_spike


@njit(cache=True)
def add_input_direct(values, u, decay):
    """Add an external input vector's nonzero entries straight into u, divided by the one-step
    decay that the next sweep applies (the direct variant's channel 0)."""
    for i in range(values.size):
        if values[i] != 0:
            u[i] += values[i] / decay


@njit(cache=True)
def fan_out_plain(emit_idx, emit_val, n_emit, indptr, indices, data, acc):
    """Deliver events along a uniform-delay projection into its delivery slot's accumulator
    (acc) without touched marking (the target is lean); same order and sums as fan_out_uniform.
    data: per-synapse weights, or one scalar when all are equal (e.g. CUBA: no weight loads).
    Returns the number of synaptic operations."""
    synops = 0
    for e in range(n_emit):
        s = emit_idx[e]
        val = emit_val[e]
        start = indptr[s]
        stop = indptr[s + 1]
        synops += stop - start
        for k in range(start, stop):
            acc[indices[k]] += value_at(data, k) * val
    return synops


@njit(cache=True)
def add_input_plain(slot, values, ring_ch):
    """Add an external input vector's nonzero entries to a ring slot (no touched marking)."""
    for i in range(values.size):
        if values[i] != 0:
            ring_ch[slot, i] += values[i]

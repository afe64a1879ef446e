"""Numba kernels of the LIF update (float and Loihi fixed point), each with two paths.

- Sparse: visit only the units touched in this slot or pending (nonzero state), through the
  touched and pending lists (kernels._collect). Cheap when few units are busy.
- Dense: one contiguous sweep over all units in index order, no list bookkeeping. Chosen when
  touched + pending >= dense_min (a count the engine derives from Engine.dense_fraction), e.g. in
  CUBA where every neuron has a bias and is pending every step.

Both paths update the same units with the same arithmetic and emit spikes in ascending unit
order (the sparse path sorts its few spikes), so the fan-out accumulates in the same order and
the two paths give bit-identical states, spikes and counters; the choice only changes speed.
A unit is pending exactly when its state is nonzero. The dense sweep only counts pending units
(pcount[0]) and marks the list stale (pcount[1] = 1); a later sparse step rebuilds it first.
"""

from __future__ import annotations

from atomspark.sim import fixed_point as fx
from atomspark.sim.kernels.common import _collect, wrap_signed
from numba import njit


@njit(cache=True)
def _rebuild_pending(pend, pcount, nonzero):
    """Refill a stale pending list (after a dense sweep) from the units' state."""
    n = 0
    for i in range(nonzero.size):
        if nonzero[i]:
            pend[n] = i
            n += 1
    pcount[0] = n
    pcount[1] = 0


@njit(cache=True)
def _emit_flagged(spike, n_spike, emit_idx, emit_val):
    """List flagged units in ascending order as binary events."""
    n_emit = 0
    if n_spike == 0:
        return 0
    for i in range(spike.size):
        if spike[i]:
            emit_idx[n_emit] = i
            emit_val[n_emit] = 1
            n_emit += 1
    return n_emit


@njit(cache=True)
def _float_nonzero(u, u2, v, refr, bias):
    return (u != 0) | (u2 != 0) | (v != 0) | (refr > 0) | (bias != 0)


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
    dense_min,
    emit_idx,
    emit_val,
):
    """Float LIF update of the units touched or pending. consts = [1-du, 1-du2, 1-dv, vth,
    v_reset] in the state dtype. Returns (updates, events); events in ascending unit order."""
    if tcount[slot] + pcount[0] >= dense_min:
        return _lif_float_dense(
            slot, ring, tflag, tcount, pcount, work, u, u2, v, refr, bias, consts, refractory,
            emit_idx, emit_val,
        )  # fmt: skip
    if pcount[1]:
        _rebuild_pending(pend, pcount, _float_nonzero(u, u2, v, refr, bias))
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
    emit_idx[:n_emit].sort()
    tcount[slot] = 0
    pcount[0] = n_pend
    return n, n_emit


@njit(cache=True)
def _lif_float_dense(
    slot, ring, tflag, tcount, pcount, spike, u, u2, v, refr, bias, consts, refractory, emit_idx,
    emit_val,
):  # fmt: skip
    """All units in index order, branch-free so that LLVM can vectorise. A unit that is neither
    touched nor pending has zero state and zero input: the arithmetic leaves it at zero, and
    `active` keeps it from spiking (vth < 0) or being counted as an update."""
    ku, ku2, kv, vth, v_reset = consts[0], consts[1], consts[2], consts[3], consts[4]
    flag = tflag[slot]
    r0 = ring[0, slot]
    r1 = ring[ring.shape[0] - 1, slot]
    two = ring.shape[0] == 2
    n_upd = 0
    n_spike = 0
    n_pend = 0
    for i in range(u.size):
        r = refr[i]
        active = (flag[i] != 0) | (u[i] != 0) | (u2[i] != 0) | (v[i] != 0) | (r > 0)
        active |= bias[i] != 0
        flag[i] = 0
        uu = u[i] * ku + r0[i]
        r0[i] = 0
        uu2 = u2[i]
        if two:
            uu2 = uu2 * ku2 + r1[i]
            r1[i] = 0
        held = r > 0
        vn = v[i] * kv + uu + uu2 + bias[i]
        fire = active & (not held) & (vn > vth)
        vv = v_reset if held | fire else vn
        rr = r - 1 if held else (refractory if fire else r)
        u[i] = uu
        u2[i] = uu2
        v[i] = vv
        refr[i] = rr
        spike[i] = fire
        n_upd += active
        n_spike += fire
        n_pend += (uu != 0) | (uu2 != 0) | (vv != 0) | (rr > 0) | (bias[i] != 0)
    tcount[slot] = 0
    pcount[0] = n_pend
    pcount[1] = 1
    return n_upd, _emit_flagged(spike, n_spike, emit_idx, emit_val)


@njit(cache=True)
def _decay(x, d):
    p = x * (fx.DECAY_UNITY - d)
    if p >= 0:
        return p >> fx.DECAY_SHIFT
    return -((-p) >> fx.DECAY_SHIFT)


@njit(cache=True)
def _fixed_unit(u, v, a_in, bias, du, dv, vth_scaled):
    """One bit-exact PyLifModelBitAcc update: returns (u, v, spike, wraps, clips)."""
    a32 = wrap_signed(a_in, 32)
    shifted = a32 << fx.ACT_SHIFT
    a_sh = wrap_signed(shifted, 32)
    raw = _decay(u, du + fx.CURRENT_DECAY_OFFSET) + a_sh
    cur = wrap_signed(raw, 32)
    wraps = (a32 != a_in) + (a_sh != shifted) + (cur != raw)
    if cur > fx.STATE_MAX:
        cur -= 2 * fx.STATE_MAX
        wraps += 1
    elif cur <= -fx.STATE_MAX:
        cur += 2 * fx.STATE_MAX
        wraps += 1
    vv = _decay(v, dv + fx.VOLTAGE_DECAY_OFFSET) + cur + bias
    clips = 0
    if vv > fx.V_LIMIT:
        vv = fx.V_LIMIT
        clips = 1
    elif vv < -fx.V_LIMIT:
        vv = -fx.V_LIMIT
        clips = 1
    spike = vv > vth_scaled
    if spike:
        vv = 0
    return cur, vv, spike, wraps, clips


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
    dense_min,
    emit_idx,
    emit_val,
):
    """Bit-exact PyLifModelBitAcc update (int64 holding Lava's int32/24-bit values) of the units
    touched or pending. Returns (updates, events, wraps, clips); events in ascending unit order."""
    if tcount[slot] + pcount[0] >= dense_min:
        return _lif_fixed_dense(
            slot, ring, tflag, tcount, pcount, u, v, bias, du, dv, vth_scaled, emit_idx, emit_val
        )
    if pcount[1]:
        _rebuild_pending(pend, pcount, (u != 0) | (v != 0) | (bias != 0))
    n = _collect(slot, tflag, tidx, tcount, pend, pcount, work)
    n_emit = 0
    n_pend = 0
    wraps = 0
    clips = 0
    for j in range(n):
        i = work[j]
        a_in = ring[0, slot, i]
        ring[0, slot, i] = 0
        tflag[slot, i] = 0
        u[i], v[i], spike, w, c = _fixed_unit(u[i], v[i], a_in, bias[i], du, dv, vth_scaled)
        wraps += w
        clips += c
        if spike:
            emit_idx[n_emit] = i
            emit_val[n_emit] = 1
            n_emit += 1
        if u[i] != 0 or v[i] != 0 or bias[i] != 0:
            pend[n_pend] = i
            n_pend += 1
    emit_idx[:n_emit].sort()
    tcount[slot] = 0
    pcount[0] = n_pend
    return n, n_emit, wraps, clips


@njit(cache=True)
def _lif_fixed_dense(
    slot, ring, tflag, tcount, pcount, u, v, bias, du, dv, vth_scaled, emit_idx, emit_val
):
    """All touched or pending units in index order (idle units are skipped, not counted)."""
    flag = tflag[slot]
    r0 = ring[0, slot]
    n_upd = 0
    n_emit = 0
    n_pend = 0
    wraps = 0
    clips = 0
    for i in range(u.size):
        if flag[i] == 0 and u[i] == 0 and v[i] == 0 and bias[i] == 0:
            continue
        flag[i] = 0
        n_upd += 1
        u[i], v[i], spike, w, c = _fixed_unit(u[i], v[i], r0[i], bias[i], du, dv, vth_scaled)
        r0[i] = 0
        wraps += w
        clips += c
        if spike:
            emit_idx[n_emit] = i
            emit_val[n_emit] = 1
            n_emit += 1
        n_pend += (u[i] != 0) | (v[i] != 0) | (bias[i] != 0)
    tcount[slot] = 0
    pcount[0] = n_pend
    pcount[1] = 1
    return n_upd, n_emit, wraps, clips

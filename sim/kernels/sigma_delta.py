"""Numba kernels of the sigma-delta unit (sim/units/sigma_delta.py): Lava's Sigma, Delta and
SigmaDelta steps, applied only to the units that received input or are still pending.

Both kernels read their arguments by name from a `SigmaDeltaArgs` named tuple. The fixed-point
kernel wraps every sum to 32 bits, as Lava's int32 ProcessModel variables do.
"""

from __future__ import annotations

from atomspark.sim.fixed_point import ACCUMULATOR_BITS
from atomspark.sim.kernels.common import _collect, wrap_signed
from numba import njit

KIND_SIGMA, KIND_DELTA, KIND_SIGMA_DELTA = 0, 1, 2


@njit(cache=True, inline="always")
def _wrap32(x):
    return wrap_signed(x, ACCUMULATOR_BITS)


@njit(cache=True, inline="always")
def _stays_pending(kind, cum, sigma, act, residue):
    """A unit that gets no input next step must still be updated: a Sigma sends its nonzero
    sigma every step, a Delta's input falls back to 0 (its act changes), and with cumulative
    error a nonzero residue keeps adding to the error."""
    if kind == KIND_SIGMA:
        return sigma != 0
    return (kind == KIND_DELTA and act != 0) or (cum and residue != 0)


@njit(cache=True)
def sigma_delta_fixed_kernel(slot, ring, tflag, tidx, tcount, pend, pcount, work, args,
                             emit_idx, emit_val):  # fmt: skip
    """Integer step of the listed units. Returns (updates, events, wraps)."""
    n = _collect(slot, tflag, tidx, tcount, pend, pcount, work)
    sigma, act, residue, error, bias = args.sigma, args.act, args.residue, args.error, args.bias
    vth, kind, relu, cum = args.vth, args.kind, args.relu, args.cum_error
    n_emit, n_pend, wraps = 0, 0, 0
    for j in range(n):
        i = work[j]
        raw = ring[0, slot, i]
        ring[0, slot, i] = 0
        tflag[slot, i] = 0
        a = _wrap32(raw)  # the int32 input port
        wraps += a != raw
        if kind == KIND_DELTA:
            shifted = a << args.in_shift
            x = _wrap32(shifted)
            wraps += x != shifted
        else:
            s_raw = a + sigma[i]
            s = _wrap32(s_raw)
            wraps += s != s_raw
            sigma[i] = s
            x = s
            if kind == KIND_SIGMA_DELTA:
                x = _wrap32(s + bias[i])
                if relu and x < 0:
                    x = 0
        out = x
        if kind != KIND_SIGMA:
            delta = _wrap32(x - act[i] + residue[i])
            send = delta
            if cum:
                e = _wrap32(error[i] + delta)
                if _wrap32(abs(e)) < vth:
                    send = 0
                error[i] = e if send == 0 else 0
            elif _wrap32(abs(delta)) < vth:
                send = 0
            residue[i] = _wrap32(delta - send)
            act[i] = x
            out = send >> args.out_shift
        if out != 0:
            emit_idx[n_emit] = i
            emit_val[n_emit] = out
            n_emit += 1
        if _stays_pending(kind, cum, sigma[i], act[i], residue[i]):
            pend[n_pend] = i
            n_pend += 1
    tcount[slot] = 0
    pcount[0] = n_pend
    return n, n_emit, wraps


@njit(cache=True)
def sigma_delta_float_kernel(slot, ring, tflag, tidx, tcount, pend, pcount, work, args,
                             emit_idx, emit_val):  # fmt: skip
    """Float step of the listed units (no shifts: Lava's float models ignore the exponents
    except in vth and bias). Returns (updates, events)."""
    n = _collect(slot, tflag, tidx, tcount, pend, pcount, work)
    sigma, act, residue, error, bias = args.sigma, args.act, args.residue, args.error, args.bias
    vth, kind, relu, cum = args.vth, args.kind, args.relu, args.cum_error
    n_emit, n_pend = 0, 0
    for j in range(n):
        i = work[j]
        x = ring[0, slot, i]
        ring[0, slot, i] = 0
        tflag[slot, i] = 0
        if kind != KIND_DELTA:
            x = x + sigma[i]
            sigma[i] = x
            if kind == KIND_SIGMA_DELTA:
                x = x + bias[i]
                if relu and x < 0:
                    x = 0.0
        out = x
        if kind != KIND_SIGMA:
            delta = x - act[i] + residue[i]
            send = delta
            if cum:
                e = error[i] + delta
                if abs(e) < vth:
                    send = 0.0
                error[i] = e if send == 0 else 0.0
            elif abs(delta) < vth:
                send = 0.0
            residue[i] = delta - send
            act[i] = x
            out = send
        if out != 0:
            emit_idx[n_emit] = i
            emit_val[n_emit] = out
            n_emit += 1
        if _stays_pending(kind, cum, sigma[i], act[i], residue[i]):
            pend[n_pend] = i
            n_pend += 1
    tcount[slot] = 0
    pcount[0] = n_pend
    return n, n_emit

"""The RSGN node in Loihi fixed point, its Numba kernels: integer state and arithmetic a Loihi 2
programmable neuron can run (the unit model: sim/units/rsgn_fixed.py).

The integer node update is shared bit for bit by the engine's kernel and by the Lava
ProcessModel in mapping/lava/procs/rsgn_fixed_nodes.py (through the unit's step_nodes).

Number formats (all int64 holding Loihi words; |state| saturates at 2**23 - 1, a 24-bit word):
  alpha, a, thresholds, cutoff, signal gain, LayerNorm gain     Q.12  (4096 = 1.0)
  h, h_new, payloads x = alpha h, b_h, LayerNorm bias           Q.10  (1024 = 1.0)
  received message m_raw = sum_i W_mant[i, j] x_i (graded Sparse, weight_exp 0): int32 port,
  wraps; node j shifts it right by its m_shift_j to Q.10 (W[:, j] = W_mant[:, j] 2**-m_shift_j: one
  exponent for the whole W, or one per target node, which a programmable neuron applies alike).

Per node j and step (the float unit's equations, sim/units/rsgn.py, in integers; ">>>" is a
right shift rounded to nearest, (v + 2**(k-1)) >> k, and "//+" a division rounded to nearest:
a bare shift floors, and its -0.5 LSB bias per operation added up over the steps and the 256
nodes of a published model to a systematic error in h that flipped decisions):
  m      = wrap32(m_raw) >>> m_shift_j                                (per component)
  h_new  = sat24(((m @ Wh_mant) >>> wh_shift) + b_h)                   8-bit W_h mantissas
  norm   = isqrt(sum h_new^2)                                          bit-serial square root
  s      = alpha + ((gain norm) >> 10) - theta;  u = (s invT_mant) >> invT_shift   (s / T)
  a      = activation(u): the soft threshold sigmoid(u) in Q.40 (PRE_FRAC), from a table
           of 24-bit values over u in [-8, 8) and, below -8, exp(u) by a 64-entry table of
           2**(k/64) and a shift (so a deeply suppressed node's a is ~0, as in float)
  event rule (sparse): a = 0 unless (alpha > cutoff or an event arrived) and a > cutoff
  LayerNorm: z = h_new + h;  mu = (sum z * rd) >> 24 with rd = round(2**24 / d) (a constant:
      no division);  var = ((sum (z - mu)^2 >> 12) * rd >> 12) + eps;  std = isqrt(var);
      inv = 2**30 // std (ONE shift-subtract reciprocal per node, an exact bit-serial loop);
      y = ((((z - mu) inv) >>> 20) ln_gain >>> 12) + ln_bias;  h = sat24((y (a >>> 28)) >>> 12)
  divisive normalisation (pool P_j, node-local reduction, a in Q.40):
      alpha = min((a |P_j| 4096) //+ (sum_{i in P_j} a_i + eps), 4096)  one reciprocal per node,
      eps = round(1e-6 2**40), the released epsilon
  event rule: alpha <= cutoff -> alpha = 0, h = 0;  send x = (h alpha) >>> 12 when alpha > cutoff

Choices (documented trade-offs): the sigmoid is a 1024-entry table of 24-bit values over s/T in
[-8, 8) in steps of 1/64 (relative error <= 1/128 from the step), exp(s/T) below it (relative
error <= exp(-8) + 1/128) and 1 above. The pre-pool activation is kept in Q.40 because divisive
normalisation is scale-free: with the released epsilon 1e-6, a pool of deeply suppressed nodes
(a ~ 1e-20) stays silent, while a Q.12 activation floored at one LSB and an epsilon of one LSB
normalised every such node to alpha ~ 1 (all nodes fired). The two divisions
(LayerNorm's 1/std and the pool's 1/sum) are exact integer divisions that a programmable neuron
computes by a shift-subtract loop, one per node and step, and everything per component is
multiply, add and shift; square roots are the bit-serial integer square root; the released
inhibition epsilon 1e-6 is kept (Q.40). Wraps (the 32-bit message port) and clips
(24-bit saturation of h_new and h) are counted like the other fixed-point units.
"""

from __future__ import annotations

import numpy as np
from atomspark.sim.kernels.common import _collect
from atomspark.sim.kernels.common import wrap_signed as _wrap
from numba import njit

ALPHA_FRAC = 12  # activations in Q.12
H_FRAC = 10  # states and payloads in Q.10
PRE_FRAC = 40  # the pre-pool activation a (soft threshold) in Q.40
STATE_LIMIT = 2**23 - 1  # 24-bit signed word, saturating
LUT_SIZE, LUT_SHIFT = 1024, 6  # sigmoid table: u (Q.12) >> 6 = steps of 1/64 over [-8, 8)
LUT_BITS = 24  # sigmoid table entries in Q.24
EXP2_SIZE, EXP2_BITS = 64, 23  # 2**((k + 0.5) / 64) in Q.23, k in [0, 64)
LOG2E_Q16 = 94548  # round(log2(e) 2**16)
INHIBITION_EPS = 1099512  # round(1e-6 2**40): the released code's pool epsilon, in Q.40
MAX_M_SHIFT = 31  # a right shift of the 32-bit message by more leaves only its sign
DIV_BITS = 50  # the pool division keeps numerator and denominator below 2**50 (no overflow)
PRE_SHIFT = PRE_FRAC - ALPHA_FRAC  # Q.40 -> Q.12
RD_SHIFT = 24  # 1/d as round(2**24 / d)
INV_STD_BITS = 30  # LayerNorm: 2**30 // std(Q.10) = 1/std in Q.20
PAYLOAD_BITS = 24


def sigmoid_lut() -> np.ndarray:
    """The activation tables, one array: [0, 1024) round(2**24 sigmoid((i - 512 + 0.5) / 64));
    [1024, 1088) round(2**23 2**((k + 0.5) / 64)) for exp below the sigmoid's range."""
    centre = (np.arange(LUT_SIZE) - LUT_SIZE // 2 + 0.5) / 2**LUT_SHIFT
    sig = np.round(2.0**LUT_BITS / (1.0 + np.exp(-centre)))
    exp2 = np.round(2.0**EXP2_BITS * 2.0 ** ((np.arange(EXP2_SIZE) + 0.5) / EXP2_SIZE))
    return np.concatenate([sig, exp2]).astype(np.int64)


SIGMOID_LUT = sigmoid_lut()


@njit(cache=True)
def activation(u, lut):
    """The soft threshold sigmoid(u) in Q.40 for u = s/T in Q.12: the 24-bit table over [-8, 8)
    (saturating above), exp(u) = 2**(u log2 e) below it (table of 2**(k/64), then a shift)."""
    idx = (u >> LUT_SHIFT) + LUT_SIZE // 2
    if idx >= 0:
        return lut[min(idx, LUT_SIZE - 1)] << (PRE_FRAC - LUT_BITS)
    v = (u * LOG2E_Q16) >> 16  # u log2(e), Q.12
    whole = v >> ALPHA_FRAC  # floor, <= -12 here
    frac = (v & ((1 << ALPHA_FRAC) - 1)) >> (ALPHA_FRAC - 6)
    shift = whole + PRE_FRAC - EXP2_BITS
    if shift >= 0:
        return lut[LUT_SIZE + frac] << shift
    if shift <= -62:
        return np.int64(0)
    return lut[LUT_SIZE + frac] >> -shift


@njit(cache=True)
def isqrt(n):
    """floor(sqrt(n)) for 0 <= n < 2**62 by the bit-serial method (shifts, adds, compares)."""
    root = np.int64(0)
    bit = np.int64(1) << np.int64(60)
    while bit > n:
        bit >>= 2
    while bit != 0:
        if n >= root + bit:
            n -= root + bit
            root = (root >> 1) + bit
        else:
            root >>= 1
        bit >>= 2
    return root


@njit(cache=True)
def _rshift(v, k):
    """v / 2**k rounded to nearest (half up): add half an LSB, then the arithmetic shift. A bare
    shift floors, and its -0.5 LSB bias per step adds up over the steps and the nodes."""
    return (v + (np.int64(1) << (k - 1))) >> k if k > 0 else v


@njit(cache=True)
def _sat(v):
    """Saturate to the 24-bit word; returns (value, 1 if clipped)."""
    if v > STATE_LIMIT:
        return np.int64(STATE_LIMIT), 1
    if v < -STATE_LIMIT:
        return np.int64(-STATE_LIMIT), 1
    return v, 0


@njit(cache=True)
def node_update(m_row, received, alpha_j, h_row, theta, m_shift, wh, wh_shift, bh, lng, lnb, consts,
                lut, event_rule, hn):  # fmt: skip
    """One node's integer update (module docstring) up to the pool: writes h_row in place and
    returns (a in Q.40, wraps, clips). m_row: the raw summed message; hn: scratch (d,)."""
    gain, inv_t_mant, inv_t_shift, cutoff, ln_eps, rd = (
        consts[0], consts[1], consts[2], consts[3], consts[4], consts[5])  # fmt: skip
    d = h_row.size
    wraps = 0
    clips = 0
    for c in range(d):
        hn[c] = 0
    for r in range(d):
        raw = m_row[r]
        w = _wrap(raw, 32)
        if w != raw:
            wraps += 1
        m = _rshift(w, m_shift)
        if m != 0:
            for c in range(d):
                hn[c] += m * wh[r, c]
    sq = np.int64(0)
    for c in range(d):
        v, cl = _sat(_rshift(hn[c], wh_shift) + bh[c])
        clips += cl
        hn[c] = v
        sq += v * v
    norm = isqrt(sq)
    s = alpha_j + ((gain * norm) >> H_FRAC) - theta
    u = (s * inv_t_mant) >> inv_t_shift
    a = activation(u, lut)
    if event_rule and not ((alpha_j > cutoff or received) and a > (cutoff << PRE_SHIFT)):
        a = 0
    if a == 0:
        for c in range(d):
            h_row[c] = 0
        return 0, wraps, clips
    tot = np.int64(0)
    for c in range(d):
        hn[c] += h_row[c]
        tot += hn[c]
    mu = (tot * rd) >> RD_SHIFT
    var = np.int64(0)
    for c in range(d):
        dz = hn[c] - mu
        var += dz * dz
    var = (((var >> 12) * rd) >> (RD_SHIFT - 12)) + ln_eps
    std = isqrt(var)
    inv = (np.int64(1) << INV_STD_BITS) // std
    a12 = _rshift(a, PRE_SHIFT)
    for c in range(d):
        y = _rshift((hn[c] - mu) * inv, 20)
        y = _rshift(y * lng[c], ALPHA_FRAC) + lnb[c]
        v, cl = _sat(_rshift(y * a12, ALPHA_FRAC))
        clips += cl
        h_row[c] = v
    return a, wraps, clips


@njit(cache=True)
def pool_normalise(a, pool_sum, pool_size):
    """Divisive normalisation of one node, a and pool sum in Q.40, alpha in Q.12:
    min(a |P| 4096 // (pool sum + eps), 4096), both operands shifted below 2**50 first."""
    if a <= 0:
        return 0
    num = a * pool_size
    den = pool_sum + INHIBITION_EPS
    if num >= den:
        return 1 << ALPHA_FRAC
    while den >= np.int64(1) << DIV_BITS:
        num >>= 1
        den >>= 1
    return ((num << ALPHA_FRAC) + (den >> 1)) // den


@njit(cache=True)
def population_step(m, received, alpha, h, a_pre, pool_sum, thresholds, m_shift, wh, wh_shift, bh,
                    lng, lnb, consts, lut, event_rule, pool_indptr, pool_indices,
                    pool_size):  # fmt: skip
    """Every node's update in index order, for callers without ring buffers (Lava's
    ProcessModel): (wraps, clips, pool messages). In sparse mode an unvisited node has alpha 0,
    h 0 and no input, so updating it leaves it at 0: this equals the engine's kernel."""
    n, d = h.shape
    hn = np.empty(d, np.int64)
    wraps = 0
    clips = 0
    for j in range(n):
        a, w, c = node_update(m[j], received[j], alpha[j], h[j], thresholds[j], m_shift[j], wh,
                              wh_shift, bh, lng, lnb, consts, lut, event_rule, hn)  # fmt: skip
        a_pre[j] = a
        wraps += w
        clips += c
    sent = 0
    for j in range(n):
        if a_pre[j] > 0:
            for k in range(pool_indptr[j], pool_indptr[j + 1]):
                pool_sum[pool_indices[k]] += a_pre[j]
            sent += pool_indptr[j + 1] - pool_indptr[j]
    cutoff = consts[3]
    for j in range(n):
        v = pool_normalise(a_pre[j], pool_sum[j], pool_size[j])
        if event_rule and v <= cutoff:
            v = 0
            for c in range(d):
                h[j, c] = 0
        alpha[j] = v
    pool_sum[:] = 0
    return wraps, clips, sent


@njit(cache=True)
def emitted(alpha, h, cutoff, out):
    """Payloads x_j = (h_j alpha_j) >> 12 of sending nodes (alpha > cutoff), zero rows else."""
    for j in range(alpha.size):
        for c in range(h.shape[1]):
            out[j, c] = _rshift(h[j, c] * alpha[j], ALPHA_FRAC) if alpha[j] > cutoff else 0


@njit(cache=True)
def rsgn_fixed_step(slot, ring, tflag, tidx, tcount, pend, pcount, work, alpha, h, a_pre, pool_sum,
                    ignited, thresholds, m_shift, wh, wh_shift, bh, lng, lnb, consts, lut,
                    event_rule,
                    pool_indptr, pool_indices, pool_size, emit_idx, emit_val):  # fmt: skip
    """The engine's kernel: the nodes of this slot (sparse: touched or pending; published: all),
    same three passes as kernels_rsgn.rsgn_step. Returns (updates, events, active, wraps,
    clips); the first call only emits the ignition."""
    cutoff = consts[3]
    n_nodes, d = h.shape
    if ignited[0] == 0:
        ignited[0] = 1
        n_emit = 0
        for jj in range(pcount[0]):
            j = pend[jj]
            if alpha[j] > cutoff:
                emit_idx[n_emit] = j
                for c in range(d):
                    emit_val[n_emit, c] = _rshift(h[j, c] * alpha[j], ALPHA_FRAC)
                n_emit += 1
        return 0, n_emit, n_emit, 0, 0
    if event_rule:
        n = _collect(slot, tflag, tidx, tcount, pend, pcount, work)
    else:
        for i in range(n_nodes):
            work[i] = i
        n = n_nodes
    hn = np.empty(d, np.int64)
    wraps = 0
    clips = 0
    for jj in range(n):
        j = work[jj]
        received = tflag[slot, j] != 0
        tflag[slot, j] = 0
        a, w, c = node_update(ring[0, slot, j], received, alpha[j], h[j], thresholds[j],
                              m_shift[j], wh, wh_shift, bh, lng, lnb, consts, lut, event_rule,
                              hn)  # fmt: skip
        for r in range(d):
            ring[0, slot, j, r] = 0
        a_pre[j] = a
        wraps += w
        clips += c
    tcount[slot] = 0
    for jj in range(n):
        j = work[jj]
        if a_pre[j] > 0:
            for k in range(pool_indptr[j], pool_indptr[j + 1]):
                pool_sum[pool_indices[k]] += a_pre[j]
    n_emit = 0
    n_pend = 0
    for jj in range(n):
        j = work[jj]
        v = pool_normalise(a_pre[j], pool_sum[j], pool_size[j])
        if event_rule and v <= cutoff:
            v = 0
            for c in range(d):
                h[j, c] = 0
        alpha[j] = v
        if v > cutoff:
            emit_idx[n_emit] = j
            for c in range(d):
                emit_val[n_emit, c] = _rshift(h[j, c] * v, ALPHA_FRAC)
            n_emit += 1
        if v != 0:
            pend[n_pend] = j
            n_pend += 1
    for jj in range(n):
        j = work[jj]
        if a_pre[j] > 0:
            for k in range(pool_indptr[j], pool_indptr[j + 1]):
                pool_sum[pool_indices[k]] = 0
    pcount[0] = n_pend
    return n, n_emit, n_emit, wraps, clips

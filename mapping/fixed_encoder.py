"""A fixed-point reference of the RSGN encoder (networks/rsgn/dynamics.py spark_points, ignition
and initial_state): each token sequence's ignition alpha0 (Q.12) and initial state h0 (Q.10) in
integer arithmetic only, as chip programs would compute them. Not on the chip: the split bundle
takes its ignition from the host (docs/lava.md says why); this reference measures what an
integer encoder would keep of the float one's decisions (benchmarks/rsgn_split_readout.py).

Formats and steps, per sequence of L tokens (x in Q.10):
* the MLP's and the initial state's matrix products with weights in two 8-bit parts (a high
  part and the residual 2**7 finer, mapping/quantize.split_mantissas), biases in Q.10, sums
  rounded back to Q.10;
* GELU and tanh as tables over [-8, 8) indexed by the Q.10 input (16,385 entries each);
  outside, GELU is x or 0 and tanh +-1; tanh's output and the spark coordinates in Q.14;
* the projection into the ball: |s|^2 in Q.28 against the trigger's square; above it the spark
  is scaled by max_norm / |s| (an integer square root and one division per coordinate);
* published: the squared Euclidean distance of every spark to every node (positions in Q.14),
  Q.28, its minimum over the tokens; sparse: the geodesic distance's argument
  w = c |s - p|^2 / ((1 - c|s|^2)(1 - c|p|^2)) (a division per token and one per node, the
  minimum over tokens of |s - p|^2 / (1 - c|s|^2) taken in between), then
  d^2 = 4 asinh(sqrt w)^2 / c from its series in w to w^5 (relative error below 1e-7 where
  w <= 0.05; w is capped there, beyond which alpha < 2**-13 for sigma <= 0.1: the reference
  refuses a sparse model with a larger sigma);
* alpha = exp(-d^2 / (2 sigma^2)) as 2**-z, z = d^2 log2(e) / (2 sigma^2) in Q.12: the
  fraction's table of 4096 entries (Q.16) shifted by z's integer part; sparse: alpha at or below
  the cutoff is 0;
* h0 = (round(sum_t x_t / L) W_init + b_init) alpha >>> 12, Q.10.
Sums are exact in 64 bits; the chip's accumulator widths are not checked here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from atomspark.sim.core import AtomsparkError

X_FRAC, S_FRAC, ALPHA_FRAC = 10, 14, 12
TABLE_FRAC, TABLE_RANGE = 10, 8  # tables over [-8, 8) in steps of 2**-10 (Q.10)
EXP_FRAC = 12  # z = -log2(alpha) in Q.12
EXP_TABLE_BITS = 16
MAX_SPARSE_SIGMA = 0.1  # the geodesic series' range (module docstring)
MAX_W = round(0.05 * 2 ** (2 * S_FRAC))  # w's series range, Q.28


def _shift(v: np.ndarray, k: int) -> np.ndarray:
    """Round-to-nearest right shift by k (k < 0: left shift)."""
    v = np.asarray(v, np.int64)
    if k <= 0:
        return v << -k
    return (v + (1 << (k - 1))) >> k


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a / b rounded to nearest (b > 0), in integers."""
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    q = (np.abs(a) + b // 2) // b
    return np.where(a < 0, -q, q)


def _isqrt(v: np.ndarray) -> np.ndarray:
    """floor(sqrt(v)) of non-negative int64 values."""
    v = np.asarray(v, np.int64)
    r = np.floor(np.sqrt(v.astype(np.float64))).astype(np.int64)
    r = np.where(r * r > v, r - 1, r)
    return np.where((r + 1) * (r + 1) <= v, r + 1, r)


@dataclass(frozen=True)
class Dense:
    """x W + b in Q.10 with W in two 8-bit parts (module docstring)."""

    hi: np.ndarray
    lo: np.ndarray
    shift: int  # the sum (hi 2**7 + lo) x is rounded right by this much to Q.10
    bias: np.ndarray

    @classmethod
    def of(cls, w: np.ndarray, b: np.ndarray) -> Dense:
        from atomspark.mapping.quantize import split_mantissas

        hi, lo = split_mantissas(np.asarray(w, np.float64), 7)
        bias = np.round(np.asarray(b, np.float64) * 2.0**X_FRAC).astype(np.int64)
        return cls(hi.mantissa, lo, 7 - hi.weight_exp, bias)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        acc = (x @ self.hi << 7) + x @ self.lo
        return _shift(acc, self.shift) + self.bias


def _table(fn, out_frac: int) -> np.ndarray:
    grid = np.arange(-TABLE_RANGE << TABLE_FRAC, (TABLE_RANGE << TABLE_FRAC) + 1) / 2.0**TABLE_FRAC
    return np.round(fn(grid) * 2.0**out_frac).astype(np.int64)


def _lookup(table: np.ndarray, x: np.ndarray, below: np.ndarray, above: np.ndarray) -> np.ndarray:
    """table at x (Q.10) rounded to the table's steps; `below` / `above` outside its range."""
    i = _shift(x, X_FRAC - TABLE_FRAC) + (TABLE_RANGE << TABLE_FRAC)
    inside = table[np.clip(i, 0, table.size - 1)]
    return np.where(i < 0, below, np.where(i >= table.size, above, inside))


@dataclass(frozen=True)
class FixedEncoder:
    """The encoder of one RSGN model in integers (module docstring)."""

    sparse: bool
    embed1: Dense
    embed2: Dense
    init: Dense
    gelu: np.ndarray
    tanh: np.ndarray
    scale: int  # spark_scale in Q.14
    trigger2: int  # the projection's trigger norm squared, Q.28 (in the ball's units)
    max_norm: int  # Q.14
    positions: np.ndarray  # (N, dim) Q.14
    curvature: int  # Q.14
    z_mult: int  # z (Q.12) = d^2 (Q.28) z_mult >>> z_shift
    z_shift: int
    exp2: np.ndarray  # 2**-(f / 4096) in Q.16, f in [0, 4096)
    cutoff: int  # Q.12; sparse only

    def encode(self, tokens: np.ndarray) -> dict[str, np.ndarray]:
        """One sequence (L, d_in) -> {"alpha": (N,) Q.12, "h": (N, d) Q.10} integers."""
        x = np.round(np.asarray(tokens, np.float64) * 2.0**X_FRAC).astype(np.int64)
        a1 = self.embed1(x)
        g = _lookup(self.gelu, a1, np.zeros_like(a1), a1)
        t = _lookup(self.tanh, self.embed2(g), np.full(1, -(1 << S_FRAC)), np.full(1, 1 << S_FRAC))
        s = _shift(t * self.scale, S_FRAC)
        n2 = (s * s).sum(axis=1)
        out = n2 >= self.trigger2
        norm = np.where(out, _isqrt(n2), 1)
        s = np.where(out[:, None], _div(s * self.max_norm, norm[:, None]), s)
        d2 = self._distances(s)  # (N,) Q.28
        z = _shift(d2 * self.z_mult, self.z_shift)
        k, f = z >> EXP_FRAC, z & ((1 << EXP_FRAC) - 1)
        sh = np.minimum(EXP_TABLE_BITS - ALPHA_FRAC + k, 62)  # >= 4: z >= 0
        alpha = np.where(sh < 62, (self.exp2[f] + (np.int64(1) << (sh - 1))) >> sh, 0)
        if self.sparse:
            alpha = np.where(alpha > self.cutoff, alpha, 0)
        mean = _div(x.sum(axis=0), np.int64(len(x)))
        h = _shift(self.init(mean)[None, :] * alpha[:, None], ALPHA_FRAC)
        return {"alpha": alpha.astype(np.int64), "h": h.astype(np.int64)}

    def _distances(self, s: np.ndarray) -> np.ndarray:
        """Per node the minimum over tokens of the squared distance (Q.28)."""
        diff = s[:, None, :] - self.positions[None, :, :]
        sq = (diff * diff).sum(axis=2)  # (L, N) Q.28
        if not self.sparse:
            return sq.min(axis=0)
        one = np.int64(1) << 2 * S_FRAC
        a = one - _shift((s * s).sum(axis=1) * self.curvature, S_FRAC)  # 1 - c|s|^2, Q.28
        p = self.positions
        b = one - _shift((p * p).sum(axis=1) * self.curvature, S_FRAC)
        inv_a = _div(np.full(a.shape, one * one), a)  # 1 / a, Q.28: one division per token
        v = _shift(sq * inv_a[:, None], 2 * S_FRAC).min(axis=0)  # |s - p|^2 / a, Q.28
        w = _shift(_div(v << 2 * S_FRAC, b) * self.curvature, S_FRAC)  # one per node, Q.28
        w = np.minimum(w, MAX_W)  # beyond it alpha rounds to 0 (module docstring)
        # asinh(sqrt w)^2 = w - w^2/3 + 8 w^3/45 - 4 w^4/35 + 128 w^5/1575 (Q.28)
        term, series = w, w.copy()
        for num, den in ((-1, 3), (-8 * 3, 45), (-4 * 45, 35 * 8), (-128 * 35, 1575 * 4)):
            term = _div(_shift(term * w, 2 * S_FRAC) * num, np.int64(den))
            series = series + term
        return _div(4 * series << S_FRAC, np.int64(self.curvature))


def fixed_encoder(params, config) -> FixedEncoder:
    """The FixedEncoder of an RSGN (params, config); refuses a sparse model whose sigma lies
    beyond the geodesic series' range, in one line."""
    sparse = config.mode != "published"
    sigma = float(config.ignition_sigma)
    if sparse and sigma > MAX_SPARSE_SIGMA:
        raise AtomsparkError(
            f"fixed encoder: ignition_sigma {sigma:g} > {MAX_SPARSE_SIGMA} for a sparse model "
            "(the geodesic distance's series holds only below it)"
        )
    from atomspark.networks.rsgn.dynamics import gelu

    c = float(config.curvature)
    trig = (1.0 if not sparse else config.spark_max_norm) / np.sqrt(c)
    factor = np.log2(np.e) / (2.0 * sigma**2) * 2.0 ** (EXP_FRAC - 2 * S_FRAC)
    z_shift = int(15 - np.floor(np.log2(factor)))
    frac = np.arange(1 << EXP_FRAC) / 2.0**EXP_FRAC
    return FixedEncoder(
        sparse=sparse,
        embed1=Dense.of(params.embed_w1, params.embed_b1),
        embed2=Dense.of(params.embed_w2, params.embed_b2),
        init=Dense.of(params.init_w, params.init_b),
        gelu=_table(gelu, X_FRAC),
        tanh=_table(np.tanh, S_FRAC),
        scale=int(np.round(float(params.spark_scale) * 2.0**S_FRAC)),
        trigger2=int(np.round(trig**2 * 2.0 ** (2 * S_FRAC))),
        max_norm=int(np.round(config.spark_max_norm / np.sqrt(c) * 2.0**S_FRAC)),
        positions=np.round(np.asarray(params.positions) * 2.0**S_FRAC).astype(np.int64),
        curvature=int(np.round(c * 2.0**S_FRAC)),
        z_mult=int(np.round(factor * 2.0**z_shift)),
        z_shift=z_shift,
        exp2=np.round(2.0 ** (EXP_TABLE_BITS - frac)).astype(np.int64),
        cutoff=int(np.round(float(config.cutoff) * 2.0**ALPHA_FRAC)),
    )

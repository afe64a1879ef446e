"""The split RSGN's readout as chip processes: class scores F @ cls_w + cls_b with
F = sum_j alpha_j h_j (networks/sample_runner.rsgn_scores), computed inside the split bundle.

At a sample's last emit every transform compartment (node j, feature c) sends r[j, c] on its
port r: the product alpha_j h[j, c], not gated by the cutoff (fixed point: (h alpha) >>> (12 +
shift), in units of 2**(shift - 10); microcode READOUT_PRODUCT, once per sample,
mapping/split_microcode.py). Two stages of standard Lava processes sum the products:

* feature partials: one GradedVec of d compartments (threshold 0: it relays its summed input)
  per group of `node_cores_per_group` node cores, as many as one core's input axons take:
  P[g, c] = sum_{j in g} r[j, c] through a Sparse of ones;
* scores: two integer accumulators of C compartments each (Lava's RingBuffer sinks record their
  summed input): fixed point holds cls_w in two 8-bit parts, W = W_hi 2**7 + W_lo (15
  significant bits; mapping/quantize.split_mantissas), S_hi,k = sum_{g, c} P[g, c] W_hi[c, k] +
  b_k and S_lo,k = sum_{g, c} P[g, c] W_lo[c, k], each through a Sparse of those mantissas, the
  bias b sent every chip step by a RingBuffer source through a Sparse of ones; a score is
  S = S_hi 2**7 + S_lo, joined in 64 bits when the two are read.

Every sum is an exact integer sum; `shift` keeps it inside the formats: LayerNorm's output y has
sum_c y_c^2 = d, so sum_c |y_c| <= d and |h_j|_1 <= max|gain| d + sum|bias| (activation and alpha
at most 1); with 1 % more (the integer LayerNorm's rounding) for every node, each accumulator's
sum stays below 2**31 and a group's partial below 2**23 (a 24-bit graded payload). A fixed-point
score is S 2**score_exp in float units (S in units of W_lo). Float: the same two stages composed into one Sparse of cls_w per
node (the same sum in another order); float does not run on the chip.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from atomspark.sim.core import AtomsparkError

ALPHA_FRAC, H_FRAC = 12, 10  # sim/kernels/rsgn_fixed.py: alpha in Q.12, h in Q.10
SCORE_BITS = 32  # the accumulator: an int32 port
PARTIAL_BITS = 24  # a partial is a graded spike payload
MAX_CLASSES = 4096  # a bundle's readout is read only up to this many classes
READOUT_DELAY = {"fixed": 2, "float": 1}  # chip steps from the product to the accumulator
LO_SHIFT = 7  # cls_w's low part is 2**7 finer than its high part (as W_h's, rsgn_fixed_split)


def _rshift(v: np.ndarray, k: int) -> np.ndarray:
    """Round-to-nearest right shift (the integer unit's >>>); k >= 0."""
    return (v + ((1 << (k - 1)) if k > 0 else 0)) >> k


def readout_parts(fixed: bool) -> int:
    """Weight parts of a readout: fixed point cls_w in two 8-bit parts, float one."""
    return 2 if fixed else 1


def readout_product(h: np.ndarray, alpha: np.ndarray, fixed: bool, shift: int = 0) -> np.ndarray:
    """r = alpha h per compartment (h and alpha of the same compartments; fixed point: integer
    Q.10 h and Q.12 alpha, r = (h alpha) >>> (12 + shift))."""
    if not fixed:
        return h * alpha
    return _rshift(np.asarray(h, np.int64) * np.asarray(alpha, np.int64), ALPHA_FRAC + shift)


@dataclass(frozen=True)
class Readout:
    """The readout's weights as the bundle holds them (module docstring): fixed point: (d, C)
    8-bit mantissas W_hi with exponent weight_exp and W_lo (weights_lo, 2**7 finer), bias b in
    S_hi's units, the product's shift; float: cls_w and cls_b."""

    arithmetic: str
    weights: np.ndarray  # (d, C)
    bias: np.ndarray  # (C,)
    weight_exp: int = 0  # of W_hi (fixed point)
    shift: int = 0
    node_cores_per_group: int = 1
    weights_lo: np.ndarray | None = None  # (d, C) fixed point: W_lo, 2**LO_SHIFT finer

    @property
    def fixed(self) -> bool:
        return self.arithmetic == "fixed"

    @property
    def classes(self) -> int:
        return int(self.weights.shape[1])

    @property
    def score_exp(self) -> int:
        """A fixed-point score S (units of W_lo) is S 2**score_exp in float units."""
        return self.weight_exp - LO_SHIFT + self.shift - H_FRAC

    def parts(self) -> list[np.ndarray]:
        """The weight matrices of the accumulators: [W_hi, W_lo] (fixed point) or [cls_w]."""
        return [self.weights] if self.weights_lo is None else [self.weights, self.weights_lo]

    def float_scores(self, scores: np.ndarray) -> np.ndarray:
        """Accumulator values in float score units."""
        return scores * 2.0**self.score_exp if self.fixed else np.asarray(scores, float)

    def to_dict(self) -> dict:
        conv = int if self.fixed else float
        return {
            "arithmetic": self.arithmetic,
            "classes": self.classes,
            "weights": [[conv(v) for v in row] for row in self.weights],
            "weights_lo": None
            if self.weights_lo is None
            else [[int(v) for v in row] for row in self.weights_lo],
            "lo_shift": LO_SHIFT,
            "bias": [conv(v) for v in self.bias],
            "weight_exp": self.weight_exp,
            "shift": self.shift,
            "score_exp": self.score_exp,
            "node_cores_per_group": self.node_cores_per_group,
            "delay_chip_steps": READOUT_DELAY[self.arithmetic],
        }


def readout_from_dict(raw: dict, arithmetic: str, d: int) -> Readout:
    """A bundle's readout section read back; sizes checked before any array is built."""
    try:
        classes = int(raw["classes"])
        if not 1 <= classes <= MAX_CLASSES:
            raise ValueError(f"classes {classes} outside [1, {MAX_CLASSES}]")
        rows, bias = raw["weights"], raw["bias"]
        if not isinstance(rows, list) or len(rows) != d or not isinstance(bias, list):
            raise ValueError(f"weights must be {d} rows")
        if len(bias) != classes or any(not isinstance(r, list) or len(r) != classes for r in rows):
            raise ValueError(f"weights and bias must have {classes} classes")
        dtype = np.int64 if arithmetic == "fixed" else np.float64
        weights, b = np.asarray(rows, dtype), np.asarray(bias, dtype)
        lo_rows = raw["weights_lo"] if arithmetic == "fixed" else None
        if arithmetic == "fixed" and (
            not isinstance(lo_rows, list) or len(lo_rows) != d
            or any(not isinstance(r, list) or len(r) != classes for r in lo_rows)
            or int(raw["lo_shift"]) != LO_SHIFT
        ):  # fmt: skip
            raise ValueError(f"weights_lo must be {d} rows of {classes}, lo_shift {LO_SHIFT}")
        lo = None if lo_rows is None else np.asarray(lo_rows, np.int64)
        out = Readout(arithmetic, weights, b, int(raw["weight_exp"]), int(raw["shift"]),
                      int(raw["node_cores_per_group"]), lo)  # fmt: skip
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        raise AtomsparkError(f"split readout section incomplete ({exc})") from None
    if not np.all(np.isfinite(out.weights)) or not np.all(np.isfinite(out.bias)):
        raise AtomsparkError("split readout section: weights and bias must be finite")
    if not 0 <= out.shift <= 62 or out.node_cores_per_group < 1:
        raise AtomsparkError("split readout section: shift in [0, 62], node_cores_per_group >= 1")
    if out.fixed and (
        any(not isinstance(v, int) for row in [*rows, *lo_rows, bias] for v in row)
        or max(np.abs(w).max(initial=0) for w in out.parts()) > 255
    ):
        raise AtomsparkError(
            "split readout section: fixed-point weights (8 bits) and bias must be integers"
        )
    return out


def quantize_readout(params, fixed: bool, n: int, group_nodes: int) -> Readout:
    """The readout of RSGN `params` (cls_w, cls_b, ln_gain, ln_bias) for `n` nodes in groups of
    at most `group_nodes` nodes: fixed point (cls_w in two 8-bit parts, the shift of the bound in
    the module docstring, the bias in the accumulator's units) or float."""
    cls_w = np.asarray(params.cls_w, np.float64)
    cls_b = np.asarray(params.cls_b, np.float64)
    if not fixed:
        return Readout("float", cls_w, cls_b)
    from atomspark.mapping.quantize import split_mantissas

    hi, lo = split_mantissas(cls_w, LO_SHIFT)
    d = cls_w.shape[0]
    per_node = 1.01 * (np.abs(params.ln_gain).max() * d + np.abs(params.ln_bias).sum())
    per_node = min(per_node * 2.0**H_FRAC + d, d * (2.0**23 - 1))  # h saturates at 24 bits
    w_max = max(float(np.abs(hi.mantissa).max(initial=0)), float(np.abs(lo).max(initial=0)), 1.0)
    hi_exp = hi.weight_exp + 0 - H_FRAC  # the bias's unit in S_hi at shift 0
    shift = 0
    while True:
        bias = np.round(cls_b / 2.0 ** (hi_exp + shift)).astype(np.int64)
        b_max = float(np.abs(bias).max(initial=0))
        if (n * per_node * w_max / 2.0**shift + b_max < 2.0 ** (SCORE_BITS - 1)
                and group_nodes * per_node / 2.0**shift < 2.0 ** (PARTIAL_BITS - 1)):  # fmt: skip
            break
        shift += 1
    if np.abs(bias).max(initial=0) >= 2 ** (PARTIAL_BITS - 1):
        raise AtomsparkError(
            f"readout: cls_b needs more than {PARTIAL_BITS} bits in the score's units "
            f"2**{hi_exp + shift}; rescale the model's classifier"
        )
    return Readout("fixed", hi.mantissa, bias, hi.weight_exp, shift, weights_lo=lo)


def readout_groups(cores: list[dict], d: int, group: int) -> list[np.ndarray]:
    """The node-major compartment indices (j d + c) of each feature partial: `group` node cores
    each, in the cores' order (mapping/split_cores.assign_cores)."""
    node = [c["index"] for c in cores if c["kind"] == "transform"]
    return [np.concatenate(node[i : i + group]) for i in range(0, len(node), group)]


def node_cores_per_group(nodes_per_core: int, d: int, fan_in: int) -> int:
    """Node cores whose compartments one partial's input axons take."""
    return max(1, fan_in // max(nodes_per_core * d, 1))


def feature_matrix(n: int, d: int, groups: list[np.ndarray]) -> sp.csr_matrix:
    """(P d, n d) ones: partial g's compartment c sums r[j, c] over its group's nodes j."""
    rows = np.concatenate([g * d + (idx % d) for g, idx in enumerate(groups)])
    cols = np.concatenate(groups)
    return sp.csr_matrix(
        (np.ones(cols.size, np.int64), (rows, cols)), shape=(len(groups) * d, n * d)
    )


def score_matrix(readout: Readout, n_partials: int, part: int = 0) -> sp.csr_matrix:
    """(C, P d): accumulator `part` (0: W_hi or cls_w, 1: W_lo) sums P[g, c] W[c, k] over every
    partial g."""
    return sp.csr_matrix(np.tile(readout.parts()[part].T, (1, n_partials)))


def join_scores(readout: Readout, accumulators: list[np.ndarray]) -> np.ndarray:
    """One score per class from the accumulators as read: S_hi 2**7 + S_lo (64 bits)."""
    if len(accumulators) == 1:
        return accumulators[0]
    hi, lo = (np.asarray(a, np.int64) for a in accumulators)
    return (hi << LO_SHIFT) + lo


def readout_reference(
    readout: Readout, r: np.ndarray, groups: list[np.ndarray]
) -> tuple[np.ndarray, int]:
    """The accumulator's scores (C,) from the transform compartments' products r (n d,),
    as the readout processes sum them, and how many sums left their format (partials beyond
    24 bits, scores beyond 32); float: the same sums in float."""
    d = readout.weights.shape[0]
    n = r.size // d
    feat = feature_matrix(n, d, groups)
    if not readout.fixed:
        return score_matrix(readout, len(groups)) @ (feat @ r) + readout.bias, 0
    partial = feat @ np.asarray(r, np.int64)
    over = np.count_nonzero(np.abs(partial) >= 2 ** (PARTIAL_BITS - 1))
    accs = []
    for part in range(len(readout.parts())):
        acc = score_matrix(readout, len(groups), part) @ partial + (
            readout.bias if part == 0 else 0
        )
        over += np.count_nonzero(np.abs(acc) >= 2 ** (SCORE_BITS - 1))
        accs.append(acc.astype(np.int64))
    return join_scores(readout, accs), int(over)


def engine_scores(
    readout: Readout, alpha: np.ndarray, h: np.ndarray, groups: list[np.ndarray]
) -> tuple[np.ndarray, int]:
    """The engine-side counterpart: the chip readout's scores from the engine's final state
    (alpha (n,), h (n, d); fixed point: the integer unit's Q.12 and Q.10 integers)."""
    r = readout_product(h, np.asarray(alpha)[:, None], readout.fixed, readout.shift)
    return readout_reference(readout, r.ravel(), groups)


def stored_weights(readout: Readout) -> tuple[int, ...]:
    """Per accumulator: the synapses one partial holds into it, W's stored (nonzero) weights, as
    score_matrix keeps them (zeros are not stored)."""
    return tuple(int(np.count_nonzero(w)) for w in readout.parts())


def classifier_weights(params, fixed: bool) -> tuple[int, ...]:
    """stored_weights of the readout quantize_readout makes of `params` (its weight parts do
    not depend on the group size or the shift)."""
    cls_w = np.asarray(params.cls_w, np.float64)
    if not fixed:
        return stored_weights(Readout("float", cls_w, np.zeros(cls_w.shape[1])))
    from atomspark.mapping.quantize import split_mantissas

    hi, lo = split_mantissas(cls_w, LO_SHIFT)
    return stored_weights(Readout("fixed", hi.mantissa, np.zeros(cls_w.shape[1]), weights_lo=lo))

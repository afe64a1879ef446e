"""Integer RSGN nodes with a wider W_h: every weight of the hidden transform as two 8-bit
mantissas, a high and a low part; everything else as the integer unit of sim/units/rsgn_fixed.py
(same node update, same kernel, same Lava ProcessModel).

Why: with one shared exponent for all d x d entries, 8-bit W_h mantissas cost a low-margin dense
model (the published hierarchical RSGN) about a third of its decisions (docs/lava.md); with
float nodes, W_h rounded to 12 or more bits keeps 96-98 % of them. Loihi's synaptic weight is an
8-bit mantissa with a shared exponent in [-8, 7], so a wider weight is two of them:

  W_h ~= (hi 2**lo_shift + lo) 2**-(w_h_shift + lo_shift)

hi: the 8-bit mantissas of rsgn_fixed (w_h_mant, w_h_shift); lo: 8-bit mantissas (mixed signs,
so even numbers in [-256, 254]) of hi's rounding residual, one step 2**-lo_shift of hi's finer.
lo_shift = 7 holds the residual (at most half a hi step) with room, giving 15 significant bits
(with the sign) under one exponent. As synapses, hi and lo are two connections whose weight
exponents differ by lo_shift (both inside [-8, 7]); inside a programmable neuron, one 16-bit
word per weight. The node multiplies the wrapped, shifted message m (|m| < 2**31) by the combined
word (|w| < 2**15): products below 2**46, the d-wide sum below 2**53 for d <= 128.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from atomspark.sim.core import AtomsparkError, require_int
from atomspark.sim.unit_model import UnitModel, register
from atomspark.sim.units import rsgn_fixed as rf

LO_SHIFT = 7  # lo is 2**7 finer than hi
MAX_WIDTH = 128  # d-wide sums of m w stay below 2**53 (module docstring)


@dataclass(frozen=True, eq=False)
class RSGNFixedSplitParams(rf.RSGNFixedParams):
    """RSGNFixedParams plus the low parts of W_h: w_h_lo_mant (d, d) 8-bit mantissas and
    w_h_lo_shift (how much finer lo is than hi; 1..15, the span of Loihi's weight exponent)."""

    w_h_lo_mant: object = 0
    w_h_lo_shift: int = LO_SHIFT

    def check_size(self, name: str, size: int) -> None:
        super().check_size(name, size)
        d = self.width
        if d > MAX_WIDTH:
            raise AtomsparkError(f"{name}: width {d} above {MAX_WIDTH} could overflow W_h's sum")
        lo = rf._int_array(f"{name}.w_h_lo_mant", self.w_h_lo_mant, (d, d))
        if lo.size and int(np.abs(lo).max()) > 256:
            raise AtomsparkError(f"{name}.w_h_lo_mant: 8-bit mantissas expected (|w| <= 256)")
        shift = require_int(f"{name}.w_h_lo_shift", self.w_h_lo_shift, 1)
        if shift > 15:
            raise AtomsparkError(
                f"{name}.w_h_lo_shift: {shift} exceeds 15, the span of Loihi's weight exponents"
            )

    @cached_property
    def kernel_arrays(self) -> dict:
        """rsgn_fixed's arrays with W_h as the combined word hi 2**lo_shift + lo."""
        k = dict(rf.RSGNFixedParams.kernel_arrays.func(self))
        d, shift = self.width, int(self.w_h_lo_shift)
        lo = rf._int_array("w_h_lo_mant", self.w_h_lo_mant, (d, d))
        k["wh"] = np.ascontiguousarray((k["wh"] << shift) + lo)
        k["wh_shift"] = int(self.w_h_shift) + shift
        return k


RSGN_FIXED_SPLIT = register(
    UnitModel(
        name="rsgn_fixed_split",
        params_type=RSGNFixedSplitParams,
        update=rf.RSGN_FIXED.update,
        kernel_args=rf.RSGN_FIXED.kernel_args,
        initially_pending=rf.RSGN_FIXED.initially_pending,
        sample_state=("alpha", "h"),
        graded=True,
        accepts_input=False,
    )
)

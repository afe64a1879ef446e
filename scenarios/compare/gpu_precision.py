"""Which GPU precisions reach the chip's accuracy: the torch path run with every matrix product's
operands rounded as a tensor-core format would round them, on the same samples.

Emulation (CPU, float32 accumulation, as tensor cores accumulate; fp32 casts the operands to
float32, so a float64 torch path runs its products as an fp32 GPU would): tf32 keeps 10 mantissa bits,
bf16 7 (round to nearest even); int8 quantises each operand symmetrically to [-127, 127] with one
scale per row of the left operand (per sample) and one per tensor for the right one (the weights;
both per tensor in a two-operand einsum), then rescales the exact integer product. Element-wise work stays in float32.

Accuracy tests (the same ones that set the GPU's iteration counts):
* VN: the loosest tolerance of the ladder whose codes are within the chip's max relative code
  error of the converged reference on every sample (scenarios/gpu_side.match_tolerance); a
  precision whose tightest rung misses it does not reach the chip's accuracy.
* RSGN: the predicted class agrees with the float32 forward on at least as many samples as the
  chip's own run agrees with it.
"""

from __future__ import annotations

import numpy as np
import torch
from torch.overrides import TorchFunctionMode

PRECISIONS = ("fp32", "tf32", "bf16", "int8")
_MATMULS = {torch.matmul, torch.Tensor.matmul, torch.Tensor.__matmul__, torch.mm, torch.bmm}
_MANTISSA = {"tf32": 10, "bf16": 7}


def round_mantissa(x: torch.Tensor, bits: int) -> torch.Tensor:
    """float32 x rounded to `bits` mantissa bits (round to nearest even), as float32."""
    i = x.detach().to(torch.float32).contiguous().view(torch.int32)
    drop = 23 - bits
    half = (1 << (drop - 1)) - 1
    lsb = (i >> drop) & 1
    rounded = ((i + half + lsb) >> drop) << drop
    return rounded.view(torch.float32)


def quantize_int8(x: torch.Tensor, per_row: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """(integers as float32, scale) of a symmetric 8-bit quantisation."""
    x = x.to(torch.float32)
    amax = x.abs().amax(dim=-1, keepdim=True) if per_row else x.abs().amax()
    scale = torch.where(amax > 0, amax / 127.0, torch.ones_like(amax))
    return torch.clamp(torch.round(x / scale), -127, 127), scale


class PrecisionMode(TorchFunctionMode):
    """Inside `with PrecisionMode(p):` every matrix product rounds its operands to p."""

    def __init__(self, precision: str) -> None:
        super().__init__()
        self.precision = precision

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.einsum and len(args) == 3:
            return self._einsum(*args)
        if func not in _MATMULS or len(args) != 2:
            return func(*args, **kwargs)
        a, b = args
        dtype = a.dtype
        if self.precision == "fp32":
            out = func(a.to(torch.float32), b.to(torch.float32))
        elif self.precision in _MANTISSA:
            bits = _MANTISSA[self.precision]
            out = func(round_mantissa(a, bits), round_mantissa(b, bits))
        else:
            qa, sa = quantize_int8(a, per_row=True)
            qb, sb = quantize_int8(b, per_row=False)
            out = func(qa, qb) * sa * sb
        return out.to(dtype)

    def _einsum(self, equation: str, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        """Two-operand einsum (RSGN's messages): operands rounded, int8 one scale per tensor."""
        if self.precision == "fp32":
            return torch.einsum(equation, a.to(torch.float32), b.to(torch.float32)).to(a.dtype)
        if self.precision in _MANTISSA:
            bits = _MANTISSA[self.precision]
            return torch.einsum(equation, round_mantissa(a, bits), round_mantissa(b, bits))
        (qa, sa), (qb, sb) = quantize_int8(a, False), quantize_int8(b, False)
        return (torch.einsum(equation, qa, qb) * sa * sb).to(a.dtype)


def rsgn_decisions(module, tokens: torch.Tensor, precision: str) -> np.ndarray:
    """Predicted class per sample of the torch RSGN forward at `precision`."""
    with torch.no_grad(), PrecisionMode(precision):
        scores, _ = module(tokens.to(torch.float32))
    return scores.argmax(1).numpy()

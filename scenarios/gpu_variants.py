"""The GPU's own algorithm at every precision (and, for RSGN, dense or sparse kernel), each
checked against the chip's accuracy on the same samples (scenarios/gpu_precision.py states the
tests), ready for mapping/chip_vs_gpu.py to price."""

from __future__ import annotations

import dataclasses

import numpy as np
import torch
from atomspark.mapping.chip_vs_gpu import GPUVariant
from atomspark.networks.torch_path.convert import rsgn_to_torch
from atomspark.networks.vn.model import VNModel
from atomspark.scenarios.gpu_precision import PRECISIONS, PrecisionMode, rsgn_decisions
from atomspark.scenarios.gpu_side import (
    match_tolerance,
    relative_code_error,
    rsgn_algorithm,
    vn_algorithm,
)
from atomspark.sim.graph import Graph

RSGN_KERNELS = ("dense", "sparse")


def vn_gpu_variants(
    model: VNModel,
    x: np.ndarray,
    reference: list[np.ndarray],
    chip_codes: list[np.ndarray],
    precisions: tuple[str, ...] = PRECISIONS,
) -> list[GPUVariant]:
    """Joint FISTA at each precision, at the loosest tolerance whose codes are as close to the
    converged reference as the chip's (iteration counts measured at that precision)."""
    target = float(relative_code_error(chip_codes, reference).max())
    out = []
    for p in precisions:
        with PrecisionMode(p):
            matched = match_tolerance(model, x, reference, target)
        reaches = matched.max_rel_error <= target
        alg = dataclasses.replace(vn_algorithm(model, matched), precision=p)
        accuracy = (
            f"max relative code error {matched.max_rel_error:.2g} against the chip's "
            f"{target:.2g} (tol {matched.tol:g}){'' if reaches else ': not reached'}"
        )
        out.append(GPUVariant(p, "dense", alg, reaches, accuracy))
    return out


def rsgn_gpu_variants(
    params,
    config,
    graph: Graph,
    x: np.ndarray,
    chip_scores: np.ndarray,
    precisions: tuple[str, ...] = PRECISIONS,
) -> list[GPUVariant]:
    """The forward at each precision and kernel; a precision reaches the chip's accuracy when its
    predicted classes agree with the fp32 forward on at least as many samples as the chip's."""
    module = rsgn_to_torch(params, config).to(torch.float32).eval()
    tokens = torch.from_numpy(np.asarray(x, dtype=np.float32))
    fp32 = rsgn_decisions(module, tokens, "fp32")
    chip = float(np.mean(np.asarray(chip_scores).argmax(1) == fp32))
    algorithms = {k: rsgn_algorithm(params, config, graph, len(x), k) for k in RSGN_KERNELS}
    out = []
    for p in precisions:
        agree = float(np.mean(rsgn_decisions(module, tokens, p) == fp32))
        reaches = agree >= chip
        accuracy = (
            f"same class as the fp32 forward on {agree:.0%} of samples (chip: {chip:.0%})"
            + ("" if reaches else ": not reached")
        )
        for kernel, alg in algorithms.items():
            alg_p = dataclasses.replace(alg, precision=p)
            out.append(GPUVariant(p, kernel, alg_p, reaches, accuracy))
    return out

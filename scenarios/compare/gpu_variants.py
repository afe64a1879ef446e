"""The GPU's own algorithm at every precision (and, for RSGN, dense or sparse kernel), each
checked against the chip's accuracy on the same samples (scenarios/compare/gpu_precision.py states the
tests), ready for mapping/chip_vs_gpu.py to price."""

from __future__ import annotations

import dataclasses

import numpy as np
import torch
from atomspark.mapping.chip_gpu_ratios import GPUVariant
from atomspark.networks.torch_path.convert import rsgn_to_torch
from atomspark.networks.vn.model import VNModel
from atomspark.scenarios.compare.gpu_precision import PRECISIONS, PrecisionMode, rsgn_decisions
from atomspark.scenarios.compare.gpu_side import (
    RUNGS_PER_DECADE,
    TOLERANCE_LADDER,
    MatchedSettle,
    gpu_settle,
    relative_code_error,
    rsgn_algorithm,
    vn_algorithm,
)
from atomspark.sim.graph import Graph

RSGN_KERNELS = ("dense", "sparse")
CAP_FACTOR = 4  # a reduced precision may take this many times fp32's iterations
MIN_CAP = 200


def vn_gpu_variants(
    model: VNModel,
    x: np.ndarray,
    reference: list[np.ndarray],
    chip_codes: list[np.ndarray],
    precisions: tuple[str, ...] = PRECISIONS,
) -> list[GPUVariant]:
    """Joint FISTA at each precision, at the loosest tolerance whose codes are as close to the
    converged reference as the chip's (iteration counts measured at that precision). Reduced
    precisions may take at most CAP_FACTOR x the fp32 variant's iterations: a precision that
    needs more is past its rounding floor and counts as not reaching the accuracy."""
    target = float(relative_code_error(chip_codes, reference).max())
    out, cap = [], None
    for p in precisions:
        with PrecisionMode(p):
            matched = _ladder(model, x, reference, target, cap)
        reaches = matched.max_rel_error <= target
        if p == "fp32":
            cap = max(MIN_CAP, int(CAP_FACTOR * np.max(matched.iterations)))
        alg = dataclasses.replace(vn_algorithm(model, matched), precision=p)
        accuracy = (
            f"max relative code error {matched.max_rel_error:.2g} against the chip's "
            f"{target:.2g} (tol {matched.tol:g}){'' if reaches else ': not reached'}"
        )
        out.append(GPUVariant(p, "dense", alg, reaches, accuracy))
    return out


def _ladder(model, x, reference, target: float, cap: int | None) -> MatchedSettle:
    """match_tolerance, stopped early once a tolerance ten times tighter no longer lowers the
    error by 10 % or a sample runs into the iteration cap (the precision's rounding floor)."""
    kind = "joint" if model.layers[-1].topk is None else "block"
    best, errors = None, []
    for tol in TOLERANCE_LADDER:
        codes, iterations = gpu_settle(model, x, tol, cap)
        err = float(relative_code_error(codes, reference).max())
        matched = MatchedSettle(kind, tol, iterations, err, target)
        capped = cap is not None and int(np.max(iterations)) >= cap
        if err <= target:  # reached (a capped sample is priced at the cap's iterations)
            return matched
        errors.append(err)
        floor = len(errors) > RUNGS_PER_DECADE and err > 0.9 * errors[-1 - RUNGS_PER_DECADE]
        if capped or floor:
            return best or matched
        best = matched if best is None or err < best.max_rel_error else best
    return best


def rsgn_fp32_decisions(params, config, x: np.ndarray) -> np.ndarray:
    """Predicted classes of the float32 torch forward (what the precision test compares with)."""
    module = rsgn_to_torch(params, config).to(torch.float32).eval()
    return rsgn_decisions(module, torch.from_numpy(np.asarray(x, dtype=np.float32)), "fp32")


def rsgn_gpu_variants(
    params,
    config,
    graph: Graph,
    x: np.ndarray,
    chip_agreement: float,
    precisions: tuple[str, ...] = PRECISIONS,
    readout: bool = True,
) -> list[GPUVariant]:
    """The forward at each precision and kernel; a precision reaches the chip's accuracy when its
    predicted classes agree with the fp32 forward on at least the share of samples the chip's
    run agrees with it (`chip_agreement`); readout: priced as the chip row prices its own
    (gpu_side.rsgn_algorithm)."""
    module = rsgn_to_torch(params, config).to(torch.float32).eval()
    tokens = torch.from_numpy(np.asarray(x, dtype=np.float32))
    fp32 = rsgn_decisions(module, tokens, "fp32")
    algorithms = {
        k: rsgn_algorithm(params, config, graph, len(x), k, readout) for k in RSGN_KERNELS
    }
    out = []
    for p in precisions:
        agree = float(np.mean(rsgn_decisions(module, tokens, p) == fp32))
        reaches = agree >= chip_agreement
        accuracy = (
            f"same class as the fp32 forward on {agree:.0%} of samples (chip: "
            f"{chip_agreement:.0%}){'' if reaches else ': not reached'}"
        )
        for kernel, alg in algorithms.items():
            alg_p = dataclasses.replace(alg, precision=p)
            out.append(GPUVariant(p, kernel, alg_p, reaches, accuracy))
    return out

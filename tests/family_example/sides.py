"""The readout family's side of `compare` (tests/family_example/family.py declares the family):
what compare runs for it, registered explicitly with register_compare_side."""

from __future__ import annotations

import time

import numpy as np
from atomspark.mapping.chip_gpu_ratios import GPUVariant
from atomspark.mapping.gpu_pricing import DenseAlgorithm, Phase
from atomspark.mapping.hardware import load_hardware
from atomspark.scenarios.compare.chip_rows import chip_row
from atomspark.scenarios.compare.compare_common import (
    CompareRun,
    accuracy,
    engine_costs,
    engine_entry,
    mean_active_fraction,
    torch_backend,
)
from atomspark.scenarios.compare.family_sides import CompareSide, register_compare_side
from atomspark.sim.core import AtomsparkError, as_finite_array

from family_example import family


def agreement(reference: np.ndarray, other: np.ndarray) -> dict:
    err = np.abs(reference - other)
    return {
        "max_abs_error": float(err.max()),
        "decision_agreement": float(np.mean(reference.argmax(1) == other.argmax(1))),
        "decision": "same predicted class",
    }


def gpu_variant(model: family.Readout, x: np.ndarray) -> GPUVariant:
    """The GPU's own algorithm: one matrix-vector product per sample (nothing to iterate)."""
    (c, d), length = model.w.shape, x.shape[1]
    phase = Phase("readout", np.ones(len(x)), 2.0 * c * d + length * d, 4.0 * c * d,
                  4.0 * (length * d + c), 2)  # fmt: skip
    alg = DenseAlgorithm("mean-token readout", (phase,), "one pass per sample")
    return GPUVariant("fp32", "dense", alg, True, "the same float readout")


def run(run: CompareRun, model: family.Readout, cutoffs=None) -> tuple:
    """The readout on the engine and in torch; returns (chip row, GPU variants, chip backend,
    how the chip's steps were chosen)."""
    x, backends = run.x, run.report["backends"]
    t0 = time.perf_counter()
    runs = family.runner(model).run(x, family.STEPS)
    wall = (time.perf_counter() - t0) / len(x)
    scores_e = np.stack(runs.outputs) + model.b
    costs = engine_costs(family.graph(model), runs.profiles, run.hardware, run.gpu, len(x))
    run.stage(f"{len(x)} sample(s) in torch on {run.device}")
    entry_t, scores_t = torch_backend(
        family.forward, model, x, run.device, run.dtype, run.gpu, costs["comparison"].dense
    )
    entry_t["accuracy"] = accuracy(scores_t, run.labels)
    backends["torch"] = entry_t
    entry = engine_entry(
        costs, wall, mean_active_fraction(runs.profiles), agreement(scores_t, scores_e)
    )
    entry["accuracy"] = accuracy(scores_e, run.labels)
    backends["engine_float"] = entry
    if run.fixed_point:
        run.stage("no fixed-point engine run")
        backends["engine_fixed"] = {"supported": False, "reason": "no integer readout unit"}
    run.stage("the GPU's own algorithm")
    row = chip_row(costs["graph"], costs["profile"], load_hardware(run.hardware), len(x))
    return row, [gpu_variant(model, x)], "engine_float", f"{family.STEPS}"


def check_data(x, model: family.Readout) -> np.ndarray:
    x = as_finite_array("data", x, ndim=3)
    if x.shape[2] != model.w.shape[1]:
        raise AtomsparkError(f"data: shape {x.shape}, the readout takes d_in = {model.w.shape[1]}")
    return x


READOUT_SIDE = register_compare_side(family.KIND, CompareSide(run=run, check_data=check_data))

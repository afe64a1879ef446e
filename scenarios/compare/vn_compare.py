"""The VN family's side of `compare` (scenarios/compare/chip_vs_gpu.py): the settle on the event
engine (float, then the integer atom), agreement of codes with torch, reconstruction error, the
chip stopped by a held-out step budget (the oracle stop as a lower bound), the GPU's own
algorithm; and its profile's GPU side."""

from __future__ import annotations

import dataclasses
import time

import numpy as np
from atomspark.mapping.hardware import load_hardware
from atomspark.mapping.quantize import fixed_vn_runner
from atomspark.networks.engine_run import concat_profiles
from atomspark.networks.sample_runner import vn_runner
from atomspark.networks.torch_path.vn_trainer import VN_TRAINER
from atomspark.networks.vn.model import VNModel
from atomspark.scenarios.compare.chip_rows import (
    HEADLINE_STOP,
    ORACLE_STOP,
    SETTLED_REL_ERROR,
    chip_row,
    truncate,
    vn_stops,
)
from atomspark.scenarios.compare.compare_common import (
    CompareRun,
    engine_costs,
    engine_entry,
    mean_active_fraction,
    torch_backend,
)
from atomspark.scenarios.compare.gpu_side import vn_gpu_side
from atomspark.scenarios.compare.gpu_variants import vn_gpu_variants
from atomspark.scenarios.compare.vn_standard_side import standard_form_entry
from atomspark.sim.core import AtomsparkError, as_finite_array

FIXED_FRAC_BITS = 12  # fixed-point VN codes in units of 2**-12
SUPPORT_REL_TOL = 1e-3  # a VN code counts as "on" above this fraction of the sample's max |g|


def check_data(x, model: VNModel) -> np.ndarray:
    """Signals (samples, d) of the model's input dimension."""
    x = as_finite_array("data", x, ndim=2)
    if x.shape[1] != model.input_dim:
        raise AtomsparkError(
            f"data: shape {x.shape} does not match the VN model, which expects "
            f"(samples, {model.input_dim})"
        )
    return x


def vn_engine_run(model: VNModel, x: np.ndarray, steps: int, fixed: bool):
    """Settle each sample on the engine (float, or the integer VN atom); codes per layer. The
    per-step codes are recorded (float units) so that the chip's stop can be measured."""
    runner = vn_runner(model)
    if fixed:
        runner = fixed_vn_runner(runner, frac_bits=FIXED_FRAC_BITS)
    record = [(p.name, "g") for p in runner.graph.populations]
    t0 = time.perf_counter()
    runs = runner.run(x, steps, record=record)
    wall = (time.perf_counter() - t0) / len(x)
    codes = [np.stack([out[l] for out in runs.outputs]) for l in range(len(model.layers))]
    scale = 2.0**-FIXED_FRAC_BITS if fixed else 1.0
    traces = [{k: v * scale for k, v in t.items()} for t in runs.traces]
    return codes, runs.profiles, runner.graph, wall, (traces, record)


def vn_chip_rows(profiles, traced, graph, reference, hardware, note: str = ""):
    """The chip row of a VN run stopped by a held-out step budget (the headline's), carrying
    the oracle-stopped row as its labelled lower bound (scenarios/compare/chip_rows.py), the
    headline's stops (its codes set the GPU's accuracy target) and the oracle's. One path for
    compare, demo and profile; `note` is added to the stop's description (e.g. the arithmetic)."""
    traces, record = traced
    hw = load_hardware(hardware) if isinstance(hardware, str) else hardware
    rows = {}
    for rule in (HEADLINE_STOP, ORACLE_STOP):
        stop = vn_stops(traces, record, reference, SETTLED_REL_ERROR, rule)
        prof = concat_profiles([truncate(p, s) for p, s in zip(profiles, stop.steps)])
        detail = f"{stop.detail}; {note}" if note else stop.detail
        row = chip_row(graph, prof, hw, len(stop.steps), None, rule, detail)
        rows[rule] = (row, stop)
    row, stop = rows[HEADLINE_STOP]
    return dataclasses.replace(row, bound=rows[ORACLE_STOP][0]), stop, rows[ORACLE_STOP][1]


def fixed_point_note(fixed: bool) -> str:
    """How the chip row's arithmetic is described next to its stop."""
    if fixed:
        return f"fixed point ({FIXED_FRAC_BITS} fractional bits, as deployed)"
    return "float arithmetic (no fixed-point form: a bias in the chip's favour)"


def _vn_support(codes: np.ndarray) -> np.ndarray:
    scale = np.maximum(np.abs(codes).max(axis=1, keepdims=True), 1e-300)
    return np.abs(codes) > SUPPORT_REL_TOL * scale


def vn_agreement(reference: list[np.ndarray], other: list[np.ndarray]) -> dict:
    """Max / mean absolute code error and the fraction of samples with the same support."""
    a, b = np.concatenate(reference, axis=1), np.concatenate(other, axis=1)
    err = np.abs(a - b)
    same = np.all(_vn_support(a) == _vn_support(b), axis=1)
    return {
        "max_abs_error": float(err.max()),
        "mean_abs_error": float(err.mean()),
        "max_abs_code": float(np.abs(a).max()),
        "decision_agreement": float(same.mean()),
        "decision": "identical support (|g| > 1e-3 max|g|) of all codes",
    }


def vn_reconstruction_error(model: VNModel, x: np.ndarray, codes: list[np.ndarray]) -> float:
    """Mean over samples of ||x - S_1 g_1|| / ||x||."""
    r = x - codes[0] @ model.layers[0].S.T
    return float(np.mean(np.linalg.norm(r, axis=1) / np.maximum(np.linalg.norm(x, axis=1), 1e-300)))


def compare_vn(run: CompareRun, model, cutoffs=None) -> tuple:
    """VN on the engine (float, then fixed point), in torch, and the GPU's own algorithm;
    returns (chip row, GPU variants, chip backend name, how the chip's steps were chosen)."""
    x, stage, report, backends = run.x, run.stage, run.report, run.report["backends"]
    steps, fixed_point = run.steps, run.fixed_point
    codes_f, prof_f, graph_f, wall_f, traced_f = vn_engine_run(model, x, steps, fixed=False)
    stage(f"{len(x)} sample(s) in torch on {run.device}")
    costs_f = engine_costs(graph_f, prof_f, run.hardware, run.gpu, len(x))
    entry_t, codes_t = torch_backend(
        VN_TRAINER.forward, model, x, run.device, run.dtype, run.gpu, costs_f["comparison"].dense
    )
    entry_t["reconstruction_error"] = vn_reconstruction_error(model, x, codes_t)
    backends["torch"] = entry_t
    backends["engine_float"] = engine_entry(
        costs_f, wall_f, mean_active_fraction(prof_f), vn_agreement(codes_t, codes_f)
    )
    backends["engine_float"]["reconstruction_error"] = vn_reconstruction_error(model, x, codes_f)
    backends["engine_float"]["steps_per_sample"] = steps
    if fixed_point:
        stage(f"{len(x)} sample(s) on the fixed-point engine (custom VN atoms, then SigmaDelta)")
    if fixed_point and model.layers[-1].topk is None:
        codes_q, prof_q, graph_q, wall_q, traced_q = vn_engine_run(model, x, steps, fixed=True)
        costs_q = engine_costs(graph_q, prof_q, run.hardware, run.gpu, len(x))
        entry = engine_entry(
            costs_q, wall_q, mean_active_fraction(prof_q), vn_agreement(codes_t, codes_q)
        )
        entry["reconstruction_error"] = vn_reconstruction_error(model, x, codes_q)
        entry["agreement_vs_engine_float"] = vn_agreement(codes_f, codes_q)
        entry["frac_bits"] = FIXED_FRAC_BITS
        entry["wraps"] = int(sum(p.wraps.sum() for p in prof_q))
        entry["clips"] = int(sum(p.clips.sum() for p in prof_q))
        backends["engine_fixed"] = entry
    elif fixed_point:
        backends["engine_fixed"] = {
            "supported": False,
            "reason": "hard top-k has no integer atom",
        }
    fixed_ran = "costs" in backends.get("engine_fixed", {})
    chip_name = "engine_fixed" if fixed_ran else "engine_float"  # the chip runs fixed point
    chip = backends[chip_name]
    stage("the GPU's own algorithm on the same samples")
    chip_codes = codes_q if chip_name == "engine_fixed" else codes_f
    chip_costs = costs_q if chip_name == "engine_fixed" else costs_f
    if chip["fits"]:
        report["gpu_fair"] = vn_gpu_side(
            model, x, codes_t, chip_codes, run.gpu, chip["energy_per_sample_j"],
            chip["latency_per_sample_s"], run.device,
        )  # fmt: skip
        report["gpu_fair"]["chip_backend"] = chip_name
    fixed = chip_name == "engine_fixed"
    chip_prof = prof_q if fixed else prof_f
    row, stop, _ = vn_chip_rows(
        chip_prof, traced_q if fixed else traced_f, chip_costs["graph"],
        codes_t, run.hardware, fixed_point_note(fixed),
    )  # fmt: skip
    report["standard_form"] = standard_form_entry(
        model, x, steps, FIXED_FRAC_BITS if fixed else None, codes_t, codes_f,
        (row, stop, chip_prof, chip_costs["graph"], chip_codes),
        lambda prof, traced, graph: vn_chip_rows(
            prof, traced, graph, codes_t, run.hardware, fixed_point_note(fixed)
        ),
    )  # fmt: skip
    variants = vn_gpu_variants(model, x, codes_t, stop.codes)
    return row, variants, chip_name, stop.detail

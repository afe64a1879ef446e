"""GPU (torch, dense) against neuromorphic (event engine, float and fixed point): one trained model,
one data set, side by side.

For a model file written by `train` (VN or RSGN) and a data set, `compare`:
(a) runs the torch module on the chosen device, batched and dense, timed; on CUDA the energy is
    measured with NVML when pynvml is present, otherwise it comes from the GPU's hardware
    description (roofline model of the dense equivalent, mapping/costs.py); the output says which;
(b) runs the event engine one sample at a time, in float and in Loihi fixed point (the integer
    VN atom, where the model has no hard top-k; the integer RSGN node), and prices its counters
    on the neuromorphic chip (placement + energy model, mapping/costs.compare_costs), per sample;
and reports agreement of outputs (max / mean absolute error against torch, decision agreement:
RSGN the predicted class, VN the support of the codes), task accuracy (RSGN) or relative
reconstruction error (VN), active fraction, wall time per sample here, energy and latency per
sample. RSGN also gets the soft-vs-event sweep: the sigmoid never reaches exactly zero, so the
event-driven model silences nodes at or below a cutoff; accuracy and activity are measured
against that cutoff. `chip_vs_gpu` in the report is the chip-vs-GPU headline with its range
(mapping/chip_gpu_ratios.py): the chip backend on a layout that fits, a VN settle stopped at its
accuracy target (scenarios/compare/chip_rows.py), the GPU's own algorithm at every precision that
reaches the chip's accuracy. Writes comparison.json (atomic) and PNG plots to out_dir.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from atomspark.mapping.chip_gpu_ratios import Assumptions, compare_workload
from atomspark.mapping.costs import chip_cost, compare_costs
from atomspark.mapping.hardware import load_hardware
from atomspark.mapping.quantize import fixed_rsgn_runner, fixed_vn_runner
from atomspark.networks.model_io import check_file_format, load_npy
from atomspark.networks.rsgn.dynamics import ignition, initial_state
from atomspark.networks.rsgn.model import RSGNConfig, RSGNParams
from atomspark.networks.rsgn.model import load_model as load_rsgn
from atomspark.networks.rsgn_compile import compile_rsgn
from atomspark.networks.sample_runner import rsgn_runner, vn_runner
from atomspark.networks.torch_path.convert import rsgn_to_torch, vn_to_torch
from atomspark.networks.torch_path.device import pinned_numerics, resolve_dtype, select_device
from atomspark.networks.torch_path.vn_torch import settle as torch_settle
from atomspark.networks.vn.model import VNModel
from atomspark.scenarios.compare.chip_rows import SETTLED_REL_ERROR, chip_row, truncate, vn_stops
from atomspark.scenarios.compare.gpu_meter import measure
from atomspark.scenarios.compare.gpu_side import rsgn_gpu_side, vn_gpu_side
from atomspark.scenarios.compare.gpu_variants import rsgn_gpu_variants, vn_gpu_variants
from atomspark.scenarios.compare.plots import (
    plot_accuracy_energy,
    plot_cutoff,
    plot_energy_hist,
)
from atomspark.scenarios.compare.ratio_plots import plot_ratios, plot_tornado
from atomspark.scenarios.runs.engine import LoadedModel, concat_profiles, require_run_memory
from atomspark.sim.core import AtomsparkError, as_finite_array, atomic_write_text, require_int
from atomspark.sim.graph import Graph, Population
from atomspark.sim.profile import Profile
from atomspark.sim.progress import Stages
from atomspark.sim.run_folder import prepare_run_folder

VN_ENGINE_STEPS = 2000  # engine step budget per VN sample (fixed, as a chip would run it)
FIXED_FRAC_BITS = 12  # fixed-point VN codes in units of 2**-12
SUPPORT_REL_TOL = 1e-3  # a VN code counts as "on" above this fraction of the sample's max |g|
# torch settle: tolerance per dtype (1e-10 cannot be met in float32, whose codes jitter ~1e-7)
TORCH_SETTLE = {"max_iter": 5000, "sweeps": 200}
TORCH_SETTLE_TOL = {torch.float64: 1e-10, torch.float32: 1e-5}
DEFAULT_CUTOFFS = (0.0, 0.01, 0.05, 0.1, 0.2, 0.3)


# ----- inputs ----------------------------------------------------------------------------------
def load_trained_model(path: str | os.PathLike) -> tuple[str, object]:
    """("vn", VNModel) or ("rsgn", (params, config)) from a model.npz written by `train`."""
    try:
        return "vn", VNModel.load(path)
    except AtomsparkError as exc:
        if "'rsgn' model" not in str(exc):
            raise
    return "rsgn", load_rsgn(path)


def load_data(data, kind: str, model) -> tuple[np.ndarray, np.ndarray | None]:
    """Inputs and labels (or None) from a path to an .npz (keys tokens/signals/x, labels/y), a
    scenarios.datasets object, an (inputs, labels) pair or an array; shapes checked against the
    model so that a mismatch names what the model expects."""
    labels = None
    if isinstance(data, (str, os.PathLike)):
        path = Path(data)
        if not path.is_file():
            raise AtomsparkError(f"data file {path}: does not exist")
        if path.suffix == ".npy":
            return load_data(load_npy(path, "data file"), kind, model)
        check_file_format(path, "data file", "npz")
        with np.load(path, allow_pickle=False) as f:
            key = next((k for k in ("tokens", "signals", "x") if k in f.files), None)
            if key is None:
                raise AtomsparkError(f"data file {path}: needs an array 'tokens', 'signals' or 'x'")
            x = f[key]
            lk = next((k for k in ("labels", "y") if k in f.files), None)
            labels = None if lk is None else f[lk]
    elif hasattr(data, "tokens"):
        x, labels = data.tokens, getattr(data, "labels", None)
    elif hasattr(data, "signals"):
        x = data.signals
    elif isinstance(data, tuple) and len(data) == 2:
        x, labels = data
    else:
        x = data
    if kind == "vn":
        x = as_finite_array("data", x, ndim=2)
        if x.shape[1] != model.input_dim:
            raise AtomsparkError(
                f"data: shape {x.shape} does not match the VN model, which expects "
                f"(samples, {model.input_dim})"
            )
    else:
        config = model[1]
        x = as_finite_array("data", x, ndim=3)
        if x.shape[2] != config.d_in:
            raise AtomsparkError(
                f"data: shape {x.shape} does not match the RSGN model, which expects "
                f"(samples, length, {config.d_in})"
            )
    if x.shape[0] < 1:
        raise AtomsparkError("data: needs at least one sample")
    if labels is not None:
        labels = np.asarray(labels)
        if labels.shape != (x.shape[0],) or not np.issubdtype(labels.dtype, np.integer):
            raise AtomsparkError(
                f"labels: expected {x.shape[0]} integer labels, got {labels.dtype} {labels.shape}"
            )
        if kind == "rsgn" and (labels.min() < 0 or labels.max() >= model[1].n_classes):
            raise AtomsparkError(f"labels: must lie in [0, {model[1].n_classes})")
    return x, labels


# ----- torch (dense) ---------------------------------------------------------------------------
def _torch_forward(kind: str, model, x: np.ndarray, device: torch.device, dtype):
    """(workload closure, outputs as NumPy, active fraction) of the dense torch model."""
    xt = torch.from_numpy(x).to(device=device, dtype=dtype)
    if kind == "vn":
        module = vn_to_torch(model).to(device=device, dtype=dtype)

        def work():
            return torch_settle(module, xt, tol=TORCH_SETTLE_TOL[dtype], **TORCH_SETTLE).codes

    else:
        module = rsgn_to_torch(*model).to(device=device, dtype=dtype).eval()

        def work():
            return module(xt)

    with torch.no_grad():
        out = work()
    if kind == "vn":
        codes = [c.to("cpu", torch.float64).numpy() for c in out]
        active = float(np.mean(np.concatenate(codes, axis=1) != 0))
        return work, codes, active
    scores, alpha = out
    active = float((alpha > model[1].cutoff).double().mean())
    return work, (scores.to("cpu", torch.float64).numpy(), alpha.cpu().double().numpy()), active


# ----- event engine ----------------------------------------------------------------------------
def _vn_engine(model: VNModel, x: np.ndarray, steps: int, fixed: bool):
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


def _vn_chip_at_target(profiles, traced, graph, reference, hardware: str):
    """The chip row of a VN run stopped at its accuracy target (scenarios/compare/chip_rows.py)
    and the chip's codes at that step (the GPU's accuracy target)."""
    traces, record = traced
    stops, codes = vn_stops(traces, record, reference, SETTLED_REL_ERROR)
    prof = concat_profiles([truncate(p, s) for p, s in zip(profiles, stops)])
    row = chip_row(graph, prof, load_hardware(hardware), len(stops))
    return row, codes, stops


def rsgn_event_graph(
    params: RSGNParams, config: RSGNConfig, tokens: np.ndarray, cutoff: float | None = None
) -> Graph:
    """Engine graph for one sequence. cutoff None: the model's own semantics (published: all nodes
    update, cutoff gates sending; sparse: event rule). A number: the event rule at that cutoff
    (a node at or below it is exactly silent), whatever the mode the model was trained in."""
    alpha0 = ignition(params, config, tokens[None])
    h0 = initial_state(params, config, tokens[None], alpha0)
    graph = compile_rsgn(params, config, alpha0[0], h0[0])
    if cutoff is None:
        return graph
    pop = graph.populations[0]
    nodes = dataclasses.replace(pop.params, cutoff=float(cutoff), event_rule=True)
    return Graph([Population(pop.name, pop.size, nodes)], graph.projections)


def _rsgn_engine(
    params, config, tokens: np.ndarray, cutoff: float | None = None, fixed: bool = False
):
    """Scores (B, C), final alpha (B, N), per-sample profiles, the graph, wall s per sample;
    `fixed`: the integer RSGN nodes (fixed_rsgn_runner), states read back in float units."""
    runner = rsgn_runner(params, config, rsgn_event_graph(params, config, tokens[0], cutoff))
    if fixed:
        runner = fixed_rsgn_runner(runner)
    t0 = time.perf_counter()
    runs = runner.run(tokens, config.n_steps + 1)
    wall = (time.perf_counter() - t0) / len(tokens)
    scores = [(a[:, None] * h).sum(axis=0) @ params.cls_w + params.cls_b for a, h in runs.outputs]
    alphas = [a for a, _ in runs.outputs]
    return np.stack(scores), np.stack(alphas), runs.profiles, runner.graph, wall


def _chip_costs(graph, profiles, hardware: str, gpu: str, batch: int, positions=None) -> dict:
    """compare_costs over all samples, plus each sample priced on its own on the same placement:
    the per-sample distribution (None when the network does not fit the chip)."""
    kw = {"batch": batch, "positions": positions}
    cost = compare_costs(
        graph, concat_profiles(profiles), hardware, gpu, n_samples=len(profiles), **kw
    )
    per_sample = None
    if cost.fits:
        chip = load_hardware(hardware) if isinstance(hardware, str) else hardware
        per_sample = [
            chip_cost(graph, p, chip, 1, fit=cost.fit)[1].energy_per_sample_j for p in profiles
        ]
    return {
        "comparison": cost,
        "per_sample_energy_j": per_sample,
        "graph": graph,
        "profile": concat_profiles(profiles),
    }


def _mean_active_fraction(profiles: Sequence[Profile]) -> float:
    """Mean over samples and engine steps of (units active after the step) / units."""
    p = concat_profiles(profiles)
    return float(p.active.sum() / (p.steps * p.population_sizes.sum()))


# ----- agreement and task metrics --------------------------------------------------------------
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


def rsgn_agreement(reference: np.ndarray, other: np.ndarray) -> dict:
    """Max / mean absolute score error and the fraction of samples with the same predicted class."""
    err = np.abs(reference - other)
    return {
        "max_abs_error": float(err.max()),
        "mean_abs_error": float(err.mean()),
        "max_abs_score": float(np.abs(reference).max()),
        "decision_agreement": float(np.mean(reference.argmax(1) == other.argmax(1))),
        "decision": "same predicted class",
    }


def vn_reconstruction_error(model: VNModel, x: np.ndarray, codes: list[np.ndarray]) -> float:
    """Mean over samples of ||x - S_1 g_1|| / ||x||."""
    r = x - codes[0] @ model.layers[0].S.T
    return float(np.mean(np.linalg.norm(r, axis=1) / np.maximum(np.linalg.norm(x, axis=1), 1e-300)))


def _accuracy(scores: np.ndarray, labels: np.ndarray | None) -> float | None:
    return None if labels is None else float(np.mean(scores.argmax(1) == labels))


# ----- the comparison --------------------------------------------------------------------------
def _torch_backend(kind, model, x, device, dtype, gpu, dense_cost_model) -> tuple[dict, object]:
    """Run, time and (CUDA + NVML) meter the dense torch model; every figure says whether it was
    measured here or modelled. One call runs the whole batch, so a sample's latency is the call's
    time and batch time / batch is a throughput figure (time_per_sample_s)."""
    with pinned_numerics(device, dtype) as numerics:
        work, out, active = _torch_forward(kind, model, x, device, dtype)
        run = measure(work, device)
    n = len(x)
    entry = {
        "device": str(device),
        "device_name": run.device_name,
        "dtype": str(dtype).replace("torch.", ""),
        "batch": n,
        "wall_s_per_sample": run.time_per_call_s / n,
        "time_per_sample_s": run.time_per_call_s / n,
        "latency_per_sample_s": run.time_per_call_s,
        "time_source": (
            f"measured on {device}: {run.repeats} calls of the batch over {run.window_s:.2f} s "
            f"after {run.warmup_calls} warm-up calls, synchronised on the device"
        ),
        "active_fraction": active,
        "measurement": run.to_dict(),
        "numerics": numerics,
    }
    if run.measured:
        entry.update(
            energy_per_sample_j=run.energy_per_call_j / n,
            board_energy_per_sample_j=run.board_energy_per_call_j / n,
            idle_power_w=run.idle_power_w,
            energy_source=f"measured (board minus idle): {run.energy_detail}",
        )
    else:
        entry.update(
            energy_per_sample_j=dense_cost_model.energy_j,
            modelled_time_per_sample_s=dense_cost_model.time_s,
            energy_source=(
                f"model (not measured: {run.energy_detail}): {gpu} roofline of the dense "
                f"equivalent, batch {n} (mapping/costs.py)"
            ),
        )
    return entry, out


def _engine_entry(costs: dict, wall: float, active: float, agreement: dict) -> dict:
    cmp = costs["comparison"]
    entry = {
        "wall_s_per_sample": wall,
        "active_fraction": active,
        "agreement_vs_torch": agreement,
        "fits": cmp.fits,
        "costs": cmp.to_dict(),
    }
    if not cmp.fits:
        entry["energy_source"] = "none: no layout fits the chip (costs.placement.problems)"
        return entry
    entry.update(
        energy_per_sample_j=cmp.neuromorphic.energy_per_sample_j,
        latency_per_sample_s=cmp.neuromorphic.time_per_sample_s,
        energy_source=f"model: {cmp.neuromorphic.hardware} engine counters + placement",
        per_sample_energy_j=costs["per_sample_energy_j"],
    )
    return entry


def rsgn_cutoff_sweep(
    params: RSGNParams,
    config: RSGNConfig,
    tokens: np.ndarray,
    labels: np.ndarray | None,
    reference_scores: np.ndarray,
    cutoffs: Sequence[float],
    hardware: str,
    gpu: str,
) -> list[dict]:
    """Event-rule engine runs at each cutoff: accuracy, decision agreement with the soft model,
    activity, synaptic operations and chip energy per sample."""
    rows = []
    for c in cutoffs:
        if not 0.0 <= float(c) < 1.0:
            raise AtomsparkError(f"cutoffs: each must lie in [0, 1), got {c!r}")
        scores, alpha, profiles, graph, _ = _rsgn_engine(params, config, tokens, cutoff=c)
        costs = _chip_costs(graph, profiles, hardware, gpu, len(tokens), params.positions)
        rows.append(
            {
                "cutoff": float(c),
                "accuracy": _accuracy(scores, labels),
                "decision_agreement_vs_soft": float(
                    np.mean(scores.argmax(1) == reference_scores.argmax(1))
                ),
                "final_active_fraction": float(np.mean(alpha > c)),
                "mean_active_fraction": _mean_active_fraction(profiles),
                "synops_per_sample": float(sum(p.synops.sum() for p in profiles) / len(tokens)),
                "energy_per_sample_j": (
                    costs["comparison"].neuromorphic.energy_per_sample_j
                    if costs["comparison"].fits
                    else None
                ),
            }
        )
    return rows


def _rsgn_fixed_entry(params, config, x, labels, scores_t, scores_float, hardware, gpu) -> dict:
    """The integer RSGN nodes (alpha Q.12, h Q.10, 8-bit weights) on the same samples: accuracy,
    agreement with torch and with the float engine, wraps and clips, chip costs."""
    scores, _, profiles, graph, wall = _rsgn_engine(params, config, x, fixed=True)
    costs = _chip_costs(graph, profiles, hardware, gpu, len(x), params.positions)
    entry = _engine_entry(
        costs, wall, _mean_active_fraction(profiles), rsgn_agreement(scores_t, scores)
    )
    entry["_costs"] = costs  # the chip row's run (taken out before the report is written)
    entry["accuracy"] = _accuracy(scores, labels)
    entry["agreement_vs_engine_float"] = rsgn_agreement(scores_float, scores)
    entry["semantics"] = f"{config.mode} (cutoff {config.cutoff})"
    entry["formats"] = "alpha Q.12, h Q.10, 8-bit weights (mapping/quantize.quantize_rsgn_graph)"
    entry["wraps"] = int(sum(p.wraps.sum() for p in profiles))
    entry["clips"] = int(sum(p.clips.sum() for p in profiles))
    return entry


@dataclass
class _CompareRun:
    """What the VN and the RSGN comparison share: the samples, the settings, the report."""

    x: np.ndarray
    labels: np.ndarray | None
    steps: int
    fixed_point: bool
    hardware: str
    gpu: str
    device: object  # torch.device
    dtype: object  # torch.dtype
    stage: Callable[[str], None]
    report: dict


def _compare_vn(run: _CompareRun, model) -> tuple:
    """VN on the engine (float, then fixed point), in torch, and the GPU's own algorithm;
    returns (chip row, GPU variants, chip backend name, how the chip's steps were chosen)."""
    x, stage, report, backends = run.x, run.stage, run.report, run.report["backends"]
    steps, fixed_point = run.steps, run.fixed_point
    codes_f, prof_f, graph_f, wall_f, traced_f = _vn_engine(model, x, steps, fixed=False)
    stage(f"{len(x)} sample(s) in torch on {run.device}")
    costs_f = _chip_costs(graph_f, prof_f, run.hardware, run.gpu, len(x))
    entry_t, codes_t = _torch_backend(
        "vn", model, x, run.device, run.dtype, run.gpu, costs_f["comparison"].dense
    )
    entry_t["reconstruction_error"] = vn_reconstruction_error(model, x, codes_t)
    backends["torch"] = entry_t
    backends["engine_float"] = _engine_entry(
        costs_f, wall_f, _mean_active_fraction(prof_f), vn_agreement(codes_t, codes_f)
    )
    backends["engine_float"]["reconstruction_error"] = vn_reconstruction_error(model, x, codes_f)
    backends["engine_float"]["steps_per_sample"] = steps
    if fixed_point:
        stage(f"{len(x)} sample(s) on the fixed-point engine")
    if fixed_point and model.layers[-1].topk is None:
        codes_q, prof_q, graph_q, wall_q, traced_q = _vn_engine(model, x, steps, fixed=True)
        costs_q = _chip_costs(graph_q, prof_q, run.hardware, run.gpu, len(x))
        entry = _engine_entry(
            costs_q, wall_q, _mean_active_fraction(prof_q), vn_agreement(codes_t, codes_q)
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
    row, stop_codes, stops = _vn_chip_at_target(
        prof_q if fixed else prof_f, traced_q if fixed else traced_f, chip_costs["graph"],
        codes_t, run.hardware,
    )  # fmt: skip
    variants = vn_gpu_variants(model, x, codes_t, stop_codes)
    chip_steps = (
        f"stopped at its accuracy target ({SETTLED_REL_ERROR:g} relative to the torch "
        f"reference): {np.mean(stops):.0f} steps per sample on average (budget {steps})"
    )
    return row, variants, chip_name, chip_steps


def _compare_rsgn(run: _CompareRun, model, cutoffs) -> tuple:
    """RSGN on the engine (float, then fixed point), in torch, the GPU's own algorithm and the
    event-cutoff sweep; returns (chip row, GPU variants, chip backend name, "K + 1")."""
    x, stage, report, backends = run.x, run.stage, run.report, run.report["backends"]
    labels, fixed_point = run.labels, run.fixed_point
    params, config = model
    scores_e, _, prof_e, graph_e, wall_e = _rsgn_engine(params, config, x)
    costs_e = _chip_costs(graph_e, prof_e, run.hardware, run.gpu, len(x), params.positions)
    stage(f"{len(x)} sample(s) in torch on {run.device}")
    entry_t, (scores_t, _) = _torch_backend(
        "rsgn", model, x, run.device, run.dtype, run.gpu, costs_e["comparison"].dense
    )
    entry_t["accuracy"] = _accuracy(scores_t, labels)
    backends["torch"] = entry_t
    entry = _engine_entry(
        costs_e, wall_e, _mean_active_fraction(prof_e), rsgn_agreement(scores_t, scores_e)
    )
    entry["accuracy"] = _accuracy(scores_e, labels)
    entry["semantics"] = f"{config.mode} (cutoff {config.cutoff})"
    backends["engine_float"] = entry
    if fixed_point:
        stage(f"{len(x)} sample(s) on the fixed-point engine")
        backends["engine_fixed"] = _rsgn_fixed_entry(
            params, config, x, labels, scores_t, scores_e, run.hardware, run.gpu
        )
    chip_name = "engine_fixed" if fixed_point else "engine_float"  # the chip runs fixed point
    chip = backends[chip_name]
    stage("the GPU's own algorithm on the same samples")
    if chip["fits"]:
        report["gpu_fair"] = rsgn_gpu_side(
            params, config, graph_e, x, run.gpu, chip["energy_per_sample_j"],
            chip["latency_per_sample_s"], run.device,
        )  # fmt: skip
        report["gpu_fair"]["chip_backend"] = chip_name
        report["gpu_fair"]["accuracy"] = {  # the two sides need not agree: say both
            "chip": chip["accuracy"],
            "gpu": entry_t["accuracy"],
            "note": "the GPU runs the float forward; the chip side is "
            + chip_name
            + " (fixed point can differ: docs/lava.md)",
        }
    chip_costs = chip.pop("_costs", None) or costs_e
    agreement = chip["agreement_vs_torch"]["decision_agreement"]
    variants = rsgn_gpu_variants(params, config, graph_e, x, agreement)
    row = chip_row(
        chip_costs["graph"], chip_costs["profile"], load_hardware(run.hardware), len(x),
        params.positions,
    )  # fmt: skip
    if cutoffs:
        stage(f"event-cutoff sweep ({len(cutoffs)} cutoffs)")
        report["cutoff_sweep"] = rsgn_cutoff_sweep(
            params, config, x, labels, scores_t, cutoffs, run.hardware, run.gpu
        )
    return row, variants, chip_name, "K + 1"


def compare(
    model_path: str | os.PathLike,
    data,
    out_dir: str | os.PathLike,
    device: str | None = None,
    hardware: str = "loihi2",
    gpu: str = "h100",
    fixed_point: bool = True,
    steps: int = VN_ENGINE_STEPS,
    dtype: str | None = None,
    cutoffs: Sequence[float] | None = DEFAULT_CUTOFFS,
    overwrite: bool = False,
    log: Callable[[str], None] = print,
    assumptions: Assumptions | None = None,
) -> dict:
    """Run a trained model (model.npz from `train`) on `data` in torch (dense, on `device`) and on
    the event engine (float; also fixed point when `fixed_point`), and write comparison.json
    plus plots to out_dir. `steps`: engine step budget per VN sample (RSGN runs its K steps + 1).
    `cutoffs`: RSGN event-cutoff sweep (None: skip). `dtype` of the torch run: float32, float64
    or None (float32 on CUDA, float64 on CPU). Returns the report dict."""
    kind, model = load_trained_model(model_path)
    x, labels = load_data(data, kind, model)
    assumptions = assumptions or Assumptions()
    torch_device = select_device(device)
    steps = require_int("steps", steps, minimum=1)
    tdtype = resolve_dtype(dtype, torch_device)
    require_run_memory(LoadedModel(kind, model), len(x), steps, "--steps")
    out = prepare_run_folder(out_dir, "compare", "overwrite" if overwrite else "new")
    n = len(x)
    report: dict = {
        "model": {"path": str(model_path), "kind": kind},
        "samples": n,
        "hardware": {"neuromorphic": hardware, "gpu_model": gpu},
        "backends": {},
    }
    sweep = kind == "rsgn" and bool(cutoffs)
    stage = Stages(log, "[compare]", 4 + bool(fixed_point) + sweep)
    stage(f"{n} sample(s) on the event engine (float)")
    run = _CompareRun(x, labels, steps, fixed_point, hardware, gpu, torch_device, tdtype, stage,
                      report)  # fmt: skip
    if kind == "vn":
        row, variants, chip_name, chip_steps = _compare_vn(run, model)
    else:
        row, variants, chip_name, chip_steps = _compare_rsgn(run, model, cutoffs)
    ratios = compare_workload(kind.upper(), row, variants, load_hardware(gpu), assumptions)
    ratios["chip_backend"] = chip_name
    ratios["chip_steps"] = chip_steps
    report["chip_vs_gpu"] = ratios
    atomic_write_text(out / "comparison.json", json.dumps(report, indent=2))
    stage("plots")
    metric = "accuracy" if kind == "rsgn" else "reconstruction_error"
    plot_accuracy_energy(report, metric, out / "accuracy_vs_energy.png")
    plot_energy_hist(report, out / "energy_per_sample.png")
    if "cutoff_sweep" in report:
        plot_cutoff(report, out / "cutoff_sweep.png")
    plot_ratios({kind.upper(): ratios}, out / "chip_vs_gpu.png")
    plot_tornado({kind.upper(): ratios}, out / "tornado.png")
    return report

"""`atomspark profile`: a saved model on given inputs -> engine counters, placement, energy and
latency on a neuromorphic chip over the whole step budget, and the chip-vs-GPU headline with its
range priced by compare's own path (scenarios/compare/chip_vs_gpu.price_model: the same stopping
rule, arithmetic, placement objective, copies and range, so the same model and inputs give the
same ratio from `profile` and `compare`); the GPU at its best, or no GPU figure without torch
(never the dense equivalent of the chip's steps); JSON and plots."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
from atomspark.mapping.costs import compare_costs
from atomspark.mapping.hardware import DEFAULT_CHIP, load_hardware
from atomspark.mapping.plots import plot_activity, plot_costs, plot_raster
from atomspark.networks.families import family_named
from atomspark.networks.model_io import INPUT_HELD_BY, INPUT_LIMIT, check_representable, load_npy
from atomspark.scenarios.runs.engine import (
    LoadedModel,
    engine_side,
    load_model,
    require_run_memory,
    run_loaded,
    runner_for,
)
from atomspark.scenarios.runs.model_task import task_samples
from atomspark.sim.core import AtomsparkError, as_finite_array, atomic_write_text, require_int
from atomspark.sim.engine import Engine
from atomspark.sim.neurobench import format_neurobench, neurobench_metrics
from atomspark.sim.progress import Stages
from atomspark.sim.run_folder import finish_run, prepare_run_folder

BUILTIN_PREFIX = "builtin:"


def read_inputs(
    spec: str,
    loaded: LoadedModel,
    seed: int = 0,
    model_path: str | Path | None = None,
    log: Callable[[str], None] = print,
) -> np.ndarray:
    """Inputs from a .npy file, or `builtin:N` for N samples of the model's own task (stored in
    the model file by `train`: its validation split); for a model file without a task, N samples
    of the built-in data set that fits the model (VN: sparse-dictionary signals; RSGN:
    hierarchical sequences) at the generator's defaults, which the log says. The layout is
    checked against the model: VN (samples, d), RSGN (samples, length, d_in)."""
    family = family_named(loaded.kind)
    side = engine_side(loaded)
    layout, want = side.layout, side.input_shape(loaded.model)
    if spec.startswith(BUILTIN_PREFIX):
        try:
            n = int(spec[len(BUILTIN_PREFIX) :])
        except ValueError:
            raise AtomsparkError(
                f"--input {spec!r}: expected builtin:N with an integer N"
            ) from None
        if n < 1:
            raise AtomsparkError(f"--input {spec!r}: N must be >= 1")
        own = None if model_path is None else task_samples(model_path, n)
        if own is not None:
            log(f"[inputs] {n} samples of {own[2]}")
            return own[0]
        log(f"[inputs] the model file stores no task; {n} samples at generator defaults")
        return side.builtin_inputs(loaded.model, n, seed, f"--input {spec}")
    if not Path(spec).is_file():
        raise AtomsparkError(f"--input {spec}: no such file (give a .npy array, or builtin:N)")
    data = as_finite_array(f"--input {spec}", load_npy(spec, "--input"))
    check_representable(f"--input {spec}", data, INPUT_LIMIT, INPUT_HELD_BY)
    if data.ndim != len(want) or data.shape[-1] != want[-1] or data.shape[0] < 1:
        raise AtomsparkError(
            f"--input {spec}: shape {data.shape}, but this {family.title} model takes "
            f"{layout} with {side.dim_name} = {want[-1]} and at least one sample"
        )
    return data


def profile_model(
    model_path: str | Path,
    inputs: str,
    out: str | Path,
    hardware: str = DEFAULT_CHIP,
    gpu: str = "h100",
    steps: int | None = None,
    strategy: str = "auto",
    log: Callable[[str], None] = print,
    overwrite: bool = False,
    assumptions=None,
) -> dict:
    """Profile `model_path` on `inputs` and write profile.json, costs.json and PNGs to `out`
    (a new or empty folder, or a previous profile's with overwrite=True). `assumptions`: the
    chip-vs-GPU headline's (mapping/chip_gpu_ratios.Assumptions; default the GPU at its best)."""
    loaded = load_model(model_path)
    load_hardware(hardware), load_hardware(gpu)
    if steps is not None:
        if engine_side(loaded).own_steps is not None:
            raise AtomsparkError(engine_side(loaded).own_steps)
        steps = require_int("--steps", steps, minimum=1)
    data = read_inputs(inputs, loaded, model_path=model_path, log=log)
    require_run_memory(loaded, len(data), steps, "--steps")
    out = prepare_run_folder(out, "profile", "overwrite" if overwrite else "new")
    log(f"[profile] {loaded.kind} model {model_path}: {len(data)} sample(s) on the event engine")
    stage = Stages(log, "[profile]", 4 if _has_torch() else 3)
    stage(f"running {len(data)} sample(s) on the event engine (kernels compile once, then cached)")
    run = run_loaded(loaded, data, steps)
    stage(f"placing the graph on {hardware} cores and pricing it against {gpu}")
    costs = compare_costs(
        run.graph,
        run.profile,
        hardware,
        gpu,
        n_samples=run.n_samples,
        strategy=strategy,
        positions=run.positions,
    )
    if _has_torch() and costs.fits:
        stage(f"the chip-vs-GPU headline by compare's path on the same samples, against {gpu}")
    ratios = (
        _chip_vs_gpu(loaded, data, hardware, gpu, steps, assumptions, log) if costs.fits else None
    )
    stage("event raster of the first sample and plots")
    summary = run.profile.summary()
    result = {
        "model": str(model_path),
        "kind": loaded.kind,
        "samples": run.n_samples,
        "steps_per_sample": run.profile.steps // run.n_samples,
        "events_per_sample": summary["total_events"] / run.n_samples,
        "synops_per_sample": summary["total_synops"] / run.n_samples,
        "mean_active_fraction": summary["mean_active_fraction"],
        "neurobench": neurobench_metrics(run.graph, run.profile, run.n_samples),
        "costs": _chip_costs_only(costs.to_dict()),
        "chip_vs_gpu": ratios,
    }
    run.profile.to_json(out / "profile.json")
    atomic_write_text(out / "costs.json", json.dumps(result, indent=2))
    first = _first_sample_engine(loaded, data[:1], steps)
    plot_activity(
        first.run(result["steps_per_sample"], record_events=True),
        out / "activity.png",
        f"{loaded.kind} on the event engine (first sample)",
    )
    sizes = {p.name: p.size for p in first.graph.populations}
    plot_raster(first.event_log, sizes, out / "raster.png", "events of the first sample")
    plot_costs({loaded.kind: costs}, out / "costs.png")
    if ratios is not None and ratios["fits"]:
        from atomspark.scenarios.compare.ratio_plots import plot_ratios

        plot_ratios({loaded.kind.upper(): ratios}, out / "chip_vs_gpu.png")
    chip = costs.neuromorphic
    if chip is None:
        log("[profile] does not fit the chip (no energy): " + "; ".join(costs.fit.problems))
    log(
        f"[profile] events/sample {result['events_per_sample']:.0f}, synaptic ops/sample "
        f"{result['synops_per_sample']:.0f}, active fraction "
        + ", ".join(f"{k} {v:.3f}" for k, v in summary["mean_active_fraction"].items())
    )
    log(f"[profile] NeuroBench: {format_neurobench(result['neurobench'])}")
    if chip is not None:
        _log_chip(log, chip)
    log(f"[profile] wrote {out}/costs.json, profile.json, activity.png, raster.png, costs.png")
    finish_run(out)  # after the last file: the run is complete
    return result


def _log_chip(log, chip) -> None:
    log(
        f"[profile] {chip.hardware}: {chip.energy_per_sample_j * 1e6:.4g} uJ and "
        f"{chip.time_per_sample_s * 1e6:.4g} us per sample on {chip.cores_used} core(s), "
        f"EDP {chip.edp_js:.3g} J s"
    )


def _chip_costs_only(costs: dict) -> dict:
    """The cost report without the dense equivalent of the chip's own steps (not what a GPU
    user runs: the GPU's figures are gpu_fair's, its own algorithm)."""
    return {k: v for k, v in costs.items() if k not in DENSE_KEYS}


DENSE_KEYS = ("dense", "dense_workload", "energy_ratio_dense_over_neuromorphic")


def _has_torch() -> bool:
    return importlib.util.find_spec("torch") is not None


def _chip_vs_gpu(loaded: LoadedModel, data, hardware, gpu, steps, assumptions, log) -> dict | None:
    """compare's pricing of this model on the same samples (price_model), or None without torch
    (then there is no GPU figure)."""
    if not _has_torch():
        log("[profile] torch is not installed: no GPU figure (the GPU's own algorithm needs it)")
        return None
    from atomspark.mapping.chip_gpu_ratios import Assumptions, format_results
    from atomspark.scenarios.compare.chip_vs_gpu import VN_ENGINE_STEPS, price_model, pricing_run

    own = engine_side(loaded).own_steps is not None  # e.g. RSGN runs its own K + 1 steps
    run = pricing_run(data, hardware, gpu, VN_ENGINE_STEPS if own or steps is None else steps)
    ratios = price_model(loaded.kind, loaded.model, run, assumptions or Assumptions())
    for line in format_results({loaded.kind.upper(): ratios}):
        log(line.replace("[chip vs gpu]", "[profile]"))
    return ratios


def _first_sample_engine(loaded: LoadedModel, first: np.ndarray, steps: int | None) -> Engine:
    """The model's engine reset to the first sample, so its run can record an event raster."""
    return runner_for(loaded).engine_for(first[0])

"""`atomspark import GRAPH.nir`: read a NIR graph under its producer's convention, run it on the
event engine (float), place it and predict throughput and static, dynamic and total energy per
inference with NeuroBench's metrics: the same prediction and outputs as a netx import
(scenarios/runs/netx_import.py). Writes import.json and profile.json to --out."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from atomspark.mapping.hardware import DEFAULT_CHIP, NeuromorphicHardware
from atomspark.networks.engine_run import concat_profiles
from atomspark.networks.nir_file import read_nir
from atomspark.networks.nir_graph import NirGraph, convention, nir_graph
from atomspark.networks.nir_run import run_nir
from atomspark.scenarios.runs.import_outputs import (
    neuromorphic_hardware,
    prediction_line,
    write_import,
)
from atomspark.scenarios.runs.netx_predict import Prediction, price_inference
from atomspark.sim.core import AtomsparkError, require_int
from atomspark.sim.engine import Engine
from atomspark.sim.neurobench import format_neurobench, neurobench_metrics
from atomspark.sim.run_folder import finish_run, prepare_run_folder

OUTPUTS = ("import.json", "profile.json")
DEFAULT_STEPS = 50


def load_nir(path: str | Path, producer: str = "nir", dt: float | None = None) -> NirGraph:
    """The engine graph of a NIR file under the named producer's convention."""
    return nir_graph(read_nir(path), convention(producer, dt))


def input_spikes(ng: NirGraph, spec: str, samples: int, steps: int) -> list[dict]:
    """Each sample's spikes per NIR Input node: `zero` or `rate:P[:SEED]` (Bernoulli)."""
    head, *rest = spec.split(":")
    sizes = {n: ng.graph.population(p).size for n, p in ng.inputs.items()}
    if head == "zero" and not rest:
        return [{n: np.zeros((steps, s)) for n, s in sizes.items()}] * samples
    if head == "rate" and 1 <= len(rest) <= 2:
        try:
            p = float(rest[0])
            seed = int(rest[1]) if len(rest) > 1 else 0
        except ValueError:
            raise AtomsparkError(f"--input {spec}: P and SEED must be numbers") from None
        if not 0.0 <= p <= 1.0 or seed < 0:
            raise AtomsparkError(f"--input {spec}: P must be in [0, 1] and SEED >= 0")
        rng = np.random.default_rng(seed)
        return [{n: (rng.random((steps, s)) < p).astype(np.float64) for n, s in sizes.items()}
                for _ in range(samples)]  # fmt: skip
    raise AtomsparkError(f"--input {spec!r}: for a NIR graph use zero or rate:P[:SEED] (spikes)")


def predict_nir(
    ng: NirGraph, inputs: list[dict], steps: int, hw: NeuromorphicHardware, strategy: str
) -> Prediction:
    """Run each sample from rest, place (the project's placement) and price one inference."""
    eng = Engine(ng.graph)
    prof = concat_profiles([run_nir(ng, x, steps, eng).profile for x in inputs])
    return price_inference(ng.graph, prof, len(inputs), hw, strategy, steps + ng.latency)


def import_nir(
    path: str | Path,
    input_spec: str = "zero",
    samples: int = 1,
    steps: int | None = None,
    hardware: str = DEFAULT_CHIP,
    strategy: str = "sequential",
    out: str | Path = "results/import",
    overwrite: bool = False,
    producer: str = "nir",
    dt: float | None = None,
    log: Callable[[str], None] = print,
) -> dict:
    """Everything is checked (file, inputs, hardware) before the output folder is touched."""
    samples = require_int("--samples", samples, minimum=1)
    steps = require_int("--steps", steps if steps is not None else DEFAULT_STEPS, 1)
    ng = load_nir(path, producer, dt)
    hw = neuromorphic_hardware(hardware)
    inputs = input_spikes(ng, input_spec, samples, steps)
    folder = prepare_run_folder(out, "import", "overwrite" if overwrite else "new", OUTPUTS)
    log(f"[import] NIR graph read as {producer} writes it (dt = {ng.convention.dt:g} s)")
    log(ng.table())
    g = ng.graph
    n_syn = sum(p.n_synapses for p in g.projections)
    log(f"[import] {g.total_units} units, {n_syn} synapses; {samples} sample(s) x {steps} steps "
        f"(+{ng.latency} engine steps of pipeline latency)")  # fmt: skip
    pred = predict_nir(ng, inputs, steps, hw, strategy)
    layers = list(ng.neurons.values())
    result = {
        "network": str(path),
        "format": "nir",
        "producer": producer,
        "dt_s": ng.convention.dt,
        "input": input_spec,
        "hardware": hw.name,
        "strategy": strategy,
        "units": int(g.total_units),
        "synapses": int(n_syn),
        "prediction": pred.to_dict(),
        "neurobench": neurobench_metrics(g, pred.profile, samples, populations=layers),
        # no GPU algorithm is declared for an imported graph: no GPU figure (never the dense
        # equivalent of the chip's own steps, which is not what a GPU user runs)
        "gpu": None,
    }
    log(f"[import] NeuroBench: {format_neurobench(result['neurobench'])}")
    p = result["prediction"]
    log(prediction_line(hw.name, p))
    log(
        "[import] no GPU figure: no GPU algorithm is declared for an imported graph (the dense "
        "equivalent of the chip's steps is not what a GPU user runs)"
    )
    write_import(folder, pred, result, log)
    finish_run(folder)  # after the last file: the run is complete
    return result

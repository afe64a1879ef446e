"""`atomspark compare GRAPH.nir`: an imported NIR graph on the chip against a GPU running the same
network in torch (networks/torch_path/nir_torch.py), at the GPU's best precision and launch model.

* Chip: the import's own prediction (scenarios/runs/nir_import.predict_nir: the engine's run,
  the project's placement, scenarios/runs/netx_predict.price_inference), as a chip row run for
  a fixed number of steps. Its accuracy is that of Loihi fixed point: the share of spike
  entries the fixed-point graph (mapping/nir_lava.py) keeps equal to the float run.
* GPU: the closed graph (networks/nir_closed.py) stepped in torch, all samples as one batch,
  each projection a matrix product; run and timed on --device (CUDA where there is one: then
  its time is measured; elsewhere it runs on the CPU and the GPU is priced from its hardware
  description only, as the report says). Each precision (fp32, tf32, bf16, int8, emulated by
  scenarios/compare/gpu_precision.PrecisionMode) reaches the chip's accuracy when its spikes
  equal the fp32 run's on at least the share the chip keeps; dense products (tensor cores) and
  a sparse gather over the stored synapses are both priced, every launch model
  (mapping/gpu_pricing.py), and mapping/chip_gpu_ratios.compare_workload picks the GPU's best.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch
from atomspark.mapping.chip_gpu_ratios import Assumptions, GPUVariant, compare_workload
from atomspark.mapping.gpu_pricing import DenseAlgorithm, Phase
from atomspark.mapping.hardware import DEFAULT_CHIP, load_hardware
from atomspark.mapping.nir_lava import nir_lava, quantization_report
from atomspark.networks.nir_closed import ClosedNir, closed_graph
from atomspark.networks.torch_path.device import select_device
from atomspark.networks.torch_path.nir_torch import NirTorch
from atomspark.scenarios.compare.chip_rows import priced_row
from atomspark.scenarios.compare.gpu_precision import PRECISIONS, PrecisionMode
from atomspark.scenarios.compare.gpu_side import BYTES, count_ops
from atomspark.scenarios.runs.import_outputs import neuromorphic_hardware
from atomspark.scenarios.runs.nir_import import input_spikes, load_nir, predict_nir
from atomspark.sim.core import AtomsparkError, atomic_write_text, require_int
from atomspark.sim.run_folder import finish_run, prepare_run_folder

KERNELS = ("dense", "sparse")
DEFAULT_INPUT = "rate:0.2"
DEFAULT_STEPS = 50
LIF_ELEMENTWISE_FLOPS = 8  # per unit and step: two decays, two adds, bias, compare, select


def nir_algorithm(closed: ClosedNir, samples: int, ops: float, kernel: str) -> DenseAlgorithm:
    """One step of the network per iteration, `closed.total` steps per sample: per projection a
    dense (n_target x n_source) product of the source's spikes (tensor cores) or a gather over
    its stored synapses (CUDA cores, fp32 value and 4-byte index each); per neuron the LIF
    update; states (u, v, the input sum) read and written once."""
    g = closed.graph
    lif_units = sum(p.size for p in g.populations if p.name not in closed.sources)
    if kernel == "dense":
        products = sum(2.0 * p.shape[0] * p.shape[1] for p in g.projections)
        weights = sum(float(p.shape[0] * p.shape[1]) for p in g.projections)
        index = 0.0
    elif kernel == "sparse":
        products = sum(2.0 * p.n_synapses for p in g.projections)
        weights = float(sum(p.n_synapses for p in g.projections))
        index = BYTES * (weights + sum(p.shape[0] + 1 for p in g.projections))
    else:
        raise AtomsparkError(f"kernel: choose dense or sparse, got {kernel!r}")
    flops = products + LIF_ELEMENTWISE_FLOPS * lif_units
    phase = Phase(
        name="network step",
        iterations=np.full(samples, float(closed.total)),
        flops=flops,
        weight_bytes=BYTES * weights,
        sample_bytes=BYTES * (6.0 * lif_units + sum(p.size for p in g.populations)),
        ops=ops,
        gemm_fraction=(products / flops) if kernel == "dense" else 0.0,
        index_bytes=index,
    )
    return DenseAlgorithm(
        name=f"imported NIR graph stepped in torch ({kernel} projections), {closed.total} steps",
        phases=(phase,),
        iterations_source="the network's steps per inference (a fixed count, no tolerance)",
        kernel=kernel,
    )


def _batch(closed: list[ClosedNir]) -> dict[str, np.ndarray]:
    return {name: np.stack([c.sources[name] for c in closed]) for name in closed[0].sources}


def gpu_runs(closed: list[ClosedNir], device: torch.device) -> dict:
    """Spikes at each precision (batched, on `device`), the fp32 run's wall and process time."""
    first = closed[0]
    module = NirTorch.build(first.graph, first.sources, device=device)
    trains = _batch(closed)
    spikes, timing = {}, {}
    for p in PRECISIONS:
        with torch.no_grad(), PrecisionMode(p):
            if p == "fp32":
                module.run(trains, 2)  # warm-up
                if device.type == "cuda":
                    torch.cuda.synchronize(device)
                wall, cpu = time.perf_counter(), time.process_time()
            out = module.run(trains, first.total)
            if p == "fp32":
                if device.type == "cuda":
                    torch.cuda.synchronize(device)
                timing = {"wall_s": time.perf_counter() - wall,
                          "process_s": time.process_time() - cpu}  # fmt: skip
        spikes[p] = {k: v.cpu().numpy() for k, v in out.items() if k not in first.sources}
    ops = count_ops(lambda: module.run(trains, 1))
    return {"spikes": spikes, "timing": timing, "ops_per_step": ops}


def _agreement(a: dict, b: dict) -> float:
    same = sum(int(np.count_nonzero(a[k] == b[k])) for k in a)
    return same / max(sum(a[k].size for k in a), 1)


def nir_workload(ng, inputs: list[dict], steps: int, hw, dev: torch.device):
    """The chip row and GPU variants of an imported graph on `inputs` (module docstring), and
    what they were made from ({"prediction", "chip_keeps", "runs", "closed"}); compare and the
    chip-vs-GPU map (scenarios/compare/map_points.py) price imported graphs by this function."""
    samples = len(inputs)
    closed = [closed_graph(ng, x, steps) for x in inputs]
    pred = predict_nir(ng, inputs, steps, hw, "sequential")
    chip = priced_row(pred.energy, hw, samples, "the import's placement (sequential)")
    chip_keeps = float(np.mean([quantization_report(nir_lava(c, fixed=True))["spike_agreement"]
                                for c in closed]))  # fmt: skip
    runs = gpu_runs(closed, dev)
    variants = []
    for p in PRECISIONS:
        agree = _agreement(runs["spikes"][p], runs["spikes"]["fp32"])
        reaches = agree >= chip_keeps
        text = (f"spikes equal to the fp32 run on {100 * agree:.2f} % of entries (chip: "
                f"{100 * chip_keeps:.2f} %){'' if reaches else ': not reached'}")  # fmt: skip
        for kernel in KERNELS:
            alg = nir_algorithm(closed[0], samples, runs["ops_per_step"], kernel)
            variants.append(GPUVariant(p, kernel, replace(alg, precision=p), reaches, text))
    info = {"prediction": pred, "chip_keeps": chip_keeps, "runs": runs, "closed": closed}
    return chip, variants, info


def compare_nir(
    path: str | Path,
    out: str | Path,
    producer: str = "nir",
    dt: float | None = None,
    input_spec: str = DEFAULT_INPUT,
    samples: int = 4,
    steps: int = DEFAULT_STEPS,
    hardware: str = DEFAULT_CHIP,
    gpu: str = "h100",
    device: str | None = None,
    assumptions: Assumptions | None = None,
    overwrite: bool = False,
    log: Callable[[str], None] = print,
) -> dict:
    """Chip row, GPU variants and the chip-vs-GPU ratios of one imported graph (module doc);
    writes comparison.json to `out`. Everything is checked before `out` is touched."""
    samples = require_int("--samples", samples, minimum=1)
    steps = require_int("--steps", steps, minimum=1)
    a = assumptions or Assumptions()
    ng = load_nir(path, producer, dt)
    hw = neuromorphic_hardware(hardware)
    gpu_hw = load_hardware(gpu)
    dev = select_device(device)
    inputs = input_spikes(ng, input_spec, samples, steps)
    folder = prepare_run_folder(out, "compare", "overwrite" if overwrite else "new")
    chip, variants, w = nir_workload(ng, inputs, steps, hw, dev)
    pred, chip_keeps, runs = w["prediction"], w["chip_keeps"], w["runs"]
    log(f"[compare] chip ({hw.name}, fixed point): spikes equal to float on "
        f"{100 * chip_keeps:.2f} % of entries")  # fmt: skip
    measured = dev.type == "cuda"
    where = "measured" if measured else "not a GPU: the GPU is priced from its description"
    log(f"[compare] torch ran on {dev} ({where}): fp32 {runs['timing']['wall_s'] * 1e3:.3g} ms "
        f"wall for {samples} sample(s) x {w['closed'][0].total} steps")  # fmt: skip
    ratios = compare_workload("nir", chip, variants, gpu_hw, a)
    report = {
        "model": {"path": str(path), "kind": "nir", "producer": producer},
        "samples": samples,
        "steps": steps,
        "chip_prediction": pred.to_dict(),
        "chip_fixed_point_spike_agreement": chip_keeps,
        "torch": {
            "device": str(dev),
            "measured_on_gpu": measured,
            **runs["timing"],
            "ops_per_step": runs["ops_per_step"],
        },  # fmt: skip
        "chip_vs_gpu": ratios,
    }
    atomic_write_text(folder / "comparison.json", json.dumps(report, indent=2, default=str))
    finish_run(folder)
    row = ratios.get("batch_1") or {}
    if row:
        log(f"[compare] batch 1: chip {row['chip_energy_uJ']:.4g} uJ, {row['chip_time_per_sample_us']:.4g} "
            f"us per inference; {gpu_hw.name} at its best ({ratios['headline']['precision']}, "
            f"{ratios['headline']['kernel']}, {a.launch_model} launches) {row['gpu_energy_uJ']:.4g} "
            f"uJ, {row['gpu_time_per_sample_us']:.4g} us: energy ratio {row['ratio']:.3g} "
            f"(range {row['ratio_min']:.3g} to {row['ratio_max']:.3g})")  # fmt: skip
    return report

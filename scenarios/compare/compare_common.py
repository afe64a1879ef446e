"""What every family's side of `compare` shares (scenarios/compare/chip_vs_gpu.py): the run's
settings, the chip costs of an engine run, the timed and metered torch run, an engine backend's
report entry."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from atomspark.mapping.costs import chip_cost, compare_costs
from atomspark.mapping.hardware import load_hardware
from atomspark.networks.engine_run import concat_profiles
from atomspark.networks.torch_path.device import pinned_numerics
from atomspark.scenarios.compare.gpu_meter import measure
from atomspark.sim.profile import Profile


def engine_costs(
    graph,
    profiles,
    hardware: str,
    gpu: str,
    batch: int,
    positions=None,
    classes: int = 0,
    readout_weights: tuple[int, ...] | None = None,
) -> dict:
    """compare_costs over all samples, plus each sample priced on its own on the same placement:
    the per-sample distribution (None when the network does not fit the chip); classes: the
    chip's readout (mapping/costs.chip_cost, with its readout_weights)."""
    kw = {"batch": batch, "positions": positions, "classes": classes,
          "readout_weights": readout_weights}  # fmt: skip
    cost = compare_costs(
        graph, concat_profiles(profiles), hardware, gpu, n_samples=len(profiles), **kw
    )
    per_sample = None
    if cost.fits:
        chip = load_hardware(hardware) if isinstance(hardware, str) else hardware
        per_sample = [
            chip_cost(
                graph, p, chip, 1, fit=cost.fit, classes=classes, readout_weights=readout_weights
            )[1].energy_per_sample_j
            for p in profiles
        ]
    return {
        "comparison": cost,
        "per_sample_energy_j": per_sample,
        "graph": graph,
        "profile": concat_profiles(profiles),
    }


def mean_active_fraction(profiles: Sequence[Profile]) -> float:
    """Mean over samples and engine steps of (units active after the step) / units."""
    p = concat_profiles(profiles)
    return float(p.active.sum() / (p.steps * p.population_sizes.sum()))


def accuracy(scores: np.ndarray, labels: np.ndarray | None) -> float | None:
    return None if labels is None else float(np.mean(scores.argmax(1) == labels))


# ----- the torch run and the engine rows --------------------------------------------------------------------------
def torch_backend(forward, model, x, device, dtype, gpu, dense_cost_model) -> tuple[dict, object]:
    """Run, time and (CUDA + NVML) meter the dense torch model (`forward`: its family Trainer's);
    every figure says whether it was measured here or modelled. One call runs the whole batch,
    so a sample's latency is the call's time and batch time / batch is a throughput figure
    (time_per_sample_s)."""
    with pinned_numerics(device, dtype) as numerics:
        work, out, active = forward(model, x, device, dtype)
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


def engine_entry(costs: dict, wall: float, active: float, agreement: dict) -> dict:
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


@dataclass
class CompareRun:
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

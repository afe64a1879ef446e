"""The chip side of a chip-vs-GPU comparison: each workload priced on a layout that fits
(mapping/layouts.py), with the VN settle stopped at its accuracy target, and the ratio's inputs
(static power apart from the rest, for both static scopes).

Chip at its best: a VN sample stops at the first engine step from which every code stays within
`target` (relative to the sample's max |g|) of the converged reference, measured on the same
samples from the engine's per-step traces; a sample whose error floor lies above the target
(send-on-delta stops sending before it gets there) stops once it stays within 10 % of the error
it has at the step budget. This is an oracle
stop, as the GPU's matched tolerance is: neither side is charged iterations past its accuracy.
"""

from __future__ import annotations

import numpy as np
from atomspark.mapping.chip_gpu_ratios import Assumptions, ChipRow
from atomspark.mapping.costs import chip_cost
from atomspark.mapping.hardware import NeuromorphicHardware
from atomspark.sim.core import AtomsparkError
from atomspark.sim.graph import Graph
from atomspark.sim.profile import COUNTER_FIELDS, Profile

SETTLED_REL_ERROR = 1e-3
FLOOR_MARGIN = 1.1  # a sample whose error floor lies above the target stops within 10 % of it


def stop_step(errors: np.ndarray, target: float) -> int:
    """1-based step after which errors stay below target (len(errors) if they never do)."""
    above = np.flatnonzero(np.asarray(errors) >= target)
    if above.size == 0:
        return 1
    return int(min(above[-1] + 2, len(errors)))


def vn_stops(
    traces: list[dict], record: list, reference: list[np.ndarray], target: float
) -> tuple[list[int], list[np.ndarray]]:
    """Per sample: the stop step (module docstring), and every layer's codes at that step."""
    sizes = [c.shape[1] for c in reference]
    stops, codes = [], []
    for i, trace in enumerate(traces):
        g = np.concatenate([trace[pair] for pair in record], axis=1)  # (steps, all codes)
        ref = np.concatenate([c[i] for c in reference])
        err = np.abs(g - ref).max(axis=1) / max(np.abs(ref).max(), 1e-12)
        stop = stop_step(err, max(target, FLOOR_MARGIN * err[-1]))
        stops.append(stop)
        codes.append(g[stop - 1])
    at_stop = np.stack(codes)
    split = np.cumsum(sizes)[:-1]
    return stops, list(np.split(at_stop, split, axis=1))


def truncate(profile: Profile, steps: int) -> Profile:
    """The first `steps` steps of a profile (per-unit event totals kept: traffic weights)."""
    if not 1 <= steps <= profile.steps:
        raise AtomsparkError(f"steps: must lie in [1, {profile.steps}], got {steps}")
    counters = {k: getattr(profile, k)[:steps] for k in COUNTER_FIELDS}
    return Profile(
        profile.population_names, profile.population_sizes, steps,
        unit_events=profile.unit_events, **counters,
    )  # fmt: skip


def chip_row(
    graph: Graph,
    profile: Profile,
    hw: NeuromorphicHardware,
    n_samples: int,
    positions: np.ndarray | None = None,
) -> ChipRow:
    """Fit and price one workload's run (covering n_samples samples); static power kept apart
    for the device scope (every core of the chips in use) and the shared scope (cores in use)."""
    fit, rep = chip_cost(graph, profile, hw, n_samples, positions=positions, static_scope="device")
    if rep is None:
        return ChipRow(hw.name, False, "does not fit: " + "; ".join(fit.problems),
                       problems=tuple(fit.problems))  # fmt: skip
    device = rep.breakdown.static
    held = rep.chips_used * hw.limits.cores_per_chip
    others = [f"the {t['layout']} layout does not fit ({t['problem']})" for t in fit.tried
              if not t["fits"]]  # fmt: skip
    return ChipRow(
        hardware=hw.name,
        fits=True,
        took="; ".join([fit.took, *others]),
        cores=rep.cores_used,
        chips=rep.chips_used,
        dynamic_j=rep.energy_per_sample_j - device,
        static_j={"device": device, "shared": device * rep.cores_used / held},
        latency_s=rep.time_per_sample_s,
        steps=rep.steps / n_samples,
        report=rep,
        copies_per_chip=max(1, hw.limits.cores_per_chip // rep.cores_used)
        if rep.chips_used == 1
        else 1,
    )


def parse_assumptions(
    static_scope: str = "device",
    launch_model: str = "graph",
    precision: str | None = None,
    kernel: str | None = None,
    assume: list[str] | tuple[str, ...] = (),
) -> Assumptions:
    """The headline's assumptions from command-line values; `assume` items are NAME=SCALE for
    the estimated constants (mapping/chip_gpu_ratios.SCALED), e.g. gpu_idle_power=0.6."""
    from atomspark.mapping.chip_gpu_ratios import SCALED
    from atomspark.mapping.gpu_pricing import LAUNCH_MODELS, STATIC_SCOPES

    if static_scope not in STATIC_SCOPES:
        raise AtomsparkError(f"--static-scope: choose one of {', '.join(STATIC_SCOPES)}")
    if launch_model not in LAUNCH_MODELS:
        raise AtomsparkError(f"--launch-model: choose one of {', '.join(LAUNCH_MODELS)}")
    if kernel not in (None, "dense", "sparse"):
        raise AtomsparkError("--kernel: choose dense or sparse")
    if precision not in (None, "fp32", "tf32", "bf16", "int8"):
        raise AtomsparkError("--precision: choose fp32, tf32, bf16 or int8")
    scales = {}
    for item in assume:
        name, _, value = str(item).partition("=")
        try:
            scale = float(value)
        except ValueError:
            scale = -1.0
        if name not in SCALED or not np.isfinite(scale) or scale <= 0:
            raise AtomsparkError(
                f"--assume {item!r}: give NAME=SCALE with SCALE > 0 and NAME one of "
                f"{', '.join(SCALED)}"
            )
        scales[name] = scale
    return Assumptions(static_scope, launch_model, precision, kernel, scales)

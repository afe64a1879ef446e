"""The chip side of a chip-vs-GPU comparison: each workload priced on a layout that fits
(mapping/layouts.py), stopped by a rule the chip can evaluate, and the ratio's inputs (static
power apart from the rest, for both static scopes).

Stopping rules (`STOP_RULES`):
* "held-out budget" (the headline's): a fixed step budget chosen on held-out samples, the
  smallest number of steps at which the accuracy target is met on `STOP_QUANTILE` of them. Each
  priced sample runs the budget chosen on the *other* samples (leave-one-out), so no sample's
  own answer sets its stop; a single sample has no held-out set and runs the full budget.
* "fixed steps": the model's own step count (RSGN's K + 1), nothing to choose.
* "oracle (lower bound)": each sample stops at the first step from which its codes stay within
  `target` (relative to the sample's max |g|) of the converged reference; a sample whose error
  floor lies above the target stops once it stays within 10 % of its error at the step budget.
  Real hardware does not know the answer: this row is a labelled lower bound and
  mapping/chip_gpu_ratios.compare_workload refuses it as a headline.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from atomspark.mapping.chip_bands import bias_note, chip_bands
from atomspark.mapping.chip_gpu_ratios import Assumptions, ChipRow
from atomspark.mapping.costs import chip_cost, readout_placement
from atomspark.mapping.hardware import NeuromorphicHardware
from atomspark.mapping.layouts import Fit
from atomspark.sim.core import AtomsparkError
from atomspark.sim.graph import Graph
from atomspark.sim.profile import COUNTER_FIELDS, Profile

SETTLED_REL_ERROR = 1e-3
FLOOR_MARGIN = 1.1  # a sample whose error floor lies above the target stops within 10 % of it
STOP_QUANTILE = 0.99  # a held-out budget meets the target on this share of held-out samples
HEADLINE_STOP = "held-out budget"
ORACLE_STOP = "oracle (lower bound)"
FIXED_STOP = "fixed steps"


def stop_step(errors: np.ndarray, target: float) -> int:
    """1-based step after which errors stay below target (len(errors) if they never do)."""
    above = np.flatnonzero(np.asarray(errors) >= target)
    if above.size == 0:
        return 1
    return int(min(above[-1] + 2, len(errors)))


def code_errors(traces: list[dict], record: list, reference: list[np.ndarray]) -> list[np.ndarray]:
    """Per sample: the max code error at every engine step, relative to the sample's max |g|."""
    out = []
    for i, trace in enumerate(traces):
        g = np.concatenate([trace[pair] for pair in record], axis=1)  # (steps, all codes)
        ref = np.concatenate([c[i] for c in reference])
        out.append(np.abs(g - ref).max(axis=1) / max(np.abs(ref).max(), 1e-12))
    return out


def oracle_stops(errors: list[np.ndarray], target: float) -> list[int]:
    """Per sample: the oracle stop step (module docstring; a lower bound, not a chip rule)."""
    return [stop_step(err, max(target, FLOOR_MARGIN * err[-1])) for err in errors]


def heldout_budgets(stops: list[int], budget: int, quantile: float = STOP_QUANTILE) -> list[int]:
    """Per sample: the step budget chosen on the other samples, the smallest at which the target
    is met on `quantile` of them (leave-one-out); the full `budget` for a single sample."""
    stops = [int(s) for s in stops]
    if len(stops) < 2:
        return [int(budget)] * len(stops)
    out = []
    for i in range(len(stops)):
        others = np.array(stops[:i] + stops[i + 1 :])
        out.append(int(min(np.quantile(others, quantile, method="higher"), budget)))
    return out


@dataclass(frozen=True)
class VNStops:
    """A VN run's stop steps under one rule, the codes at those steps, and the rule's words."""

    rule: str
    steps: list[int]
    codes: list[np.ndarray]
    detail: str


def vn_stops(
    traces: list[dict],
    record: list,
    reference: list[np.ndarray],
    target: float,
    rule: str = HEADLINE_STOP,
) -> VNStops:
    """Per sample: the stop step under `rule` (module docstring), and every layer's codes there."""
    if rule not in (HEADLINE_STOP, ORACLE_STOP):
        raise AtomsparkError(f"stop rule: choose {HEADLINE_STOP!r} or {ORACLE_STOP!r}")
    sizes = [c.shape[1] for c in reference]
    errors = code_errors(traces, record, reference)
    oracle = oracle_stops(errors, target)
    budget = len(errors[0]) if errors else 0
    if rule == ORACLE_STOP:
        stops = oracle
        detail = (
            f"oracle: each sample stopped where its codes stay within {target:g} of the "
            f"converged reference (a lower bound: the chip cannot know the answer)"
        )
    else:
        stops = heldout_budgets(oracle, budget)
        met = float(np.mean([e[s - 1] <= max(target, FLOOR_MARGIN * e[-1])
                             for e, s in zip(errors, stops)]))  # fmt: skip
        floored = sum(FLOOR_MARGIN * e[-1] > target for e in errors)
        detail = (
            f"held-out budget: {np.mean(stops):.0f} steps per sample on average (chosen on the "
            f"other samples so that {STOP_QUANTILE:.0%} of them reach their accuracy: within "
            f"{target:g} of the converged codes, or within 10 % of their own error floor where "
            f"that floor lies above {target:g} ({floored} of {len(errors)} samples); {met:.0%} of "
            f"the priced samples reach it; run budget {budget})"
        )
    codes = np.stack([_codes_at(trace, record, s) for trace, s in zip(traces, stops)])
    split = np.cumsum(sizes)[:-1]
    return VNStops(rule, stops, list(np.split(codes, split, axis=1)), detail)


def _codes_at(trace: dict, record: list, step: int) -> np.ndarray:
    return np.concatenate([trace[pair][step - 1] for pair in record])


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
    stop_rule: str = FIXED_STOP,
    stop_detail: str = "",
    fit: Fit | None = None,
    classes: int = 0,
    readout_weights: tuple[int, ...] | None = None,
) -> ChipRow:
    """Fit and price one workload's run (covering n_samples samples, each stopped by
    `stop_rule`) on every placement that fits, packed to spread (mapping/placement.pack_spread);
    the row is the most packed one and carries them all (`placements`), each with its static
    power kept apart for the device scope (every core of the chips in use) and the shared scope
    (cores in use). `fit`: the graph's fit made before the run (fit_graph with these positions);
    `classes`: the nodes are read out into class scores (mapping/costs.chip_cost, with its
    `readout_weights`)."""
    fit, rep = chip_cost(graph, profile, hw, n_samples, positions=positions, static_scope="device",
                         fit=fit, classes=classes, readout_weights=readout_weights)  # fmt: skip
    if rep is None:
        return ChipRow(hw.name, False, "does not fit: " + "; ".join(fit.problems),
                       problems=tuple(fit.problems), stop_rule=stop_rule)  # fmt: skip
    others = [f"the {t['layout']} layout does not fit ({t['problem']})" for t in fit.tried
              if not t["fits"]]  # fmt: skip
    took = "; ".join(
        [fit.took, *others, *readout_note(fit, rep, classes, graph, hw, readout_weights)]
    )
    detail = stop_detail or f"{rep.steps / n_samples:.0f} steps per sample"
    if rep.chip_steps != rep.steps:  # several chip time steps per model step (split RSGN)
        detail += f" ({rep.chip_steps_per_sample:.0f} chip time steps)"
    on_chip = bool(classes) and fit.split is not None
    rows = [replace(_priced_row(rep, hw, n_samples, took, stop_rule, detail),
                    readout_on_chip=on_chip)]  # fmt: skip
    for placement in fit.candidates[1:]:
        _, other = chip_cost(graph, profile, hw, n_samples, static_scope="device",
                             fit=replace(fit, placement=placement), classes=classes,
                             readout_weights=readout_weights)  # fmt: skip
        rows.append(replace(_priced_row(other, hw, n_samples, took, stop_rule, detail),
                            readout_on_chip=on_chip))  # fmt: skip
    return replace(rows[0], placements=tuple(rows) if len(rows) > 1 else ())


def readout_note(
    fit: Fit, rep, classes: int, graph=None, hw=None, readout_weights=None
) -> list[str]:
    """The row's words on its readout: on chip (split layout, its cores priced, and where they
    sit: mapping/costs.readout_placement) or on the host."""
    if not classes:
        return []
    if fit.split is None:
        return [f"readout of {classes} class scores on the host (the {fit.layout} layout's "
                "bundle holds none on chip): priced on neither side"]  # fmt: skip
    ro = readout_placement(graph, fit.split, classes, hw, readout_weights)
    fits = "" if not ro.problems else f"; DOES NOT FIT: {'; '.join(ro.problems)}"
    return [f"readout of {classes} class scores on chip, priced: {ro.note()} "
            f"(mapping/split_cores.place_readout), {rep.cores_used} cores in all{fits}"]  # fmt: skip


def _priced_row(rep, hw: NeuromorphicHardware, n_samples: int, took, stop_rule, detail) -> ChipRow:
    device = rep.breakdown.static
    held = rep.chips_used * hw.limits.cores_per_chip
    return ChipRow(
        hardware=hw.name,
        fits=True,
        took=took,
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
        stop_rule=stop_rule,
        stop_detail=detail,
        bands=chip_bands(hw, rep.breakdown),
        bias=bias_note(hw, rep.breakdown),
    )


def parse_assumptions(
    static_scope: str | None = None,
    launch_model: str | None = None,
    precision: str | None = None,
    kernel: str | None = None,
    assume: list[str] | tuple[str, ...] = (),
    placement: str | None = None,
) -> Assumptions:
    """The headline's assumptions from command-line values (None: not given, the headline's
    default, and the range covers the alternatives); a value given is fixed in the range too.
    `assume` items are NAME=SCALE for the estimated constants (mapping/chip_gpu_ratios.SCALED),
    e.g. gpu_idle_power=0.6."""
    from atomspark.mapping.chip_gpu_ratios import PLACEMENT_OBJECTIVES, SCALED
    from atomspark.mapping.gpu_pricing import LAUNCH_MODELS, STATIC_SCOPES

    if static_scope not in (None, *STATIC_SCOPES):
        raise AtomsparkError(f"--static-scope: choose one of {', '.join(STATIC_SCOPES)}")
    if launch_model not in (None, *LAUNCH_MODELS):
        raise AtomsparkError(f"--launch-model: choose one of {', '.join(LAUNCH_MODELS)}")
    if kernel not in (None, "dense", "sparse"):
        raise AtomsparkError("--kernel: choose dense or sparse")
    if precision not in (None, "fp32", "tf32", "bf16", "int8"):
        raise AtomsparkError("--precision: choose fp32, tf32, bf16 or int8")
    if placement not in (None, *PLACEMENT_OBJECTIVES):
        raise AtomsparkError(f"--placement: choose one of {', '.join(PLACEMENT_OBJECTIVES)}")
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
    given = {"static_scope": static_scope, "launch_model": launch_model, "precision": precision,
             "kernel": kernel, "placement": placement}  # fmt: skip
    fixed = tuple(k for k, v in given.items() if v is not None)
    return Assumptions(scales=scales, fixed=fixed, **{k: given[k] for k in fixed})


def priced_row(rep, hw: NeuromorphicHardware, n_samples: int, took: str) -> ChipRow:
    """The chip row of an already priced run (an EnergyReport: an import's prediction, whose
    placement netx_predict.price_inference chose), run for a fixed number of steps."""
    detail = f"{rep.steps / n_samples:.0f} steps per sample"
    return _priced_row(rep, hw, n_samples, took, FIXED_STOP, detail)

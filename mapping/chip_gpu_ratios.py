"""Chip vs GPU energy per sample: a headline ratio and its range over the documented assumptions.

Inputs: the chip row of a workload (priced on a layout that fits, mapping/layouts.py; energy
split into dynamic and static so that the static scope and the estimated constants can change)
and the GPU's own algorithm at every precision and kernel that reaches the chip's accuracy
(scenarios/gpu_side.py). Ratios are GPU energy / chip energy per sample (> 1: the chip uses less).

Headline (the GPU at its best, the same static scope on both sides): whole devices held for the
workload's time ("device"), the graph-captured launch model, the cheapest precision and kernel
(dense or sparse gather) that reach the chip's accuracy, every constant at its file value; at
batch 1 (latency: one sample on each device) and at throughput (the GPU at its throughput-optimal
batch; the chip holding as many copies of the network as its cores allow, each sample in its own
copy, so a held chip's static power is shared by those samples).

Range: the lowest and highest ratio over every combination of the alternatives (static scope,
launch model, passing precision, kernel, and each estimated constant in SCALED at half and double
the headline's value). Tornado: each alternative moved alone from the headline. A user who
disagrees with an assumption sets it (Assumptions; `--static-scope`, `--launch-model`,
`--precision`, `--kernel`, `--assume NAME=SCALE`, or a hardware JSON file of their own).
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass, field, replace

import numpy as np
from atomspark.mapping.gpu_pricing import (
    LAUNCH_MODELS,
    STATIC_SCOPES,
    DenseAlgorithm,
    GPUPrice,
    price_algorithm,
    throughput_batch,
)
from atomspark.mapping.hardware import DenseHardware
from atomspark.sim.core import AtomsparkError

SCALES = (1.0, 0.5, 2.0)  # an estimated constant at its value, half and double
SCALED = {
    "gpu_idle_power": "GPU idle power (estimate: 10 % of TDP)",
    "gpu_busy_power": "GPU busy power (estimate: third-party readings)",
    "gpu_launch_overhead": "GPU launch and graph-step overheads (estimates)",
    "chip_static_power": "chip static power (estimate from Loihi 1 system power)",
    "chip_op_energy": "chip per-operation energies (estimates from Loihi 1)",
}
CHOICES = ("static_scope", "launch_model", "precision", "kernel")
# stopping rules a chip can evaluate itself (scenarios/compare/chip_rows.py); any other stop
# (the oracle, which knows the converged answer) is a labelled lower bound, never a headline
ON_CHIP_STOPS = ("held-out budget", "fixed steps", "quiescence")


@dataclass(frozen=True)
class ChipRow:
    """The chip side of one workload, per sample; energies None when no layout fits."""

    hardware: str
    fits: bool
    took: str
    cores: int | None = None
    chips: int | None = None
    dynamic_j: float | None = None
    static_j: dict = field(default_factory=dict)  # static scope -> J per sample
    latency_s: float | None = None
    steps: float | None = None
    problems: tuple[str, ...] = ()
    report: object = field(default=None, repr=False, compare=False)  # the EnergyReport priced
    copies_per_chip: int = 1  # copies of the network one chip holds side by side
    stop_rule: str = "fixed steps"  # how each sample's run stops (ON_CHIP_STOPS, or a bound)
    stop_detail: str = ""

    def energy(
        self, scope: str, static_scale: float = 1.0, op_scale: float = 1.0, throughput=False
    ) -> float:
        """Per sample; at throughput the chip runs `copies_per_chip` copies side by side (as the
        GPU batches), so a held chip's static power is shared by that many samples."""
        static = self.static_j[scope]
        if throughput and scope == "device":
            static = static / self.copies_per_chip
        return self.dynamic_j * op_scale + static * static_scale

    def to_dict(self, scope: str) -> dict:
        return {
            "hardware": self.hardware,
            "fits": self.fits,
            "took": self.took,
            "cores": self.cores,
            "chips": self.chips,
            "static_scope": scope,
            "energy_uJ": self.energy(scope) * 1e6 if self.fits else None,
            "energy_uJ_by_static_scope": (
                {s: self.energy(s) * 1e6 for s in self.static_j} if self.fits else None
            ),
            "copies_per_chip": self.copies_per_chip,
            "energy_uJ_throughput": (
                self.energy(scope, throughput=True) * 1e6 if self.fits else None
            ),
            "latency_us": self.latency_s * 1e6 if self.fits else None,
            "batch": 1,
            "steps_per_sample": self.steps,
            "stop_rule": self.stop_rule,
            "stop_detail": self.stop_detail,
            "problems": list(self.problems),
        }


@dataclass(frozen=True)
class GPUVariant:
    """The GPU's algorithm at one precision and kernel, and whether it reaches the chip's
    accuracy (`accuracy`: the test and its figures)."""

    precision: str
    kernel: str
    algorithm: DenseAlgorithm
    reaches_accuracy: bool
    accuracy: str


@dataclass(frozen=True)
class Assumptions:
    """The headline's choices (None: the cheapest that passes) and constant scales (1: as in
    the hardware files)."""

    static_scope: str = "device"
    launch_model: str = "graph"
    precision: str | None = None
    kernel: str | None = None
    scales: dict = field(default_factory=dict)

    def scale(self, name: str) -> float:
        return float(self.scales.get(name, 1.0))


def scaled_gpu(hw: DenseHardware, a: Assumptions) -> DenseHardware:
    """The GPU description with the assumptions' constant scales applied."""
    idle = hw.idle_power_w * a.scale("gpu_idle_power")
    return replace(
        hw,
        idle_power_w=idle,
        busy_power_w=max(hw.busy_power_w * a.scale("gpu_busy_power"), idle),
        launch_overhead_s=hw.launch_overhead_s * a.scale("gpu_launch_overhead"),
        graph_step_overhead_s=hw.graph_step_overhead_s * a.scale("gpu_launch_overhead"),
    )


def _gpu_price(v: GPUVariant, hw: DenseHardware, a: Assumptions, throughput: bool) -> GPUPrice:
    gpu = scaled_gpu(hw, a)
    batch = (
        throughput_batch(v.algorithm, gpu, a.launch_model, precision=v.precision,
                         static_scope=a.static_scope)
        if throughput else 1
    )  # fmt: skip
    return price_algorithm(v.algorithm, gpu, batch, a.launch_model, v.precision, a.static_scope)


def _chip_energy(chip: ChipRow, a: Assumptions, throughput: bool) -> float:
    return chip.energy(
        a.static_scope, a.scale("chip_static_power"), a.scale("chip_op_energy"), throughput
    )


def _passing(variants: list[GPUVariant], a: Assumptions) -> list[GPUVariant]:
    out = [
        v
        for v in variants
        if v.reaches_accuracy
        and (a.precision is None or v.precision == a.precision)
        and (a.kernel is None or v.kernel == a.kernel)
    ]
    if not out:
        raise AtomsparkError(
            f"no GPU variant reaches the chip's accuracy with precision {a.precision or 'any'} and "
            f"kernel {a.kernel or 'any'}: choose another (passing: "
            + ", ".join(f"{v.precision}/{v.kernel}" for v in variants if v.reaches_accuracy)
            + ")"
        )
    return out


def best_variant(
    variants: list[GPUVariant], hw: DenseHardware, a: Assumptions, throughput: bool
) -> tuple[GPUVariant, GPUPrice]:
    """The cheapest passing variant (energy per sample) under the assumptions."""
    priced = [(v, _gpu_price(v, hw, a, throughput)) for v in _passing(variants, a)]
    return min(priced, key=lambda vp: vp[1].energy_j)


def _ratio(chip: ChipRow, variants, hw, a: Assumptions, throughput: bool) -> float:
    _, price = best_variant(variants, hw, a, throughput)
    return price.energy_j / max(_chip_energy(chip, a, throughput), 1e-300)


def _alternatives(variants: list[GPUVariant]) -> dict[str, tuple]:
    passing = [v for v in variants if v.reaches_accuracy]
    return {
        "static_scope": STATIC_SCOPES,
        "launch_model": LAUNCH_MODELS,
        "precision": tuple(dict.fromkeys(v.precision for v in passing)),
        "kernel": tuple(dict.fromkeys(v.kernel for v in passing)),
        **{name: SCALES for name in SCALED},
    }


def _with(a: Assumptions, name: str, value) -> Assumptions:
    """`a` with one alternative applied: a choice replaced, or a constant's scale multiplied."""
    if name in SCALED:
        return replace(a, scales={**a.scales, name: a.scale(name) * value})
    return replace(a, **{name: value})


def ratio_range(chip: ChipRow, variants, hw, a: Assumptions, throughput: bool) -> tuple:
    """(lowest, highest) ratio over every combination of the alternatives (module docstring)."""
    alts = _alternatives(variants)
    names = list(alts)
    valid = {(v.precision, v.kernel) for v in variants if v.reaches_accuracy}
    gpu_scaled = ("gpu_idle_power", "gpu_busy_power", "gpu_launch_overhead")
    lo, hi, cache = np.inf, -np.inf, {}
    for combo in itertools.product(*(alts[n] for n in names)):
        vals = dict(zip(names, combo))
        if (vals["precision"], vals["kernel"]) not in valid:
            continue
        scales = {n: a.scale(n) * vals[n] for n in SCALED}
        key = tuple(vals[n] for n in CHOICES) + tuple(scales[n] for n in gpu_scaled)
        if key not in cache:
            trial = Assumptions(*(vals[n] for n in CHOICES), scales=scales)
            cache[key] = best_variant(variants, hw, trial, throughput)[1].energy_j
        chip_j = chip.energy(
            vals["static_scope"], scales["chip_static_power"], scales["chip_op_energy"],
            throughput,
        )  # fmt: skip
        ratio = cache[key] / max(chip_j, 1e-300)
        lo, hi = min(lo, ratio), max(hi, ratio)
    return float(lo), float(hi)


def tornado(chip: ChipRow, variants, hw, a: Assumptions, throughput: bool) -> list[dict]:
    """Each alternative moved alone from the headline: its ratios, widest swing first."""
    base = _ratio(chip, variants, hw, a, throughput)
    bars = []
    for name, values in _alternatives(variants).items():
        ratios = {}
        for value in values:
            trial = _with(a, name, value)
            try:
                ratios[_label(name, value)] = _ratio(chip, variants, hw, trial, throughput)
            except AtomsparkError:
                continue  # this precision / kernel does not reach the accuracy
        lo, hi = min(ratios.values()), max(ratios.values())
        bars.append({"assumption": name, "label": _title(name), "ratios": ratios,
                     "low": lo, "high": hi, "headline": base})  # fmt: skip
    return sorted(bars, key=lambda b: b["high"] / b["low"], reverse=True)


def _title(name: str) -> str:
    return SCALED.get(name, name.replace("_", " "))


def _label(name: str, value) -> str:
    return f"x{value:g}" if name in SCALED else str(value)


def compare_workload(
    name: str,
    chip: ChipRow,
    variants: list[GPUVariant],
    hw: DenseHardware,
    a: Assumptions,
    lower_bound: ChipRow | None = None,
) -> dict:
    """Chip row, GPU rows, the headline ratio with its range and the tornado, at batch 1 and at
    the GPU's throughput batch (JSON-ready; module docstring). The chip row must stop by a rule
    the chip can evaluate (ON_CHIP_STOPS); `lower_bound`, a row stopped by the oracle, is
    reported beside it as a labelled lower bound on the chip's energy."""
    if chip.stop_rule not in ON_CHIP_STOPS:
        raise AtomsparkError(
            f"chip row of {name}: stop rule {chip.stop_rule!r} is not one the chip can evaluate "
            f"({', '.join(ON_CHIP_STOPS)}): it is a lower bound, never a headline"
        )
    out = {"workload": name, "chip": chip.to_dict(a.static_scope), "fits": chip.fits}
    out["gpu_variants"] = [
        {"precision": v.precision, "kernel": v.kernel, "reaches_accuracy": v.reaches_accuracy,
         "accuracy": v.accuracy, "algorithm": v.algorithm.name,
         "iterations_per_sample": v.algorithm.iterations_per_sample(),
         "iterations_source": v.algorithm.iterations_source}
        for v in variants
    ]  # fmt: skip
    rows = []
    for throughput in (False, True):
        v, price = best_variant(variants, hw, a, throughput)
        rows.append(_gpu_row(price, "headline (the GPU at its best)"))
        for launches in LAUNCH_MODELS:
            if launches != a.launch_model:
                alt = _gpu_price(v, hw, replace(a, launch_model=launches), throughput)
                rows.append(_gpu_row(alt, "launch-model alternative"))
    out["gpu"] = rows
    out["headline"] = {**asdict(a), "precision": rows[0]["precision"], "kernel": rows[0]["kernel"]}
    if not chip.fits:
        out.update(ratio=None, ratio_min=None, ratio_max=None, batch_1=None, tornado=None)
        return out
    for key, throughput in (("throughput", True), ("batch_1", False)):
        lo, hi = ratio_range(chip, variants, hw, a, throughput)
        out[key] = {
            "ratio": _ratio(chip, variants, hw, a, throughput),
            "ratio_min": lo,
            "ratio_max": hi,
            "tornado": tornado(chip, variants, hw, a, throughput),
        }
    out["ratio"] = out["throughput"]["ratio"]
    out["ratio_min"] = out["throughput"]["ratio_min"]
    out["ratio_max"] = out["throughput"]["ratio_max"]
    if lower_bound is not None and lower_bound.fits:
        out["oracle_lower_bound"] = {
            "label": "chip stopped by an oracle that knows the answer: a lower bound on the "
            "chip's energy, not a headline",
            "stop_detail": lower_bound.stop_detail,
            "steps_per_sample": lower_bound.steps,
            "batch_1": _ratio(lower_bound, variants, hw, a, False),
            "throughput": _ratio(lower_bound, variants, hw, a, True),
        }
    return out


def _gpu_row(p: GPUPrice, role: str) -> dict:
    return {
        "role": role,
        "hardware": p.hardware,
        "fits": True,
        "cores": None,
        "batch": p.batch,
        "precision": p.precision,
        "launch_model": p.launches,
        "kernel": p.kernel,
        "static_scope": p.static_scope,
        "energy_uJ": p.energy_j * 1e6,
        "energy_tdp_bound_uJ": p.energy_tdp_bound_j * 1e6,
        "latency_us": p.latency_s * 1e6,
        "time_per_sample_us": p.time_s * 1e6,
        "iterations_per_sample": p.iterations,
        "bound": p.bound,
        "source": "model (mapping/gpu_pricing.py)",
    }


def format_results(results: dict[str, dict]) -> list[str]:
    """Printable lines: per workload the chip row, the headline GPU rows and the ratios."""
    lines = []
    for name, r in results.items():
        c = r["chip"]
        if not r["fits"]:
            lines.append(f"[chip vs gpu] {name}: {c['hardware']} {c['took']}; no ratio")
            continue
        lines.append(
            f"[chip vs gpu] {name}: {c['hardware']} {c['energy_uJ']:.4g} uJ, {c['latency_us']:.4g} us "
            f"per sample on {c['cores']} cores ({c['took']}; static scope {c['static_scope']}; "
            f"stop: {c.get('stop_detail') or c.get('stop_rule', 'fixed steps')})"
        )
        for row in (g for g in r["gpu"] if g["role"].startswith("headline")):
            lines.append(
                f"[chip vs gpu] {name}: {row['hardware']} batch {row['batch']} {row['precision']} "
                f"{row['kernel']} {row['launch_model']}: {row['energy_uJ']:.4g} uJ, "
                f"{row['latency_us']:.4g} us latency ({row['bound']}-bound)"
            )
        bound = r.get("oracle_lower_bound")
        for key, what in (("batch_1", "batch 1"), ("throughput", "throughput")):
            q = r[key]
            oracle = f"; oracle stop, not a headline: {bound[key]:.3g}x" if bound else ""
            lines.append(
                f"[chip vs gpu] {name}: GPU/chip energy at {what} {q['ratio']:.3g}x "
                f"(range {q['ratio_min']:.3g}-{q['ratio_max']:.3g}x{oracle})"
            )
    return lines

"""Chip vs GPU per sample, energy and time side by side: a headline ratio and its range of
best practice, and a separate table of how not to run it.

Inputs: the chip row of a workload (stopped by a rule the chip can evaluate, priced on every
placement that fits, packed to spread, energy split into dynamic and static so that the static
scope and the estimated constants can change) and the GPU's own algorithm at every precision and
kernel, each checked against the chip's accuracy (scenarios/compare/gpu_variants.py). Ratios are
GPU / chip (> 1: the chip uses less energy, or takes less time).

Regimes, one definition each: "batch 1" is one sample alone on each device (latency); at
"throughput" each device is kept full, the GPU at its throughput-optimal batch and the chip
holding as many copies of the network as its cores allow (a held chip's static power is shared
by the samples in flight); time per sample is then a batch's time / its size on the GPU and a
copy's time / copies on the chip (1 / samples per second of one device).

Headline (the GPU at its best, the same static scope on both sides): whole devices held
("device"), graph-captured launches, the cheapest precision and kernel that reach the chip's
accuracy, the chip on the placement optimal for the regime's objective (energy per sample at
batch 1; energy per sample at throughput), every constant at its file value.

Range (best practice): the lowest and highest ratio over the estimated constants in SCALED at
half and double the headline's value and the legitimate choices: static scope, graph or
per-iteration launches, the placement objective (energy- or latency-optimal), the GPU always on
its cheapest passing precision and kernel. A choice the user fixes (`--static-scope`,
`--launch-model`, `--precision`, `--kernel`, `--placement`) is fixed in the range too.
Strawmen stay out of it, in `how_not_to_run_it`: eager per-op launches, a passing precision or
kernel slower than another passing one, a precision that does not reach the chip's accuracy.
Tornado: each alternative moved alone from the headline.
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
    "chip_static_power": "chip static power (the preset's measured band, else x0.5/x2)",
    "chip_op_energy": "chip per-operation energies (the preset's fit band, else x0.5/x2)",
}
CHOICES = ("static_scope", "launch_model", "precision", "kernel", "placement")
BEST_PRACTICE_LAUNCHES = ("graph", "per-iteration")  # per-op (eager) is a strawman
# stopping rules a chip can evaluate itself (scenarios/compare/chip_rows.py); any other stop
# (the oracle, which knows the converged answer) is a labelled lower bound, never a headline
ON_CHIP_STOPS = ("held-out budget", "fixed steps", "quiescence")
PLACEMENT_OBJECTIVES = ("energy", "latency")


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
    # the same run priced on every placement that fits, packed to spread (each a ChipRow of its
    # own, `placements` empty); empty: this row is the only placement
    placements: tuple = field(default=(), repr=False, compare=False)
    bound: object = field(default=None, repr=False, compare=False)  # oracle-stopped lower bound
    # scales the range tries for the chip's constants (mapping/chip_bands.py: from the preset's
    # silicon fit); a constant not named here is tried at SCALES
    bands: dict = field(default_factory=dict, compare=False)
    bias: str = ""  # the direction of the bias left in the headline (mapping/chip_bands.py)
    # the class scores are computed on the chip and priced in this row (the GPU's side then
    # prices its readout too; otherwise neither side does)
    readout_on_chip: bool = False

    def options(self) -> tuple:
        return self.placements or (self,)

    def choose(
        self, objective: str, scope: str, static_scale=1.0, op_scale=1.0, throughput=False
    ) -> ChipRow:
        """The placement optimal for `objective` ("energy": energy per sample in this regime
        and scope; "latency": time per sample)."""
        if objective not in PLACEMENT_OBJECTIVES:
            raise AtomsparkError(
                f"placement objective: choose one of {', '.join(PLACEMENT_OBJECTIVES)}"
            )
        if objective == "latency":
            return min(self.options(), key=lambda r: (r.latency_s, r.cores))
        return min(
            self.options(),
            key=lambda r: (r.energy(scope, static_scale, op_scale, throughput), r.cores),
        )

    def energy(
        self, scope: str, static_scale: float = 1.0, op_scale: float = 1.0, throughput=False
    ) -> float:
        """Per sample; at throughput the chip runs `copies_per_chip` copies side by side (as the
        GPU batches), so a held chip's static power is shared by that many samples."""
        static = self.static_j[scope]
        if throughput and scope == "device":
            static = static / self.copies_per_chip
        return self.dynamic_j * op_scale + static * static_scale

    def time_per_sample(self, throughput: bool = False) -> float:
        """Latency at batch 1; at throughput a copy's latency / the copies running side by side."""
        return self.latency_s / (self.copies_per_chip if throughput else 1)

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
            "chip_steps_per_sample": (
                self.report.chip_steps_per_sample if self.report is not None else None
            ),
            "microcode_uJ": self.report.breakdown.microcode * 1e6 if self.report else None,
            "microcode_instructions_per_sample": (
                self.report.microcode_instructions if self.report is not None else None
            ),
            "problems": list(self.problems),
            "bias": self.bias,
            "bands": {k: list(v) for k, v in self.bands.items()},
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
    placement: str = "energy"  # the chip's placement objective (PLACEMENT_OBJECTIVES)
    fixed: tuple = ()  # choices (CHOICES) the user fixed: the range keeps them fixed too

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
    return _chosen(chip, a, throughput).energy(
        a.static_scope, a.scale("chip_static_power"), a.scale("chip_op_energy"), throughput
    )


def _chosen(chip: ChipRow, a: Assumptions, throughput: bool) -> ChipRow:
    """The chip's placement optimal for the assumptions' objective in this regime."""
    return chip.choose(
        a.placement, a.static_scope, a.scale("chip_static_power"), a.scale("chip_op_energy"),
        throughput,
    )  # fmt: skip


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
    variants: list[GPUVariant],
    hw: DenseHardware,
    a: Assumptions,
    throughput: bool,
    require_pass: bool = True,
) -> tuple[GPUVariant, GPUPrice]:
    """The cheapest passing variant (energy per sample) under the assumptions (`require_pass`
    False: any of `variants`, for the how-not-to-run-it table)."""
    pool = _passing(variants, a) if require_pass else variants
    priced = [(v, _gpu_price(v, hw, a, throughput)) for v in pool]
    return min(priced, key=lambda vp: vp[1].energy_j)


def _ratio(chip: ChipRow, variants, hw, a: Assumptions, throughput: bool) -> float:
    _, price = best_variant(variants, hw, a, throughput)
    return price.energy_j / max(_chip_energy(chip, a, throughput), 1e-300)


def _alternatives(a: Assumptions, chip: ChipRow | None = None) -> dict[str, tuple]:
    """The range's alternatives (module docstring): best-practice choices, unless fixed, and each
    estimated constant at half and double, or over the band the chip's calibrated preset sets
    (chip.bands). Precision and kernel are the cheapest passing ones (None) unless the user
    fixed them."""
    choices = {
        "static_scope": STATIC_SCOPES,
        "launch_model": BEST_PRACTICE_LAUNCHES,
        "precision": (None,),
        "kernel": (None,),
        "placement": PLACEMENT_OBJECTIVES,
    }
    for name in CHOICES:
        if name in a.fixed or name in ("precision", "kernel"):
            choices[name] = (getattr(a, name),)
    bands = chip.bands if chip is not None else {}
    return {**choices, **{name: tuple(bands.get(name, SCALES)) for name in SCALED}}


def _with(a: Assumptions, name: str, value) -> Assumptions:
    """`a` with one alternative applied: a choice replaced, or a constant's scale multiplied."""
    if name in SCALED:
        return replace(a, scales={**a.scales, name: a.scale(name) * value})
    return replace(a, **{name: value})


def _combinations(a: Assumptions, chip: ChipRow | None = None):
    alts = _alternatives(a, chip)
    names = list(alts)
    for combo in itertools.product(*(alts[n] for n in names)):
        vals = dict(zip(names, combo))
        scales = {n: a.scale(n) * vals[n] for n in SCALED}
        yield replace(a, **{n: vals[n] for n in CHOICES}, scales=scales)


def ratio_range(chip: ChipRow, variants, hw, a: Assumptions, throughput: bool) -> dict:
    """Lowest and highest energy and time ratios over the best-practice range (module
    docstring): {"energy": (lo, hi), "time": (lo, hi)}."""
    gpu_scaled = ("gpu_idle_power", "gpu_busy_power", "gpu_launch_overhead")
    lo, hi, cache = {"energy": np.inf, "time": np.inf}, {"energy": -np.inf, "time": -np.inf}, {}
    for trial in _combinations(a, chip):
        key = tuple(getattr(trial, n) for n in CHOICES if n != "placement") + tuple(
            trial.scale(n) for n in gpu_scaled
        )
        if key not in cache:
            cache[key] = best_variant(variants, hw, trial, throughput)[1]
        price, mine = cache[key], _chosen(chip, trial, throughput)
        ratios = {
            "energy": price.energy_j / max(_chip_energy(chip, trial, throughput), 1e-300),
            "time": price.time_s / max(mine.time_per_sample(throughput), 1e-300),
        }
        for k, v in ratios.items():
            lo[k], hi[k] = min(lo[k], v), max(hi[k], v)
    return {k: (float(lo[k]), float(hi[k])) for k in lo}


def tornado(chip: ChipRow, variants, hw, a: Assumptions, throughput: bool) -> list[dict]:
    """Each alternative of the range moved alone from the headline: its energy ratios, widest
    swing first."""
    base = _ratio(chip, variants, hw, a, throughput)
    bars = []
    for name, values in _alternatives(a, chip).items():
        if len(values) < 2:
            continue
        ratios = {_label(name, v): _ratio(chip, variants, hw, _with(a, name, v), throughput)
                  for v in values}  # fmt: skip
        lo, hi = min(ratios.values()), max(ratios.values())
        bars.append({"assumption": name, "label": _title(name), "ratios": ratios,
                     "low": lo, "high": hi, "headline": base})  # fmt: skip
    return sorted(bars, key=lambda b: b["high"] / b["low"], reverse=True)


def how_not_to_run_it(chip: ChipRow, variants, hw, a: Assumptions) -> list[dict]:
    """The strawmen kept out of the range (module docstring), each priced with the headline's
    other assumptions: its energy ratios at batch 1 and at throughput."""
    rows = []

    def add(what: str, trial: Assumptions, only: list[GPUVariant] | None = None) -> None:
        row = {"what": what}
        for key, throughput in (("batch_1", False), ("throughput", True)):
            pool = only or variants
            _, price = best_variant(pool, hw, trial, throughput, require_pass=only is None)
            row[key] = price.energy_j / max(_chip_energy(chip, trial, throughput), 1e-300)
        rows.append(row)

    if a.launch_model != "per-op":
        add("eager launches, one per tensor op", replace(a, launch_model="per-op"))
    best = {k: best_variant(variants, hw, a, k == "throughput")[0] for k in ("b1", "throughput")}
    for v in variants:
        if any(v is b for b in best.values()):
            continue
        what = (
            f"{v.precision} {v.kernel}: " + ("slower than the cheapest passing variant"
            if v.reaches_accuracy else "does not reach the chip's accuracy")
        )  # fmt: skip
        add(what, replace(a, precision=v.precision, kernel=v.kernel), [v])
    return rows


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
    head = {False: _chosen(chip, a, False), True: _chosen(chip, a, True)} if chip.fits else {}
    lower_bound = lower_bound if lower_bound is not None else chip.bound
    out = {
        "workload": name,
        "chip": (head[False] if chip.fits else chip).to_dict(a.static_scope),
        "fits": chip.fits,
        "bias": chip.bias,
    }
    if chip.fits:
        out["chip"]["placements"] = [r.to_dict(a.static_scope) for r in chip.options()]
        out["chip"]["placement_choice"] = _placement_choice(chip, a)
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
    out["headline"] = {
        **asdict(a), "fixed": list(a.fixed), "precision": rows[0]["precision"],
        "kernel": rows[0]["kernel"],
        "objective": "energy per sample at batch 1; energy per sample at throughput",
    }  # fmt: skip
    if not chip.fits:
        out.update(ratio=None, ratio_min=None, ratio_max=None, batch_1=None, throughput=None,
                   tornado=None)  # fmt: skip
        return out
    for key, throughput in (("throughput", True), ("batch_1", False)):
        span = ratio_range(chip, variants, hw, a, throughput)
        _, price = best_variant(variants, hw, a, throughput)
        mine = head[throughput]
        out[key] = {
            "ratio": _ratio(chip, variants, hw, a, throughput),
            "ratio_min": span["energy"][0],
            "ratio_max": span["energy"][1],
            "time_ratio": price.time_s / max(mine.time_per_sample(throughput), 1e-300),
            "time_ratio_min": span["time"][0],
            "time_ratio_max": span["time"][1],
            "chip_cores": mine.cores,
            "chip_energy_uJ": _chip_energy(chip, a, throughput) * 1e6,
            "chip_time_per_sample_us": mine.time_per_sample(throughput) * 1e6,
            "gpu_energy_uJ": price.energy_j * 1e6,
            "gpu_time_per_sample_us": price.time_s * 1e6,
            "tornado": tornado(chip, variants, hw, a, throughput),
        }
    out["ratio"] = out["throughput"]["ratio"]
    out["ratio_min"] = out["throughput"]["ratio_min"]
    out["ratio_max"] = out["throughput"]["ratio_max"]
    out["how_not_to_run_it"] = how_not_to_run_it(chip, variants, hw, a)
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


def _placement_choice(chip: ChipRow, a: Assumptions) -> dict:
    """Cores of the energy- and latency-optimal placements at batch 1 and at throughput."""
    out = {}
    for objective in PLACEMENT_OBJECTIVES:
        for key, throughput in (("batch_1", False), ("throughput", True)):
            r = _chosen(chip, replace(a, placement=objective), throughput)
            out[f"{objective}-optimal, {key}"] = {
                "cores": r.cores,
                "energy_uJ": r.energy(a.static_scope, throughput=throughput) * 1e6,
                "time_per_sample_us": r.time_per_sample(throughput) * 1e6,
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
        cores = sorted({p["cores"] for p in c.get("placements") or [c]})
        spread = f"{cores[0]}-{cores[-1]}" if len(cores) > 1 else f"{cores[0]}"
        lines.append(
            f"[chip vs gpu] {name}: {c['hardware']} {c['energy_uJ']:.4g} uJ, {c['latency_us']:.4g} us "
            f"per sample on {c['cores']} cores, the energy-optimal of {len(cores)} placement(s) on "
            f"{spread} cores ({c['took']}; static scope {c['static_scope']}; "
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
                f"[chip vs gpu] {name}: GPU/chip at {what} (chip on {q['chip_cores']} cores): "
                f"energy {q['ratio']:.3g}x (range {q['ratio_min']:.3g}-{q['ratio_max']:.3g}x), "
                f"time {q['time_ratio']:.3g}x (range {q['time_ratio_min']:.3g}-"
                f"{q['time_ratio_max']:.3g}x){oracle}"
                + (f"; remaining bias: {r['bias']}" if r.get("bias") else "")
            )
    return lines

"""One point of the chip-vs-GPU map (scenarios/compare/chip_gpu_map.py): a model family at one
size and activity, priced by the path the headline rows use (scenarios/compare/chip_rows.chip_row
on the chip, the GPU's own algorithm as GPUVariants, mapping/chip_gpu_ratios.compare_workload).

What is run and what is carried, per family (each registered with `register_map_family`):

* RSGN (published and sparse): the demo's own path at the point's size
  (scenarios/runs/demo.rsgn_workload). An untrained model (the demo's RSGN is untrained too: its
  costs do not depend on trained values) at n_nodes N and d_hidden d; sparse thresholds
  calibrated by homeostasis to the point's target activity; the chip runs the exported fixed
  point on 16 hierarchical-task sequences, and the GPU variants are tested on the same
  sequences. Nothing is carried. The exported graph is fitted before it is run: a size no
  layout fits is recorded as not fitting (the chip row's words) without running it.
* VN settle: a settle's event counts are set by the trained dictionary (how many atoms carry
  code and how many steps it takes to settle), and a trained model per point would be one
  training run per size. The map therefore builds the graph of a random dictionary of the
  point's size (dense VN: every atom reaches every atom of its layer and the next, whatever the
  weights), and carries from the demo's trained 2-layer VN (docs/results/chip_vs_gpu/demo.json):
  the chip's held-out step budget per sample, the GPU's FISTA iterations per sample at each
  precision (mean; the headline precision's slowest sample too) and which precisions reach the
  chip's accuracy, the share of atoms updating per step (the fixed-point atom updates only while
  input arrives) and the arithmetic (fixed point). The activity (share of atoms sending an
  event per step) is the map's axis; each sender sends to its whole fan-out, as the engine
  counts. The largest VN built is VN_LARGEST atoms: a dense VN of 16,384 atoms is not built
  here (its Gram alone is 16,384^2 x 8 B = 2 GiB, several copies of it to build and quantise).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from atomspark.mapping.chip_gpu_ratios import ChipRow, GPUVariant
from atomspark.mapping.hardware import NeuromorphicHardware
from atomspark.scenarios.compare import map_imported, map_lif
from atomspark.scenarios.compare.activity_profile import activity_profile
from atomspark.sim.core import AtomsparkError

RSGN_SEQUENCES = 16  # the demo's RSGN test sequences (and as many to calibrate on)
VN_WORKLOAD = "VN settle"  # the demo row whose measurements the VN points carry


@dataclass(frozen=True)
class MapFamily:
    """A family's side of the map. grid(name, carried) -> the points' parameters (dicts with "size", the
    x axis, and "activity"); price(point, carried, chip hw) -> (ChipRow, GPU variants);
    carried(demo) -> what the points carry from the demo's rows (JSON-ready; {} when nothing);
    demo_point: the point at the demo's size and activity (its row in demo.json is `workload`,
    "" when the demo has none), the series the family's sentence follows;
    size_axis / activity_axis: what the axes mean, in words."""

    name: str
    workload: str
    size_axis: str
    activity_axis: str
    grid: Callable[[str], list[dict]]
    price: Callable[[dict, dict, NeuromorphicHardware], tuple[ChipRow, list[GPUVariant]]]
    carried: Callable[[dict], dict]
    demo_point: Callable[[dict], dict]
    method: str = ""  # what runs at each point and what is carried, for the doc


_FAMILIES: dict[str, MapFamily] = {}


def register_map_family(family: MapFamily) -> MapFamily:
    """Add `family` to the map (one per name)."""
    if family.name in _FAMILIES and _FAMILIES[family.name] is not family:
        raise AtomsparkError(f"register_map_family: {family.name!r} is on the map already")
    _FAMILIES[family.name] = family
    return family


def map_families() -> list[MapFamily]:
    return list(_FAMILIES.values())


# ----- VN settle --------------------------------------------------------------------------------
VN_ACTIVITIES = {"ci": (0.05,), "full": (0.05, 0.8)}  # beside the demo's measured activity
VN_SCALES = {"ci": (1, 2), "full": (1, 2, 4, 8, 16, 32, 64)}  # x the demo's atoms per layer
VN_ONE_LAYER = {"ci": (), "full": (64, 128, 256, 512, 1024, 2048, 4096, 8192)}
VN_LARGEST = 8192  # atoms: the largest dense VN the map builds (module docstring)


def vn_carried(demo: dict) -> dict:
    """The demo VN's measurements the VN points carry (module docstring)."""
    vn, row = demo["vn"], demo["chip_vs_gpu"][VN_WORKLOAD]
    atoms = sum(vn["atoms_per_layer"])
    gpu_max = {(g["precision"], g["kernel"]): g["iterations_per_sample"]
               for g in row["gpu"] if g["role"].startswith("headline") and g["batch"] > 1}  # fmt: skip
    return {
        "source": f"docs/results/chip_vs_gpu/demo.json, row {VN_WORKLOAD!r} (the demo's trained "
        f"VN, {vn['atoms_per_layer']} atoms, {vn['samples']} samples)",
        "atoms_per_layer": vn["atoms_per_layer"],
        "samples": vn["samples"],
        "chip_steps_per_sample": row["chip"]["steps_per_sample"],
        "chip_stop_detail": row["chip"]["stop_detail"],
        "activity": demo["vn_chip_stop_steps"][VN_WORKLOAD].get(
            "events_per_unit_step", vn["events_per_sample"] / (atoms * vn["engine_steps"])
        ),
        "update_share": demo["vn_chip_stop_steps"][VN_WORKLOAD].get("updates_per_unit_step", 1.0),
        # the arithmetic the demo's chip row deploys: fixed point with these fractional bits
        "frac_bits": (vn.get("fixed_point") or {}).get("frac_bits"),
        "gpu": [
            {"precision": v["precision"], "kernel": v["kernel"],
             "reaches_accuracy": v["reaches_accuracy"], "accuracy": v["accuracy"],
             "iterations_mean": v["iterations_per_sample"],
             "iterations_max": gpu_max.get((v["precision"], v["kernel"]),
                                           v["iterations_per_sample"])}
            for v in row["gpu_variants"]
        ],
    }  # fmt: skip


def vn_layers(point: dict) -> list[int]:
    return [int(k) for k in point["atoms_per_layer"]]


def _vn_model(layers: list[int]):
    """A random dictionary in the demo's shape (32 inputs, (48, 16), (32, 8)) scaled to `layers`."""
    from atomspark.networks.vn import VNModel

    last = len(layers) - 1
    sizes = [(k, max(2, k // (4 if i == last else 3))) for i, k in enumerate(layers)]
    return VNModel.random(max(2, 2 * layers[0] // 3), sizes, seed=0)


def _spread(mean: float, most: float, n: int) -> np.ndarray:
    """n per-sample counts with the given mean and maximum (one sample at the maximum)."""
    if n < 2 or most <= mean:
        return np.full(max(n, 1), float(mean))
    rest = (n * mean - most) / (n - 1)
    return np.array([most] + [rest] * (n - 1)) if rest > 0 else np.full(n, float(mean))


def vn_price(point: dict, carried: dict, hw: NeuromorphicHardware):
    """The chip row and GPU variants of a random VN of the point's size (module docstring)."""
    from atomspark.mapping.quantize import fixed_vn_runner
    from atomspark.networks.sample_runner import vn_runner
    from atomspark.scenarios.compare.chip_rows import HEADLINE_STOP, chip_row
    from atomspark.scenarios.compare.gpu_side import MatchedSettle, vn_algorithm

    model = _vn_model(vn_layers(point))
    runner = vn_runner(model)
    if carried.get("frac_bits"):  # priced in the arithmetic the demo's chip row deploys
        runner = fixed_vn_runner(runner, frac_bits=int(carried["frac_bits"]))
    graph = runner.graph
    n = int(carried["samples"])
    steps = int(round(carried["chip_steps_per_sample"] * n))
    profile = activity_profile(graph, steps, float(point["activity"]), carried["update_share"])
    detail = (
        f"held-out budget carried from the demo's trained VN: "
        f"{carried['chip_steps_per_sample']:.0f} steps per sample"
    )
    row = chip_row(graph, profile, hw, n, None, HEADLINE_STOP, detail)
    variants = []
    for v in carried["gpu"]:
        its = _spread(v["iterations_mean"], v["iterations_max"], n)
        matched = MatchedSettle("joint", 0.0, its, 0.0, 0.0)
        alg = dataclasses.replace(
            vn_algorithm(model, matched), precision=v["precision"],
            iterations_source=f"carried from {carried['source']}",
        )  # fmt: skip
        variants.append(GPUVariant(v["precision"], v["kernel"], alg, v["reaches_accuracy"],
                                   f"carried: {v['accuracy']}"))  # fmt: skip
    return row, variants


def vn_grid(name: str, carried_activity: float) -> list[dict]:
    demo = [48, 32]
    points = []
    for activity in sorted({*VN_ACTIVITIES[name], round(carried_activity, 4)}):
        for s in VN_SCALES[name]:
            points.append({"atoms_per_layer": [k * s for k in demo], "activity": activity})
        for k in VN_ONE_LAYER[name]:
            points.append({"atoms_per_layer": [k], "activity": activity})
    for p in points:
        p["size"] = sum(p["atoms_per_layer"])
        p["series"] = f"{len(p['atoms_per_layer'])} layer(s), activity {p['activity']:g}"
    return points


# ----- RSGN -------------------------------------------------------------------------------------
RSGN_NODES = {"ci": (48, 64), "full": (64, 128, 256, 512, 1024, 2048, 4096)}
RSGN_WIDTHS = {"ci": (32,), "full": (32, 128)}
RSGN_SPARSE_ACTIVITIES = {"ci": (0.1,), "full": (0.03, 0.1, 0.3)}  # sparse thresholds' target
DEMO_RSGN = {"n_nodes": 256, "d_hidden": 128, "activity": 0.1}


def rsgn_config(mode: str, point: dict):
    """The demo's RSGN configuration (scenarios/runs/demo.rsgn_section) at the point's size."""
    from atomspark.networks import rsgn

    extra = (
        {"k_nearest": 16, "cutoff": 0.3, "temperature": 0.1, "threshold_bounds": (0.01, 4.0),
         "target_activity": float(point["activity"])}
        if mode == "sparse" else {}
    )  # fmt: skip
    return rsgn.RSGNConfig(mode=mode, n_nodes=int(point["n_nodes"]),
                           d_hidden=int(point["d_hidden"]), n_classes=20, n_steps=5, **extra)  # fmt: skip


def rsgn_price(mode: str):
    def price(point: dict, carried: dict, hw: NeuromorphicHardware):
        from atomspark.networks import rsgn
        from atomspark.networks.datasets import hierarchical_sequences
        from atomspark.scenarios.compare.chip_rows import FIXED_STOP
        from atomspark.scenarios.compare.rsgn_compare import rsgn_chip_fit
        from atomspark.scenarios.runs.demo import calibrate_thresholds, rsgn_workload
        from atomspark.scenarios.runs.engine import run_rsgn

        data = hierarchical_sequences(n=2 * RSGN_SEQUENCES, seed=0)
        calib, test = data.tokens[:RSGN_SEQUENCES], data.tokens[RSGN_SEQUENCES:]
        cfg = rsgn_config(mode, point)
        params = rsgn.init_params(cfg, seed=0)
        if mode == "sparse":
            params = calibrate_thresholds(params, cfg, calib)
        fit = rsgn_chip_fit(params, cfg, test, hw)  # what does not fit is not run
        if not fit.fits:
            why = tuple(fit.problems)
            return ChipRow(hw.name, False, "does not fit: " + "; ".join(why), problems=why,
                           stop_rule=FIXED_STOP), []  # fmt: skip
        return rsgn_workload(params, cfg, test, run_rsgn(params, cfg, test), hw, fit)

    return price


def rsgn_grid(mode: str):
    def grid(name: str) -> list[dict]:
        points = []
        activities = RSGN_SPARSE_ACTIVITIES[name] if mode == "sparse" else (1.0,)
        for d in RSGN_WIDTHS[name]:  # smallest first: a stopped run has priced the cheap ones
            for n in RSGN_NODES[name]:
                for activity in activities:
                    points.append({"n_nodes": n, "d_hidden": d, "activity": activity})
        for p in points:
            p["size"] = p["n_nodes"]
            p["series"] = f"d {p['d_hidden']}" + (
                f", activity {p['activity']:g}" if mode == "sparse" else ""
            )
        return points

    return grid


register_map_family(
    MapFamily(
        name="VN settle",
        workload=VN_WORKLOAD,
        size_axis="atoms (all layers)",
        activity_axis="share of atoms sending an event per step",
        grid=lambda name, carried=None: vn_grid(name, (carried or {}).get("activity", 0.27)),
        price=vn_price,
        carried=vn_carried,
        demo_point=lambda carried: {
            "atoms_per_layer": list(carried["atoms_per_layer"]),
            "activity": round(carried["activity"], 4),
        },
        method="the graph of a random dictionary of each size, in the demo's shape (dense VN: "
        "every atom reaches its layer and the next whatever the weights), the chip stopped by "
        "the held-out budget and the GPU running joint FISTA, both carried from the demo's "
        "trained VN (a settle's length follows the trained dictionary's conditioning and the "
        "code density the data; the map holds them at the demo's values and varies the "
        "activity instead). Fixed point rounds small weights to zero (a smaller share of a "
        "larger VN's atoms reaches each atom), and an atom whose sources exceed a core's input "
        f"axons does not fit. The largest VN built is {VN_LARGEST:,} atoms: a dense VN of "
        f"{2 * VN_LARGEST:,} is not built here (its Gram alone is {(2 * VN_LARGEST) ** 2 * 8 / 2**30:.0f} "
        "GiB in float64, with several copies to compile and quantise it on a shared machine)",
    )
)
for _mode in ("published", "sparse"):
    register_map_family(
        MapFamily(
            name=f"RSGN {_mode}",
            workload=f"RSGN {_mode}",
            size_axis="nodes N",
            activity_axis=(
                "target activity of the calibrated thresholds (share of nodes active per step)"
                if _mode == "sparse"
                else "every node sends every step (the published model)"
            ),
            grid=lambda name, carried=None, _m=_mode: rsgn_grid(_m)(name),
            price=rsgn_price(_mode),
            carried=lambda demo: {},
            demo_point=lambda carried, _m=_mode: {
                **{k: DEMO_RSGN[k] for k in ("n_nodes", "d_hidden")},
                "activity": DEMO_RSGN["activity"] if _m == "sparse" else 1.0,
            },
            method="the demo's own function at each size (scenarios/runs/demo.rsgn_workload): "
            "an untrained model, as the demo's, "
            + ("its thresholds calibrated to the target activity, " if _mode == "sparse" else "")
            + "the exported fixed point on the chip over 16 hierarchical-task sequences and the "
            "GPU's forward tested on the same sequences; nothing carried",
        )
    )

register_map_family(
    MapFamily(
        name="LIF network",
        workload="",  # no demo row: the demo runs no LIF network
        size_axis="neurons",
        activity_axis="share of neurons spiking per 0.1 ms step",
        grid=map_lif.lif_grid,
        price=map_lif.lif_price,
        carried=lambda demo: {},
        demo_point=lambda carried: {"neurons": 4000, "activity": 0.003},
        method=f"the CUBA network (80 % excitatory, 2 % connectivity) at each size, one sample "
        f"a window of {map_lif.LIF_STEPS:,} steps of 0.1 ms (a choice of this map), every neuron "
        "updating each step and a share `activity` spiking; the GPU steps the same network, "
        "batched, as a dense product or a CSR gather; only fp32 counts as reaching the chip's "
        "accuracy (reduced precisions move spike times and are not tested); nothing depends on "
        "trained values. The sentence follows activity 0.003",
    )
)
register_map_family(
    MapFamily(
        name="imported NIR graph",
        workload="",  # no demo row
        size_axis="units (each recorded case at its own size)",
        activity_axis="input spike rate per step",
        grid=map_imported.imported_grid,
        price=map_imported.imported_price,
        carried=lambda demo: {},
        demo_point=lambda carried: {"case": "snntorch_recurrent", "activity": 0.2},
        method="each recorded NIR producer case (snnTorch, Sinabs, Norse networks in "
        "tests/data/nir) at its own size, priced by compare's function for imported graphs "
        "(scenarios/compare/nir_compare.nir_workload: the import's chip prediction in Loihi fixed "
        f"point, {map_imported.IMPORT_STEPS} steps, {map_imported.IMPORT_SAMPLES} samples, "
        "against the graph stepped in torch at each precision and kernel, a precision passing "
        "where its spikes match fp32 as often as the chip's do); the curve joins different "
        "networks, ordered by size. The sentence follows input rate 0.2",
    )
)

"""docs/chip_vs_gpu.md, rendered from the committed results (docs/results/chip_vs_gpu/): every
figure in the doc comes from demo.json (this method's run), history.json (the earlier pricing) or
map/map.json (`atomspark map`, the doc's lead); its two plots are drawn from demo.json too.

    atomspark demo --out results/demo
    python -m atomspark.scenarios.compare.chip_vs_gpu_doc results/demo   # results + figures + doc
    python -m atomspark.scenarios.compare.chip_vs_gpu_doc                # the doc from the results

Both also rewrite the README's sample demo output (scenarios/runs/demo_transcript.py).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
from datetime import datetime, timezone
from pathlib import Path

from atomspark.mapping.chip_gpu_ratios import SCALED
from atomspark.mapping.lava.rsgn_split import PERIOD
from atomspark.scenarios.compare.map_doc import load_map, map_section
from atomspark.scenarios.compare.ratio_plots import plot_ratios, plot_tornado
from atomspark.scenarios.compare.step_time_doc import step_time_bullet
from atomspark.scenarios.runs.demo_transcript import rewrite_readme
from atomspark.sim.core import atomic_write_text

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "docs" / "results" / "chip_vs_gpu"
DOC = ROOT / "docs" / "chip_vs_gpu.md"
FIGURES = ROOT / "docs" / "figures"


def _x(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:,.3g}x" if v < 1000 else f"{v:,.0f}x"


def _num(v: float | None) -> str:
    return "-" if v is None else (f"{v:.3g}" if abs(v) < 1000 else f"{v:,.0f}")


def _copies(n: int) -> str:
    return f"{n} {'copy' if n == 1 else 'copies'}"


def _summary_table(results: dict) -> list[str]:
    out = [
        "| workload | fits | chip cores (batch 1 / throughput) | chip uJ (batch 1 / throughput) "
        "| GPU/chip energy, batch 1 | range | time, batch 1 | range | GPU/chip energy, "
        "throughput | range | time, throughput | range | remaining bias |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, r in results.items():
        if not r["fits"]:
            out.append(f"| {name} | no | - | - | does not fit | - | - | - | does not fit | - | "
                       "- | - | - |")  # fmt: skip
            continue
        b1, tp = r["batch_1"], r["throughput"]
        out.append(
            f"| {name} | yes | {b1['chip_cores']} / {tp['chip_cores']} | "
            f"{_num(b1['chip_energy_uJ'])} / {_num(tp['chip_energy_uJ'])} | "
            + " | ".join(
                f"**{_x(q[k])}** | {_x(q[k + '_min'])} - {_x(q[k + '_max'])}"
                for q in (b1, tp)
                for k in ("ratio", "time_ratio")
            )
            + f" | {r.get('bias') or '-'} |"
        )
    return out


def _how_not_table(results: dict) -> list[str]:
    """The strawmen kept out of the ranges, each with the headline's other assumptions."""
    out = [
        "| workload | how not to run it | GPU/chip energy, batch 1 | throughput |",
        "| --- | --- | --- | --- |",
    ]
    for name, r in results.items():
        for row in r.get("how_not_to_run_it") or []:
            out.append(
                f"| {name} | {row['what']} | {_x(row['batch_1'])} | {_x(row['throughput'])} |"
            )
    return out


def _old_new_table(results: dict, previous: dict) -> list[str]:
    """Headline ranges before this method (previous.json) beside today's."""
    out = [
        "| workload | before: batch 1 (range) | now: batch 1 (range) | before: throughput "
        "(range) | now: throughput (range) |",
        "| --- | --- | --- | --- | --- |",
    ]

    def cell(q: dict | None) -> str:
        if not q:
            return "does not fit"
        return f"{_x(q['ratio'])} ({_x(q['ratio_min'])} - {_x(q['ratio_max'])})"

    for name, r in results.items():
        old = previous.get(name, {})
        out.append(
            f"| {name} | {cell(old.get('batch_1'))} | {cell(r.get('batch_1'))} | "
            f"{cell(old.get('throughput'))} | {cell(r.get('throughput'))} |"
        )
    return out


def _workload(name: str, r: dict) -> list[str]:
    c = r["chip"]
    out = [f"### {name}", ""]
    if not r["fits"]:
        out += [
            f"**Does not fit** {c['hardware']}: " + "; ".join(c["problems"]) + ". No energy.",
            "",
        ]
        return out
    bound = r.get("oracle_lower_bound")
    oracle = (
        f" Oracle stop (a lower bound on the chip's energy, not a headline): "
        f"{bound['steps_per_sample']:.0f} steps per sample, GPU/chip energy {_x(bound['batch_1'])} "
        f"at batch 1 and {_x(bound['throughput'])} at throughput."
        if bound
        else ""
    )
    out += [
        f"Layout: {c['took']}. Stop: {c['stop_detail']}.{oracle} Headline placement: "
        f"{r['batch_1']['chip_cores']} core(s) at batch 1, {r['throughput']['chip_cores']} at "
        "throughput (energy-optimal for each).",
        "",
        "| device | placement | batch or copies | precision | kernel | launches | static scope | "
        "energy uJ/sample | latency us | bound |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for pc in c.get("placements") or [c]:
        for copies, energy in (
            (1, pc["energy_uJ"]),
            (pc["copies_per_chip"], pc["energy_uJ_throughput"]),
        ):
            out.append(
                f"| {c['hardware']} | {pc['cores']} cores | {_copies(copies)} | engine | events "
                f"| - | {c['static_scope']} | {_num(energy)} | {_num(pc['latency_us'])} | - |"
            )
    for g in r["gpu"]:
        role = "" if g["role"].startswith("headline") else " (alt.)"
        out.append(
            f"| {g['hardware']}{role} | - | batch {g['batch']} | {g['precision']} | {g['kernel']} "
            f"| {g['launch_model']} | {g['static_scope']} | {_num(g['energy_uJ'])} | "
            f"{_num(g['latency_us'])} | {g['bound']} |"
        )
    passing = [
        f"{v['precision']}/{v['kernel']}" for v in r["gpu_variants"] if v["reaches_accuracy"]
    ]
    tests = sorted({f"{v['precision']}: {v['accuracy']}" for v in r["gpu_variants"]})
    out += [
        "",
        f"Ratio GPU/chip, energy: batch 1 **{_x(r['batch_1']['ratio'])}** (range "
        f"{_x(r['batch_1']['ratio_min'])} - {_x(r['batch_1']['ratio_max'])}), throughput "
        f"**{_x(r['throughput']['ratio'])}** (range "
        f"{_x(r['throughput']['ratio_min'])} - {_x(r['throughput']['ratio_max'])}); time: "
        f"batch 1 **{_x(r['batch_1']['time_ratio'])}** (range "
        f"{_x(r['batch_1']['time_ratio_min'])} - {_x(r['batch_1']['time_ratio_max'])}), "
        f"throughput **{_x(r['throughput']['time_ratio'])}** (range "
        f"{_x(r['throughput']['time_ratio_min'])} - {_x(r['throughput']['time_ratio_max'])}). "
        f"Headline GPU: {r['headline']['precision']}, {r['headline']['kernel']} kernel, "
        f"{r['headline']['launch_model']} launches, {r['headline']['static_scope']} static scope.",
        "",
        f"Remaining bias of this headline ({c['hardware']}): {r.get('bias') or 'not stated'}.",
        "",
        "GPU precisions reaching the chip's accuracy: " + (", ".join(passing) or "none") + ". "
        "Tests: " + "; ".join(tests) + ".",
        "",
        "Tornado (throughput): "
        + "; ".join(
            f"{b['label']} {_x(b['low'])} - {_x(b['high'])}" for b in r["throughput"]["tornado"]
        )
        + ".",
        "",
    ]
    return out


def _sources(sources: dict) -> list[str]:
    out = [
        "| device | number | value | unit | source | estimate: derivation |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for device, rows in sources.items():
        for key, meta in rows.items():
            value = meta.get("value", "")
            value = _num(value) if isinstance(value, int | float) else ""
            est = meta.get("derivation", "") if meta.get("estimate") else ""
            text = str(meta.get("source", "")).replace("|", "/")
            out.append(
                f"| {device} | {key} | {value} | {meta.get('unit', '')} | {text} | "
                f"{est.replace('|', '/')} |"
            )
    return out


def _history(history: dict, results: dict) -> list[str]:
    out = [
        "| workload | strawman b1 | strawman b256 | fp32 per-iteration b1 | fp32 per-iteration "
        "b-opt | now b1 | now throughput |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, h in history["rows"].items():
        old = h["old_gpu_over_chip_energy"]
        new = h["new"]
        b1 = next(v for k, v in new.items() if k == "batch 1 fused")["energy_ratio"]
        bopt = next(v for k, v in new.items() if k.endswith("fused") and k != "batch 1 fused")
        now = results.get(name, {})
        now_b1 = _x(now["batch_1"]["ratio"]) if now.get("fits") else "does not fit"
        now_tp = _x(now["throughput"]["ratio"]) if now.get("fits") else "does not fit"
        out.append(
            f"| {name} | {_x(old['batch 1'])} | {_x(old['batch 256'])} | {_x(b1)} | "
            f"{_x(bopt['energy_ratio'])} | {now_b1} | {now_tp} |"
        )
    return out


def _method(stops: dict) -> list[str]:
    """How both sides are priced: placement, accounting, the GPU and the chip at their best."""
    return _method_sides() + _method_rules(stops)


def _method_sides() -> list[str]:
    """What each side runs and is charged for."""
    return [
        "- **One placement truth.** `mapping/core_fit.py` decides what a core holds (compartments, "
        "synapse memory, input and output axons); `mapping/layouts.py` tries each layout and "
        "both pricing and `export --report` use the same fit. A chip row is priced only where a "
        "layout fits. RSGN nodes do not fit whole (a node's d compartments would need d input "
        "axons per source node); the split layout sums messages feature by feature (one core "
        "holds feature k of many nodes), applies W_h on node-major cores and gathers each node's "
        f"norm in one more compartment, {PERIOD} chip time steps per model step, priced as "
        "the Lava export writes it (`export --to lava --fixed`: the same cores, chip time steps "
        "and the microcode its programs need beyond standard neurons, mapping/split_microcode.py, "
        "at an estimated cost per instruction), its readout included: the class scores' "
        "feature partials and accumulators where the bundle places them, on the layout's own "
        "cores where every per-core limit still holds, else on added cores "
        "(mapping/split_cores.place_readout, mapping/readout_price.py).",
        "- **Symmetric accounting.** Headline: each device is charged whole-device static or idle "
        "power for the time the workload holds it (one Loihi 2 chip: 128 cores' static power; "
        "one GPU: its idle power). The alternative `shared` charges the fraction used (the chip's "
        "cores in use; the GPU's kernel time at busy power) and is part of every range. At "
        "throughput the GPU batches and the chip holds as many copies of the network as its "
        "cores allow (each sample in its own copy), so each side's static or idle power is "
        "shared by the samples it serves at once.",
        "- **The GPU at its best.** Its own algorithm (joint FISTA for VN, the forward for RSGN "
        "with its readout where the chip row holds one on chip: both sides end with the class "
        "scores; a node-layout row reads out on the host, priced on neither side; RSGN's "
        "encoder, each sample's "
        "ignition, runs on the host for both and is priced on neither side) "
        "at each datasheet precision (fp32, tf32, bf16, int8; matrix products at the tensor-core "
        "peak, other work at the fp32 peak, operands emulated at that precision on the same "
        "samples); the headline takes the cheapest precision that reaches the chip's accuracy "
        "(VN: codes as close to the converged reference as the chip's; RSGN: the fp32 forward's "
        "class on at least as many samples as the chip). Sparse RSGN is priced as a gather over "
        "its stored synapses as well as a dense product (the cheaper is the headline). Launch "
        "models: graph-captured or persistent (headline), one launch per iteration, one per "
        "tensor op (eager). Batch 1 (latency) and the throughput-optimal batch. Memory as it "
        "is: an iteration whose whole working set fits the GPU's L2 cache (50 MB on the H100) "
        "reads main memory only on its first iteration and L2 after that.",
    ]


def _method_rules(stops: dict) -> list[str]:
    """The rules a row keeps: no oracle, known biases, placement, ranges of best practice."""
    scales = ", ".join(SCALED.values())
    return [
        f"- **Only what a chip can do.** A VN sample runs a fixed step budget chosen on held-out "
        f"samples: the smallest budget at which the other samples' codes all stay within "
        f"{stops['VN settle']['target_rel_error']:g} of the converged reference (relative; the "
        "99th percentile of their stops; a sample whose error floor lies above that, as in "
        "fixed point, counts once within 10 % of its error at the full budget), so no sample's "
        "own answer sets its stop: "
        + "; ".join(
            f"{n} {s['mean']:.0f} steps per sample on average (run budget {s['budget']})"
            for n, s in stops.items()
        )
        + ". RSGN runs its K + 1 steps. The stop at the step where a sample's own codes settle "
        "(an oracle: the chip cannot know the answer) is printed beside each ratio as a lower "
        "bound on the chip's energy, never as the headline. The GPU pays for its own "
        "convergence test (one more device-side step per iteration under graph launches, a host "
        "synchronisation under per-iteration launches).",
        "- **Known biases, still open.** An independent review of these rows found four, "
        "each named here until it is priced away: "
        + (
            "the VN settle row is now priced in the arithmetic the chip deploys (12-bit fixed "
            "point, its measured code error setting the GPU's accuracy target), but the "
            "send-on-delta row is still priced in float arithmetic (it has no fixed-point form "
            "yet), so there the GPU is held to a tighter accuracy than a deployed chip would "
            "reach (this favours the chip); "
            if stops["VN settle"].get("fixed_point")
            else "the VN chip rows are priced in float arithmetic, while the deployable "
            "fixed-point codes are less accurate, so the GPU is held to a tighter accuracy than "
            "the deployed chip reaches (this favours the chip; send-on-delta has no fixed-point "
            "form yet); "
        )
        + "the held-out budget is chosen on the other "
        "test samples, and with a few samples its 99th percentile is their maximum; the range "
        "varies the chip's energies but not its time per step, on which the batch-1 ratio "
        "rests through static power (a slower chip would lower it); and the GPU runs its "
        "convergence test every iteration, where checking every few iterations would cost it "
        "less (this too favours the chip).",
        "- **Placement is a priced choice.** Every placement that keeps every per-core limit "
        "(compartments, synapses, the core's memory shared by synapses, compartment state and "
        "both axon tables, input and output axons) is priced, packed to spread; the headline "
        "takes the energy-optimal one for its regime (energy per sample at batch 1; energy per "
        "sample at throughput, where a packed chip holds more copies), and the "
        "latency-optimal one is part of the range. A network that breaks a limit packed is "
        "spread over more cores, not refused.",
        f"- **Ranges of best practice.** Lowest and highest ratio over: static scope, graph or "
        f"per-iteration launches, the placement objective (energy- or latency-optimal), and "
        f"each estimate over its band ({scales}): the GPU's estimates at half and double; the "
        "chip's, with a preset calibrated against silicon (the default, `loihi2-pilotnet`, "
        "docs/energy_validation.md), over what the fit leaves open: static power over the "
        "measured per-chip figures, per-operation energy between the two extreme attributions "
        "of the fit's misfit for the workload's own mix of operations; the GPU always on its "
        "cheapest passing "
        "precision and kernel. A flag the user gives fixes that choice in the range too. "
        "Strawmen (eager per-op launches, a passing precision or kernel slower than another, a "
        "precision that misses the chip's accuracy) are in their own table below. Energy and "
        "time ratios side by side; throughput means each device kept full (the GPU at its "
        "throughput-optimal batch, the chip holding as many copies as its cores allow). The "
        "tornado moves one alternative at a time.",
    ]


def _how_to_change() -> list[str]:
    """The flags and JSON that change one assumption, and the fields every run writes."""
    return [
        "`atomspark demo` and `atomspark compare` take `--static-scope device|shared`, "
        "`--launch-model graph|per-iteration|per-op`, `--precision fp32|tf32|bf16|int8`, "
        "`--kernel dense|sparse`, `--placement energy|latency` (each, given, is fixed in the "
        "range too) and `--assume NAME=SCALE` (repeatable; names: "
        + ", ".join(f"`{n}`" for n in SCALED)
        + "); `--gpu` and `--hardware` also take a JSON file in the layout of "
        "`mapping/hardware_data/*.json` (docs/hardware.md) for any constant. Each run writes the "
        "same fields (`summary.json` / `comparison.json`, key `chip_vs_gpu`): per row `fits`, "
        "`cores`, `static_scope`, `energy_uJ`, `latency_us`, `precision`, `launch_model`, `batch`; "
        "per workload `ratio`, `ratio_min`, `ratio_max` (throughput), `batch_1` and `throughput` "
        "(each with `time_ratio`, `time_ratio_min`, `time_ratio_max`), `how_not_to_run_it` and "
        "`oracle_lower_bound`.",
        "",
    ]


def render(demo: dict, history: dict, chip_map: dict | None = None) -> str:
    """The whole doc from the committed results, led by the map (`chip_map`, map.json)."""
    results = demo["chip_vs_gpu"]
    stops = demo["vn_chip_stop_steps"]
    lines = [
        "# Chip vs GPU: headline ratios with their ranges of best practice",
        "",
        "<!-- Generated by `python -m atomspark.scenarios.compare.chip_vs_gpu_doc` from "
        "docs/results/chip_vs_gpu/; tests/test_chip_vs_gpu_doc.py checks that it matches. -->",
        "",
        "What a workload costs on Loihi 2 against an H100, per sample, with both sides at their "
        "best and charged the same way. Every ratio is GPU / chip, energy and time (> 1: the "
        "chip uses less, or is faster), given as a headline and the range of best practice, with "
        "the direction of the bias the headline still carries. All figures are models (no chip "
        "and no GPU measured here); the Loihi 2 per-op energies, times and static power are "
        "Loihi 1-derived estimates fitted on Intel's Loihi 2 measurement of one LIF network "
        "(preset `loihi2-pilotnet`, docs/energy_validation.md), and the GPU's idle and busy "
        "power, L2 bandwidth and launch overheads are labelled estimates (Sources below).",
        "",
        *map_section(chip_map),
        "## Method",
        "",
        *_method(stops),
        *step_time_bullet(results),
        "",
        f"## Results (`atomspark demo`: {len(stops['VN settle']['per_sample'])} VN samples; "
        "each side runs the same samples)",
        "",
        *_summary_table(results),
        "",
        "![Headline ratios and ranges](figures/chip_vs_gpu.png)",
        "",
        "![Tornado: each assumption alone, GPU throughput batch](figures/chip_vs_gpu_tornado.png)",
        "",
        "Headline ranges before this method (oracle stop, one packing, every launch model and "
        "passing precision in the range) beside today's:",
        "",
        *_old_new_table(results, demo.get("previous", {})),
        "",
        "### How not to run it",
        "",
        "Kept out of the ranges above; each with the headline's other assumptions:",
        "",
        *_how_not_table(results),
        "",
        *[line for name, r in results.items() for line in _workload(name, r)],
        "## Change an assumption",
        "",
        *_how_to_change(),
        "## Sources",
        "",
        *_sources(demo["sources"]),
        "",
        "## History: earlier pricing of the same demo",
        "",
        "Before this method the demo priced (a) the GPU as the dense equivalent of the chip's own "
        "1500 steps (the strawman, kept here only as history) and then (b) the GPU's own algorithm "
        'in fp32, one launch per iteration ("fused"), the chip charged static power only for '
        "its cores in use and priced on RSGN placements that did not fit; its ratios, from "
        "docs/results/chip_vs_gpu/history.json, beside today's headlines:",
        "",
        *_history(history, results),
        "",
        f"Results: {demo['command']} on {demo['machine']}, {demo['date']}.",
        "",
    ]
    return "\n".join(lines)


def write_results(demo_dir: Path) -> dict:
    """Copy a demo run's results and figures into the repository (the chip-vs-GPU doc and the
    README's sample output are rendered from them)."""
    summary = json.loads((demo_dir / "summary.json").read_text())
    demo = {
        "command": "atomspark demo --out results/demo",
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs (shared)",
        "date": datetime.fromtimestamp(
            (demo_dir / "summary.json").stat().st_mtime, timezone.utc
        ).strftime("%Y-%m-%d"),
        "wall_s": summary["wall_s"],
        "vn": summary["vn"],
        "rsgn": summary["rsgn"],
        "chip_vs_gpu": summary["chip_vs_gpu"],
        "vn_chip_stop_steps": summary["vn"]["chip_stop_steps"],
        "sources": summary["chip_vs_gpu_sources"],
        "previous": _previous(),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    atomic_write_text(RESULTS / "demo.json", json.dumps(demo, indent=1) + "\n")
    plot_ratios(demo["chip_vs_gpu"], FIGURES / "chip_vs_gpu.png")
    plot_tornado(demo["chip_vs_gpu"], FIGURES / "chip_vs_gpu_tornado.png")
    for name in ("costs.png", "vn_activity.png"):  # the README's demo figures
        shutil.copyfile(demo_dir / name, FIGURES / name)
    return demo


def _previous() -> dict:
    """The committed demo's headline ratios and ranges before it is replaced (kept across runs,
    so the doc can set the new ranges beside the old)."""
    path = RESULTS / "demo.json"
    if not path.is_file():
        return {}
    old = json.loads(path.read_text())
    if "previous" in old:
        return old["previous"]
    keep = ("ratio", "ratio_min", "ratio_max")
    return {
        name: {k: {f: r[k][f] for f in keep} for k in ("batch_1", "throughput")}
        for name, r in old["chip_vs_gpu"].items()
        if r["fits"]
    }


def main(argv: list[str]) -> None:
    """Rewrite docs/chip_vs_gpu.md and the README's sample output; with a demo folder, first
    take its results into the repo."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("demo_dir", nargs="?", type=Path,
                        help="an `atomspark demo` output folder whose results to commit")  # fmt: skip
    args = parser.parse_args(argv)
    if args.demo_dir is not None and not (args.demo_dir / "summary.json").is_file():
        parser.error(f"{args.demo_dir}: no summary.json (pass an `atomspark demo --out` folder)")
    demo = (
        write_results(args.demo_dir)
        if args.demo_dir is not None
        else json.loads((RESULTS / "demo.json").read_text())
    )
    history = json.loads((RESULTS / "history.json").read_text())
    atomic_write_text(DOC, render(demo, history, load_map()))
    rewrite_readme(demo)


if __name__ == "__main__":
    main(sys.argv[1:])

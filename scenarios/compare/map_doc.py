"""The map's section of docs/chip_vs_gpu.md (its lead), rendered from the committed map
(docs/results/chip_vs_gpu/map/map.json, written by `atomspark map`): one generated sentence per
family, the figure, the break-even sizes, what each family runs and what it carries, and the
map beside the demo's rows at the demo's size."""

from __future__ import annotations

import json
from pathlib import Path

MAP_DIR = Path(__file__).resolve().parents[2] / "docs" / "results" / "chip_vs_gpu" / "map"
REGIME_WORDS = (("batch_1", "batch 1"), ("throughput", "throughput"))


def load_map(folder: Path = MAP_DIR) -> dict | None:
    path = folder / "map.json"
    return json.loads(path.read_text()) if path.is_file() else None


def _x(v: float) -> str:
    return f"{v:,.3g}x" if v < 1000 else f"{v:,.0f}x"


def _sizes(values: list[float]) -> str:
    return ", ".join(f"~{v:,.0f}" for v in values) if values else "none"


def _break_even_table(chip_map: dict) -> list[str]:
    out = [
        "| family | series | sizes | energy, batch 1 | energy, throughput | time, batch 1 "
        "| time, throughput |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, by_series in chip_map["break_even"].items():
        for series, q in by_series.items():
            pts = sorted((p for p in chip_map["points"] if p["family"] == name
                          and p["series"] == series and p["fits"]), key=lambda p: p["size"])  # fmt: skip
            cells = []
            for k in ("ratio", "time_ratio"):
                for r, _ in REGIME_WORDS:
                    side = "chip" if pts and pts[0][r][k] > 1 else "GPU"
                    cells.append(_sizes(q[r][k]) if q[r][k] else f"{side} throughout")
            out.append(f"| {name} | {series} | {pts[0]['size']:,}-{pts[-1]['size']:,} | "
                       + " | ".join(cells) + " |")  # fmt: skip
    return out


def _agreement_table(chip_map: dict) -> list[str]:
    out = [
        "| family | energy, batch 1: map / rows | energy, throughput: map / rows | time, batch 1: "
        "map / rows | time, throughput: map / rows |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, q in chip_map["demo_agreement"].items():
        cells = [f"{_x(q[r]['map' + k])} / {_x(q[r]['demo' + k])}"
                 for k in ("", "_time") for r, _ in REGIME_WORDS]  # fmt: skip
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return out


def _method(name: str, meta: dict) -> str:
    c = meta["carried"]
    text = (
        f"- **{name}** ({meta['size_axis']}; activity: {meta['activity_axis']}): {meta['method']}."
    )
    if not c:
        return text
    gpu = ", ".join(
        f"{g['precision']} {g['iterations_mean']:.0f} (slowest sample {g['iterations_max']:.0f})"
        + ("" if g["reaches_accuracy"] else ", misses the chip's accuracy")
        for g in c["gpu"]
    )
    return (
        f"{text} Carried from {c['source']}: the chip's held-out budget, "
        f"{c['chip_steps_per_sample']:.0f} steps per sample; the GPU's iterations per sample by "
        f"precision: {gpu}; the demo's activity, {c['activity']:.3g}."
    )


def _loads(chip_map: dict) -> str:
    """The load averages the points were priced at (each point records its own), or the one
    when map.json was written for points that predate that record."""
    loads = [p["load_average"] for p in chip_map["points"] if "load_average" in p]
    if len(loads) == len(chip_map["points"]) and loads:
        return f", load average {min(loads):.1f}-{max(loads):.1f}"
    return (f", load average {chip_map['load_average'][0]:.1f} when map.json was written (the "
            "points were priced over several resumed runs on the shared machine)")  # fmt: skip


def _not_fitting(chip_map: dict) -> str:
    """Per family, the sizes no layout fits and why (the smallest such point's words)."""
    out = []
    for name in chip_map["families"]:
        unfit = sorted((p for p in chip_map["points"] if p["family"] == name and not p["fits"]),
                       key=lambda p: p["size"])  # fmt: skip
        if unfit:
            sizes = sorted({p["size"] for p in unfit})
            out.append(f"{name} at {', '.join(f'{v:,}' for v in sizes)} ({unfit[0]['series']} "
                       f"at {unfit[0]['size']:,}: {unfit[0]['took']})")  # fmt: skip
    if not out:
        return ""
    return (
        "Where no layout fits the chip nothing is priced (the point says why): "
        + "; ".join(out)
        + ". "
    )


def _placer_speed(folder: Path) -> str:
    """The placer's measured speed against the unit-by-unit packer (benchmarks/bench_packer.py)."""
    path = folder / "packer_speed.json"
    if not path.is_file():
        return ""
    bench = json.loads(path.read_text())
    rows = "; ".join(
        f"{r['atoms']:,} atoms {r['blocks_cpu_s']['median']:.2f} s against "
        f"{r['unit by unit_cpu_s']['median']:.2f} s (x{r['speedup_median']:.1f})"
        for r in bench["rows"]
    )
    same = all(r["same_placements"] for r in bench["rows"])
    kl = "; ".join(
        f"{r['atoms']:,} atoms {r['partition_s']:.1f} s against {r['partition_networkx_s']:.1f} s"
        + ("" if r["same_groups"] else " (groups differ)")
        for r in bench["rows"]
        if "partition_networkx_s" in r
    )
    loads = bench["load_average_before"][0], bench["load_average_after"][0]
    return (
        "The placer packs runs of blocks at once (mapping/pack_blocks.py; its placements equal "
        "the unit-by-unit packer's, tested); its spread search over caps and squeezes on the "
        f"map's VN graphs, median process CPU of {bench['pairs']} interleaved pairs against the "
        f"unit-by-unit packer: {rows}"
        + (", the same placements" if same else ", placements differ")
        + ": placement was not where a large point's time goes"
        + (
            f"; the partition (networkx's Kernighan-Lin; the map's fixed-point VN is not a "
            f"complete graph, rounding zeroes small weights, so it is swept), with the layout "
            f"built around it, once: {kl} (the draw for a complete graph of equal weights against "
            "the sweep)"
            if kl
            else ""
        )  # fmt: skip
        + f" (load average {min(loads):.1f}-{max(loads):.1f}; `{bench['command']}`). "
    )


def map_section(chip_map: dict | None, folder: Path = MAP_DIR) -> list[str]:
    """The doc's lead: the map (nothing when no map is committed)."""
    if chip_map is None:
        return []
    largest = {}
    for p in chip_map["points"]:
        largest[p["family"]] = max(largest.get(p["family"], 0), p["size"])
    return [
        "## The map: where the chip wins",
        "",
        "Each model family over sizes and activity levels, every point priced by the path the "
        "rows below use (the same stopping rule, placement objective, assumptions and "
        "best-practice range: `mapping/chip_gpu_ratios.compare_workload`). Ratio GPU / chip per "
        "sample, energy; each sentence follows one series (the demo's model where the demo has one):",
        "",
        *[f"- {s}" for s in chip_map["sentences"].values()],
        "",
        "![Break-even curves: GPU/chip energy and time over size, batch 1 and throughput, with the "
        "best-practice band](results/chip_vs_gpu/map/map.png)",
        "",
        "Break-even sizes (where a curve crosses 1, interpolated log-log between priced sizes; "
        "'chip throughout' or 'GPU throughout': that side uses less energy, or takes less "
        "time, at every size priced):",
        "",
        *_break_even_table(chip_map),
        "",
        "What each family runs, and what it carries where a cost depends on trained values:",
        "",
        *[_method(name, meta) for name, meta in chip_map["families"].items()],
        "",
        "At the demo's size and activity the map and the rows below agree (tested: RSGN to "
        "rounding, being the same run; VN within 35 %: its points spread the demo's priced "
        "events and updates evenly over steps and units, where the fixed-point settle is bursty, "
        "most of its events in its first steps; this shows most at throughput):",
        "",
        *_agreement_table(chip_map),
        "",
        "Largest sizes priced: "
        + "; ".join(f"{n} {s:,}" for n, s in largest.items())
        + ". "
        + _not_fitting(chip_map)
        + _placer_speed(folder)
        + "Every point, with its ranges: "
        "[map_table.md](results/chip_vs_gpu/map/map_table.md). Made by "
        f"`{chip_map['command']} --out docs/results/chip_vs_gpu/map` (resumable with "
        f"`--resume`; points priced in {chip_map['pricing_s'] / 60:.0f} min on "
        f"{chip_map['machine']}{_loads(chip_map)}, {chip_map['date']}).",
        "",
    ]

"""The chip-vs-GPU map: every family of scenarios/compare/map_points.py over sizes and activity
levels, each point priced by the path the headline rows use (chip_rows.chip_row, the GPU's own
algorithm, mapping/chip_gpu_ratios.compare_workload: same stopping rule, placement objective,
assumptions and best-practice range), and the break-even curves drawn from them: GPU/chip energy
and time at batch 1 and at throughput, with the best-practice band.

    atomspark map --out docs/results/chip_vs_gpu/map --grid full        # the committed map
    atomspark map --out docs/results/chip_vs_gpu/map --grid full --resume

Each point is appended to points.jsonl as it finishes (progress is printed), so a stopped run
resumes where it stopped; map.json (points, curves, break-even, one sentence per family),
map_table.md and map.png are written at the end from all the points.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import time
from collections.abc import Callable
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from atomspark.mapping.chip_gpu_ratios import Assumptions, compare_workload
from atomspark.mapping.hardware import DEFAULT_CHIP, load_hardware
from atomspark.scenarios.compare.map_points import MapFamily, map_families
from atomspark.sim.core import AtomsparkError, atomic_write_text
from atomspark.sim.run_folder import finish_run, prepare_run_folder

GRIDS = ("ci", "full")
POINTS_FILE = "points.jsonl"
SETTINGS_FILE = "map_settings.json"
REGIMES = (("batch_1", "batch 1"), ("throughput", "throughput"))
QUANTITIES = (("ratio", "energy"), ("time_ratio", "time"))
DEMO_RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results" / "chip_vs_gpu"


def point_params(point: dict) -> dict:
    """A grid point's parameters (its size and series are derived from them)."""
    return {k: v for k, v in point.items() if k not in ("size", "series")}


def point_key(family: str, point: dict, carried: dict | None = None) -> str:
    """A point's identity: family, parameters and what it carries from the demo (a changed
    demo reprices the points that carry it, on --resume too)."""
    key = family + " " + json.dumps(point_params(point), sort_keys=True)
    if carried:
        digest = hashlib.sha1(json.dumps(carried, sort_keys=True).encode()).hexdigest()[:12]
        key += f" carried {digest}"
    return key


def summarise(result: dict) -> dict:
    """What the map keeps of compare_workload's result: per regime the energy and time ratios
    with their best-practice ranges, the chip's cores and both sides' energy and time."""
    if not result["fits"]:
        return {"fits": False, "took": result["chip"]["took"]}
    out = {"fits": True, "took": result["chip"]["took"].split(";")[0],
           "headline": {k: result["headline"][k] for k in ("precision", "kernel")}}  # fmt: skip
    for key, _ in REGIMES:
        q = result[key]
        out[key] = {k: q[k] for k in (
            "ratio", "ratio_min", "ratio_max", "time_ratio", "time_ratio_min", "time_ratio_max",
            "chip_cores", "chip_energy_uJ", "chip_time_per_sample_us", "gpu_energy_uJ",
            "gpu_time_per_sample_us")}  # fmt: skip
    return out


def price_point(family: MapFamily, point: dict, carried: dict, chip_hw, gpu_hw, a) -> dict:
    """One point on the headline rows' path: the family's chip row and GPU variants, then
    compare_workload under the same assumptions."""
    chip, variants = family.price(point, carried, chip_hw)
    if not chip.fits:  # nothing to compare (a family may refuse before its GPU side is built)
        return {"fits": False, "took": chip.took}
    return summarise(compare_workload(family.name, chip, variants, gpu_hw, a))


def _check_same_settings(folder: Path, settings: dict) -> None:
    """A resumed run prices as the stopped one did; the families may differ (points are keyed
    by family)."""
    path = folder / SETTINGS_FILE
    if not path.is_file():
        return  # prepare_run_folder says what is missing
    before = json.loads(path.read_text())
    same = {k: v for k, v in json.loads(json.dumps(settings)).items() if k != "families"}
    if not isinstance(before, dict) or {k: v for k, v in before.items() if k != "families"} != same:
        raise AtomsparkError(
            f"--resume: {folder} was run with other settings ({before}); pass --overwrite"
        )


def _read_points(path: Path) -> dict[str, dict]:
    """Finished points of a previous run (a line cut short by a stop is dropped)."""
    done = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(rec, dict) and "key" in rec:
                done[rec["key"]] = rec
    return done


def _append(path: Path, rec: dict) -> None:
    with open(path, "a") as f:
        f.write(json.dumps(rec) + "\n")
        f.flush()
        os.fsync(f.fileno())


def load_demo(results: Path = DEMO_RESULTS) -> dict:
    path = results / "demo.json"
    if not path.is_file():
        raise AtomsparkError(f"{path}: the demo's rows are missing (the VN points carry them)")
    return json.loads(path.read_text())


def run_map(
    out: str | os.PathLike,
    grid: str = "full",
    hardware: str = DEFAULT_CHIP,
    gpu: str = "h100",
    assumptions: Assumptions | None = None,
    resume: bool = False,
    overwrite: bool = False,
    families: list[str] | None = None,
    log: Callable[[str], None] = print,
) -> dict:
    """Price every point of `grid` ("ci": a reduced grid for tests, "full": the committed map)
    and write points.jsonl, map.json, map_table.md and map.png to `out`; returns map.json's
    content. `resume`: keep the finished points of a stopped run with the same settings."""
    if grid not in GRIDS:
        raise AtomsparkError(f"--grid: choose one of {', '.join(GRIDS)}")
    chosen = [f for f in map_families() if families is None or f.name in families]
    if families is not None and len(chosen) != len(set(families)):
        known = ", ".join(f.name for f in map_families())
        raise AtomsparkError(f"--family: choose among {known}")
    chip_hw, gpu_hw = load_hardware(hardware), load_hardware(gpu)
    a = assumptions or Assumptions()
    demo = load_demo()
    settings = {"grid": grid, "hardware": hardware, "gpu": gpu, "families": [f.name for f in chosen],
                "assumptions": {**asdict(a), "fixed": list(a.fixed)}}  # fmt: skip
    mode = "resume" if resume else "overwrite" if overwrite else "new"
    if resume:  # refused before the folder is touched
        _check_same_settings(Path(out), settings)
    folder = prepare_run_folder(out, "map", mode, resumable=True, resume_file=POINTS_FILE)
    if not resume:
        (folder / POINTS_FILE).write_text("")
    atomic_write_text(folder / SETTINGS_FILE, json.dumps(settings, indent=2))
    done = _read_points(folder / POINTS_FILE)
    carried = {f.name: f.carried(demo) for f in chosen}
    todo = [(f, p) for f in chosen for p in f.grid(grid, carried[f.name])]
    started = time.perf_counter()
    for i, (family, point) in enumerate(todo, 1):
        key = point_key(family.name, point, carried[family.name])
        if key in done:
            continue
        t0 = time.perf_counter()
        rec = {"key": key, "family": family.name, "size": point["size"],
               "series": point["series"], "params": point_params(point),
               **price_point(family, point, carried[family.name], chip_hw, gpu_hw, a)}  # fmt: skip
        rec["seconds"] = time.perf_counter() - t0
        rec["load_average"] = os.getloadavg()[0]
        _append(folder / POINTS_FILE, rec)
        done[key] = rec
        log(f"[map] {i}/{len(todo)} {family.name} size {point['size']} ({point['series']}): "
            + (f"energy {rec['batch_1']['ratio']:.3g}x / {rec['throughput']['ratio']:.3g}x"
               if rec["fits"] else "does not fit")
            + f" ({rec['seconds']:.1f} s)")  # fmt: skip
    points = [done[point_key(f.name, p, carried[f.name])] for f, p in todo]
    result = build_map(points, chosen, carried, demo, settings)
    result["wall_s"] = time.perf_counter() - started  # this run (a resumed one: its part)
    result["pricing_s"] = float(sum(p["seconds"] for p in points))
    result["machine"] = f"{platform.machine()}, {os.cpu_count()} CPUs (shared)"
    result["load_average"] = list(os.getloadavg())
    result["date"] = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    atomic_write_text(folder / "map.json", json.dumps(result, indent=2))
    atomic_write_text(folder / "map_table.md", "\n".join(map_table(result)) + "\n")
    from atomspark.scenarios.compare.map_plots import plot_map

    plot_map(result, folder / "map.png")
    finish_run(folder)
    for line in result["sentences"].values():
        log(f"[map] {line}")
    return result


# ----- curves, break-even and sentences ---------------------------------------------------------
def curves(points: list[dict], family: str) -> dict[str, list[dict]]:
    """The family's points by series (one curve each), ordered by size."""
    out: dict[str, list[dict]] = {}
    for p in points:
        if p["family"] == family:
            out.setdefault(p["series"], []).append(p)
    return {s: sorted(ps, key=lambda p: p["size"]) for s, ps in out.items()}


def break_even(curve: list[dict], regime: str, quantity: str = "ratio") -> list[float]:
    """Sizes where the ratio crosses 1 along the curve (log-log interpolation between points)."""
    pts = [(p["size"], p[regime][quantity]) for p in curve if p["fits"]]
    out = []
    for (s0, r0), (s1, r1) in zip(pts, pts[1:]):
        if (r0 - 1) * (r1 - 1) < 0:
            t = np.log(r0) / (np.log(r0) - np.log(r1))
            out.append(float(np.exp(np.log(s0) + t * (np.log(s1) - np.log(s0)))))
    return out


def _x(v: float) -> str:
    return f"{v:.2g}x" if v < 10 else f"{v:,.0f}x"


def _span(lo: float, hi: float) -> str:
    return f"about {_x(lo)}" if hi <= lo * 1.05 else f"{_x(lo)} to {_x(hi)}"


def _size(v: float) -> str:
    return f"{v:,.0f}"


def _x_close(v: float) -> str:
    """A ratio, with enough digits to tell it from 1 where it is close."""
    return f"{v:.3f}x" if 0.99 < v < 1.01 else _x(v)


def family_sentence(family: MapFamily, curve: list[dict], series: str) -> str:
    """Where the chip wins (energy per sample), by how much, and when it stops winning, at batch 1
    and at throughput, along one curve (generated from the points)."""
    fit = [p for p in curve if p["fits"]]
    unfit = [p["size"] for p in curve if not p["fits"]]
    lo, hi = curve[0]["size"], curve[-1]["size"]
    parts = []
    for regime, words in REGIMES:
        if not fit:
            break
        r = [p[regime]["ratio"] for p in fit]
        wins = [p["size"] for p in fit if p[regime]["ratio"] > 1]
        cross = break_even(fit, regime)
        if len(wins) == len(fit):
            parts.append(f"at {words} the chip uses less energy at every size mapped "
                         f"({_span(min(r), max(r))})")  # fmt: skip
        elif not wins:
            parts.append(f"at {words} the GPU uses less at every size "
                         f"({_span(min(r), max(r))})")  # fmt: skip
        elif len(wins) == 1:
            best = next(p for p in fit if p["size"] == wins[0])
            parts.append(
                f"at {words} the chip wins only at {_size(wins[0])} {family.size_axis} "
                f"({_x_close(best[regime]['ratio'])}); the GPU uses less at every other size "
                f"({_x(min(r))} at the far end)"
            )
        else:
            where = ", ".join(f"~{_size(c)}" for c in cross) or "between points"
            best = max(fit, key=lambda p: p[regime]["ratio"])
            parts.append(
                f"at {words} the chip wins from {_size(min(wins))} to {_size(max(wins))} "
                f"{family.size_axis} (up to {_x(best[regime]['ratio'])} at {_size(best['size'])}) "
                f"and stops winning at {where} ({_x(min(r))} at the far end)"
            )
    tail = f"; it does not fit the chip at {', '.join(_size(s) for s in unfit)}" if unfit else ""
    return (f"{family.name} ({series}; {_size(lo)}-{_size(hi)} {family.size_axis}): "
            + "; ".join(parts) + tail + ".")  # fmt: skip


def family_sentence_on_map(family: MapFamily, by_series: dict[str, list[dict]], series: str):
    """family_sentence along `series`, then where the family's other series stop (or start)
    winning on energy inside the sizes mapped, and those that win throughout where `series`
    does not (or lose throughout where it wins)."""
    text = family_sentence(family, by_series[series], series)
    others, throughout = [], {"chip": [], "GPU": []}
    for name, curve in by_series.items():
        if name == series:
            continue
        for regime, words in REGIMES:
            cross = break_even(curve, regime)
            verdict = _verdict(curve, regime)
            if cross:
                others.append(f"{name} at {words}: ~{', ~'.join(_size(c) for c in cross)}")
            elif verdict and verdict != _verdict(by_series[series], regime):
                throughout[verdict].append(f"{name} ({words})")
    if others:
        text = text[:-1] + "; its other series cross 1 at " + "; ".join(others) + "."
    for who, names in throughout.items():
        if names:
            text = text[:-1] + f"; the {who} uses less at every size on " + " / ".join(names) + "."
    return text


def _verdict(curve: list[dict], regime: str) -> str | None:
    """'chip' or 'GPU' when one uses less energy at every fitting size of the curve, else None."""
    r = [p[regime]["ratio"] for p in curve if p["fits"]]
    if r and min(r) > 1:
        return "chip"
    if r and max(r) < 1:
        return "GPU"
    return None


def headline_series(family: MapFamily, carried: dict, points: list[dict]) -> str:
    """The series holding the demo's point (the sentence's curve)."""
    key = point_key(family.name, family.demo_point(carried), carried)
    for p in points:
        if p["key"] == key:
            return p["series"]
    series = [p["series"] for p in points if p["family"] == family.name]
    return series[0] if series else ""


def demo_agreement(points: list[dict], chosen, carried: dict, demo: dict) -> dict:
    """The map's point at the demo's size and activity beside the demo's row (same path)."""
    out = {}
    for f in chosen:
        key = point_key(f.name, f.demo_point(carried[f.name]), carried[f.name])
        p = next((q for q in points if q["key"] == key), None)
        row = demo["chip_vs_gpu"].get(f.workload)
        if p is None or row is None or not p["fits"]:
            continue
        out[f.name] = {
            regime: {"map": p[regime]["ratio"], "demo": row[regime]["ratio"],
                     "map_time": p[regime]["time_ratio"], "demo_time": row[regime]["time_ratio"]}
            for regime, _ in REGIMES
        }  # fmt: skip
    return out


def build_map(points: list[dict], chosen, carried: dict, demo: dict, settings: dict) -> dict:
    sentences, series, crossings = {}, {}, {}
    for f in chosen:
        cs = curves(points, f.name)
        s = headline_series(f, carried[f.name], points)
        series[f.name] = s
        if s in cs:
            sentences[f.name] = family_sentence_on_map(f, cs, s)
        crossings[f.name] = {
            name: {regime: {q: break_even(c, regime, q) for q, _ in QUANTITIES}
                   for regime, _ in REGIMES}
            for name, c in cs.items()
        }  # fmt: skip
    return {
        "command": f"atomspark map --grid {settings['grid']}",
        "settings": settings,
        "families": {
            f.name: {
                "size_axis": f.size_axis,
                "activity_axis": f.activity_axis,
                "workload": f.workload,
                "method": f.method,
                "carried": carried[f.name],
                "sentence_series": series[f.name],
            }
            for f in chosen
        },  # fmt: skip
        "points": points,
        "break_even": crossings,
        "sentences": sentences,
        "demo_agreement": demo_agreement(points, chosen, carried, demo),
    }


def map_table(result: dict) -> list[str]:
    """Markdown table: every point's ratios with their best-practice ranges."""
    out = [
        "| family | series | size | chip cores (batch 1 / throughput) | energy, batch 1 (range) "
        "| time, batch 1 (range) | energy, throughput (range) | time, throughput (range) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for p in result["points"]:
        head = f"| {p['family']} | {p['series']} | {_size(p['size'])} |"
        if not p["fits"]:
            out.append(f"{head} does not fit | - | - | - | - |")
            continue
        cells = [f"{p['batch_1']['chip_cores']} / {p['throughput']['chip_cores']}"]
        for regime, _ in REGIMES:
            q = p[regime]
            for k, _ in QUANTITIES:
                cells.append(f"{_fmt(q[k])} ({_fmt(q[k + '_min'])} - {_fmt(q[k + '_max'])})")
        out.append(head + " " + " | ".join(cells) + " |")
    return out


def _fmt(v: float) -> str:
    return f"{v:,.3g}x" if v < 1000 else f"{v:,.0f}x"

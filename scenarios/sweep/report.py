"""A sweep's report: per group of cells (all labels but the seed), the mean and sample standard
deviation (n - 1) over the finished seeds of every numeric result, as report.json, a Markdown
table (report.md) and bar charts with each seed's value drawn on top (report.png).

Works on a partial sweep: groups say how many of their cells are finished, failed or not run,
and a group's statistics cover only its finished cells.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from atomspark.scenarios.sweep.grid import Cell
from atomspark.sim.core import atomic_write_text


def numeric_results(record: dict) -> dict[str, float]:
    """The record's numeric results as {dotted key: value} (booleans and text left out), plus
    the cell's wall time."""
    flat: dict[str, float] = {}

    def walk(value, prefix: str) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, f"{prefix}.{k}" if prefix else str(k))
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            if math.isfinite(value):
                flat[prefix] = float(value)

    walk(record.get("result", {}), "")
    if isinstance(record.get("wall_s"), (int, float)):
        flat["wall_s"] = float(record["wall_s"])
    return flat


def mean_std(values: list[float]) -> tuple[float, float | None]:
    """Mean and sample standard deviation (None for a single value)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, None
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))


def aggregate(cells: list[Cell], records: dict[str, dict], statuses: dict[str, str]) -> list[dict]:
    """One entry per group, in grid order."""
    groups: dict[str, dict] = {}
    for cell in cells:
        g = groups.setdefault(
            cell.group,
            {
                "group": cell.group,
                "labels": {k: v for k, v in cell.labels.items() if k != "seed"},
                "cells": {"done": 0, "failed": 0, "not run": 0},
                "seeds": [],
                "_values": {},
            },
        )
        g["cells"][statuses[cell.id]] += 1
        if cell.id not in records:
            continue
        g["seeds"].append(cell.labels.get("seed"))
        for key, value in numeric_results(records[cell.id]).items():
            g["_values"].setdefault(key, []).append(value)
    out = []
    for g in groups.values():
        values = g.pop("_values")
        g["metrics"] = {}
        for key, vals in values.items():
            mean, std = mean_std(vals)
            g["metrics"][key] = {"mean": mean, "std": std, "n": len(vals), "values": vals}
        out.append(g)
    return out


def _headline(groups: list[dict], headline: tuple[str, ...]) -> list[str]:
    """The kind's headline metrics that some group has; else the first few numeric ones."""
    present = {k for g in groups for k in g["metrics"]}
    chosen = []
    for key in headline:  # a key ending in "." stands for every metric under it
        chosen += sorted(k for k in present if k.startswith(key)) if key.endswith(".") else [key]
    chosen = [k for k in dict.fromkeys(chosen) if k in present]
    if not chosen:
        chosen = sorted(present - {"wall_s"})[:4]
    return chosen + (["wall_s"] if "wall_s" in present else [])


def _fmt(stat: dict | None) -> str:
    if stat is None:
        return "-"
    text = f"{stat['mean']:.4g}"
    return text if stat["std"] is None else f"{text} ± {stat['std']:.2g}"


def markdown(groups: list[dict], columns: list[str], summary: dict) -> str:
    """The report as a Markdown table, with the failed cells and where the figures came from."""
    lines = [
        f"# Sweep report: {summary['kind']} grid {summary['grid']}",
        "",
        f"Written {summary['written']}. "
        + ("Cells computed by:" if summary["runs"] else "No cell has been computed yet."),
        "",
        *[_run_line(run) for run in summary["runs"]],
        *([""] if summary["runs"] else []),
        "Each entry: mean ± sample standard deviation over the finished seeds of the group "
        "(n - 1; a single seed shows no ±). wall_s: the cell's last attempt, on a shared machine.",
        "",
        "| " + " | ".join(["group", "cells done/failed/not run", *columns]) + " |",
        "|---|---|" + "---|" * len(columns),
    ]
    for g in groups:
        c = g["cells"]
        cells = f"{c['done']}/{c['failed']}/{c['not run']}"
        row = [g["group"], cells] + [_fmt(g["metrics"].get(k)) for k in columns]
        lines.append("| " + " | ".join(row) + " |")
    failed = [r for r in summary["cells"] if r["status"] == "failed"]
    if failed:
        lines += ["", "## Failed cells", ""]
        lines += [f"- `{r['id']}`: {r['reason']}" for r in failed]
    return "\n".join(lines) + "\n"


def _run_line(run: dict) -> str:
    load = run.get("loadavg")
    load = "n/a" if load is None else " ".join(f"{x:.2f}" for x in load)
    return (
        f"- {run['cells_computed']} cell(s), finished {run['finished']} on {run['host']} "
        f"({run['platform']}, {run['cpus']} CPUs, load average {load} at the end); "
        f"{run['cluster']}"
    )


def plot(groups: list[dict], columns: list[str], path: Path, title: str) -> None:
    """One bar chart per metric: group means with ± std bars and each seed as a dot."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = max(len(columns), 1)
    ncols = min(n, 3)
    nrows = -(-n // ncols)
    width = max(4.0, 1.0 + 0.9 * len(groups))
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, 4.2 * nrows), squeeze=False)
    axes = list(axes.ravel())
    for ax in axes[len(columns) :]:
        ax.set_visible(False)
    names = [g["group"] for g in groups]
    for ax, key in zip(axes, columns):
        for i, g in enumerate(groups):
            stat = g["metrics"].get(key)
            if stat is None:
                continue
            ax.bar(i, stat["mean"], color="#9bb7d4", yerr=stat["std"] or 0.0, capsize=4)
            ax.plot([i] * len(stat["values"]), stat["values"], "k.", markersize=5)
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names, rotation=30, ha="right", fontsize=8)
        ax.set_title(key, fontsize=10)
        ax.set_ylabel(f"{key} (mean ± std over seeds)", fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(tmp, dpi=100)
    plt.close(fig)
    os.replace(tmp, path)


def write_report(
    out: Path,
    cells: list[Cell],
    records: dict[str, dict],
    statuses: dict[str, str],
    headline: tuple[str, ...],
    summary: dict,
) -> dict:
    """Write report.json, report.md and report.png into `out`; return the report."""
    groups = aggregate(cells, records, statuses)
    columns = _headline(groups, headline)
    report = {
        "grid": summary["grid"],
        "kind": summary["kind"],
        "written": summary["written"],
        "runs": summary["runs"],
        "statistic": "mean and sample standard deviation (n - 1) over finished seeds",
        "columns": columns,
        "groups": groups,
    }
    atomic_write_text(out / "report.json", json.dumps(report, indent=2))
    atomic_write_text(out / "report.md", markdown(groups, columns, summary))
    plot(groups, columns, out / "report.png", f"{summary['kind']} sweep: mean ± std over seeds")
    return report

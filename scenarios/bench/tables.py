"""From per-cell results to the run's aggregate (results.json) and paper-style tables (results.md):
rows = models, columns = ID and each OOD split, mean +- std over seeds; then the cost table."""

from __future__ import annotations

import numpy as np
from atomspark.scenarios.bench.costs import GPU_BATCH
from atomspark.scenarios.bench.family import TASKS
from atomspark.scenarios.bench.metrics import mean_std

TASK_TITLES = {
    "recon": "Reconstruction of the noisy signal: NMSE over the whole signal (lower is better)",
    "masked": "Masked prediction: NMSE over the hidden part (lower is better)",
}


def aggregate(cells: list[dict], manifest: dict, model_order: list[str]) -> dict:
    """Mean and std over seeds of every metric, parameter counts, times and costs, per model."""
    splits = manifest["splits"]
    by_model: dict[str, list[dict]] = {}
    for cell in cells:
        by_model.setdefault(cell["model"], []).append(cell)
    models = {}
    for name in [m for m in model_order if m in by_model] + sorted(
        set(by_model) - set(model_order)
    ):
        group = sorted(by_model[name], key=lambda c: c["seed"])
        entry = {
            "seeds": [c["seed"] for c in group],
            "params": group[0]["params"],
            "config": group[0]["config"],
            "train_s": mean_std([c["train_s"] for c in group]),
            "infer_s_per_sample": mean_std([c["infer_s_per_sample"] for c in group]),
            "metrics": {
                task: {s: mean_std([c["metrics"][task][s] for c in group]) for s in splits}
                for task in TASKS
            },
            "cost": group[0].get("cost"),
        }
        if "extra_metrics" in group[0]:
            entry["extra_metrics"] = {
                title: {s: mean_std([c["extra_metrics"][title][s] for c in group]) for s in cols}
                for title, cols in group[0]["extra_metrics"].items()
            }
        if "vn_stats" in group[0]:
            entry["active_atoms_mean"] = {
                s: mean_std([c["vn_stats"][s]["active_atoms_mean"] for c in group]) for s in splits
            }
        models[name] = entry
    return {
        **manifest,
        "models": models,
        "missing_cells": missing_cells(cells, manifest, model_order),
        "wall_s_cells_total": float(sum(c.get("wall_s", 0.0) for c in cells)),
        "finished_utc": max((c.get("finished_utc", "") for c in cells), default=""),
        "loadavg_max": max((c.get("loadavg", 0.0) for c in cells), default=0.0),
    }


def missing_cells(cells: list[dict], manifest: dict, model_order: list[str]) -> list[str]:
    done = {(c["model"], c["seed"]) for c in cells}
    return [f"{m} seed {s}" for m in model_order for s in manifest["seeds"] if (m, s) not in done]


def _pm(stat: dict) -> str:
    if len(stat["per_seed"]) < 2:
        return f"{stat['mean']:.4f}"
    return f"{stat['mean']:.4f} ± {stat['std']:.4f}"


def markdown(results: dict) -> str:
    """results.md: one table per task, then parameters/times, then VN and baseline costs."""
    splits, models = results["splits"], results["models"]
    n_seeds = max((len(m["seeds"]) for m in models.values()), default=0)
    lines = [
        f"# {results['family']} ({'quick' if results['quick'] else 'full'} mode, "
        f"{n_seeds} seed(s))",
        "",
    ]
    for task in TASKS:
        lines += [
            f"## {TASK_TITLES[task]}",
            "",
            "| model | " + " | ".join(splits) + " |",
            "|---|" + "---:|" * len(splits),
        ]
        for name, m in models.items():
            row = [_pm(m["metrics"][task][s]) for s in splits]
            lines.append(f"| {name} | " + " | ".join(row) + " |")
        lines.append("")
    lines += extra_metric_lines(models)
    lines += [
        "## Parameters and measured times",
        "",
        "| model | parameters | train s | inference ms/sample (device) |",
        "|---|---:|---:|---:|",
    ]
    for name, m in models.items():
        device = m["config"].get("device", "cpu (NumPy)")
        lines.append(
            f"| {name} | {m['params']} | {m['train_s']['mean']:.1f} | "
            f"{m['infer_s_per_sample']['mean'] * 1e3:.3f} ({device}) |"
        )
    lines += ["", *cost_lines(models), ""]
    if results.get("missing_cells"):
        lines += ["Missing cells: " + ", ".join(results["missing_cells"]), ""]
    return "\n".join(lines)


def extra_metric_lines(models: dict) -> list[str]:
    """One table per family-specific metric (Family.extra_metrics), models with it as rows."""
    titles = dict.fromkeys(t for m in models.values() for t in m.get("extra_metrics", {}))
    lines = []
    for title in titles:
        rows = {
            n: m["extra_metrics"][title]
            for n, m in models.items()
            if title in m.get("extra_metrics", {})
        }
        cols = list(next(iter(rows.values())))
        lines += [
            f"## {title}",
            "",
            "| model | " + " | ".join(cols) + " |",
            "|---|" + "---:|" * len(cols),
        ]
        lines += [f"| {n} | " + " | ".join(_pm(r[c]) for c in cols) + " |" for n, r in rows.items()]
        lines.append("")
    return lines


def cost_lines(models: dict) -> list[str]:
    """The cost table: VN on the chip (engine counters) and every model priced on the GPU preset."""
    lines = [
        "## Inference cost per sample",
        "",
        "| model | where | energy µJ | latency µs | work |",
        "|---|---|---:|---:|---|",
    ]
    for name, m in models.items():
        c = m.get("cost")
        if not c:
            continue
        if "chip" in c:
            lines.append(
                f"| {name} | {c['chip']['hardware']} ({c['chip']['cores']} cores, "
                f"{c['engine_steps']} steps) | {c['chip']['energy_j_per_sample'] * 1e6:.3g} | "
                f"{c['chip']['time_s_per_sample'] * 1e6:.3g} | {c['events_per_sample']:.3g} "
                f"events, {c['synops_per_sample']:.3g} synops, active "
                f"{c['active_fraction_mean_over_steps']:.3f}; codes within "
                f"{c['engine_vs_converged_settle_max_rel_error']:.1g} of the converged settle |"
            )
            d = c["dense_equivalent_gpu_batch1"]
            lines.append(
                f"| {name} | {d['hardware']} dense settle, batch 1 | "
                f"{d['energy_j_per_sample'] * 1e6:.3g} | {d['time_s_per_sample'] * 1e6:.3g} | "
                "same steps as dense mat-vecs |"
            )
        else:
            w = c["workload"]
            flops = w["matmul_flops"] + w["elementwise_flops"]
            for key in ("gpu_batch1", f"gpu_batch{GPU_BATCH}"):
                p = c[key]
                lines.append(
                    f"| {name} | {p['hardware']} batch {p['batch']} | "
                    f"{p['energy_j_per_sample'] * 1e6:.3g} | {p['time_s_per_sample'] * 1e6:.3g} | "
                    f"{flops:.3g} FLOPs, {w['launches']} launches ({p['bound']}-bound) |"
                )
    return lines


def finite_values(results: dict) -> np.ndarray:
    """Every metric mean/std in the results, for checks."""
    vals = [
        v
        for m in results["models"].values()
        for task in m["metrics"].values()
        for s in task.values()
        for v in (s["mean"], s["std"])
    ]
    return np.asarray(vals, dtype=float)

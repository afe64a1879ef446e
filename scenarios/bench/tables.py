"""From per-cell results to a run's aggregate (results.json) and its tables (results.md).

Selection (the protocol's tuning step): a model may have cells for several configurations (a
sweep's grid). Its configuration is the one with the lowest validation score
(metrics.validation_score) on the tuning seed, the smallest seed every configuration of the model
ran; only the chosen configuration's cells enter the tables (mean +- std over its seeds), and
the cells of the others are kept on disk for audit.
"""

from __future__ import annotations

import json

import numpy as np
from atomspark.scenarios.bench.family import TASKS
from atomspark.scenarios.bench.metrics import mean_std, validation_score
from atomspark.scenarios.bench.schedules import schedule_lines, schedule_summary

TASK_TITLES = {
    "recon": "Reconstruction of the noisy signal: NMSE over the whole signal (lower is better)",
    "masked": "Masked prediction: NMSE over the hidden part (lower is better)",
}
ID_VAR_TITLES = {
    "recon": "Reconstruction: MSE / ID variance (lower is better)",
    "masked": "Masked prediction: MSE over the hidden part / ID variance (lower is better)",
}
KIND_RANK = {"vn": 0, "torch": 1, "classical": 2, "trivial": 3}
UNTUNED_KEYS = ("device",)


def config_key(config: dict) -> str:
    """A configuration's identity: its settings without the ones that do not change results."""
    return json.dumps({k: v for k, v in config.items() if k not in UNTUNED_KEYS}, sort_keys=True)


def select(cells: list[dict]) -> dict[str, dict]:
    """Per model: {"cells": the chosen configuration's cells, "grid": [(config, val score on the
    tuning seed)] of every configuration tried, "tuning_seed"}."""
    by_model: dict[str, dict[str, list[dict]]] = {}
    for cell in cells:
        by_model.setdefault(cell["model"], {}).setdefault(config_key(cell["config"]), []).append(
            cell
        )
    chosen = {}
    for model, configs in by_model.items():
        tuning_seed = max(min(c["seed"] for c in group) for group in configs.values())
        grid = []
        for key, group in configs.items():
            at_seed = [c for c in group if c["seed"] == tuning_seed]
            score = validation_score(at_seed[0]["val"]) if at_seed and "val" in at_seed[0] else None
            grid.append((key, score, group))
        scored = [g for g in grid if g[1] is not None] or grid
        best = min(scored, key=lambda g: g[1] if g[1] is not None else np.inf)
        chosen[model] = {
            "cells": sorted(best[2], key=lambda c: c["seed"]),
            "grid": [{"config": json.loads(k), "val_score": s} for k, s, _ in grid],
            "tuning_seed": tuning_seed,
        }
    return chosen


def model_order(names_kinds: dict[str, str], preferred: list[str] | None = None) -> list[str]:
    """VN rows first, then networks, classical peers, floors; within a kind `preferred` order,
    then by name."""
    pref = {n: i for i, n in enumerate(preferred or [])}
    return sorted(
        names_kinds,
        key=lambda n: (KIND_RANK.get(names_kinds[n], 9), pref.get(n, len(pref)), n),
    )


def _entry(group: list[dict], splits: list[str]) -> dict:
    first = group[0]
    entry = {
        "seeds": [c["seed"] for c in group],
        "folders": sorted({c["source"].split("/")[0] for c in group if "source" in c}),
        "kind": first["kind"],
        "params": first["params"],
        "config": first["config"],
        "train_s": mean_std([c["train_s"] for c in group]),
        "infer_s_per_sample": mean_std([c["infer_s_per_sample"] for c in group]),
        "metrics": {
            t: {s: mean_std([c["metrics"][t][s] for c in group]) for s in splits} for t in TASKS
        },
    }
    if all("val" in c for c in group):
        entry["val_score"] = mean_std([validation_score(c["val"]) for c in group])
    if all("metrics_id_var" in c for c in group):
        entry["metrics_id_var"] = {
            t: {s: mean_std([c["metrics_id_var"][t][s] for c in group]) for s in splits}
            for t in TASKS
        }
    if all("curves" in c for c in group):
        entry["curves"] = {
            "best_epoch": [c["curves"]["best_epoch"] for c in group],
            "epochs_run": [len(c["curves"]["train_loss"]) for c in group],
            "stopped": [c["curves"]["stopped"] for c in group],
        }
    if "extra_metrics" in first:
        entry["extra_metrics"] = {
            title: {s: mean_std([c["extra_metrics"][title][s] for c in group]) for s in cols}
            for title, cols in first["extra_metrics"].items()
        }
    if "vn_stats" in first:
        entry["active_atoms_mean"] = {
            s: mean_std([c["vn_stats"][s]["active_atoms_mean"] for c in group]) for s in splits
        }
    return entry


def aggregate(
    cells: list[dict],
    manifest: dict,
    model_order_hint: list[str],
    principal: dict[int, dict] | None = None,
) -> dict:
    """The chosen configuration of every model (select), aggregated over its seeds; the data
    facts (span residual per split and, if given, the per-seed principal residuals of
    validation.principal_facts) averaged over seeds; what is missing."""
    splits = manifest["splits"]
    chosen = select(cells)
    kinds = {m: c["cells"][0]["kind"] for m, c in chosen.items()}
    models = {}
    for name in model_order(kinds, model_order_hint):
        entry = _entry(chosen[name]["cells"], splits)
        entry["grid"] = chosen[name]["grid"]
        entry["tuning_seed"] = chosen[name]["tuning_seed"]
        models[name] = entry
    facts = {}
    by_seed = {c["seed"]: c["data"] for c in cells if "data" in c}
    if by_seed:
        facts = {
            "span_residual": {
                s: mean_std([d["span_residual"][s] for d in by_seed.values()]) for s in splits
            },
            "train_rank": sorted({d["train_rank"] for d in by_seed.values()}),
            "n_train": sorted({d["n_train"] for d in by_seed.values()}),
            "n_val": sorted({d["n_val"] for d in by_seed.values()}),
        }
    if principal:
        facts["principal"] = {
            "energy": next(iter(principal.values()))["energy"],
            "rank": sorted({p["rank"] for p in principal.values()}),
            "residual": {
                s: mean_std([p["residual"][s] for p in principal.values()])
                for s in [*splits, "validation"]
            },
        }
    return {
        **manifest,
        "models": models,
        "data_facts": facts,
        "schedules": schedule_summary(cells),
        "missing_cells": missing_cells(models, manifest["seeds"]),
        "missing_models": [m for m in manifest.get("models") or [] if m not in models],
        "wall_s_cells_total": float(sum(c.get("wall_s", 0.0) for c in cells)),
        "n_cells": len(cells),
        "finished_utc": max((c.get("finished_utc", "") for c in cells), default=""),
        "loadavg_max": max((c.get("loadavg", 0.0) for c in cells), default=0.0),
    }


def missing_cells(models: dict, seeds: list[int]) -> list[str]:
    """Seeds of the protocol that a model's chosen configuration has not run."""
    return [f"{m} seed {s}" for m, e in models.items() for s in seeds if s not in e["seeds"]]


def _pm(stat: dict) -> str:
    if len(stat["per_seed"]) < 2:
        return f"{stat['mean']:.4f}"
    return f"{stat['mean']:.4f} ± {stat['std']:.4f}"


def _label(name: str, m: dict) -> str:
    n = len(m["seeds"])
    return name if n >= 3 else f"{name} ({n} seed{'s' if n > 1 else ''})"


def metric_table(title: str, splits: list[str], rows: dict[str, dict]) -> list[str]:
    lines = [f"## {title}", "", "| model | " + " | ".join(splits) + " |"]
    lines.append("|---|" + "---:|" * len(splits))
    lines += [f"| {n} | " + " | ".join(_pm(r[s]) for s in splits) + " |" for n, r in rows.items()]
    return [*lines, ""]


def markdown(results: dict) -> str:
    """results.md: the data facts, one table per task and metric, family metrics, then the
    models' chosen configurations, budgets, times and convergence."""
    splits, models = results["splits"], results["models"]
    lines = [f"# {results['family']} ({'quick' if results['quick'] else 'full'} mode)", ""]
    lines += data_lines(results)
    for task in ("masked", "recon"):
        rows = {_label(n, m): m["metrics"][task] for n, m in models.items()}
        lines += metric_table(TASK_TITLES[task], splits, rows)
    for task in ("masked", "recon"):
        rows = {
            _label(n, m): m["metrics_id_var"][task]
            for n, m in models.items()
            if "metrics_id_var" in m
        }
        if rows:
            lines += metric_table(ID_VAR_TITLES[task], splits, rows)
    lines += extra_metric_lines(models)
    lines += model_lines(models)
    lines += schedule_lines(results.get("schedules", {}))
    missing = [f"{m} (every seed)" for m in results.get("missing_models", [])]
    missing += results.get("missing_cells", [])
    if missing:
        lines += ["Missing cells: " + ", ".join(missing) + ".", ""]
    else:
        lines += ["No cell of the protocol is missing.", ""]
    return "\n".join(lines)


def data_lines(results: dict) -> list[str]:
    facts = results.get("data_facts") or {}
    if not facts:
        return []
    splits = results["splits"]
    res = facts["span_residual"]
    return [
        "## Distance of each split from the ID training span",
        "",
        f"Training signals {', '.join(map(str, facts['n_train']))}, validation "
        f"{', '.join(map(str, facts['n_val']))}, rank of the training signals "
        f"{', '.join(map(str, facts['train_rank']))}. Residual energy outside their span "
        f"(0 = inside){' and outside their top principal directions' if 'principal' in facts else ''}:",
        "",
        "| | " + " | ".join(splits) + " |",
        "|---|" + "---:|" * len(splits),
        "| outside the span | " + " | ".join(f"{res[s]['mean']:.2g}" for s in splits) + " |",
        *principal_lines(facts.get("principal"), splits),
        "",
    ]


def principal_lines(principal: dict | None, splits: list[str]) -> list[str]:
    """The row of energy outside the training signals' top principal directions."""
    if not principal:
        return []
    res = principal["residual"]
    ranks = "/".join(map(str, principal["rank"]))
    return [
        f"| outside the top {ranks} PCs ({principal['energy']:.0%} of training energy; "
        f"validation {res['validation']['mean']:.2g}) | "
        + " | ".join(f"{res[s]['mean']:.2g}" for s in splits)
        + " |"
    ]


def _flat(config: dict) -> dict:
    out = {}
    for k, v in config.items():
        out.update(_flat(v) if isinstance(v, dict) else {k: v})
    return out


def config_text(config: dict, grid: list[dict]) -> str:
    """The chosen values of the settings that vary over the model's grid ("-" for one config)."""
    flats = [_flat(g["config"]) for g in grid]
    chosen = _flat(config)
    varying = [k for k in chosen if len({json.dumps(f.get(k)) for f in flats}) > 1]
    return ", ".join(f"{k} {chosen[k]}" for k in varying) or "-"


def model_lines(models: dict) -> list[str]:
    vn = models.get("VN", {}).get("params")
    lines = [
        "## Models: chosen configuration, budget, times, convergence",
        "",
        "| model | configs tried | chosen on validation | val score | parameters (× VN) | "
        "train s | inference ms/sample | epochs: best / run (stop) |",
        "|---|---:|---|---:|---:|---:|---:|---|",
    ]
    for name, m in models.items():
        ratio = f" ({m['params'] / vn:.2g}×)" if vn else ""
        val = _pm(m["val_score"]) if "val_score" in m else "-"
        conv = "-"
        if "curves" in m:
            c = m["curves"]
            train = m["config"].get("train", {})
            schedule = "plateau halving" if "plateau" in train else "cosine"
            conv = (
                f"{'/'.join(map(str, c['best_epoch']))} / {'/'.join(map(str, c['epochs_run']))}"
                f" ({stop_text(c['stopped'])}; {schedule}, cap {train.get('epochs')})"
            )
        lines.append(
            f"| {name} | {len(m['grid'])} | {config_text(m['config'], m['grid'])} | {val} | "
            f"{m['params']}{ratio} | {m['train_s']['mean']:.1f} | "
            f"{m['infer_s_per_sample']['mean'] * 1e3:.3f} | {conv} |"
        )
    return [*lines, ""]


def stop_text(stopped: list[str]) -> str:
    """Why training ended, over seeds: early stop, end of the cosine schedule, or (cells of the
    earlier plateau schedule) the epoch cap, which may mean not converged."""
    capped = sum(s.startswith("epoch cap") for s in stopped)
    ended = sum(s.startswith("schedule end") for s in stopped)
    parts = [f"cap hit {capped}x" if capped else "", f"schedule end {ended}x" if ended else ""]
    early = len(stopped) - capped - ended
    parts.append(f"early stop {early}x" if early and (capped or ended) else "")
    return ", ".join(p for p in parts if p) or "early stop"


def extra_metric_lines(models: dict) -> list[str]:
    """One table per family-specific metric (Family.extra_metrics), models with it as rows."""
    titles = dict.fromkeys(t for m in models.values() for t in m.get("extra_metrics", {}))
    lines = []
    for title in titles:
        rows = {
            _label(n, m): m["extra_metrics"][title]
            for n, m in models.items()
            if title in m.get("extra_metrics", {})
        }
        cols = list(next(iter(rows.values())))
        lines += metric_table(title, cols, rows)
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

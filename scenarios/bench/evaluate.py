"""Score one trained model on every split and task of a family's data, and (for VN) describe its
codes: active atoms per sample and which atoms each split uses."""

from __future__ import annotations

import os
import time

import numpy as np
from atomspark.scenarios.bench.family import TASKS, BenchData, Split
from atomspark.scenarios.bench.metrics import mse_over_reference, nmse, per_sample_nmse

EXAMPLE_DECIMALS = 4


def _predict(model, split: Split, task: str) -> tuple[np.ndarray, np.ndarray | None]:
    """Predictions (and VN codes) for one split and task."""
    x, observed = split.task_input(task)
    if model.has_codes:
        return model.predict_with_codes(x, observed)
    return model.predict(x, observed), None


def task_scores(model, split: Split) -> dict[str, float]:
    """NMSE of each task on one split (the validation score's parts)."""
    out = {}
    for task in TASKS:
        pred, _ = _predict(model, split, task)
        out[task] = nmse(pred, split.clean, split.task_target(task))
    return out


def evaluate(model, data: BenchData, keep_examples: bool) -> dict:
    """Metrics per task and split (NMSE, and MSE over the ID split's variance), the validation
    NMSE per task, per-sample probe errors, inference wall time per sample (the ID
    reconstruction pass), the first sample's predictions per split (if keep_examples) and, for
    VN, code statistics."""
    out: dict = {
        "metrics": {t: {} for t in TASKS},
        "metrics_id_var": {t: {} for t in TASKS},
        "probes": {},
        "examples": {},
    }
    if data.val is not None:
        out["val"] = task_scores(model, data.val)
    id_split = data.splits["id"]
    id_var = {t: float(np.var(id_split.clean[id_split.task_target(t)])) for t in TASKS}
    vn_stats: dict = {}
    for name, split in data.splits.items():
        for task in TASKS:
            t0 = time.perf_counter()
            pred, codes = _predict(model, split, task)
            if name == "id" and task == "recon":
                out["infer_s_per_sample"] = (time.perf_counter() - t0) / split.n
                out["infer_loadavg"] = os.getloadavg()[0]
            scored = split.task_target(task)
            out["metrics"][task][name] = nmse(pred, split.clean, scored)
            out["metrics_id_var"][task][name] = mse_over_reference(
                pred, split.clean, scored, id_var[task]
            )
            if keep_examples:
                out["examples"].setdefault(name, {})[task] = np.round(
                    pred[0], EXAMPLE_DECIMALS
                ).tolist()
            if codes is not None and task == "recon":
                active = (codes != 0).sum(axis=1)
                vn_stats[name] = {
                    "active_atoms_mean": float(active.mean()),
                    "active_atoms_per_sample": active.tolist(),
                    "atom_usage": np.round((codes != 0).mean(axis=0), 4).tolist(),
                }
    for name, probe in data.probes.items():
        out["probes"][name] = {}
        for task in TASKS:
            pred, _ = _predict(model, probe, task)
            errs = per_sample_nmse(pred, probe.clean, probe.task_target(task))
            out["probes"][name][task] = np.round(errs, 5).tolist()
    if vn_stats:
        out["vn_stats"] = vn_stats
    return out


def example_inputs(data: BenchData) -> dict:
    """The first sample of each split: clean signal, noisy input, hidden mask (for plots)."""
    return {
        name: {
            "clean": np.round(s.clean[0], EXAMPLE_DECIMALS).tolist(),
            "noisy": np.round(s.noisy[0], EXAMPLE_DECIMALS).tolist(),
            "hidden": s.hidden[0].astype(int).tolist(),
        }
        for name, s in data.splits.items()
    }

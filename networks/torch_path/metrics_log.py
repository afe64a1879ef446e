"""A training run's metrics.jsonl: the best validation epoch read from it, the rows a resume
drops, and the loss/metric/activity plot drawn from it."""

from __future__ import annotations

import json
from pathlib import Path

from atomspark.networks.families import task_loss_title, task_metric
from atomspark.sim.core import atomic_write_text, atomic_write_with


def _rows(metrics_path: Path) -> list[dict]:
    return [json.loads(line) for line in metrics_path.read_text().splitlines() if line.strip()]


def best_validation(metrics_path: Path) -> dict:
    """The epoch with the highest validation accuracy in metrics.jsonl (the figure the RSGN paper
    reports): best_accuracy, best_epoch and that epoch's activity; {} if nothing was evaluated.
    Read from the log so that a resumed run counts the epochs before the interruption."""
    evals = [r for r in _rows(metrics_path) if r["type"] == "eval"]
    if not evals:
        return {}
    best = max(evals, key=lambda r: (r["accuracy"], -r["epoch"]))
    return {
        "best_accuracy": best["accuracy"],
        "best_epoch": best["epoch"],
        "best_activity": best.get("activity"),
    }


def truncate_metrics(path: Path, step: int, epoch: int) -> None:
    """Drop the rows written after the checkpoint a resume starts from (they are recomputed)."""
    if not path.is_file():
        return
    keep = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if row["step"] <= step and (row["type"] != "eval" or row["epoch"] <= epoch):
            keep.append(line)
    atomic_write_text(path, "".join(f"{line}\n" for line in keep))


def plot_metrics(metrics_path: Path, png_path: Path, task: str = "rsgn-sequence") -> None:
    """Loss, task metric and activity curves from metrics.jsonl (matplotlib, Agg backend), saved
    atomically. The loss axis is logarithmic when the loss is positive and spans a decade."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = _rows(metrics_path)
    steps = [r for r in rows if r["type"] == "step"]
    evals = [r for r in rows if r["type"] == "eval"]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    titles = {
        "loss": task_loss_title(task),
        "accuracy": task_metric(task),
        "activity": "active fraction",
    }
    for ax, (key, title) in zip(axes, titles.items()):
        if steps and key not in steps[0]:  # baselines have no activity
            ax.text(0.5, 0.5, f"{title}:\nnot defined for this model", ha="center", va="center")
            ax.set_axis_off()
            continue
        ax.plot([r["step"] for r in steps], [r[key] for r in steps], label="train (batch)")
        if evals:
            ax.plot([r["step"] for r in evals], [r[key] for r in evals], "o-", label="validation")
        ax.set_xlabel("optimiser step")
        ax.set_ylabel(title)
        ax.set_title(title)
        ax.legend()
    values = [r["loss"] for r in steps + evals]
    if values and min(values) > 0 and max(values) > 10 * min(values):
        axes[0].set_yscale("log")
    for ax in axes[1:]:
        ax.set_ylim(-0.03, 1.03)
    fig.tight_layout()
    atomic_write_with(png_path, lambda tmp: fig.savefig(tmp, dpi=100, format="png"))
    plt.close(fig)

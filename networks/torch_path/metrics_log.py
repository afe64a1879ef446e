"""A training run's metrics.jsonl: appended to while it trains, the best validation epoch read
from it, the rows a resume drops, and the loss/metric/activity plot drawn from it."""

from __future__ import annotations

import json
import math
from pathlib import Path

from atomspark.networks.families import task_loss_title, task_metric
from atomspark.sim.core import (
    FULL_DISK,
    DiskFullError,
    atomic_write_figure,
    atomic_write_text,
)


class MetricsAppender:
    """metrics.jsonl open for appending rows. A full disk raises DiskFullError with the bytes
    written since the last flush (what the write that failed needed), so that its one-line
    message can say how much space the run needs."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._file = open(self.path, "a", encoding="utf-8")
        self._pending = 0

    def write(self, text: str) -> None:
        self._pending += len(text.encode("utf-8"))
        self._guarded(self._file.write, text)

    def flush(self) -> None:
        self._guarded(self._file.flush)
        self._pending = 0

    def close(self) -> None:
        self._guarded(self._file.close)

    def _guarded(self, operation, *args) -> None:
        try:
            operation(*args)
        except OSError as exc:
            if exc.errno in FULL_DISK and not isinstance(exc, DiskFullError):
                raise DiskFullError(exc, self.path, self._pending) from exc
            raise

    def __enter__(self) -> MetricsAppender:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def _valid(row) -> bool:
    """A row train wrote: a dict with its type, an integer step and epoch."""
    if not isinstance(row, dict) or row.get("type") not in ("step", "eval"):
        return False
    return all(type(row.get(k)) is int for k in ("step", "epoch"))


def _number(row: dict, key: str) -> float:
    value = row.get(key)
    return value if type(value) in (int, float) else math.nan


def read_rows(metrics_path: Path) -> list[dict]:
    """The log's rows, tolerant of what a killed run or a full disk leaves: a torn last line, an
    unreadable or foreign row (no type, step or epoch) is dropped, never a crash."""
    try:
        data = metrics_path.read_bytes()
    except FileNotFoundError:
        return []
    rows = []
    for line in data.decode("utf-8", errors="replace").splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if _valid(row):
            rows.append(row)
    return rows


def _rows(metrics_path: Path) -> list[dict]:
    return read_rows(metrics_path)


def best_validation(metrics_path: Path) -> dict:
    """The epoch with the highest validation accuracy in metrics.jsonl (the figure the RSGN paper
    reports): best_accuracy, best_epoch and that epoch's activity; {} if nothing was evaluated.
    Read from the log so that a resumed run counts the epochs before the interruption."""
    rows = _rows(metrics_path)
    evals = [r for r in rows if r["type"] == "eval" and not math.isnan(_number(r, "accuracy"))]
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
    keep = [
        json.dumps(row)
        for row in read_rows(path)
        if row["step"] <= step and (row["type"] != "eval" or row["epoch"] <= epoch)
    ]
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
        ax.plot([r["step"] for r in steps], [_number(r, key) for r in steps], label="train (batch)")
        if evals:
            ax.plot(
                [r["step"] for r in evals],
                [_number(r, key) for r in evals],
                "o-",
                label="validation",
            )
        ax.set_xlabel("optimiser step")
        ax.set_ylabel(title)
        ax.set_title(title)
        ax.legend()
    values = [v for v in (_number(r, "loss") for r in steps + evals) if math.isfinite(v)]
    if values and min(values) > 0 and max(values) > 10 * min(values):
        axes[0].set_yscale("log")
    for ax in axes[1:]:
        ax.set_ylim(-0.03, 1.03)
    fig.tight_layout()
    atomic_write_figure(png_path, fig, dpi=100)
    plt.close(fig)

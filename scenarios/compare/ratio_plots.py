"""Figures of chip-vs-GPU ratios (mapping/chip_gpu_ratios.py): each workload's headline with its
best-practice range, energy and time side by side, and a tornado of how far each assumption
moves it. Ratio = GPU / chip per sample (> 1: the chip uses less energy or time); log scale."""

from __future__ import annotations

import os

import numpy as np
from atomspark.mapping.plots import _pyplot, _save

SETTINGS = (("batch_1", "batch 1"), ("throughput", "throughput"))


def _log_ticks(ax, span: float = 10.0) -> None:
    """Log x axis with ticks at 1, 2, 5 x 10^k (powers of ten alone over more than two decades)
    written plainly, no minor labels (they collide)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_xscale("log")
    subs = (1.0, 2.0, 5.0) if span < 100 else (1.0,)
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=subs, numticks=12))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def plot_ratios(results: dict[str, dict], path: str | os.PathLike) -> None:
    """Headline ratio (dot) and its best-practice range (bar) per workload and setting, energy
    (left) and time (right); a workload that does not fit the chip is named with no ratio."""
    plt = _pyplot()
    labels, missing = [], []
    values = {"energy": ([], [], []), "time": ([], [], [])}
    for name, r in results.items():
        if not r["fits"]:
            missing.append(name)
            continue
        for key, what in SETTINGS:
            labels.append(f"{name}, {what}")  # throughput: GPU batch, chip copies
            q = r[key]
            for kind, prefix in (("energy", "ratio"), ("time", "time_ratio")):
                for lst, suffix in zip(values[kind], ("", "_min", "_max")):
                    lst.append(q[prefix + suffix])
    fig, axes = plt.subplots(
        1, 2, figsize=(11, max(2.9, 1.6 + 0.42 * len(labels))), sharey=True, squeeze=False
    )
    y = np.arange(len(labels))
    for ax, kind in zip(axes[0], ("energy", "time")):
        mid, lo, hi = (np.array(v) for v in values[kind])
        if labels:
            err = np.array([mid - lo, hi - mid])
            ax.errorbar(mid, y, xerr=err, fmt="o", color="C0", ecolor="C0", capsize=4,
                        label="headline; bar: best-practice range")  # fmt: skip
            ax.axvline(1.0, color="k", ls=":", lw=1, label=f"equal {kind}")
            span = float(max(hi.max(), 1.0) / min(lo.min(), 1.0))
            _log_ticks(ax, span)
            ax.set_xlim(min(lo.min(), 1.0) / 2, max(hi.max(), 1.0) * 2)
            ax.set_yticks(y, labels)
            ax.legend(fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.02), ncol=2)
        ax.set_xlabel(
            f"GPU {kind} / chip {kind} per sample (> 1: the chip {'uses less' if kind == 'energy' else 'is faster'})",
            fontsize=8,
        )
    if labels:
        axes[0, 0].invert_yaxis()
    if missing:
        fig.suptitle("does not fit the chip (no ratio): " + ", ".join(missing), fontsize=8)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)


def plot_tornado(
    results: dict[str, dict], path: str | os.PathLike, setting: str = "throughput"
) -> None:
    """One panel per workload that fits: for each assumption, the lowest to highest ratio when
    it alone moves from the headline (widest first), the headline as a dashed line."""
    plt = _pyplot()
    fitted = {n: r for n, r in results.items() if r["fits"]}
    n_bars = max((len(r[setting]["tornado"]) for r in fitted.values()), default=1)
    fig, axes = plt.subplots(
        len(fitted) or 1, 1, figsize=(8.5, 0.9 + (0.28 * n_bars + 0.7) * max(len(fitted), 1)),
        squeeze=False,
    )  # fmt: skip
    what = dict(SETTINGS)[setting]
    for ax, (name, r) in zip(axes[:, 0], fitted.items()):
        bars = r[setting]["tornado"]
        y = np.arange(len(bars))
        low = np.array([b["low"] for b in bars])
        high = np.array([b["high"] for b in bars])
        ax.barh(y, high - low, left=low, height=0.6, color="C1")
        base = r[setting]["ratio"]
        ax.axvline(base, color="k", ls="--", lw=1)
        lo_all, hi_all = min(low.min(), base), max(high.max(), base)
        _log_ticks(ax, hi_all / lo_all)
        ax.set_xlim(lo_all / 1.6, hi_all * 1.6)
        ax.set_yticks(y, [f"{b['label']} ({b['low']:.2g}-{b['high']:.2g}x)" for b in bars],
                      fontsize=7)  # fmt: skip
        ax.invert_yaxis()
        where = (
            "GPU throughput batch, chip copies side by side" if setting == "throughput" else what
        )
        ax.set_title(f"{name}, {where}: headline {base:.3g}x (dashed)", fontsize=9)
        ax.set_xlabel("GPU / chip energy per sample", fontsize=8)
    if not fitted:
        axes[0, 0].set_axis_off()
        axes[0, 0].text(0.5, 0.5, "no workload fits the chip", ha="center", va="center")
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)

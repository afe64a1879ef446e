"""Figures of chip-vs-GPU ratios (mapping/chip_gpu_ratios.py): each workload's headline with its
range, and a tornado of how far each assumption moves it. Ratio = GPU energy / chip energy per
sample (> 1: the chip uses less); log scale."""

from __future__ import annotations

import os

import numpy as np
from atomspark.mapping.plots import _pyplot, _save

SETTINGS = (("batch_1", "batch 1"), ("throughput", "throughput"))


def _log_ticks(ax) -> None:
    """Log x axis with ticks at 1, 2, 5 x 10^k written plainly, no minor labels (they collide)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0), numticks=12))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def plot_ratios(results: dict[str, dict], path: str | os.PathLike) -> None:
    """Headline ratio (dot) and its range (bar) per workload and setting; a workload that does
    not fit the chip is named with no ratio."""
    plt = _pyplot()
    labels, mid, lo, hi = [], [], [], []
    missing = []
    for name, r in results.items():
        if not r["fits"]:
            missing.append(name)
            continue
        for key, what in SETTINGS:
            labels.append(f"{name}, {what}")  # throughput: GPU batch, chip copies
            mid.append(r[key]["ratio"])
            lo.append(r[key]["ratio_min"])
            hi.append(r[key]["ratio_max"])
    fig, ax = plt.subplots(figsize=(8, 1.4 + 0.42 * max(len(labels), 1)))
    y = np.arange(len(labels))
    if labels:
        mid_a = np.array(mid)
        err = np.array([mid_a - np.array(lo), np.array(hi) - mid_a])
        ax.errorbar(mid_a, y, xerr=err, fmt="o", color="C0", ecolor="C0", capsize=4,
                    label="headline; bar: range over the alternatives")  # fmt: skip
        ax.axvline(1.0, color="k", ls=":", lw=1, label="equal energy")
        ax.set_xscale("log")
        if max(hi) / min(lo) < 1e4:
            _log_ticks(ax)
        ax.set_yticks(y, labels)
        ax.invert_yaxis()
        ax.legend(fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.02), ncol=2)
    ax.set_xlabel("GPU energy / chip energy per sample (> 1: the chip uses less)")
    if missing:
        ax.set_title("does not fit the chip (no ratio): " + ", ".join(missing), fontsize=8, y=1.12)
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
        if hi_all / lo_all < 1e3:
            _log_ticks(ax)
        else:
            ax.set_xscale("log")
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

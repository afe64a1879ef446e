"""The chip-vs-GPU map's figure: one row per family, one column per ratio (energy and time, at
batch 1 and at throughput); a line per series over size, the best-practice band of the series
the family's sentence follows, and the break-even line (ratio 1). Log-log."""

from __future__ import annotations

import os

import numpy as np
from atomspark.mapping.plots import _pyplot, _save

PANELS = (
    ("batch_1", "ratio", "energy, batch 1"),
    ("throughput", "ratio", "energy, throughput"),
    ("batch_1", "time_ratio", "time, batch 1"),
    ("throughput", "time_ratio", "time, throughput"),
)


def _log_axes(ax, values) -> None:
    from matplotlib.ticker import LogLocator, NullFormatter

    ax.set_xscale("log")
    ax.set_yscale("log")
    lo, hi = min(min(values), 1.0), max(max(values), 1.0)
    ax.set_ylim(lo / 2, hi * 2)
    ax.yaxis.set_major_locator(LogLocator(base=10, numticks=6))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())


def _thinned(sizes: list[float], steps: int = 8) -> list[float]:
    """The sizes as x ticks, dropping one closer than 1/`steps` of the span (log) to the last."""
    if len(sizes) < 2:
        return sizes
    gap = (np.log(sizes[-1]) - np.log(sizes[0])) / steps
    kept = [sizes[0]]
    for s in sizes[1:]:
        if np.log(s) - np.log(kept[-1]) >= gap:
            kept.append(s)
    return kept


def plot_map(result: dict, path: str | os.PathLike) -> None:
    """Draw map.json's points (scenarios/compare/chip_gpu_map.py) as break-even curves."""
    plt = _pyplot()
    families = list(result["families"])
    fig, axes = plt.subplots(
        len(families), len(PANELS), figsize=(15, 3.1 * len(families) + 0.6), squeeze=False
    )
    for row, name in enumerate(families):
        meta = result["families"][name]
        by_series: dict[str, list[dict]] = {}
        for p in result["points"]:
            if p["family"] == name and p["fits"]:
                by_series.setdefault(p["series"], []).append(p)
        last = len(PANELS) - 1
        for col, (regime, key, title) in enumerate(PANELS):
            ax = axes[row, col]
            values = []
            for i, (series, pts) in enumerate(sorted(by_series.items())):
                pts = sorted(pts, key=lambda p: p["size"])
                x = np.array([p["size"] for p in pts], float)
                y = np.array([p[regime][key] for p in pts])
                values += list(y)
                main = series == meta["sentence_series"]
                if main:
                    lo = np.array([p[regime][key + "_min"] for p in pts])
                    hi = np.array([p[regime][key + "_max"] for p in pts])
                    ax.fill_between(x, lo, hi, color=f"C{i}", alpha=0.18, lw=0,
                                    label="best-practice range" if col == last else None)  # fmt: skip
                    values += list(lo) + list(hi)
                ax.plot(x, y, marker="o", ms=3, color=f"C{i}", lw=2 if main else 1,
                        label=series if col == last else None)  # fmt: skip
            ax.axhline(1.0, color="k", ls=":", lw=1, label="break-even" if col == last else None)
            if values:
                _log_axes(ax, values)
                sizes = sorted({p["size"] for pts in by_series.values() for p in pts})
                ax.set_xticks(_thinned(sizes), [f"{s:g}" for s in _thinned(sizes)])
                ax.tick_params(axis="x", labelsize=7, rotation=45)
            ax.set_title(f"{name}: {title}", fontsize=9)
            ax.set_xlabel(meta["size_axis"], fontsize=8)
            ax.set_ylabel("GPU / chip", fontsize=8)
        if by_series:
            axes[row, -1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.03, 0.5))
    fig.suptitle("GPU / chip per sample (> 1: the chip uses less energy or is faster); shaded: "
                 "best-practice range of the bold series", fontsize=10)  # fmt: skip
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)

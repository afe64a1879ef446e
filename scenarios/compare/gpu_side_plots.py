"""Chip vs the GPU's own algorithm: energy per sample, with the ratio's assumptions under it."""

from __future__ import annotations

import os
import textwrap

import numpy as np
from atomspark.mapping.plots import _pyplot, _save


def plot_gpu_side(sides: dict[str, dict], chip: dict[str, float], chip_name: str, path) -> None:
    """Per workload: the chip's energy per sample and every GPU row (batch 1 / throughput batch
    x launch model), log scale; each workload's assumptions as a caption."""
    plt = _pyplot()
    names = list(sides)
    n_rows = len(sides[names[0]]["rows"])
    fig, ax = plt.subplots(figsize=(10, 4.4))
    x = np.arange(len(names))
    width = 0.8 / (n_rows + 1)
    ax.bar(x - 0.4 + width / 2, [chip[n] for n in names], width, label=chip_name, color="C3")
    for j in range(n_rows):
        rows = [sides[n]["rows"][j] for n in names]
        r0 = rows[0]
        label = f"GPU batch {'1' if r0['batch'] == 1 else 'opt.'}, {r0['launches']}"
        at = x - 0.4 + (j + 1.5) * width
        ax.bar(at, [r["energy_j"] for r in rows], width, label=label, color=f"C{(j + 4) % 10}")
        for xi, r in zip(at, rows):
            if r["energy_ratio_gpu_over_chip"] is None:  # batched: no ratio against one sample
                continue
            ax.annotate(
                f"{r['energy_ratio_gpu_over_chip']:.2g}x",
                (xi, r["energy_j"]),
                ha="center",
                va="bottom",
                fontsize=5,
                rotation=90,
            )
    ax.set_xticks(x, names)
    ax.set_yscale("log")
    ax.set_ylabel("energy per sample (J)")
    ax.set_title(
        "chip vs the GPU's own algorithm to the same accuracy (labels: GPU / chip at batch 1)"
    )
    ax.legend(fontsize=6, loc="lower center", bbox_to_anchor=(0.5, 1.08), ncol=4)
    caption = "\n".join(textwrap.fill(f"{n}: {sides[n]['assumptions']}", 170) for n in names)
    fig.text(0.01, -0.02, caption, fontsize=5.5, va="top", family="monospace")
    _save(fig, os.fspath(path))
    plt.close(fig)

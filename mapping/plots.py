"""Figures of a profiled run: activity per step, energy breakdown, chip vs GPU. PNG via Agg."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
from atomspark.mapping.costs import CostComparison
from atomspark.sim.profile import Profile


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: str | os.PathLike) -> None:
    """Save atomically: write next to the target, then rename."""
    path = os.fspath(path)
    tmp = f"{path}.tmp.png"
    fig.savefig(tmp, dpi=120, bbox_inches="tight")
    os.replace(tmp, path)


def plot_activity(
    profile: Profile,
    path: str | os.PathLike,
    title: str = "",
    variant: tuple[str, Profile] | None = None,
) -> None:
    """Active fraction and events per step, one line per population; `variant` (label, profile)
    of the same graph is drawn dashed, e.g. a send-on-delta run beside the exact one."""
    plt = _pyplot()
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
    sizes = np.maximum(profile.population_sizes, 1)
    window = max(1, profile.steps // 60)  # long runs: smooth the event counts for legibility
    runs = [("", profile, "-")] + ([(f" ({variant[0]})", variant[1], "--")] if variant else [])
    for suffix, prof, style in runs:
        steps = np.arange(prof.steps)
        for p, name in enumerate(prof.population_names):
            colour = f"C{p}"
            ax1.plot(steps, prof.active[:, p] / sizes[p], style, color=colour, label=name + suffix)
            ax2.plot(
                steps,
                _moving_mean(prof.events[:, p], window),
                style,
                color=colour,
                label=name + suffix,
            )
    ax1.set_ylabel("active fraction")
    ax2.set_ylabel(
        f"events per step\n(mean over {window} steps)" if window > 1 else "events per step"
    )
    ax2.set_xlabel("time step")
    ax2.set_yscale("symlog")
    ax2.legend(fontsize=7)
    ax1.set_title(title or "activity per step")
    _save(fig, path)
    plt.close(fig)


def _moving_mean(x: np.ndarray, window: int) -> np.ndarray:
    if window <= 1:
        return x
    return np.convolve(x, np.ones(window) / window, mode="same")


def plot_costs(comparisons: dict[str, CostComparison], path: str | os.PathLike) -> None:
    """Left: neuromorphic energy breakdown per model; right: energy per sample, chip vs GPU."""
    plt = _pyplot()
    names: Sequence[str] = list(comparisons)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    parts = ["synaptic_ops", "updates_active", "updates_idle", "spikes", "routing", "static"]
    bottom = np.zeros(len(names))
    for part in parts:
        vals = np.array([getattr(comparisons[n].neuromorphic.breakdown, part) for n in names])
        ax1.bar(names, vals * 1e9, bottom=bottom * 1e9, label=part)
        bottom += vals
    ax1.set_ylabel("energy per sample (nJ)")
    ax1.set_title(f"{comparisons[names[0]].neuromorphic.hardware}: breakdown")
    ax1.legend(fontsize=7)
    x = np.arange(len(names))
    chip = [comparisons[n].neuromorphic.energy_per_sample_j for n in names]
    gpu = [comparisons[n].dense.energy_j for n in names]
    ax2.bar(x - 0.2, chip, 0.4, label=comparisons[names[0]].neuromorphic.hardware)
    ax2.bar(x + 0.2, gpu, 0.4, label=f"{comparisons[names[0]].dense.hardware} (dense)")
    ax2.set_xticks(x, names)
    ax2.set_yscale("log")
    ax2.set_ylabel("energy per sample (J)")
    ax2.set_title("event-driven chip vs dense GPU")
    ax2.legend(fontsize=8)
    _save(fig, path)
    plt.close(fig)


def plot_raster(
    event_log: dict[str, tuple[np.ndarray, np.ndarray]],
    sizes: dict[str, int],
    path: str | os.PathLike,
    title: str = "",
) -> None:
    """Event raster: one dot per event (step, unit), populations stacked with their offsets."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    offset = 0
    for name, (steps, units) in event_log.items():
        ax.scatter(steps, units + offset, s=2, marker="|", label=name)
        offset += sizes[name]
    ax.set_xlabel("time step")
    ax.set_ylabel("unit (populations stacked)")
    ax.set_title(title or "event raster")
    ax.legend(fontsize=8, markerscale=4)
    _save(fig, path)
    plt.close(fig)

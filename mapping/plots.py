"""Figures of a profiled run: activity per step, energy breakdown, chip vs GPU. PNG via Agg."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
from atomspark.mapping.costs import CostComparison
from atomspark.sim.core import atomic_write_figure
from atomspark.sim.profile import Profile


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: str | os.PathLike) -> None:
    """Save atomically (rendered in memory, a temporary file beside the target, then rename),
    with the umask's permissions."""
    atomic_write_figure(path, fig, dpi=120, bbox_inches="tight")


def energy_unit(values) -> tuple[str, float]:
    """("uJ", 1e6)-style unit and factor for energies in J, chosen from the median value so that
    every panel of a figure shows one unit."""
    positive = [v for v in np.ravel(np.asarray(values, dtype=object)) if v is not None and v > 0]
    typical = float(np.median(positive)) if positive else 1.0
    for unit, scale in (("pJ", 1e12), ("nJ", 1e9), ("uJ", 1e6), ("mJ", 1e3)):
        if typical * scale < 1e3:
            return unit, scale
    return "J", 1.0


def _spans_decades(values, decades: float = 1.5) -> bool:
    positive = np.asarray([v for v in np.ravel(values) if v > 0])
    return positive.size > 1 and np.log10(positive.max() / positive.min()) > decades


def plot_activity(
    profile: Profile,
    path: str | os.PathLike,
    title: str = "",
    variant: tuple[str, Profile] | None = None,
) -> None:
    """Active fraction and events per step, one line per population; `variant` (label, profile)
    of the same graph is drawn dashed, e.g. a send-on-delta run beside the exact one. Long runs
    show events as a moving mean whose window shrinks at the ends (no artificial edge drop)."""
    from matplotlib.ticker import MaxNLocator

    plt = _pyplot()
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
    sizes = np.maximum(profile.population_sizes, 1)
    window = max(1, profile.steps // 60)  # long runs: smooth the event counts for legibility
    runs = [("", profile, "-")] + ([(f" ({variant[0]})", variant[1], "--")] if variant else [])
    events = []
    for suffix, prof, style in runs:
        steps = np.arange(prof.steps)
        for p, name in enumerate(prof.population_names):
            colour = f"C{p}"
            ax1.plot(steps, prof.active[:, p] / sizes[p], style, color=colour, label=name + suffix)
            smooth = _moving_mean(prof.events[:, p], window)
            events.append(smooth)
            ax2.plot(steps, smooth, style, color=colour, label=name + suffix)
    ax1.set_ylabel("active fraction")
    ax1.set_ylim(-0.03, 1.03)
    ax2.set_ylabel(
        f"events per step\n(mean over {window} steps)" if window > 1 else "events per step"
    )
    ax2.set_xlabel("time step")
    if _spans_decades(np.concatenate(events) if events else [], 2.0):
        ax2.set_yscale("log")
    ax2.set_ylim(bottom=max(ax2.get_ylim()[0], 0.5) if ax2.get_yscale() == "log" else 0)
    ax2.xaxis.set_major_locator(MaxNLocator(integer=True))
    # below the axes: with a variant the curves fill the panel, and a legend inside covers them
    ax2.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2, frameon=False)
    ax1.set_title(title or "activity per step")
    _save(fig, path)
    plt.close(fig)


def _moving_mean(x: np.ndarray, window: int) -> np.ndarray:
    """Centred moving mean; at the ends it averages only the steps that exist."""
    if window <= 1:
        return x
    kernel = np.ones(window)
    return np.convolve(x, kernel, mode="same") / np.convolve(np.ones(len(x)), kernel, mode="same")


def plot_costs(comparisons: dict, path: str | os.PathLike) -> None:
    """How each run's chip energy per sample splits into its parts (share, with the total at the
    right). Values: CostComparison or EnergyReport; runs that do not fit the chip are listed in
    the title. Runs are rows (names never overlap). The GPU side is in chip_vs_gpu.png."""
    plt = _pyplot()
    reports = {
        n: (c.neuromorphic if isinstance(c, CostComparison) else c) for n, c in comparisons.items()
    }
    missing = [n for n, r in reports.items() if r is None]
    names: Sequence[str] = [n for n, r in reports.items() if r is not None]
    y = np.arange(len(names))
    chip = np.array([reports[n].energy_per_sample_j for n in names])
    unit, scale = energy_unit(chip)
    fig, ax1 = plt.subplots(figsize=(7.5, 2.6 + 0.45 * max(len(names), 1)))
    parts = [
        "synaptic_ops",
        "updates_active",
        "updates_idle",
        "spikes",
        "routing",
        "microcode",
        "static",
    ]
    left = np.zeros(len(names))
    totals = np.maximum(chip, 1e-300)
    for part in parts:
        vals = np.array([getattr(reports[n].breakdown, part) for n in names])
        share = 100.0 * vals / totals
        ax1.barh(y, share, left=left, label=part.replace("_", " "))
        left += share
    for i, total in enumerate(chip):
        ax1.text(101, i, f"{total * scale:.3g} {unit}", va="center", fontsize=8)
    chip_name = reports[names[0]].hardware if names else "chip"
    ax1.set_xlim(0, 125)
    ax1.set_xticks([0, 25, 50, 75, 100])
    ax1.set_xlabel(f"share of {chip_name} energy per sample (%); total at the right")
    ax1.set_yticks(y, names)
    ax1.invert_yaxis()
    title = f"{chip_name}: where the energy goes"
    if missing:
        title += " (does not fit: " + ", ".join(missing) + ")"
    ax1.set_title(title, fontsize=9)
    # below the axis label: never on the title or on the bars
    ax1.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.32), ncol=6, frameon=False)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)


def plot_raster(
    event_log: dict[str, tuple[np.ndarray, np.ndarray]],
    sizes: dict[str, int],
    path: str | os.PathLike,
    title: str = "",
) -> None:
    """Event raster: one dot per event (step, unit), populations stacked with their offsets."""
    from matplotlib.ticker import MaxNLocator

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    offset = 0
    for name, (steps, units) in event_log.items():
        ax.scatter(steps, units + offset, s=6, marker="|", label=name)
        offset += sizes[name]
    if not any(len(steps) for steps, _ in event_log.values()):
        ax.text(0.5, 0.5, "no events", ha="center", va="center", transform=ax.transAxes)
    ax.set_ylim(-0.5, max(offset, 1) - 0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("time step")
    ax.set_ylabel("unit (populations stacked)")
    ax.set_title(title or "event raster")
    ax.legend(fontsize=8, markerscale=4)
    _save(fig, path)
    plt.close(fig)

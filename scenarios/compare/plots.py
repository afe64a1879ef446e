"""Figures of a GPU-vs-neuromorphic comparison report (scenarios/compare/chip_vs_gpu.py), matplotlib Agg."""

from __future__ import annotations

import os

import numpy as np
from atomspark.mapping.plots import energy_unit
from atomspark.sim.core import atomic_write_figure

LABELS = {"torch": "torch, dense", "engine_float": "engine float", "engine_fixed": "engine fixed"}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _priced(report: dict) -> dict:
    return {k: v for k, v in report["backends"].items() if "energy_per_sample_j" in v}


def _energy_kind(backend: dict) -> str:
    """'measured energy' or 'modelled energy', from the backend's energy_source."""
    return (
        "measured energy" if backend["energy_source"].startswith("measured") else "modelled energy"
    )


def _label(name: str, backend: dict, report: dict) -> str:
    """Legend entry: the backend, the hardware its energy is priced for and how; the torch run's
    own device (where it ran) is named apart from the GPU it is priced as."""
    hardware = report["hardware"]
    if name != "torch":
        return f"{LABELS[name]} ({hardware['neuromorphic']}, {_energy_kind(backend)})"
    gpu = hardware.get("gpu_model", "GPU")
    return f"{LABELS[name]}, ran on {backend['device']} ({gpu}, {_energy_kind(backend)})"


def plot_accuracy_energy(report: dict, metric: str, path: str | os.PathLike) -> None:
    """Task metric against energy per sample, one point per backend (RSGN: plus the cutoff
    sweep's event-driven runs, each point labelled with its cutoff; cutoffs that land on the
    same point share one label)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    unit, scale = energy_unit(
        [b["energy_per_sample_j"] for b in _priced(report).values()]
        + [r["energy_per_sample_j"] for r in report.get("cutoff_sweep") or []]
    )  # a cutoff whose run does not fit the chip has no energy (None) and no point
    for name, b in _priced(report).items():
        if b.get(metric) is None:
            continue
        ax.scatter(b["energy_per_sample_j"] * scale, b[metric], s=60, label=_label(name, b, report))
    sweep = [
        r
        for r in report.get("cutoff_sweep", [])
        if r.get(metric) is not None and r.get("energy_per_sample_j") is not None
    ]
    if sweep:
        e = [r["energy_per_sample_j"] * scale for r in sweep]
        ax.plot(e, [r[metric] for r in sweep], "k.--", label="engine, event cutoff sweep")
        points: dict = {}
        for r in sweep:
            key = (f"{r['energy_per_sample_j']:.3g}", f"{r[metric]:.3g}")
            where = (r["energy_per_sample_j"] * scale, r[metric])
            points.setdefault(key, (*where, []))[2].append(r["cutoff"])
        texts = [
            ax.annotate(
                "cutoff " + ", ".join(f"{c:g}" for c in cutoffs),
                (x, y),
                xytext=(5, 5),
                textcoords="offset points",
                fontsize=7,
            )
            for x, y, cutoffs in points.values()
        ]
        _separate(fig, texts)
    ax.set_xscale("log")
    ax.set_xlabel(f"energy per sample ({unit})")
    ys = [b[metric] for b in _priced(report).values() if b.get(metric) is not None]
    ax.set_ylabel(metric.replace("_", " ") + narrow_range_note(ys + [r[metric] for r in sweep]))
    ax.set_title(f"{report['model']['kind'].upper()}: {metric.replace('_', ' ')} vs energy")
    ax.legend(fontsize=7)
    fig.tight_layout()
    atomic_write_figure(path, fig, dpi=100)
    plt.close(fig)


def narrow_range_note(values: list[float], relative: float = 0.02) -> str:
    """A y-label suffix for data that spans under `relative` of its magnitude: the autoscaled
    axis then magnifies differences that are tiny, and the reader should be told so."""
    if len(values) < 2:
        return ""
    low, high = min(values), max(values)
    if high - low >= relative * max(abs(low), abs(high), 1e-300):
        return ""
    return f"\n(narrow axis: all within {high - low:.2g} of each other)"


def _separate(fig, texts: list) -> None:
    """Shift annotations up or down (alternately, in steps of their height) until none overlaps
    an earlier one."""
    renderer = fig.canvas.get_renderer()
    placed = []
    for text in texts:
        x0, y0 = text.xyann
        for k in range(1, 13):
            box = text.get_window_extent(renderer)
            if not any(box.overlaps(other) for other in placed):
                break
            step = (box.height * 72 / fig.dpi + 1) * ((k + 1) // 2) * (1 if k % 2 else -1)
            text.xyann = (x0, y0 + step)
        placed.append(text.get_window_extent(renderer))


def plot_energy_hist(report: dict, path: str | os.PathLike) -> None:
    """Per-sample chip energy of the engine runs, one dot per sample and one row per backend
    (readable whether the samples differ or all cost the same), with the torch run's energy
    per sample as a vertical line."""
    plt = _pyplot()
    priced = _priced(report)
    rows = [(n, b) for n, b in priced.items() if "per_sample_energy_j" in b]
    values = [v for _, b in rows for v in b["per_sample_energy_j"]]
    if "torch" in priced:
        values.append(priced["torch"]["energy_per_sample_j"])
    unit, scale = energy_unit(values)
    fig, ax = plt.subplots(figsize=(6.5, 1.8 + 0.6 * max(len(rows), 1)))
    jitter = np.random.default_rng(0)
    for i, (_, b) in enumerate(rows):
        e = np.asarray(b["per_sample_energy_j"]) * scale
        ax.scatter(e, i + jitter.uniform(-0.15, 0.15, e.size), s=14, alpha=0.7, color=f"C{i}")
        same = np.ptp(e) <= 1e-9 * max(abs(e).max(), 1e-300)
        note = f"all {e.size}: {e[0]:.3g} {unit}" if same else f"median {np.median(e):.3g} {unit}"
        ax.annotate(
            note, (e.max(), i), xytext=(6, 0), textcoords="offset points", fontsize=7, va="center"
        )
    if "torch" in priced:
        ax.axvline(
            priced["torch"]["energy_per_sample_j"] * scale,
            color="k",
            ls="--",
            label=_label("torch", priced["torch"], report),
        )
        ax.legend(fontsize=7, loc="lower right")
    ax.set_yticks(
        range(len(rows)), [f"{LABELS[n]}\non {report['hardware']['neuromorphic']}" for n, _ in rows]
    )
    ax.set_ylim(-0.6, len(rows) - 0.4)
    positive = [v * scale for v in values if v > 0]
    if positive and max(positive) / min(positive) > 30:
        ax.set_xscale("log")
    lo, hi = (min(positive), max(positive)) if positive else (0.0, 1.0)
    ax.set_xlim(lo / 1.5 if ax.get_xscale() == "log" else 0, hi * 1.6)
    ax.set_xlabel(f"energy per sample ({unit})")
    ax.set_title(f"per-sample energy ({report['samples']} samples, one dot each)")
    fig.tight_layout()
    atomic_write_figure(path, fig, dpi=100)
    plt.close(fig)


def plot_cutoff(report: dict, path: str | os.PathLike) -> None:
    """RSGN: accuracy and active fraction against the event cutoff, soft (torch) accuracy as a line."""
    plt = _pyplot()
    sweep = report["cutoff_sweep"]
    c = [r["cutoff"] for r in sweep]
    fig, ax = plt.subplots(figsize=(6, 4))
    if sweep[0]["accuracy"] is not None:
        ax.plot(c, [r["accuracy"] for r in sweep], "o-", label="accuracy (event engine)")
        soft = report["backends"]["torch"].get("accuracy")
        if soft is not None:
            ax.axhline(soft, color="C0", ls=":", label="accuracy (soft, torch)")
    ax.plot(c, [r["decision_agreement_vs_soft"] for r in sweep], "s--", label="agrees with soft")
    ax.set_xlabel("event cutoff")
    ax.set_ylabel("fraction of samples")
    ax2 = ax.twinx()
    ax2.plot(
        c, [r["mean_active_fraction"] for r in sweep], "^-", color="C3", label="active fraction"
    )
    ax2.set_ylabel("active fraction", color="C3")
    ax.set_title("RSGN: soft vs event-driven")
    ax.legend(fontsize=7, loc="lower left")
    ax2.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    atomic_write_figure(path, fig, dpi=100)
    plt.close(fig)

"""Figures of a GPU-vs-neuromorphic comparison report (scenarios/compare.py), matplotlib Agg."""

from __future__ import annotations

import os

import numpy as np

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


def plot_accuracy_energy(report: dict, metric: str, path: str | os.PathLike) -> None:
    """Task metric against energy per sample, one point per backend (RSGN: plus the cutoff
    sweep's event-driven runs)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, b in _priced(report).items():
        if b.get(metric) is None:
            continue
        where = b["device"] if name == "torch" else report["hardware"]["neuromorphic"]
        how = _energy_kind(b)
        ax.scatter(
            b["energy_per_sample_j"], b[metric], s=60, label=f"{LABELS[name]} ({where}, {how})"
        )
    sweep = [r for r in report.get("cutoff_sweep", []) if r.get(metric) is not None]
    if sweep:
        e = [r["energy_per_sample_j"] for r in sweep]
        ax.plot(e, [r[metric] for r in sweep], "k.--", label="engine, event cutoff sweep")
        for r in sweep:
            ax.annotate(f"{r['cutoff']:g}", (r["energy_per_sample_j"], r[metric]), fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("energy per sample (J)")
    ax.set_ylabel(metric.replace("_", " "))
    ax.set_title(f"{report['model']['kind'].upper()}: {metric.replace('_', ' ')} vs energy")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_energy_hist(report: dict, path: str | os.PathLike) -> None:
    """Distribution of per-sample chip energy of the engine runs; the GPU's per-sample energy
    (the same for every sample of a batch) as a vertical line."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    priced = _priced(report)
    for name, b in priced.items():
        if "per_sample_energy_j" in b:
            ax.hist(
                np.asarray(b["per_sample_energy_j"]) * 1e9,
                bins=20,
                alpha=0.6,
                label=f"{LABELS[name]} on {report['hardware']['neuromorphic']}",
            )
    if "torch" in priced:
        ax.axvline(
            priced["torch"]["energy_per_sample_j"] * 1e9,
            color="k",
            ls="--",
            label=f"torch on {priced['torch']['device']} ({_energy_kind(priced['torch'])})",
        )
    ax.set_xscale("log")
    ax.set_xlabel("energy per sample (nJ)")
    ax.set_ylabel("samples")
    ax.set_title("per-sample energy")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
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
    fig.savefig(path, dpi=100)
    plt.close(fig)

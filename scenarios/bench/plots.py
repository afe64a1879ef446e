"""The run's figures, drawn from results.json, examples.json and the cells (saved beside them)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from atomspark.scenarios.bench.family import TASKS  # noqa: E402
from atomspark.scenarios.bench.tables import TASK_TITLES, config_key, config_text  # noqa: E402


def plot_errors(results: dict, path: Path) -> Path:
    """Grouped bars: NMSE per split (x) and model (colour), one panel per task, log scale."""
    splits, models = results["splits"], results["models"]
    fig, axes = plt.subplots(1, len(TASKS), figsize=(6 * len(TASKS), 4), squeeze=False)
    width = 0.8 / max(len(models), 1)
    for ax, task in zip(axes[0], TASKS):
        for i, (name, m) in enumerate(models.items()):
            mean = [m["metrics"][task][s]["mean"] for s in splits]
            std = [m["metrics"][task][s]["std"] for s in splits]
            ax.bar(np.arange(len(splits)) + i * width, mean, width, yerr=std, label=name)
        ax.set_xticks(np.arange(len(splits)) + 0.4 - width / 2, splits, rotation=20)
        ax.set_yscale("log")
        ax.set_ylabel("NMSE")
        ax.set_title(TASK_TITLES[task].split(":")[0], fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    seeds = max((len(m.get("seeds", [])) for m in models.values()), default=0)
    spread = f"mean ± std over {seeds} seeds" if seeds > 1 else "one seed: no spread shown"
    fig.suptitle(f"{results['family']}: error per split and model ({spread})")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.tight_layout(rect=(0, 0.1, 1, 1))  # the legend goes below the panels, off the bars
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 6), fontsize=8)
    return _save(fig, path, layout=False)


def plot_examples(
    examples: dict, cells: list[dict], shape: list[int], path: Path, task: str = "masked"
) -> Path:
    """The first sample of every split: clean signal, input, and every model's output."""
    first_seed = min(c["seed"] for c in cells)
    outputs = {c["model"]: c["examples"] for c in cells if c["seed"] == first_seed}
    splits = list(examples)
    if len(shape) == 1:
        fig, axes = plt.subplots(
            len(splits), 1, figsize=(9, 2.2 * len(splits)), squeeze=False, sharex=True
        )
        for ax, split in zip(axes[:, 0], splits):
            ex = examples[split]
            hidden = np.asarray(ex["hidden"], bool)
            x = np.arange(len(ex["clean"]))
            ax.plot(x, ex["clean"], "k-", lw=2, label="clean")
            shown = np.where(hidden, np.nan, ex["noisy"]) if task == "masked" else ex["noisy"]
            ax.plot(x, shown, ".", color="0.6", ms=3, label="input")
            for name, out in outputs.items():
                ax.plot(x, out[split][task], lw=1, label=name)
            if task == "masked" and hidden.any():
                ax.axvspan(x[hidden].min(), x[hidden].max(), color="y", alpha=0.15)
            ax.set_ylabel(split, fontsize=9)
        axes[-1, 0].set_xlabel("position in the signal (sample index)")
        handles, labels = axes[0, 0].get_legend_handles_labels()
        fig.tight_layout(rect=(0, 0, 1, 1 - 0.35 / fig.get_size_inches()[1]))
        fig.legend(handles, labels, loc="upper center", ncol=min(len(labels), 6), fontsize=7)
        return _save(fig, path, layout=False)  # the legend above the panels, off the curves
    else:
        cols = 2 + len(outputs)
        fig, axes = plt.subplots(
            len(splits), cols, figsize=(1.7 * cols, 1.8 * len(splits)), squeeze=False
        )
        for r, split in enumerate(splits):
            ex = examples[split]
            hidden = np.asarray(ex["hidden"], bool)
            shown = np.where(hidden, np.nan, ex["noisy"]) if task == "masked" else ex["noisy"]
            panels = [("clean", ex["clean"]), ("input", shown)] + [
                (name, out[split][task]) for name, out in outputs.items()
            ]
            lo, hi = float(np.min(ex["clean"])), float(np.max(ex["clean"]))
            for c, (title, img) in enumerate(panels):
                ax = axes[r, c]
                ax.imshow(np.reshape(img, shape), cmap="viridis", vmin=lo, vmax=hi)
                ax.set_xticks([])
                ax.set_yticks([])
                if r == 0:
                    ax.set_title(title, fontsize=8)
            axes[r, 0].set_ylabel(split, fontsize=8)
    fig.suptitle(f"{task} task: first sample of each split, seed {first_seed}")
    return _save(fig, path)


def plot_vn_atoms(cells: list[dict], model: str, path: Path) -> Path:
    """VN: active atoms per sample (histogram per split) and which atoms each split uses."""
    cell = min((c for c in cells if c["model"] == model), key=lambda c: c["seed"])
    stats = cell["vn_stats"]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4))
    for split, s in stats.items():
        a1.hist(
            s["active_atoms_per_sample"],
            bins=20,
            histtype="step",
            lw=1.5,
            label=f"{split} (mean {s['active_atoms_mean']:.1f})",
        )
    a1.set_xlabel("active atoms per sample (recon task)")
    a1.set_ylabel("samples")
    a1.legend(fontsize=8)
    usage = np.array([s["atom_usage"] for s in stats.values()])
    order = np.argsort(-usage[0], kind="stable")
    im = a2.imshow(usage[:, order], aspect="auto", cmap="magma", interpolation="nearest")
    a2.set_yticks(range(len(stats)), list(stats))
    a2.set_xlabel("atom (sorted by use on the ID split)")
    fig.colorbar(im, ax=a2, label="fraction of samples using the atom")
    fig.suptitle(f"{model}: code sparsity and atom use per split (seed {cell['seed']})")
    return _save(fig, path)


def plot_curves(cells: list[dict], chosen: dict[str, str], path: Path) -> Path | None:
    """The networks' validation score per epoch at the tuning seed, one line per configuration
    tried (solid: the chosen one); None when no cell has curves."""
    with_curves = [c for c in cells if c.get("curves", {}).get("val_score")]
    if not with_curves:
        return None
    seed = min(c["seed"] for c in with_curves)
    fig, ax = plt.subplots(figsize=(9, 4.5))
    colours = {}
    for cell in sorted(with_curves, key=lambda c: (c["model"], config_key(c["config"]))):
        if cell["seed"] != seed:
            continue
        model = cell["model"]
        colour = colours.setdefault(model, f"C{len(colours)}")
        is_chosen = chosen.get(model) == config_key(cell["config"])
        val = cell["curves"]["val_score"]
        grid = [{"config": c["config"]} for c in with_curves if c["model"] == model]
        label = f"{model}: {config_text(cell['config'], grid)}" + (" (chosen)" if is_chosen else "")
        ax.plot(
            np.arange(1, len(val) + 1),
            val,
            color=colour,
            lw=1.8 if is_chosen else 1.0,
            ls="-" if is_chosen else ":",
            label=label,
        )
    ax.set_yscale("log")
    ax.set_xlabel("epoch")
    ax.set_ylabel("validation score (mean NMSE of the two tasks)")
    ax.grid(alpha=0.3)
    ax.set_title(f"networks: validation score per epoch, seed {seed} (every configuration tried)")
    handles, labels = ax.get_legend_handles_labels()
    rows = (len(labels) + 1) // 2
    fig.tight_layout(rect=(0, 0.07 * rows, 1, 1))
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=7)
    return _save(fig, path, layout=False)


def _save(fig, path: Path, layout: bool = True) -> Path:
    if layout:
        fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path

"""Why sparse RSGN with propagation does not hold 1-10 % activity: a threshold scan at init.

In the sparse configuration a node can fire only if it was active or received an event, and its
activation is the soft threshold sigmoid((drive - theta) / T). A node that receives an event
but almost no drive sits at sigmoid(-theta / T), which is above the event cutoff c whenever
theta < T ln(1/c - 1). Below that value every node reached fires and activity spreads over the
k-nearest graph like an epidemic; above it the messages are too weak to lift nodes over the
cutoff and activity dies out. This scan measures the fraction of nodes above the cutoff after
ignition and after each propagation step, the loss and the logit spread, for a range of uniform
thresholds on an untrained model of the activity grid's configuration (hierarchical task, first
256 training sequences). It also measures how many nodes the ignition alone lights for each of
the activity grid's ignition widths (untrained model, its initial thresholds), the reason that
grid narrows the ignition. Writes docs/results/rsgn/sparse_propagation.json and .png; with
--threshold-rule resting-subtracted (the soft threshold less its value at an empty message,
docs/models.md) the same scan under that rule, to sparse_propagation_resting-subtracted.*.

    python benchmarks/rsgn_sparse_propagation.py [--out docs/results/rsgn] [--threshold-rule R]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import torch
from atomspark.networks.torch_path.config import load_config, validate_config
from atomspark.networks.torch_path.training import build_data, build_model
from atomspark.sim.core import atomic_write_text

CONFIG = Path(__file__).resolve().parents[1] / "scenarios" / "configs"
SETTINGS = {"target_activity": 0.02, "ignition_sigma": 0.05, "n_steps": 5}  # an activity cell
THETAS = np.round(np.arange(1.0, 2.0001, 0.05), 3)
# the resting-subtracted rule has no switch at T ln(1/c - 1): scan from 0
THETAS_RESTING = np.round(np.arange(0.0, 2.0001, 0.1), 3)
SIGMAS = (0.4, 0.1, 0.05, 0.03)  # the activity grid's ignition widths (0.4: the default)


def _untrained(settings: dict):
    """The sparse hierarchical configuration with `settings`, untrained, and its data."""
    cfg = load_config(str(CONFIG / "rsgn-paper-sparse-hierarchical.toml"))
    cfg["model"].update(settings)
    cfg = validate_config(cfg)
    torch.manual_seed(cfg["seed"])
    x_tr, y_tr, _, _, _ = build_data(cfg)
    d = cfg["data"]
    model = build_model(cfg, d["dim"], {"n_classes": d["n_classes"]}, "cpu", torch.float64)
    return model, x_tr, y_tr


def ignition_coverage(n_sequences: int = 256) -> list[dict]:
    """Fraction of nodes above the cutoff after the ignition alone, per ignition width."""
    rows = []
    for sigma in SIGMAS:
        model, x_tr, _ = _untrained({**SETTINGS, "ignition_sigma": sigma})
        with torch.no_grad():
            _, _, steps = model(torch.from_numpy(x_tr[:n_sequences]), trace=True)
        rows.append({"ignition_sigma": sigma, "active_after_ignition": float(steps[0].mean())})
    return rows


def scan(n_sequences: int = 256, rule: str = "sigmoid") -> dict:
    model, x_tr, y_tr = _untrained({**SETTINGS, "threshold_rule": rule})
    x = torch.from_numpy(x_tr[:n_sequences])
    y = torch.from_numpy(y_tr[:n_sequences]).long()
    rows = []
    with torch.no_grad():
        for theta in THETAS if rule == "sigmoid" else THETAS_RESTING:
            model.thresholds.fill_(float(theta))
            scores, _, steps = model(x, trace=True)
            rows.append(
                {
                    "theta": float(theta),
                    "activity_by_step": steps.mean(1).tolist(),
                    "loss": float(torch.nn.functional.cross_entropy(scores, y)),
                    "logit_std": float(scores.std()),
                }
            )
    c, t = model.config.cutoff, model.config.temperature
    return {
        "command": "python benchmarks/rsgn_sparse_propagation.py"
        + ("" if rule == "sigmoid" else f" --threshold-rule {rule}"),
        "threshold_rule": rule,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.node()} {platform.machine()}, {os.cpu_count()} CPUs",
        "config": "rsgn-paper-sparse-hierarchical",
        "model": {**SETTINGS, "cutoff": c, "temperature": t, "k_nearest": model.config.k_nearest},
        "sequences": int(len(x)),
        "resting_fires_below_theta": t * math.log(1.0 / c - 1.0),
        "rows": rows,
        "ignition": ignition_coverage(n_sequences),
    }


def plot(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = result["rows"]
    theta = [r["theta"] for r in rows]
    k = len(rows[0]["activity_by_step"]) - 1
    fig, ax = plt.subplots(figsize=(7, 4))
    for step in range(k + 1):
        label = "after ignition" if step == 0 else f"after step {step}"
        pct = [max(100 * r["activity_by_step"][step], 0.1) for r in rows]  # log axis: 0 at 0.1
        ax.plot(theta, pct, "o-", ms=3, label=label)
    resting = result.get("threshold_rule", "sigmoid") != "sigmoid"
    if not resting:
        ax.axvline(result["resting_fires_below_theta"], color="black", ls="--", lw=1)
        ax.text(
            result["resting_fires_below_theta"], 0.3, "T ln(1/c - 1): every node\nreached fires below ",
            fontsize=8, va="center", ha="right",
        )  # fmt: skip
    ax.set_yscale("log")
    ax.set_ylim(0.1, 150)
    ax.set_xlabel("uniform threshold theta (untrained model)")
    ax.set_ylabel("nodes above the cutoff (%)")
    title = "resting-subtracted soft threshold" if resting else "spread to all or die out"
    ax.set_title(f"Sparse RSGN propagation: {title}", fontsize=10)
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("docs/results/rsgn"))
    ap.add_argument(
        "--threshold-rule", default="sigmoid", choices=("sigmoid", "resting-subtracted")
    )
    args = ap.parse_args(argv)
    result = scan(rule=args.threshold_rule)
    stem = "sparse_propagation" + (
        "" if args.threshold_rule == "sigmoid" else f"_{args.threshold_rule}"
    )
    args.out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.out / f"{stem}.json", json.dumps(result, indent=2))
    plot(result, args.out / f"{stem}.png")
    for r in result["rows"]:
        steps = " ".join(f"{100 * a:5.1f}" for a in r["activity_by_step"])
        print(f"theta {r['theta']:.2f}: active % per step {steps}  loss {r['loss']:.1f}")
    for r in result["ignition"]:
        print(
            f"ignition sigma {r['ignition_sigma']}: {100 * r['active_after_ignition']:.1f} % active"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What the released code's constraints left in the trained models of the `released` grid
(docs/results/rsgn/models/released/<cell>.npz): where atomspark's earlier rules (positions
rescaled in place, thresholds clamped to their bounds after every step) would have acted on the
final weights, and why the published configuration keeps every node active.

    python -m atomspark.scenarios.paper.diagnosis   # -> docs/results/rsgn/released_diagnosis.json

Per model, on its task's whole validation split (torch, float32, as training evaluates):
- thresholds: range, and how many lie outside the clamp bounds the main grid enforced;
- positions: how many nodes sit exactly at the projection norm (their parameter left the ball,
  the forward pass sees them at 0.95; the exported model stores what the forward pass sees);
- the soft threshold's floor sigma(-max theta / T): a node's activation when its drive is zero.
  The drive alpha + gain ||h_new|| is never negative, so no node can fall below this floor, and
  a floor above the cutoff means every node counts as active after every step (the ignition
  aside, which the soft threshold does not produce);
- accuracy, loss and the logit scale (the readout sums alpha h over all nodes, each h layer
  normalised, so logits are large and a wrong decision costs a large loss);
- the same weights with the thresholds clamped once (the earlier rule's last act): accuracy and
  the share of decisions that stay the same.
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from pathlib import Path

from atomspark.scenarios.paper.layout import RESULTS, machine_description
from atomspark.sim.core import atomic_write_text

MODELS = RESULTS / "models" / "released"
OUT = RESULTS / "released_diagnosis.json"
AT_PROJECTION = 1e-6  # |norm - position_max_norm| below this: the node was projected
BOUND_TOL = 1e-6  # a float32 threshold clamped to 0.99 reads 0.9900000095: still at the bound


def diagnose(path: Path) -> dict:
    """The diagnosis of one committed model file (see the module docstring)."""
    import numpy as np
    import torch
    from atomspark.networks.model_io import read_task
    from atomspark.networks.rsgn.model import load_model
    from atomspark.networks.task_data import build_data
    from atomspark.networks.torch_path.config import validate_config
    from atomspark.networks.torch_path.convert import rsgn_to_torch

    params, rc = load_model(path)
    task = validate_config(read_task(path))
    _, _, x_va, y_va, _ = build_data(task)
    module = rsgn_to_torch(params, rc).to(torch.float32)
    x, y = torch.as_tensor(x_va, dtype=torch.float32), torch.as_tensor(y_va)
    theta = np.asarray(params.thresholds, float)
    lo, hi = rc.threshold_bounds
    norms = np.linalg.norm(np.asarray(params.positions, float), axis=1) * math.sqrt(rc.curvature)
    with torch.no_grad():
        scores, _, steps = module(x, trace=True)
        module.project_(positions=False, thresholds=True)
        clamped = module(x)[0].argmax(1)
    pred = scores.argmax(1)
    floor = 1.0 / (1.0 + math.exp(theta.max() / rc.temperature))
    return {
        "cell": path.stem,
        "model": f"docs/results/rsgn/models/released/{path.name}",
        "task": task["data"]["kind"],
        "epochs": task["epochs"],
        "plasticity": task["plasticity"]["enabled"],
        "validation_sequences": len(y_va),
        "thresholds": {
            "min": float(theta.min()),
            "median": float(np.median(theta)),
            "max": float(theta.max()),
            "bounds": [lo, hi],
            "outside_bounds": int(np.sum((theta < lo - BOUND_TOL) | (theta > hi + BOUND_TOL))),
        },
        "positions": {
            "n_nodes": rc.n_nodes,
            "max_norm": rc.position_max_norm,
            "projected": int(np.sum(np.abs(norms - rc.position_max_norm) < AT_PROJECTION)),
        },
        "soft_threshold_floor": floor,
        "cutoff": rc.cutoff,
        "activity_by_step": [float(v) for v in steps.mean(1)],
        "accuracy": float((pred == y).float().mean()),
        "loss": float(torch.nn.functional.cross_entropy(scores, y)),
        "mean_max_abs_logit": float(scores.abs().amax(1).mean()),
        "thresholds_clamped": {
            "accuracy": float((clamped == y).float().mean()),
            "same_decision": float((clamped == pred).float().mean()),
        },
    }


def write(models: Path = MODELS, out: Path = OUT) -> Path | None:
    """Diagnose every committed model of the released grid into one JSON (None: no model yet)."""
    paths = sorted(models.glob("*.npz"))
    if not paths:
        return None
    runs = {p.stem: diagnose(p) for p in paths}
    payload = {
        "command": "python -m atomspark.scenarios.paper.diagnosis",
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": machine_description(),
        "runs": runs,
    }
    atomic_write_text(out, json.dumps(payload, indent=1) + "\n")
    return out


def load_diagnosis(results: Path = RESULTS) -> dict | None:
    """The committed diagnosis under `results` (None before any released model finished)."""
    path = results / OUT.name
    return json.loads(path.read_text()) if path.is_file() else None


def table(diagnosis: dict) -> str:
    """The Markdown table of docs/paper_reproduction.md's released section."""
    head = (
        "| model | epochs | thresholds min / median / max (clamp bounds) | outside the bounds "
        "| nodes seen at the projection norm | soft-threshold floor sigma(-max theta / T) "
        "(cutoff) | active nodes: ignition / lowest step after it % | val. acc. % / loss / mean "
        "max abs. logit "
        "| thresholds clamped: acc. % / same decision % |\n|---|---|---|---|---|---|---|---|---|\n"
    )
    rows = []
    for name, r in diagnosis["runs"].items():
        t, p, c = r["thresholds"], r["positions"], r["thresholds_clamped"]
        ignition, active = r["activity_by_step"][0], min(r["activity_by_step"][1:])
        rows.append(
            f"| {name} | {r['epochs']} | {t['min']:.3f} / {t['median']:.3f} / {t['max']:.3f} "
            f"({t['bounds'][0]:g}, {t['bounds'][1]:g}) | {t['outside_bounds']} of {p['n_nodes']} "
            f"| {p['projected']} of {p['n_nodes']} | {r['soft_threshold_floor']:.2f} "
            f"({r['cutoff']:g}) | {100 * ignition:.1f} / {100 * active:.1f} "
            f"| {100 * r['accuracy']:.1f} / {r['loss']:.2f} / {r['mean_max_abs_logit']:.0f} "
            f"| {100 * c['accuracy']:.1f} / {100 * c['same_decision']:.1f} |"
        )
    return head + "\n".join(rows) + "\n"


def reading(diagnosis: dict) -> str:
    """One sentence per model: whether the earlier rules would have acted on it, and why every
    node stays active (generated, so every figure in it comes from the JSON)."""
    out = []
    for name, r in diagnosis["runs"].items():
        t, p, c = r["thresholds"], r["positions"], r["thresholds_clamped"]
        lo, hi = t["bounds"]
        clamp = (
            f"every threshold stayed inside [{lo:g}, {hi:g}] ({t['min']:.3f} - {t['max']:.3f}), "
            "so the earlier clamp would not have acted on the final weights"
            if t["outside_bounds"] == 0
            else f"{t['outside_bounds']} thresholds lay outside [{lo:g}, {hi:g}] "
            f"({t['min']:.3f} - {t['max']:.3f}); clamping them keeps "
            f"{100 * c['same_decision']:.1f} % of the decisions"
        )
        floor = r["soft_threshold_floor"]
        active = (
            f"the soft threshold's floor {floor:.2f} is above the cutoff {r['cutoff']:g}, so "
            "every node is active after every step, under either rule"
            if floor > r["cutoff"]
            else f"the soft threshold's floor {floor:.2g} is below the cutoff {r['cutoff']:g}"
        )
        out.append(
            f"{name}: {clamp}; {p['projected']} of {p['n_nodes']} nodes are seen at the "
            f"projection norm (their parameter left the ball); {active}."
        )
    return " ".join(out)


if __name__ == "__main__":
    print(write() or f"no model under {MODELS} yet (paper.grid collect copies finished cells)")

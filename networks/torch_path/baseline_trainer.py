"""The sequence task's baselines on the torch path (networks/torch_path/baselines.py): AdamW on
cross-entropy, no slow time scale, no activity; written as their state dicts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from atomspark.networks.model_family import Trainer
from atomspark.networks.torch_path.baselines import build_baseline
from atomspark.networks.torch_path.device import autocast_context
from atomspark.networks.torch_path.optimiser import add_adamw
from atomspark.networks.torch_path.train_step import adamw_update, fetch_metrics


def build(cfg: dict, input_dim: int, extra: dict, device, dtype):
    """The baseline model.kind names, sized from the data's own shape."""
    m, d = cfg["model"], cfg["data"]
    net = build_baseline(
        m["kind"], input_dim, extra["n_classes"], d["length"], m["d_hidden"], m["layers"]
    )
    return net.to(device=device, dtype=dtype)


def _step(run, xb, yb) -> dict:
    """One AdamW step of a baseline (no slow time scale, no activity)."""
    module, cfg = run.module, run.cfg
    module.train()
    with autocast_context(xb.device, cfg["mixed_precision"]):
        scores = module(xb)
    loss = torch.nn.functional.cross_entropy(scores.to(xb.dtype), yb)
    adamw_update(module, run.opt, run.sched, loss, cfg)
    return fetch_metrics(loss, (scores.argmax(1) == yb).double().mean())


@torch.no_grad()
def evaluate(module, cfg, x, y, extra, device, dtype) -> dict:
    """Validation loss and accuracy."""
    xt = torch.from_numpy(x).to(device=device, dtype=dtype)
    module.eval()
    yt = torch.from_numpy(y).to(device)
    scores = module(xt)
    return {
        "loss": float(torch.nn.functional.cross_entropy(scores.to(dtype), yt)),
        "accuracy": float((scores.argmax(1) == yt).double().mean()),
    }


def export(module, path: Path, cfg: dict | None = None) -> None:
    """The state dict, as float64 arrays."""
    arrays = {
        k: v.detach().to("cpu", torch.float64).numpy() for k, v in module.state_dict().items()
    }
    np.savez(path, **arrays)


BASELINE_TRAINER = Trainer(
    build=build,
    expects_dim=lambda module: None,
    step=_step,
    evaluate=evaluate,
    export=export,
    advice=lambda cfg: f"lower optimizer.lr (now {cfg['optimizer']['lr']:g})",
    prepare=add_adamw,
)

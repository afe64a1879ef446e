"""The RSGN family on the torch path: fast scale = AdamW on cross-entropy (grad clip, cosine
schedule), positions projected into the ball in the forward pass (model.position_projection);
slow scale, after each step = the reference's reward-modulated Hebbian affinity update and
homeostatic thresholds (plasticity.py's rules, done on the device by slow_torch.py), and in
sparse mode prune/sprout every `structural_every` epochs. A step makes one host sync (its
metrics, copied to the host together)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from atomspark.networks.model_family import Trainer
from atomspark.networks.rsgn.model import RSGNConfig, init_params, save_model
from atomspark.networks.rsgn.plasticity import prune_and_sprout
from atomspark.networks.torch_path.config import model_config
from atomspark.networks.torch_path.convert import rsgn_from_torch, rsgn_to_torch
from atomspark.networks.torch_path.device import autocast_context
from atomspark.networks.torch_path.optimiser import add_adamw
from atomspark.networks.torch_path.slow_torch import hebbian_affinity_, homeostatic_thresholds_
from atomspark.networks.torch_path.train_step import adamw_update, fetch_metrics
from atomspark.sim.core import AtomsparkError


def _rsgn_config(cfg: dict, d_in: int, n_classes: int) -> RSGNConfig:
    m = cfg["model"]
    if m["d_in"] is not None and m["d_in"] != d_in:
        raise AtomsparkError(f"data: tokens have dimension {d_in} but model.d_in is {m['d_in']}")
    return model_config(cfg, d_in, n_classes)


def build(cfg: dict, input_dim: int, extra: dict, device, dtype):
    """The RSGN module, initialised by the NumPy reference's initialiser."""
    rc = _rsgn_config(cfg, input_dim, extra["n_classes"])
    module = rsgn_to_torch(init_params(rc, seed=cfg["seed"]), rc).to(device=device, dtype=dtype)
    # the released rule (project in the forward pass) or atomspark's earlier one (in place)
    module.project_in_forward = cfg["model"]["position_projection"] == "forward"
    return module


def rsgn_step(module, opt, sched, xb, yb, cfg, slow) -> dict:
    """Fast AdamW step, projection, then the slow Hebbian/homeostatic updates, all on the
    device; the step's metrics come back in one device-to-host copy (its only host sync)."""
    module.train()
    with autocast_context(xb.device, cfg["mixed_precision"]):
        scores, alpha = module(xb)
    loss = torch.nn.functional.cross_entropy(scores.to(xb.dtype), yb)
    lr = opt.param_groups[0]["lr"]  # the rate this step uses (a Python float: no sync)
    adamw_update(module, opt, sched, loss, cfg)
    m = cfg["model"]
    module.project_(
        positions=m["position_projection"] == "in-place",
        thresholds=m["threshold_clamp"] == "every-step",
    )
    alpha = alpha.detach()
    p = cfg["plasticity"]
    if p["enabled"]:
        reward = slow.baseline.reward(loss, slow.pcfg.baseline_momentum, slow.pcfg.hebbian_reward)
        hebbian_affinity_(module, alpha, reward, slow.pcfg)
        homeostatic_thresholds_(
            module, alpha, p["lr_threshold"], p["homeostasis_scope"], p["homeostasis_signal"]
        )
        slow.history.append(alpha.to(torch.float64))
    metrics = fetch_metrics(
        loss,
        (scores.argmax(1) == yb).double().mean(),
        (alpha > module.config.cutoff).double().mean(),
    )
    return {**metrics, "lr": lr}


def _step(run, xb, yb) -> dict:
    return rsgn_step(run.module, run.opt, run.sched, xb, yb, run.cfg, run.slow)


def structural_update(module, opt, slow) -> None:
    """Sparse RSGN, at an epoch boundary: prune/sprout on the epoch's activity; the affinity
    Parameter is replaced and its optimiser state reset (its size changed)."""
    if module.config.mode != "sparse" or len(slow.history) == 0:
        return
    params, rc = rsgn_from_torch(module)
    history = torch.cat(slow.history).to("cpu", torch.float64).numpy()
    slow.history.clear()
    if history.shape[0] < 2:
        return
    params, _ = prune_and_sprout(params, rc, history, slow.pcfg)
    fresh = rsgn_to_torch(params, rc).to(
        device=module.positions.device, dtype=module.positions.dtype
    )
    old = module.edge_data
    module.edge_data = fresh.edge_data
    module.edge_rows, module.edge_cols = fresh.edge_rows, fresh.edge_cols
    for group in opt.param_groups:
        group["params"] = [module.edge_data if q is old else q for q in group["params"]]
    opt.state.pop(old, None)


def _end_epoch(run) -> None:
    """Structural plasticity every `structural_every` epochs (published: the history clears)."""
    p = run.cfg["plasticity"]
    if not p["enabled"]:
        return
    if run.epoch % p["structural_every"] == 0:
        structural_update(run.module, run.opt, run.slow)
    elif run.module.config.mode == "published":
        run.slow.history.clear()


def resize_sparse_edges(module, sd: dict) -> None:
    """Sparse RSGN: the graph may have been pruned/sprouted; size the edge tensors like `sd`, on
    the module's device (the checkpoint was read to the CPU)."""
    if module.config.mode != "sparse":
        return
    device = module.positions.device
    module.edge_data = torch.nn.Parameter(torch.empty_like(sd["edge_data"], device=device))
    module.edge_rows = torch.empty_like(sd["edge_rows"], device=device)
    module.edge_cols = torch.empty_like(sd["edge_cols"], device=device)


@torch.no_grad()
def evaluate(module, cfg, x, y, extra, device, dtype) -> dict:
    """Validation loss, accuracy and activity (overall, over all steps, per step)."""
    xt = torch.from_numpy(x).to(device=device, dtype=dtype)
    module.eval()
    yt = torch.from_numpy(y).to(device)
    scores, alpha, per_step = module(xt, trace=True)
    by_step = per_step.double().mean(1)
    return {
        "loss": float(torch.nn.functional.cross_entropy(scores.to(dtype), yt)),
        "accuracy": float((scores.argmax(1) == yt).double().mean()),
        "activity": float((alpha > module.config.cutoff).double().mean()),
        "activity_steps": float(by_step.mean()),  # ignition and every step
        "activity_by_step": [float(a) for a in by_step],
    }


def export(module, path: Path, cfg: dict | None = None) -> None:
    """The NumPy reference's model file, with the training config stored in it."""
    params, rc = rsgn_from_torch(module.to(torch.float64))
    save_model(path, params, rc, task=cfg)


def forward(model, x: np.ndarray, device, dtype):
    """compare's dense run: (workload, (scores, final alpha) as NumPy, active fraction)."""
    xt = torch.from_numpy(x).to(device=device, dtype=dtype)
    module = rsgn_to_torch(*model).to(device=device, dtype=dtype).eval()

    def work():
        return module(xt)

    with torch.no_grad():
        scores, alpha = work()
    active = float((alpha > model[1].cutoff).double().mean())
    return work, (scores.to("cpu", torch.float64).numpy(), alpha.cpu().double().numpy()), active


def advice(cfg: dict) -> str:
    return f"lower optimizer.lr (now {cfg['optimizer']['lr']:g})"


RSGN_TRAINER = Trainer(
    build=build,
    expects_dim=lambda module: module.config.d_in,
    step=_step,
    evaluate=evaluate,
    export=export,
    advice=advice,
    prepare=add_adamw,
    before_load=resize_sparse_edges,
    end_epoch=_end_epoch,
    forward=forward,
)

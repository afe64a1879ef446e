"""The VN family on the torch path: settle each batch on the device, then batched Atomic-Hebb
(the slow rule; no gradient optimiser is used for this task). Its "accuracy" metric is
dictionary recovery: the fraction of planted atoms matched by a learned atom with
|cosine| > 0.95."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from atomspark.networks.model_family import Trainer
from atomspark.networks.torch_path.convert import vn_from_torch, vn_to_torch
from atomspark.networks.torch_path.train_step import fetch_metrics
from atomspark.networks.torch_path.vn_torch import atomic_hebb, joint_energy, settle
from atomspark.networks.vn.model import VNModel
from atomspark.sim.core import AtomsparkError

# compare's torch settle: tolerance per dtype (1e-10 cannot be met in float32, whose codes
# jitter ~1e-7)
TORCH_SETTLE = {"max_iter": 5000, "sweeps": 200}
TORCH_SETTLE_TOL = {torch.float64: 1e-10, torch.float32: 1e-5}


def build(cfg: dict, input_dim: int, extra: dict, device, dtype):
    """A random VN of the config's layer sizes (the NumPy reference's initialiser)."""
    m = cfg["model"]
    if m["input_dim"] is not None and m["input_dim"] != input_dim:
        raise AtomsparkError(
            f"data: signals have dimension {input_dim} but model.input_dim is {m['input_dim']}"
        )
    sizes = [tuple(s) for s in m["layer_sizes"]]
    vn = VNModel.random(input_dim, sizes, lam=m["lam"], seed=cfg["seed"], topk=m["topk"])
    return vn_to_torch(vn).to(device=device, dtype=dtype)


def _settle(module, xt, cfg: dict):
    m = cfg["model"]
    return settle(
        module, xt, method=m["method"], tol=m["tol"], max_iter=m["max_iter"], sweeps=m["sweeps"]
    )


def _active(codes) -> torch.Tensor:
    return sum((g != 0).double().sum() for g in codes) / sum(g.numel() for g in codes)


def _step(run, xb, yb) -> dict:
    """Settle the batch, Atomic-Hebb; metrics come back in one device-to-host copy."""
    module, cfg, h = run.module, run.cfg, run.cfg["hebb"]
    with torch.no_grad():
        res = _settle(module, xb, cfg)
        energy = joint_energy(module, res.codes, xb)
        atomic_hebb(module, xb, res.codes, h["rho_s"], h["rho_u"], normalize=h["normalize"])
        return fetch_metrics(energy.mean(), recovery(module, run.data[4]), _active(res.codes))


def recovery(module, extra) -> torch.Tensor:
    """Fraction of the true atoms matched by a learned S_1 column with |cosine| > 0.95 (a device
    scalar; the true dictionary is uploaded once)."""
    S = module.S[0].detach()
    if extra.get("dictionary_t") is None or extra["dictionary_t"].device != S.device:
        extra["dictionary_t"] = torch.from_numpy(extra["dictionary"]).to(S)
    D = extra["dictionary_t"].to(S.dtype)
    cos = (D / D.norm(dim=0)).T @ (S / S.norm(dim=0).clamp_min(1e-12))
    return (cos.abs().amax(1) > 0.95).double().mean()


@torch.no_grad()
def evaluate(module, cfg, x, y, extra, device, dtype) -> dict:
    """Validation energy, dictionary recovery and active fraction."""
    xt = torch.from_numpy(x).to(device=device, dtype=dtype)
    res = _settle(module, xt, cfg)
    return {
        "loss": float(joint_energy(module, res.codes, xt).mean()),
        "accuracy": float(recovery(module, extra)),
        "activity": float(_active(res.codes)),
    }


def export(module, path: Path, cfg: dict | None = None) -> None:
    """The NumPy reference's model file, with the training config stored in it."""
    vn_from_torch(module.to(torch.float64)).save(path, task=cfg)


def forward(model, x: np.ndarray, device, dtype):
    """compare's dense run: (workload, codes per layer as NumPy, active fraction)."""
    xt = torch.from_numpy(x).to(device=device, dtype=dtype)
    module = vn_to_torch(model).to(device=device, dtype=dtype)

    def work():
        return settle(module, xt, tol=TORCH_SETTLE_TOL[dtype], **TORCH_SETTLE).codes

    with torch.no_grad():
        out = work()
    codes = [c.to("cpu", torch.float64).numpy() for c in out]
    active = float(np.mean(np.concatenate(codes, axis=1) != 0))
    return work, codes, active


def advice(cfg: dict) -> str:
    return f"lower hebb.rho_s (now {cfg['hebb']['rho_s']:g}) or hebb.rho_u"


VN_TRAINER = Trainer(
    build=build,
    expects_dim=lambda module: module.input_dim,
    step=_step,
    evaluate=evaluate,
    export=export,
    advice=advice,
    forward=forward,
)

"""What every family's training step shares: one host sync for the step's metrics, the
non-finite-loss stop, and the AdamW update with gradient clipping and the step's schedule."""

from __future__ import annotations

import numpy as np
import torch
from atomspark.sim.core import AtomsparkError


class LossNotFinite(AtomsparkError):
    """A step's loss came back NaN or Inf (the loop reports it as divergence, with the step)."""

    def __init__(self, value: float):
        self.value = value
        super().__init__(f"loss: became {value} during training")


def fetch_metrics(loss, accuracy, activity=None) -> dict:
    """One copy of a step's metrics (device scalars) to the host, the step's only host sync;
    a non-finite loss stops the run. Baselines have no activity."""
    values = [loss.detach(), accuracy] + ([] if activity is None else [activity])
    host = torch.stack([v.double() for v in values]).cpu().tolist()
    if not np.isfinite(host[0]):
        raise LossNotFinite(host[0])
    return dict(zip(("loss", "accuracy", "activity"), host))


def adamw_update(module, opt, sched, loss, cfg: dict) -> None:
    """Backward, clip the gradient norm, AdamW step, and the per-step schedule."""
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(module.parameters(), cfg["optimizer"]["grad_clip"])
    opt.step()
    if cfg["optimizer"]["schedule"] != "cosine-epoch":
        sched.step()

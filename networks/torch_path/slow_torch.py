"""RSGN slow time scale on the model's device: the reference's reward baseline, Hebbian affinity
update and homeostatic thresholds (networks/rsgn/plasticity.py, the oracle these are tested
against) as in-place torch operations, so that a training step never downloads parameters or
waits for the device. The structural prune/sprout step (once per epochs) stays in NumPy.
"""

from __future__ import annotations

import torch
from atomspark.networks.rsgn.plasticity import PlasticityConfig, check_reward_rule
from atomspark.networks.torch_path.rsgn_torch import TorchRSGN
from atomspark.sim.core import AtomsparkError


class DeviceRewardBaseline:
    """RewardBaseline on the device: R = -(loss - baseline), the first loss seeds it (R = 0)."""

    def __init__(self, device: torch.device, value: float = 0.0, initialised: bool = False):
        self.value = torch.full((), float(value), dtype=torch.float64, device=device)
        self.initialised = torch.full((), bool(initialised), dtype=torch.bool, device=device)

    def reward(self, loss: torch.Tensor, momentum: float, rule: str = "baseline") -> torch.Tensor:
        """Reward for this loss (a device scalar), then fold the loss into the baseline; rule
        "raw" (the released notebook) returns -loss and leaves the baseline as it is."""
        check_reward_rule(rule)
        loss = loss.detach().to(torch.float64)
        if rule == "raw":
            return -loss
        self.value = torch.where(self.initialised, self.value, loss)
        self.initialised = torch.ones_like(self.initialised)
        r = -(loss - self.value)
        self.value = momentum * self.value + (1.0 - momentum) * loss
        return r

    def state_dict(self) -> dict:
        """Plain numbers for a checkpoint (reads the device: call at checkpoint time only)."""
        return {"value": float(self.value), "initialised": bool(self.initialised)}


@torch.no_grad()
def hebbian_affinity_(
    module: TorchRSGN, alpha: torch.Tensor, reward: torch.Tensor, pcfg: PlasticityConfig
) -> None:
    """One affinity step of pcfg.affinity_step * mean(alpha_i) mean(alpha_j) * R, in place
    (plasticity.py's rule, its hebbian_step included)."""
    m = alpha.detach().to(module.positions.dtype).mean(0)
    scale = (pcfg.affinity_step * reward).to(m.dtype)
    if module.config.mode == "published":
        u, v = module.affinity_u, module.affinity_v
        a = torch.sigmoid(u @ v.T)
        delta = scale * torch.outer(m, m) * a * (1.0 - a)
        u.add_(delta @ v)
    else:
        d = module.edge_data
        d.copy_(torch.clamp(d + scale * m[module.edge_rows] * m[module.edge_cols], 0.0, 1.0))


@torch.no_grad()
def homeostatic_thresholds_(
    module: TorchRSGN, alpha: torch.Tensor, lr: float, scope: str = "node", signal: str = "alpha"
) -> None:
    """theta += lr (mean(s) - target), clamped to the config's bounds, in place; s = alpha
    (signal "alpha") or alpha > cutoff (signal "events")."""
    cfg = module.config
    if signal == "events":
        alpha = alpha.detach() > cfg.cutoff
    elif signal != "alpha":
        raise AtomsparkError(f"homeostasis signal: must be 'alpha' or 'events', got {signal!r}")
    m = alpha.detach().to(module.thresholds.dtype).mean(0)
    if scope == "global":
        m = m.mean().expand_as(m)
    elif scope != "node":
        raise AtomsparkError(f"homeostasis scope: must be 'node' or 'global', got {scope!r}")
    lo, hi = cfg.threshold_bounds
    theta = module.thresholds
    theta.copy_(torch.clamp(theta + lr * (m - cfg.target_activity), lo, hi))

"""The gradient families' optimiser state: AdamW over the trained parameters, the learning-rate
schedule (a cosine kept as segments, so that more epochs on resume stretch it), and the slow
time scale's state (plasticity settings, reward baseline, the epoch's activity history)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from atomspark.networks.torch_path.config import plasticity_config
from atomspark.networks.torch_path.slow_torch import DeviceRewardBaseline


@dataclass
class SlowState:
    """The slow time scale between steps: its rules' settings, the reward baseline, and the
    activity of the epoch so far (structural plasticity reads it at the epoch's end)."""

    history: list = field(default_factory=list)
    pcfg: object = None  # rsgn.plasticity.PlasticityConfig
    baseline: DeviceRewardBaseline | None = None


def add_adamw(run, fresh_schedule: bool) -> None:
    """AdamW over the trained parameters, its learning-rate schedule, and the plasticity state."""
    cfg, o = run.cfg, run.cfg["optimizer"]
    if not cfg["plasticity"]["learn_thresholds"]:  # the homeostat alone sets them
        run.module.thresholds.requires_grad_(False)
    trained = [p for p in run.module.parameters() if p.requires_grad]
    run.opt = torch.optim.AdamW(trained, lr=o["lr"], weight_decay=o["weight_decay"])
    run.ticks = cfg["epochs"] if o["schedule"] == "cosine-epoch" else run.total
    if fresh_schedule:
        run.segments[:] = [[0, 1.0, run.ticks]]
    factor = (lambda t: 1.0) if o["schedule"] == "constant" else cosine_factor(run.segments)
    run.sched = torch.optim.lr_scheduler.LambdaLR(run.opt, factor)
    run.slow.pcfg = plasticity_config(cfg)
    run.slow.baseline = DeviceRewardBaseline(run.device)


def cosine_factor(segments: list) -> callable:
    """Learning-rate factor of the cosine schedule as a list of segments (start step, factor at
    start, end step): within a segment the factor falls along a half cosine to 0 at its end."""

    def factor(t: int) -> float:
        start, f0, end = segments[-1]
        for seg in segments:
            if seg[0] <= t:
                start, f0, end = seg
        if end <= start:
            return 0.0
        return f0 * 0.5 * (1.0 + math.cos(math.pi * min(t - start, end - start) / (end - start)))

    return factor

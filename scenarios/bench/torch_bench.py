"""Baselines as benchmark models: one shared training loop (masked denoising autoencoder) and the
BenchModel interface around any network of baselines.py.

Training: Adam on the clean ID training signals; every batch adds Gaussian noise of the family's
level and hides, in half of the samples, a part drawn like the masked task's (the other half is
fully visible, as in the reconstruction task); the loss is the MSE to the clean signal over all
entries (plus the network's aux_loss). So each baseline sees the same data as VN and is trained
on exactly the two tasks it is scored on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
import torch
from atomspark.networks.torch_path.device import select_device
from atomspark.scenarios.bench.baselines import n_params
from atomspark.sim.progress import track

EVAL_CHUNK = 512


@dataclass(frozen=True)
class TrainConfig:
    epochs: int
    batch_size: int = 64
    lr: float = 2e-3
    masked_fraction: float = 0.5


class TorchBench:
    """A baseline network with the BenchModel interface (fit / predict / n_params / describe)."""

    kind = "torch"

    def __init__(
        self,
        build: Callable[[], torch.nn.Module],
        train: TrainConfig,
        noise: float,
        device: str | None = None,
        label: str = "",
    ):
        self.build, self.train_config, self.noise = build, train, noise
        self.device = select_device(device)
        self.label = label
        self.net: torch.nn.Module | None = None
        self.loss_per_epoch: list[float] = []

    def fit(self, train: np.ndarray, seed: int, random_hidden=None, progress: bool = False) -> None:
        """Train as a masked denoiser; random_hidden(rng, n) -> (n, d) bool hidden masks."""
        cfg = self.train_config
        torch.manual_seed(seed)
        rng = np.random.default_rng(seed)
        self.net = self.build().to(self.device)
        opt = torch.optim.Adam(self.net.parameters(), lr=cfg.lr)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, cfg.epochs)
        data = torch.as_tensor(train, dtype=torch.float32, device=self.device)
        n = data.shape[0]
        self.net.train()
        for _ in track(range(cfg.epochs), f"[bench] train {self.label}", "epoch", progress):
            order = torch.as_tensor(rng.permutation(n), device=self.device)
            hidden = np.zeros(train.shape, dtype=bool)
            masked = rng.random(n) < cfg.masked_fraction
            if random_hidden is not None and masked.any():
                hidden[masked] = random_hidden(rng, int(masked.sum()))
            observed_all = torch.as_tensor(~hidden, dtype=torch.float32, device=self.device)
            noise = torch.as_tensor(
                self.noise * rng.standard_normal(train.shape),
                dtype=torch.float32,
                device=self.device,
            )
            total = torch.zeros((), device=self.device)
            for start in range(0, n, cfg.batch_size):
                idx = order[start : start + cfg.batch_size]
                clean, observed = data[idx], observed_all[idx]
                out = self.net((clean + noise[idx]) * observed, observed)
                loss = torch.mean((out - clean) ** 2) + getattr(self.net, "aux_loss", 0.0)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                total += loss.detach() * idx.numel()
            sched.step()
            self.loss_per_epoch.append(float(total) / n)  # one host sync per epoch
        self.net.eval()

    @torch.no_grad()
    def predict(self, x: np.ndarray, observed: np.ndarray) -> np.ndarray:
        out = []
        for start in range(0, x.shape[0], EVAL_CHUNK):
            xb = torch.as_tensor(
                x[start : start + EVAL_CHUNK], dtype=torch.float32, device=self.device
            )
            ob = torch.as_tensor(
                observed[start : start + EVAL_CHUNK], dtype=torch.float32, device=self.device
            )
            out.append(self.net(xb, ob).double().cpu().numpy())
        return np.concatenate(out)

    def n_params(self) -> int:
        return n_params(self.net if self.net is not None else self.build())

    def describe(self) -> dict:
        build = self.build
        return {
            "kind": "torch",
            "network": getattr(build, "func", build).__name__,
            "args": dict(getattr(build, "keywords", {}) or {}),
            "train": asdict(self.train_config),
            "noise": self.noise,
            "device": str(self.device),
        }

"""Baselines as benchmark models: one shared training loop (masked denoising autoencoder) and the
BenchModel interface around any network of baselines.py.

Training: Adam on the clean ID training signals; every batch adds Gaussian noise of the family's
level and hides, in half of the samples, a part drawn like the masked task's (the other half is
fully visible, as in the reconstruction task); the loss is the MSE to the clean signal over all
entries (plus the network's aux_loss). So each baseline sees the same data as VN and is trained
on exactly the two tasks it is scored on.

Convergence: the learning rate follows a cosine decay from `lr` to 0 over the epoch cap, so
training ends with a small step whether or not it stops early. After every epoch the network is
scored on the ID validation split (the protocol's validation score, metrics.validation_score);
training stops after `patience` epochs without improvement or at the cap, and the weights of the
best validation epoch are restored. The patience counts only in the schedule's second half (rate
below half its start): at a high rate a noisy but still improving validation curve (fn1d's
Transformer) went 40 epochs without a new best. (An earlier schedule halved the rate after 4
epochs without improvement, which cut noisy curves short; docs/benchmarks_vn.md compares the
two on fn1d.) The curves (training loss, validation score and learning rate per epoch) and the
reason training stopped are kept for the cell.
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
    """epochs: the cap (the cosine schedule's length); patience: epochs without a better
    validation score before stopping, in the schedule's second half (used when a validation
    split is given)."""

    epochs: int
    batch_size: int = 64
    lr: float = 2e-3
    masked_fraction: float = 0.5
    patience: int = 40


class TorchBench:
    """A baseline network with the BenchModel interface (fit / predict / n_params / describe)."""

    kind = "torch"
    has_codes = False  # predict_with_codes gives its codes (evaluate.py)

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
        self.val_per_epoch: list[float] = []
        self.lr_per_epoch: list[float] = []
        self.stop_reason = ""
        self.best_epoch = 0

    def fit(
        self, train: np.ndarray, seed: int, random_hidden=None, val=None, progress: bool = False
    ) -> None:
        """Train as a masked denoiser; random_hidden(rng, n) -> (n, d) bool hidden masks; val: the
        ID validation Split (early stopping, best epoch restored), or None (the whole schedule)."""
        cfg = self.train_config
        torch.manual_seed(seed)
        rng = np.random.default_rng(seed)
        self.net = self.build().to(self.device)
        opt = torch.optim.Adam(self.net.parameters(), lr=cfg.lr)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, cfg.epochs)
        data = torch.as_tensor(train, dtype=torch.float32, device=self.device)
        n = data.shape[0]
        best = (np.inf, None)
        self.stop_reason = f"schedule end ({cfg.epochs} epochs)"
        self.net.train()
        for epoch in track(range(cfg.epochs), f"[bench] train {self.label}", "epoch", progress):
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
            self.loss_per_epoch.append(float(total) / n)  # one host sync per epoch
            self.lr_per_epoch.append(opt.param_groups[0]["lr"])
            sched.step()
            if val is None:
                continue
            score = self._val_score(val)
            self.val_per_epoch.append(score)
            if score < best[0]:
                best = (score, {k: v.detach().clone() for k, v in self.net.state_dict().items()})
                self.best_epoch = epoch + 1
            elif epoch + 1 - self.best_epoch >= cfg.patience and 2 * (epoch + 1) >= cfg.epochs:
                self.stop_reason = f"early stop ({cfg.patience} epochs without improvement)"
                break
        if best[1] is not None:
            self.net.load_state_dict(best[1])
        self.net.eval()

    def _val_score(self, val) -> float:
        from atomspark.scenarios.bench.evaluate import task_scores
        from atomspark.scenarios.bench.metrics import validation_score

        self.net.eval()
        score = validation_score(task_scores(self, val))
        self.net.train()
        return score

    def curves(self) -> dict:
        """Training loss, validation score and learning rate per epoch, the best epoch, why
        training stopped."""
        return {
            "train_loss": [round(v, 6) for v in self.loss_per_epoch],
            "val_score": [round(v, 6) for v in self.val_per_epoch],
            "lr": [float(f"{v:.4g}") for v in self.lr_per_epoch],
            "best_epoch": self.best_epoch,
            "stopped": self.stop_reason,
        }

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

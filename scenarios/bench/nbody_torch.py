"""Training and inference of the N-body torch baselines behind the predictor interface."""

from __future__ import annotations

import numpy as np
import torch
from atomspark.scenarios.bench.nbody_vn import body_features, gated_vectors


class TorchBodyModel:
    """Fit a body model (nbody_models) on standardised tokens by Adam on the masked MSE of the
    standardised change."""

    def __init__(self, make, epochs: int, seed: int, device: str = "cpu", lr: float = 2e-3,
                 batch_size: int = 256):
        self.make, self.epochs, self.seed = make, epochs, seed
        self.device, self.lr, self.batch_size = torch.device(device), lr, batch_size

    def _tensors(self, states, mass, charge, strengths, present):
        tok = np.concatenate([states, mass[..., None], charge[..., None]], axis=-1)
        tok = (tok - self.mu) / self.sd * present[..., None]
        as_t = lambda a, dt=torch.float32: torch.as_tensor(a, dtype=dt, device=self.device)  # noqa: E731
        return as_t(tok), as_t(strengths), as_t(present, torch.bool)

    def fit(self, states, next_states, mass, charge, strengths, present) -> None:
        torch.manual_seed(self.seed)
        tok = np.concatenate([states, mass[..., None], charge[..., None]], axis=-1)[present]
        self.mu, self.sd = tok.mean(axis=0), tok.std(axis=0) + 1e-12
        delta = (next_states - states)
        self.dscale = delta[present].std(axis=0) + 1e-12
        self.net = self.make().to(self.device)
        X = self._tensors(states, mass, charge, strengths, present)
        Y = torch.as_tensor(delta / self.dscale, dtype=torch.float32, device=self.device)
        opt = torch.optim.Adam(self.net.parameters(), lr=self.lr)
        steps = self.epochs * max(1, len(Y) // self.batch_size)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
        gen = torch.Generator().manual_seed(self.seed)
        for _ in range(self.epochs):
            order = torch.randperm(len(Y), generator=gen)
            for start in range(0, len(Y) - self.batch_size + 1, self.batch_size):
                b = order[start : start + self.batch_size].to(self.device)
                pred = self.net(X[0][b], X[1][b], X[2][b])
                m = X[2][b][..., None].float()
                loss = ((pred - Y[b]) ** 2 * m).sum() / (m.sum() * 4)
                opt.zero_grad()
                loss.backward()
                opt.step()
                sched.step()

    @torch.no_grad()
    def delta(self, states, mass, charge, strengths, present) -> np.ndarray:
        self.net.eval()
        out = []
        X = self._tensors(states, mass, charge, strengths, present)
        for start in range(0, len(states), 4096):
            sl = slice(start, start + 4096)
            out.append(self.net(X[0][sl], X[1][sl], X[2][sl]).cpu().numpy())
        return np.concatenate(out).astype(np.float64) * self.dscale * present[..., None]

    @property
    def n_params(self) -> int:
        return sum(p.numel() for p in self.net.parameters())


class MLPOnVNFeatures(TorchBodyModel):
    """A per-body MLP on VN's gated feature vectors: VN's front end with a dense learner."""

    def __init__(self, epochs: int, seed: int, device: str = "cpu", hidden: int = 256):
        super().__init__(None, epochs, seed, device)
        self.hidden = hidden

    def _vectors(self, states, mass, charge, strengths, present):
        return gated_vectors(body_features(states, mass, charge, present) / self.scale, strengths)

    def fit(self, states, next_states, mass, charge, strengths, present) -> None:
        torch.manual_seed(self.seed)
        phi = body_features(states, mass, charge, present)
        rms = np.sqrt(np.mean(phi[present] ** 2, axis=0))
        self.scale = np.where(rms > 0, rms, 1.0)
        x = self._vectors(states, mass, charge, strengths, present)[present]
        y = (next_states - states)[present]
        self.dscale = y.std(axis=0) + 1e-12
        d = x.shape[1]
        self.net = torch.nn.Sequential(
            torch.nn.Linear(d, self.hidden), torch.nn.SiLU(),
            torch.nn.Linear(self.hidden, self.hidden), torch.nn.SiLU(),
            torch.nn.Linear(self.hidden, 4),
        ).to(self.device)
        X = torch.as_tensor(x, dtype=torch.float32, device=self.device)
        Y = torch.as_tensor(y / self.dscale, dtype=torch.float32, device=self.device)
        opt = torch.optim.Adam(self.net.parameters(), lr=self.lr)
        steps = self.epochs * max(1, len(Y) // self.batch_size)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
        gen = torch.Generator().manual_seed(self.seed)
        for _ in range(self.epochs):
            order = torch.randperm(len(Y), generator=gen)
            for start in range(0, len(Y) - self.batch_size + 1, self.batch_size):
                b = order[start : start + self.batch_size].to(self.device)
                loss = ((self.net(X[b]) - Y[b]) ** 2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
                sched.step()

    @torch.no_grad()
    def delta(self, states, mass, charge, strengths, present) -> np.ndarray:
        x = self._vectors(states, mass, charge, strengths, present)[present]
        out = np.zeros_like(states)
        y = self.net(torch.as_tensor(x, dtype=torch.float32, device=self.device)).cpu().numpy()
        out[present] = y * self.dscale
        return out

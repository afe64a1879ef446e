"""nbody: N-body dynamics with mixed force fields (physics: nbody_physics.py; splits:
nbody_data.py), as a harness family.

Every transition of a system becomes one vector of d = 70 entries:
    [force strengths (4) | bodies' [x, y, vx, vy, m, q] at t (6 x 6) | present flags (6) |
     bodies' [x, y, vx, vy] at t + dt (6 x 4)],
padded to MAX_BODIES = 6 with zeros and presence flags. The "masked" task hides the state at
t + dt of the present bodies: it is the one-step prediction, scored by the harness's NMSE over
the hidden entries (squared error / variance of the true next states, pooled over components).
The "recon" task (everything visible, no noise: the physics is exact) only measures how well a
model passes the vector through; it says nothing about dynamics and is kept for the harness's
uniform tables. The 20-step rollout (a family metric): from frame 0, each model's one-step
prediction is fed back 20 times; NMSE over frames 1..20, normalised the same way.

Models:
  * VN (layered, vn_readout.VNReadout): an input -> output task, so the output is read through
    the inferred effective weights: layer 1's atoms live on the input part (strengths, bodies
    at t, flags), the top layer's output sides on the standardised change of state, learnt with
    the change as the task target h_top; the prediction is state_t + scale * U_2 g_2.
  * VN-1 (the one-layer ablation, sparse coding): atoms on the whole padded vector (varying body
    counts by padding with presence flags: absent bodies are zeros the atoms learn to leave
    alone); one-step prediction is masked prediction, the settle with the next-state half
    hidden.
  * MLP (padded to 6 bodies), GNN (message passing over pairs of present bodies, our own:
    nbody_models.BodyGNN), Transformer over bodies (padding masked): they read state_t only,
    predict each body's change, and are trained by the harness's shared loop.
  * Persistence: nothing moves (the trivial floor).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
import torch
from atomspark.scenarios.bench.family import BenchData, Family, Split
from atomspark.scenarios.bench.lineup import (
    ProtocolSizes,
    classical_models,
    layered_config,
    train_config,
    vn_models,
)
from atomspark.scenarios.bench.nbody_data import (
    MAX_BODIES,
    ROLLOUT_STEPS,
    SPLITS,
    NBodySet,
    make_split,
)
from atomspark.scenarios.bench.nbody_models import BodyGNN, BodyTransformer, PaddedMLP
from atomspark.scenarios.bench.torch_bench import TorchBench
from atomspark.scenarios.bench.vn_readout import VNReadout
from torch import nn

N_CONTEXT, TOKEN, STATE = 4, 6, 4
TOKENS_AT = N_CONTEXT
PRESENT_AT = TOKENS_AT + MAX_BODIES * TOKEN
NEXT_AT = PRESENT_AT + MAX_BODIES
DIM = NEXT_AT + MAX_BODIES * STATE  # 70
ROLLOUT = "20-step rollout: NMSE over frames 1..20 (lower is better)"


def encode(states, mass, charge, strengths, present, next_states=None) -> np.ndarray:
    """Vectors (n, DIM) from padded states (n, 6, 4); next_states None: that part is zero."""
    n = states.shape[0]
    tokens = np.concatenate([states, mass[..., None], charge[..., None]], axis=-1)
    tokens = tokens * present[..., None]
    nxt = np.zeros_like(states) if next_states is None else next_states * present[..., None]
    return np.concatenate(
        [strengths, tokens.reshape(n, -1), present.astype(float), nxt.reshape(n, -1)], axis=1
    )


def states_now(vectors: np.ndarray) -> np.ndarray:
    """The [x, y, vx, vy] part of the bodies at t, flattened like the t + dt part (n, 24)."""
    tokens = vectors[:, TOKENS_AT:PRESENT_AT].reshape(-1, MAX_BODIES, TOKEN)
    return tokens[..., :STATE].reshape(vectors.shape[0], -1)


def next_states_of(vectors: np.ndarray) -> np.ndarray:
    """The t + dt part of vectors (n, DIM) as (n, 6, 4)."""
    return vectors[:, NEXT_AT:].reshape(-1, MAX_BODIES, STATE)


def hidden_next(present: np.ndarray) -> np.ndarray:
    """The masked task's hidden entries: the next state of every present body (n, DIM)."""
    hidden = np.zeros((present.shape[0], DIM), dtype=bool)
    hidden[:, NEXT_AT:] = np.repeat(present, STATE, axis=1)
    return hidden


def transitions(s: NBodySet) -> tuple[np.ndarray, np.ndarray]:
    """Every one-step transition of a set as (vectors (n*T, DIM), present (n*T, 6))."""
    now, nxt, idx = s.pairs()
    vec = encode(now, s.mass[idx], s.charge[idx], s.strengths[idx], s.present[idx], nxt)
    return vec, s.present[idx]


class FlatBodyNet(nn.Module):
    """Adapts a body model (nbody_models) to the harness's (x, observed) -> vector interface:
    reads the state at t from x, standardises tokens with training statistics (buffers), and
    writes state_t + predicted change into the t + dt part; the rest of x passes through."""

    def __init__(self, body: nn.Module, token_mean, token_std, delta_std):
        super().__init__()
        self.body = body
        for name, v in (("mu", token_mean), ("sd", token_std), ("dsd", delta_std)):
            self.register_buffer(name, torch.as_tensor(np.asarray(v), dtype=torch.float32))

    def forward(self, x: torch.Tensor, observed: torch.Tensor) -> torch.Tensor:
        tokens = x[:, TOKENS_AT:PRESENT_AT].reshape(-1, MAX_BODIES, TOKEN)
        present = x[:, PRESENT_AT:NEXT_AT] > 0.5
        z = (tokens - self.mu) / self.sd * present[..., None]
        delta = self.body(z, x[:, :N_CONTEXT], present) * self.dsd
        nxt = (tokens[..., :STATE] + delta) * present[..., None]
        return torch.cat([x[:, :NEXT_AT], nxt.flatten(1)], dim=1)


def body_net(kind: str, stats: dict, **kw) -> FlatBodyNet:
    bodies = {"mlp": partial(PaddedMLP, MAX_BODIES), "gnn": BodyGNN, "transformer": BodyTransformer}
    return FlatBodyNet(bodies[kind](**kw), **stats)


class Persistence:
    """The trivial floor: the state at t + dt is the state at t."""

    kind = "trivial"
    has_codes = False  # predict_with_codes gives its codes (evaluate.py)

    def fit(self, train: np.ndarray, seed: int, **_) -> None:
        pass

    def predict(self, x: np.ndarray, observed: np.ndarray) -> np.ndarray:
        out = x.copy()
        tokens = x[:, TOKENS_AT:PRESENT_AT].reshape(-1, MAX_BODIES, TOKEN)
        out[:, NEXT_AT:] = tokens[..., :STATE].reshape(x.shape[0], -1)
        return out

    def n_params(self) -> int:
        return 0

    def describe(self) -> dict:
        return {"kind": "trivial", "prediction": "state at t + dt = state at t"}


@dataclass(frozen=True)
class NBodyData(BenchData):
    """BenchData plus the test systems of every split (trajectories, for the rollout)."""

    systems: dict | None = None


@dataclass(frozen=True)
class NBodySizes(ProtocolSizes):
    """Data sizes and every model's hyperparameters (ProtocolSizes: VN, epochs, peers)."""

    n_train: int = 150  # training systems (each gives ROLLOUT_STEPS transitions)
    n_test: int = 25  # test systems per split
    vn_atoms: int = 256
    vn_lam: float = 0.02
    vn_epochs: int = 2
    vn_lam2: float = 0.01
    max_epochs: int = 200
    baseline_batch: int = 128
    hidden: int = 32  # networks within 2x of the layered VN's parameters
    pca_components: int = 40
    dl_alpha: float = 0.02


def sizes(quick: bool) -> NBodySizes:
    if quick:
        return NBodySizes(
            n_train=60,
            n_test=8,
            vn_atoms=64,
            vn_epochs=1,
            vn_joint_epochs=1,
            vn_sweeps=3,
            max_epochs=2,
            hidden=32,
        )
    return NBodySizes()


def random_hidden(rng: np.random.Generator, n: int, sizes=None) -> np.ndarray:
    """Training masks: the whole t + dt part (absent bodies' entries are zero in any case)."""
    hidden = np.zeros((n, DIM), dtype=bool)
    hidden[:, NEXT_AT:] = True
    return hidden


def make_data(s: NBodySizes, seed: int) -> NBodyData:
    train, _ = transitions(make_split("id", s.n_train, seed, stream=0))
    splits, systems = {}, {}
    for name in SPLITS:
        sys_set = make_split(name, s.n_test, seed, stream=1)
        vec, present = transitions(sys_set)
        splits[name] = Split(vec, vec.copy(), hidden_next(present))
        systems[name] = sys_set
    return NBodyData(train=train, splits=splits, shape=(DIM,), noise=0.0, systems=systems)


def _stats(train: np.ndarray) -> dict:
    tokens = train[:, TOKENS_AT:PRESENT_AT].reshape(-1, MAX_BODIES, TOKEN)
    present = train[:, PRESENT_AT:NEXT_AT] > 0.5
    delta = next_states_of(train) - tokens[..., :STATE]
    return {
        "token_mean": tokens[present].mean(axis=0),
        "token_std": tokens[present].std(axis=0) + 1e-9,
        "delta_std": delta[present].std(axis=0) + 1e-9,
    }


def models(s: NBodySizes, data: BenchData) -> dict:
    train = train_config(s)
    stats = _stats(data.train)
    h = s.hidden

    def torch_model(kind, label, **kw):
        return lambda device: TorchBench(
            partial(body_net, kind, stats, **kw), train, 0.0, device, label
        )

    def readout(device):
        return VNReadout(layered_config(s), np.arange(NEXT_AT), np.arange(NEXT_AT, DIM), states_now)

    return {
        **vn_models(s, DIM),
        "VN": readout,
        "MLP": torch_model("mlp", "MLP", hidden=4 * h),
        "GNN": torch_model("gnn", "GNN", hidden=h),
        "Transformer": torch_model("transformer", "Transformer", d_model=h),
        **classical_models(s, 0.0, None),
        "Persistence": lambda device: Persistence(),
    }


def rollout_error(model, data: NBodyData) -> dict:
    """{ROLLOUT: {split: NMSE}}: feed the model's one-step prediction back ROLLOUT_STEPS times."""
    out = {}
    for name, s in data.systems.items():
        state = s.traj[:, 0]
        frames = []
        for _ in range(ROLLOUT_STEPS):
            x = encode(state, s.mass, s.charge, s.strengths, s.present)
            observed = (~hidden_next(s.present)).astype(float)
            state = next_states_of(model.predict(x, observed))
            state = np.clip(np.nan_to_num(state, nan=1e3), -1e3, 1e3) * s.present[..., None]
            frames.append(state)
        pred, true = np.stack(frames, axis=1), s.traj[:, 1:]
        present = np.broadcast_to(s.present[:, None], true.shape[:-1])
        out[name] = float(np.mean((pred - true)[present] ** 2) / np.var(true[present]))
    return {ROLLOUT: out}


def bytes_needed(s: NBodySizes) -> float:
    """Transition vectors (train; clean/noisy/hidden per split), the baselines' float32 copies
    and pair tensors, VN's per-chunk Gram matrices, the test trajectories."""
    n_train_vec = s.n_train * ROLLOUT_STEPS
    vectors = 8.0 * DIM * (n_train_vec + 3 * len(SPLITS) * s.n_test * ROLLOUT_STEPS)
    torch_copies = 4.0 * DIM * n_train_vec * 3 + 4.0 * 128 * MAX_BODIES**2 * 4 * s.hidden * 8
    trajectories = 8.0 * len(SPLITS) * s.n_test * (ROLLOUT_STEPS + 1) * MAX_BODIES * 4
    return vectors + torch_copies + 3 * 64 * s.vn_atoms**2 * 8.0 + trajectories


FAMILY = Family(
    name="nbody",
    description="N-body dynamics, mixed forces (gravity, drag, Lorentz, springs): one step and "
    "20-step rollout; OOD = combined forces, 2 bodies, 5-6 bodies, both",
    splits=tuple(SPLITS),
    sizes=sizes,
    make_data=make_data,
    models=models,
    random_hidden=random_hidden,
    bytes_needed=bytes_needed,
    extra_metrics=rollout_error,
)

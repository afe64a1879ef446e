"""A complete model family in one module: the worked example of docs/architecture.md.

A mean-token readout classifies a token sequence (L, d) by a linear map of its mean token,
scores = W mean(x) + b (its NumPy reference is `Readout.scores`). It learns the sequence task
beside the RSGN and its baselines. On the event engine, d relay units (tests/relay_example)
receive the mean token as input at step 0 and send it through W to C relay units, whose `last`
holds W mean(x) after step 1. This module declares how the family is loaded, run on the engine
and trained; its comparison with the GPU is the scenario layer's, in sides.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from atomspark.networks.datasets import hierarchical_sequences
from atomspark.networks.engine_run import EngineRun, concat_profiles
from atomspark.networks.model_family import EngineSide, ModelFamily, Trainer, register_family
from atomspark.networks.model_io import load_arrays, save_arrays
from atomspark.networks.sample_runner import SampleRunner
from atomspark.networks.torch_path.optimiser import add_adamw
from atomspark.networks.torch_path.train_step import adamw_update, fetch_metrics
from atomspark.sim.graph import Graph, Population, Projection
from relay_example.model import RelayParams

KIND = "readout_example"
STEPS = 2  # the mean token enters at step 0 and reaches the readout units at step 1


@dataclass(frozen=True)
class Readout:
    """w (C, d), b (C,): scores = w @ mean token + b."""

    w: np.ndarray
    b: np.ndarray

    def scores(self, tokens: np.ndarray) -> np.ndarray:
        return tokens.mean(axis=1) @ self.w.T + self.b


# ----- loading and the event engine ------------------------------------------------------------
def load(path) -> Readout:
    arrays, _ = load_arrays(path, KIND)
    return Readout(arrays["w"], arrays["b"])


def graph(model: Readout, sample=None) -> Graph:
    c, d = model.w.shape
    pops = [Population("in", d, RelayParams(1.0)), Population("out", c, RelayParams(1.0))]
    return Graph(pops, [Projection("in", "out", model.w)])


def runner(model: Readout) -> SampleRunner:
    d = model.w.shape[1]

    def to_inputs(tokens, steps: int) -> dict:
        return {"in": np.vstack([np.mean(tokens, axis=0)[None], np.zeros((steps - 1, d))])}

    read = lambda eng: eng.state["out"]["last"].copy()  # noqa: E731
    return SampleRunner(graph(model), lambda tokens: {}, read, to_inputs)


def run(model: Readout, tokens, steps=None) -> EngineRun:
    r = runner(model)
    runs = r.run(tokens, STEPS)
    scores = np.stack(runs.outputs) + model.b
    return EngineRun(KIND, r.graph, concat_profiles(runs.profiles), scores, len(tokens))


def builtin_inputs(model: Readout, n: int, seed: int, label: str) -> np.ndarray:
    c, d = model.w.shape
    return hierarchical_sequences(n=n, dim=d, n_classes=c, seed=seed).tokens


# ----- training on the torch path ---------------------------------------------------------------
class ReadoutModule(torch.nn.Module):
    def __init__(self, d: int, n_classes: int):
        super().__init__()
        self.head = torch.nn.Linear(d, n_classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(tokens.mean(1))


def build(cfg, input_dim, extra, device, dtype):
    return ReadoutModule(input_dim, extra["n_classes"]).to(device=device, dtype=dtype)


def step(run, xb, yb) -> dict:
    run.module.train()
    scores = run.module(xb)
    loss = torch.nn.functional.cross_entropy(scores, yb)
    adamw_update(run.module, run.opt, run.sched, loss, run.cfg)
    return fetch_metrics(loss, (scores.argmax(1) == yb).double().mean())


@torch.no_grad()
def evaluate(module, cfg, x, y, extra, device, dtype) -> dict:
    module.eval()
    scores = module(torch.from_numpy(x).to(device=device, dtype=dtype))
    yt = torch.from_numpy(y).to(device)
    return {
        "loss": float(torch.nn.functional.cross_entropy(scores, yt)),
        "accuracy": float((scores.argmax(1) == yt).double().mean()),
    }


def export(module, path, cfg=None) -> None:
    w = module.head.weight.detach().to("cpu", torch.float64).numpy()
    b = module.head.bias.detach().to("cpu", torch.float64).numpy()
    save_arrays(path, KIND, {"w": w, "b": b}, {"task": cfg})


def forward(model: Readout, x, device, dtype):
    module = ReadoutModule(model.w.shape[1], model.w.shape[0]).to(device=device, dtype=dtype)
    with torch.no_grad():
        module.head.weight.copy_(torch.from_numpy(model.w))
        module.head.bias.copy_(torch.from_numpy(model.b))
    xt = torch.from_numpy(x).to(device=device, dtype=dtype)

    def work():
        return module(xt)

    with torch.no_grad():
        scores = work()
    return work, scores.to("cpu", torch.float64).numpy(), 1.0


READOUT = register_family(
    ModelFamily(
        name=KIND,
        title="readout",
        task="rsgn-sequence",
        metric="accuracy",
        load=load,
        engine=EngineSide(
            runner=runner,
            run=run,
            record=lambda model, steps: (STEPS, 2),
            input_shape=lambda model: (None, None, model.w.shape[1]),
            layout="(samples, length, d_in)",
            dim_name="d_in",
            builtin_inputs=builtin_inputs,
            graph_for=graph,
            own_steps=f"--steps: the readout runs its own {STEPS} steps; omit --steps",
        ),
        trainer=lambda: Trainer(
            build=build,
            expects_dim=lambda module: module.head.in_features,
            step=step,
            evaluate=evaluate,
            export=export,
            advice=lambda cfg: f"lower optimizer.lr (now {cfg['optimizer']['lr']:g})",
            prepare=add_adamw,
            forward=forward,
        ),
        describe=lambda cfg: f"{cfg['task']} ({KIND} model)",
    )
)

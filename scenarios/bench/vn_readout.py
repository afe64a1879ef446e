"""VN with a task output: the output read through the inferred effective weights (for families
whose task maps an input to an output, nbody's state at t -> state at t + dt).

The vector splits into an input part x (entries `inputs`) and an output part y (entries
`outputs`). The target is t = (y - base(x)) / scale, where base(x) is the output without the
model (nbody: the state at t, so the model learns the change, like the networks) and scale its
training standard deviation per entry.

Learning. The dictionaries of every layer are learnt on x exactly as the layered VN of the other
families (vn_bench.VNBench: layer 1 alone, then all layers jointly by Atomic-Hebb). Then the top
layer's output sides U_L are fitted to the target: U_L minimises the mean of
1/2 ||t - U_L g_L(x)||^2 over the training set, where g_L(x) are the codes of the settle on x
alone, as at test time. g_L(x) does not depend on U_L (the target is not in the energy), so the
Atomic-Hebb rule U_L <- U_L + rho (t - U_L g_L) g_L^T is the exact gradient of that loss; we
solve for its fixed point directly (one ridge-regularised linear solve, RIDGE).
Why not put t into the energy as h_top while learning: the top layer then fits t through its own
codes when t is present, while the settle without it, which is all a test sample has, leaves
most of the target unexplained: the codes learn to carry the target, not to predict it.

Inference: the settle on x; the prediction is y_hat = base(x) + scale * U_L g_L, the output
sides of the atoms of the top layer's effective weight W*_L(x) = sum_i g_{L,i} u_{L,i}
s_{L,i}^T, each weighted by its coefficient (docs/maths.md, "Layered VN in the benchmarks").
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from atomspark.networks.vn import VNModel, settle
from atomspark.scenarios.bench.vn_bench import SETTLE_CHUNK, VNBench, VNBenchConfig

RIDGE = 1e-6  # relative to the mean squared code: keeps the solve defined for unused atoms


class VNReadout:
    """Layered VN with the task-output readout (module docstring)."""

    kind = "vn"
    has_codes = True  # predict_with_codes gives its codes (evaluate.py)

    def __init__(
        self,
        config: VNBenchConfig,
        inputs: np.ndarray,
        outputs: np.ndarray,
        base: Callable[[np.ndarray], np.ndarray],
    ):
        self.config = config
        self.inputs, self.outputs = np.asarray(inputs), np.asarray(outputs)
        self.base = base
        self.scale = np.ones(self.outputs.size)
        self.model: VNModel | None = None
        self.readout: np.ndarray | None = None  # U_L, (|outputs|, K_L)
        self.energy_per_epoch: list[float] = []

    def target(self, v: np.ndarray) -> np.ndarray:
        """The standardised task target t of vectors v (n, d)."""
        return (v[:, self.outputs] - self.base(v)) / self.scale

    def fit(self, train: np.ndarray, seed: int, **_) -> None:
        self.scale = np.std(train[:, self.outputs] - self.base(train), axis=0) + 1e-9
        inner = VNBench(self.config, self.inputs.size)
        inner.fit(train[:, self.inputs], seed)
        self.model, self.energy_per_epoch = inner.model, inner.energy_per_epoch
        top = self.encode(train[:, self.inputs])[-1]
        gram = top.T @ top
        ridge = RIDGE * max(float(np.trace(gram)) / gram.shape[0], 1e-12)
        rhs = top.T @ self.target(train)
        self.readout = np.linalg.solve(gram + ridge * np.eye(gram.shape[0]), rhs).T

    def encode(self, x: np.ndarray) -> list[np.ndarray]:
        """Settled codes of every layer for input parts x (n, |inputs|), no target."""
        codes = [np.zeros((x.shape[0], layer.n_atoms)) for layer in self.model.layers]
        for start in range(0, x.shape[0], SETTLE_CHUNK):
            res = settle(
                self.model,
                x[start : start + SETTLE_CHUNK],
                tol=self.config.tol,
                max_iter=self.config.max_iter,
                sweeps=self.config.sweeps,
            )
            for c, r in zip(codes, res.codes):
                c[start : start + SETTLE_CHUNK] = r
        return codes

    def predict_with_codes(self, v: np.ndarray, observed: np.ndarray):
        """(vectors with the output part replaced by base + scale * U_L g_L, layer-1 codes).
        The input part is read whole: an input -> output task never hides it."""
        codes = self.encode(v[:, self.inputs])
        out = v.copy()
        out[:, self.outputs] = self.base(v) + self.scale * (codes[-1] @ self.readout.T)
        return out, codes[0]

    def predict(self, v: np.ndarray, observed: np.ndarray) -> np.ndarray:
        return self.predict_with_codes(v, observed)[0]

    def n_params(self) -> int:
        """The layered VN's parameters on the input part, plus the readout U_L."""
        atoms = self.config.atoms2 if self.config.layers == 2 else self.config.atoms
        return VNBench(self.config, self.inputs.size).n_params() + self.outputs.size * atoms

    def describe(self) -> dict:
        return {**VNBench(self.config, self.inputs.size).describe(), "readout": "U_L g_L"}

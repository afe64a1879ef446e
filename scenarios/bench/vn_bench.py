"""Vector Networks as benchmark models: layered (the paper's hierarchy) or one layer (the
ablation "VN-1": sparse coding with Atomic-Hebb), settle inference, and the one-layer model on
the event engine (checked against the NumPy settle).

One layer: atoms start as K random unit vectors and are learnt by Atomic-Hebb
(networks/vn.learn_dictionary) on the clean ID training signals (starting from training signals
instead gives duplicate atoms, which make the codes non-unique). Inference: the FISTA
settle of E(g) = 1/2 ||m * (x - S g)||^2 + lam ||g||_1 with m = 1 on the observed entries; the
prediction is S g (for masked prediction, its hidden entries). One layer has no top-down target,
so U is never used: the model's parameters are the d x K entries of S.

Two layers (docs/maths.md, "Layered VN in the benchmarks"): layer 1 is first learnt alone as
above; then layer 2 (K2 atoms over an interface of size m) is added with random unit U_1, S_2,
and the whole model is learnt jointly by Atomic-Hebb on the joint energy
    F = 1/2 ||m * (x - S_1 g_1)||^2 + 1/2 ||U_1 g_1 - S_2 g_2||^2 + lam_1 |g_1| + lam_2 |g_2|
(top layer optionally with a hard top-k), settled by up/down sweeps. Layer 2's codes explain the
interface message U_1 g_1, and their reconstruction S_2 g_2 is layer 1's top-down target: a
learnt prior on which layer-1 atoms occur together. Prediction is S_1 g_1 at the joint settle.
Parameters: S_1, U_1 and S_2 (the top layer's U is never used without a task target).

The event engine runs Jacobi ISTA (vn_compile.py) for a fixed number of steps, as a chip would;
its codes are checked against the NumPy reference ISTA iteration with the same step size and
number of steps (equal up to float rounding), and their distance to the converged settle (the
codes the tables use) is reported beside the costs.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import numpy as np
from atomspark.networks.sample_runner import vn_runner
from atomspark.networks.vn import (
    VNModel,
    drive,
    gram,
    learn_dictionary,
    proximal_descent,
    settle,
    step_size,
    unit_columns,
)
from atomspark.scenarios.runs.engine import concat_profiles

SETTLE_CHUNK = 256  # samples per settle call


@dataclass(frozen=True)
class VNBenchConfig:
    """Atoms K, l1 weight lam, Atomic-Hebb epochs/batch/rate, settle tolerance and budget; for
    layers = 2 also the top layer's atoms K2, l1 weight lam2, top-k (0 = none), the interface
    size, the joint epochs and the settle's sweep budget."""

    atoms: int
    lam: float
    epochs: int = 3
    batch_size: int = 50
    rho: float = 0.5
    tol: float = 1e-4
    max_iter: int = 500
    learn_tol: float = 1e-3
    learn_max_iter: int = 200
    layers: int = 1
    atoms2: int = 32
    lam2: float = 0.1
    topk: int = 0
    interface: int = 32
    joint_epochs: int = 2
    sweeps: int = 20


class VNBench:
    """VN with the BenchModel interface (fit / predict / encode / n_params / describe)."""

    kind = "vn"
    has_codes = True  # predict_with_codes gives its codes (evaluate.py)

    def __init__(self, config: VNBenchConfig, dim: int):
        self.config = config
        self.dim = dim
        self.model: VNModel | None = None
        self.energy_per_epoch: list[float] = []

    def fit(self, train: np.ndarray, seed: int, **_) -> None:
        cfg = self.config
        rng = np.random.default_rng(seed)
        S0 = unit_columns(rng.standard_normal((self.dim, cfg.atoms)))
        model = VNModel.from_arrays([S0], [np.zeros((1, cfg.atoms))], cfg.lam)
        result = learn_dictionary(
            model,
            train,
            epochs=cfg.epochs,
            batch_size=cfg.batch_size,
            rho_S=cfg.rho,
            seed=seed,
            settle_kwargs={"tol": cfg.learn_tol, "max_iter": cfg.learn_max_iter, "sweeps": 1},
        )
        self.model, self.energy_per_epoch = result.model, result.epoch_energy
        if cfg.layers == 2:
            self._fit_top_layer(train, seed, rng)

    def _fit_top_layer(self, train: np.ndarray, seed: int, rng) -> None:
        """Add layer 2 on the learnt layer 1 and learn both jointly (module docstring)."""
        cfg = self.config
        S1 = self.model.layers[0].S
        U1 = unit_columns(rng.standard_normal((cfg.interface, cfg.atoms)))
        S2 = unit_columns(rng.standard_normal((cfg.interface, cfg.atoms2)))
        model = VNModel.from_arrays(
            [S1, S2],
            [U1, np.zeros((1, cfg.atoms2))],
            [cfg.lam, cfg.lam2],
            topk=cfg.topk or None,
        )
        result = learn_dictionary(
            model,
            train,
            epochs=cfg.joint_epochs,
            batch_size=cfg.batch_size,
            rho_S=cfg.rho,
            seed=seed + 1,
            settle_kwargs={
                "tol": cfg.learn_tol,
                "max_iter": cfg.learn_max_iter,
                "sweeps": cfg.sweeps,
            },
        )
        self.model = result.model
        self.energy_per_epoch += result.epoch_energy

    def encode(self, x: np.ndarray, observed: np.ndarray) -> np.ndarray:
        """Settled codes (n, K). Rows sharing a mask settle together with one shared Gram
        matrix (a family has few mask patterns); a full mask is dropped."""
        codes = np.zeros((x.shape[0], self.config.atoms))
        patterns, group = np.unique(observed, axis=0, return_inverse=True)
        for p, mask in enumerate(patterns):
            rows = np.flatnonzero(group.ravel() == p)
            for start in range(0, rows.size, SETTLE_CHUNK):
                idx = rows[start : start + SETTLE_CHUNK]
                res = settle(
                    self.model,
                    x[idx],
                    mask=None if mask.all() else mask,
                    tol=self.config.tol,
                    max_iter=self.config.max_iter,
                    sweeps=self.config.sweeps,
                )
                codes[idx] = res.codes[0]
        return codes

    def decode(self, codes: np.ndarray) -> np.ndarray:
        return codes @ self.model.layers[0].S.T

    def predict(self, x: np.ndarray, observed: np.ndarray) -> np.ndarray:
        return self.decode(self.encode(x, observed))

    def predict_with_codes(self, x: np.ndarray, observed: np.ndarray):
        """(prediction S_1 g_1, layer-1 codes g_1)."""
        codes = self.encode(x, observed)
        return self.decode(codes), codes

    def n_params(self) -> int:
        cfg = self.config
        n = self.dim * cfg.atoms
        if cfg.layers == 2:
            n += cfg.interface * (cfg.atoms + cfg.atoms2)
        return n

    def describe(self) -> dict:
        cfg = asdict(self.config)
        if self.config.layers == 1:  # the top-layer settings do not apply
            for key in ("atoms2", "lam2", "topk", "interface", "joint_epochs", "sweeps"):
                cfg.pop(key)
        return {"kind": "vn", "dim": self.dim, **cfg}

    def engine_run(self, x: np.ndarray, observed: np.ndarray, steps: int) -> dict:
        """Settle each row on the event engine for a fixed budget of `steps` (as a chip runs it);
        return the graph, the profile over all rows, the codes, their largest difference from
        the NumPy ISTA reference of the same steps (max |g_engine - g_ref| / max |g_ref| over
        samples) and from the converged settle."""
        layer = self.model.layers[0]
        converged = settle(
            self.model, x, mask=None if observed.all() else observed, tol=1e-9, max_iter=20 * steps
        ).codes[0]
        profiles, graph = [None] * x.shape[0], None
        codes, reference = np.zeros_like(converged), np.zeros_like(converged)
        t0 = time.perf_counter()
        groups: dict[bytes, list[int]] = {}  # rows sharing a mask share one compiled graph
        for i in range(x.shape[0]):
            groups.setdefault(np.asarray(observed[i]).tobytes(), []).append(i)
        for rows in groups.values():
            mask = observed[rows[0]]
            eta = float(step_size(gram(layer.S, None, mask)))
            runner = vn_runner(self.model, mask=mask, eta=eta)
            runs = runner.run(x[rows], steps)
            for i, prof, out in zip(rows, runs.profiles, runs.outputs):
                profiles[i], codes[i] = prof, out[0]
            graph = runner.graph
        wall = time.perf_counter() - t0
        for i in range(x.shape[0]):
            G = gram(layer.S, None, observed[i])
            b = drive(layer.S, None, x[i : i + 1], None, observed[i : i + 1])
            reference[i] = proximal_descent(
                G, b, layer.lam, np.zeros_like(b), "ista", tol=0.0, max_iter=steps
            )[0][0]
        return {
            "graph": graph,
            "profile": concat_profiles(profiles),
            "codes": codes,
            "reference_codes": reference,
            "max_rel_error": _rel(codes, reference),
            "max_rel_error_vs_converged": _rel(codes, converged),
            "wall_s_per_sample": wall / x.shape[0],
        }


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    scale = max(float(np.abs(b).max()), 1e-12)
    return float(np.abs(a - b).max() / scale)

"""fn1d: 1D function composition. Signals of length 128 on t in [-1, 1] built from a library of
19 primitives, each scaled to max |p| = 1 on [-1, 1]: sin(pi f t) and cos(pi f t) for f = 1..4
(8), Legendre polynomials P1..P3 (3), Gaussians at centres -0.6, -0.2, 0.2, 0.6 with widths 0.1
and 0.25 (8).

ID (train and the "id" split): one primitive (30 %) or the sum of two from the seed's training
pairs (70 %: a seeded 70 % of the 171 unordered pairs), amplitudes |a| in [0.5, 1.5] with random
sign. OOD splits: "pairs" (sums of two from the other 30 % of pairs, never seen together),
"triples" (sums of three primitives), "nested" (a f(g(t)), f != g: the library on [-1, 1] maps
into [-1, 1], so every composition is defined), "warp" (ID structure on a warped time axis:
a1 f1(w(t)) + a2 f2(w(t)) with w(t) = sign(t) |t|^p, p or 1/p in [1.5, 2.5]), "amplitude" (ID
structure, |a| in [2, 3]). Pairs, triples and amplitude stay inside the span of the ID training
signals (the 19 primitives); nested and warp leave it (validation.span_residual measures this).
Noise: Gaussian, sigma 0.1. Masked task: a contiguous block of 32 points (25 %), start uniform.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from itertools import combinations

import numpy as np
from atomspark.scenarios.bench.baselines import BidirectionalMamba, MaskedMLP, SequenceTransformer
from atomspark.scenarios.bench.family import BenchData, Family, Split
from atomspark.scenarios.bench.lineup import (
    ProtocolSizes,
    classical_models,
    train_config,
    vn_models,
)
from atomspark.scenarios.bench.torch_bench import TorchBench
from atomspark.scenarios.bench.trivial import TrivialBench

LENGTH = 128
T = np.linspace(-1.0, 1.0, LENGTH)
NOISE = 0.1
BLOCK = LENGTH // 4
ID_AMPLITUDE = (0.5, 1.5)
OOD_AMPLITUDE = (2.0, 3.0)
SINGLE_FRACTION = 0.3
TRAIN_PAIR_FRACTION = 0.7
WARP_POWER = (1.5, 2.5)
SPLITS = ("id", "pairs", "triples", "nested", "warp", "amplitude")


def _primitives() -> list[tuple[str, object]]:
    prims = []
    for f in (1, 2, 3, 4):
        prims.append((f"sin{f}", partial(lambda t, f: np.sin(np.pi * f * t), f=f)))
        prims.append((f"cos{f}", partial(lambda t, f: np.cos(np.pi * f * t), f=f)))
    prims.append(("P1", lambda t: t))
    prims.append(("P2", lambda t: 0.5 * (3 * t**2 - 1)))
    prims.append(("P3", lambda t: 0.5 * (5 * t**3 - 3 * t)))
    for c in (-0.6, -0.2, 0.2, 0.6):
        for w in (0.1, 0.25):
            prims.append(
                (
                    f"gauss{c:+.1f}w{w}",
                    partial(lambda t, c, w: np.exp(-((t - c) ** 2) / (2 * w * w)), c=c, w=w),
                )
            )
    return prims


PRIMITIVES = _primitives()
P1_INDEX = [name for name, _ in PRIMITIVES].index("P1")  # t itself: P1(g) = g, f(P1) = f
LIBRARY = np.stack([p(T) for _, p in PRIMITIVES])  # (19, 128)


def pair_partition(seed: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(training pairs, held-out pairs) of primitive indices for a seed: disjoint by construction."""
    pairs = list(combinations(range(len(PRIMITIVES)), 2))
    order = np.random.default_rng([seed, 1]).permutation(len(pairs))
    n_train = int(round(TRAIN_PAIR_FRACTION * len(pairs)))
    return [pairs[i] for i in order[:n_train]], [pairs[i] for i in order[n_train:]]


def _amplitudes(rng, shape, bounds) -> np.ndarray:
    return rng.uniform(*bounds, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def _sums(rng, components: np.ndarray, bounds) -> tuple[np.ndarray, np.ndarray]:
    """Signals sum_k a_k p_{c_k} for components (n, 3) with -1 = unused; returns (x, amps)."""
    amps = np.where(components >= 0, _amplitudes(rng, components.shape, bounds), 0.0)
    x = np.einsum("nk,nkt->nt", amps, LIBRARY[np.maximum(components, 0)])
    return x, amps


def _id_components(rng, n: int, train_pairs) -> np.ndarray:
    comps = -np.ones((n, 3), dtype=int)
    single = rng.random(n) < SINGLE_FRACTION
    comps[single, 0] = rng.integers(0, len(PRIMITIVES), single.sum())
    pairs = np.asarray(train_pairs)[rng.integers(0, len(train_pairs), (~single).sum())]
    comps[~single, :2] = pairs
    return comps


def generate(kind: str, n: int, seed: int, stream: int) -> tuple[np.ndarray, dict]:
    """n clean signals of one kind ("id" or an OOD split) with their meta (components, amps)."""
    rng = np.random.default_rng([seed, stream])
    train_pairs, held_out = pair_partition(seed)
    nested = np.zeros(n, dtype=bool)
    if kind in ("id", "amplitude"):
        comps = _id_components(rng, n, train_pairs)
        bounds = ID_AMPLITUDE if kind == "id" else OOD_AMPLITUDE
        x, amps = _sums(rng, comps, bounds)
    elif kind == "warp":
        comps = _id_components(rng, n, train_pairs)
        amps = np.where(comps >= 0, _amplitudes(rng, comps.shape, ID_AMPLITUDE), 0.0)
        power = rng.uniform(*WARP_POWER, n) ** rng.choice([-1.0, 1.0], n)
        warped = np.sign(T) * np.abs(T)[None, :] ** power[:, None]  # (n, LENGTH) in [-1, 1]
        x = np.zeros((n, LENGTH))
        for k in range(comps.shape[1]):
            for i in np.flatnonzero(comps[:, k] >= 0):
                x[i] += amps[i, k] * PRIMITIVES[comps[i, k]][1](warped[i])
    elif kind == "pairs":
        comps = -np.ones((n, 3), dtype=int)
        comps[:, :2] = np.asarray(held_out)[rng.integers(0, len(held_out), n)]
        x, amps = _sums(rng, comps, ID_AMPLITUDE)
    elif kind == "triples":
        comps = np.stack([rng.choice(len(PRIMITIVES), 3, replace=False) for _ in range(n)])
        x, amps = _sums(rng, comps, ID_AMPLITUDE)
    elif kind == "nested":
        comps = -np.ones((n, 3), dtype=int)
        comps[:, :2] = np.stack([rng.choice(len(PRIMITIVES), 2, replace=False) for _ in range(n)])
        amps = np.zeros((n, 3))
        amps[:, 0] = _amplitudes(rng, n, ID_AMPLITUDE)
        inner = LIBRARY[comps[:, 1]]
        x = amps[:, :1] * np.stack([PRIMITIVES[f][1](g) for f, g in zip(comps[:, 0], inner)])
        nested[:] = True
    else:
        raise ValueError(kind)
    return x, {"components": comps, "amplitudes": amps, "nested": nested}


def random_hidden(rng: np.random.Generator, n: int, sizes=None) -> np.ndarray:
    """Hide one contiguous block of BLOCK points per sample, start uniform."""
    starts = rng.integers(0, LENGTH - BLOCK + 1, n)
    idx = np.arange(LENGTH)
    return (idx >= starts[:, None]) & (idx < starts[:, None] + BLOCK)


def make_split(kind: str, n: int, seed: int, stream: int) -> Split:
    clean, meta = generate(kind, n, seed, stream)
    rng = np.random.default_rng([seed, stream, 7])
    noisy = clean + NOISE * rng.standard_normal(clean.shape)
    return Split(clean, noisy, random_hidden(rng, n), meta)


@dataclass(frozen=True)
class Fn1dSizes(ProtocolSizes):
    """Data sizes and every model's hyperparameters (ProtocolSizes: VN, epochs, peers)."""

    n_train: int = 3000
    n_test: int = 200
    transformer_width: int = 24
    mamba_width: int = 16
    max_epochs: int = 600  # the networks' cosine schedule (at 300 the MLP was still improving)
    mamba_epochs: int = 30  # Mamba's epoch cap: its pure-PyTorch scan is the slowest network here
    mlp_hidden: int = 32  # within 2x of the layered VN's parameters
    pca_components: int = 19
    smooth_width: float = 9.0


def sizes(quick: bool) -> Fn1dSizes:
    if quick:
        return Fn1dSizes(
            n_train=500,
            n_test=64,
            vn_epochs=2,
            vn_joint_epochs=1,
            vn_sweeps=3,
            max_epochs=3,
            mamba_epochs=2,
        )
    return Fn1dSizes()


def make_data(s: Fn1dSizes, seed: int) -> BenchData:
    train, _ = generate("id", s.n_train, seed, stream=0)
    splits = {kind: make_split(kind, s.n_test, seed, stream=1 + i) for i, kind in enumerate(SPLITS)}
    return BenchData(train=train, splits=splits, shape=(LENGTH,), noise=NOISE)


def models(s: Fn1dSizes, data: BenchData) -> dict:
    train = train_config(s)

    def network(label, build, cfg=train):
        return lambda device: TorchBench(build, cfg, NOISE, device, label)

    return {
        **vn_models(s, LENGTH),
        "Transformer": network(
            "Transformer",
            partial(
                SequenceTransformer,
                length=LENGTH,
                d_model=s.transformer_width,
                heads=4,
                layers=2,
                ff=2 * s.transformer_width,
                patch=8,
            ),
        ),
        "Mamba": network(
            "Mamba",
            partial(BidirectionalMamba, d_model=s.mamba_width, layers=2, d_state=8, patch=8),
            train_config(s, epochs=s.mamba_epochs),
        ),
        "MLP": network("MLP", partial(MaskedMLP, dim=LENGTH, hidden=s.mlp_hidden)),
        **classical_models(s, NOISE, (LENGTH,)),
        "Trivial": lambda device: TrivialBench((LENGTH,)),
    }


def bytes_needed(s: Fn1dSizes) -> float:
    """Signals (float64: train, and clean/noisy/hidden per split), the baselines' float32 copies
    and the settle's per-chunk masked Gram matrices."""
    signals = 8.0 * LENGTH * (s.n_train + 3 * len(SPLITS) * s.n_test)
    torch_copies = 4.0 * LENGTH * s.n_train * 3
    return signals + torch_copies + 3 * 64 * s.vn_atoms**2 * 8.0


FAMILY = Family(
    name="fn1d",
    description="1D function composition: 128-point signals from 19 primitives; OOD = unseen "
    "pairs, triples, nesting, amplitudes",
    splits=SPLITS,
    sizes=sizes,
    make_data=make_data,
    models=models,
    random_hidden=random_hidden,
    bytes_needed=bytes_needed,
)

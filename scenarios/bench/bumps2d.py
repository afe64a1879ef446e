"""bumps2d: 2D Gaussian bumps. Images of 32 x 32 pixels holding isotropic Gaussian bumps
a exp(-|p - c|^2 / (2 s^2)), amplitude a in [0.5, 1], width s in [1.5, 3] pixels.

The plane is a 4 x 4 checkerboard of 8 x 8-pixel cells; ID centres lie only in the 8 cells with
(row + column) even, uniform inside the cell. ID (train and "id"): 1-3 bumps, all in ID cells.
OOD splits: "heldout" (1-3 bumps, all in the other 8 cells), "more" (4-5 bumps in ID cells),
"mixed" (2-3 bumps: at least one in a held-out cell and one in an ID cell), "widths" (1-3 bumps
in ID cells, widths s in [0.8, 1.2] pixels, never seen in training). Noise: Gaussian,
sigma 0.05. Masked task: one of the four 16 x 16 quadrants hidden, uniformly chosen.
Probe "scan": one bump (a = 1, s = 2) at each point of a 16 x 16 grid of centres (every 2
pixels), scored per sample for the error heat maps.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
from atomspark.scenarios.bench.baselines import MLPVAE, ConvAutoencoder, SlotDecoder
from atomspark.scenarios.bench.family import BenchData, Family, Split
from atomspark.scenarios.bench.lineup import (
    ProtocolSizes,
    classical_models,
    train_config,
    vn_models,
)
from atomspark.scenarios.bench.torch_bench import TorchBench
from atomspark.scenarios.bench.trivial import TrivialBench

SIDE = 32
CELLS = 4
CELL = SIDE // CELLS
NOISE = 0.05
AMPLITUDE = (0.5, 1.0)
WIDTH = (1.5, 3.0)
OOD_WIDTH = (0.8, 1.2)
SPLITS = ("id", "heldout", "more", "mixed", "widths")
ID_BUMPS = (1, 3)
MORE_BUMPS = (4, 5)
MAX_BUMPS = 5
SCAN = 16
_YY, _XX = np.mgrid[0:SIDE, 0:SIDE].astype(float)


def is_id_cell(row: np.ndarray, col: np.ndarray) -> np.ndarray:
    """True for the checkerboard cells ID centres may use."""
    return (np.asarray(row) + np.asarray(col)) % 2 == 0


ID_CELLS = np.array([(r, c) for r in range(CELLS) for c in range(CELLS) if is_id_cell(r, c)])
HELD_CELLS = np.array([(r, c) for r in range(CELLS) for c in range(CELLS) if not is_id_cell(r, c)])


def cell_of(centres: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(row, column) cell of centres (..., 2) given as (y, x) pixel coordinates; cell r covers
    the pixels 8r .. 8r + 7, i.e. coordinates [8r - 0.5, 8r + 7.5)."""
    cells = np.clip(((centres + 0.5) // CELL).astype(int), 0, CELLS - 1)
    return cells[..., 0], cells[..., 1]


def render(centres: np.ndarray, amps: np.ndarray, widths: np.ndarray) -> np.ndarray:
    """Images (n, 1024) from centres (n, k, 2), amps and widths (n, k); NaN centres = no bump."""
    present = ~np.isnan(centres[..., 0])
    c = np.where(present[..., None], centres, 0.0)
    d2 = (_YY[None, None] - c[..., 0, None, None]) ** 2 + (
        _XX[None, None] - c[..., 1, None, None]
    ) ** 2
    bumps = amps[..., None, None] * np.exp(-d2 / (2 * widths[..., None, None] ** 2))
    return np.where(present[..., None, None], bumps, 0.0).sum(axis=1).reshape(len(c), -1)


def _centres_in(rng, cells: np.ndarray) -> np.ndarray:
    """One uniform centre inside each of the given (row, col) cells, (n, 2) pixels."""
    return (cells + rng.random(cells.shape)) * CELL - 0.5


def generate(kind: str, n: int, seed: int, stream: int) -> tuple[np.ndarray, dict]:
    """n clean images of one split kind, with per-bump centres/amplitudes/widths as meta."""
    rng = np.random.default_rng([seed, stream])
    lo, hi = MORE_BUMPS if kind == "more" else ((2, 3) if kind == "mixed" else ID_BUMPS)
    counts = rng.integers(lo, hi + 1, n)
    centres = np.full((n, MAX_BUMPS, 2), np.nan)
    for i, k in enumerate(counts):
        if kind in ("id", "more", "widths"):
            cells = ID_CELLS[rng.integers(0, len(ID_CELLS), k)]
        elif kind == "heldout":
            cells = HELD_CELLS[rng.integers(0, len(HELD_CELLS), k)]
        elif kind == "mixed":
            n_held = rng.integers(1, k)  # 1 .. k-1 bumps in held-out cells, the rest ID
            cells = np.concatenate(
                [
                    HELD_CELLS[rng.integers(0, len(HELD_CELLS), n_held)],
                    ID_CELLS[rng.integers(0, len(ID_CELLS), k - n_held)],
                ]
            )
        else:
            raise ValueError(kind)
        centres[i, :k] = _centres_in(rng, cells)
    amps = rng.uniform(*AMPLITUDE, (n, MAX_BUMPS))
    widths = rng.uniform(*(OOD_WIDTH if kind == "widths" else WIDTH), (n, MAX_BUMPS))
    meta = {
        "centres": centres,
        "counts": counts,
        "widths": np.where(bump_present(centres), widths, np.nan),
    }
    return render(centres, amps, widths), meta


def bump_present(centres: np.ndarray) -> np.ndarray:
    """Which bump slots hold a bump, (n, MAX_BUMPS)."""
    return ~np.isnan(centres[..., 0])


def random_hidden(rng: np.random.Generator, n: int, sizes=None) -> np.ndarray:
    """Hide one uniformly chosen 16 x 16 quadrant per image."""
    quad = rng.integers(0, 4, n)
    half = SIDE // 2
    rows = (_YY[None] // half) == (quad // 2)[:, None, None]
    cols = (_XX[None] // half) == (quad % 2)[:, None, None]
    return (rows & cols).reshape(n, -1)


def _noisy_split(clean: np.ndarray, meta: dict, seed: int, stream: int) -> Split:
    rng = np.random.default_rng([seed, stream, 7])
    noisy = clean + NOISE * rng.standard_normal(clean.shape)
    return Split(clean, noisy, random_hidden(rng, len(clean)), meta)


def scan_probe(seed: int) -> Split:
    """One bump (a = 1, s = 2) at every point of a SCAN x SCAN grid of centres."""
    grid = (np.arange(SCAN) + 0.5) * SIDE / SCAN - 0.5
    yy, xx = np.meshgrid(grid, grid, indexing="ij")
    centres = np.full((SCAN * SCAN, MAX_BUMPS, 2), np.nan)
    centres[:, 0] = np.stack([yy.ravel(), xx.ravel()], axis=1)
    ones = np.ones((SCAN * SCAN, MAX_BUMPS))
    clean = render(centres, ones, 2.0 * ones)
    return _noisy_split(clean, {"centres": centres}, seed, stream=99)


@dataclass(frozen=True)
class Bumps2dSizes(ProtocolSizes):
    """Data sizes and every model's hyperparameters (ProtocolSizes: VN, epochs, peers)."""

    n_train: int = 2000
    n_test: int = 200
    vn_atoms: int = 128
    vn_lam: float = 0.15
    vn_interface: int = 64
    vn_atoms2: int = 64
    max_epochs: int = 200
    conv_channels: int = 24
    vae_hidden: int = 40
    slot_hidden: int = 32
    pca_components: int = 40
    dl_alpha: float = 0.15
    smooth_width: float = 1.0


def sizes(quick: bool) -> Bumps2dSizes:
    if quick:
        return Bumps2dSizes(
            n_train=600,
            n_test=64,
            vn_epochs=2,
            vn_joint_epochs=1,
            vn_sweeps=3,
            max_epochs=4,
        )
    return Bumps2dSizes()


def make_data(s: Bumps2dSizes, seed: int) -> BenchData:
    train, _ = generate("id", s.n_train, seed, stream=0)
    splits = {}
    for i, kind in enumerate(SPLITS):
        clean, meta = generate(kind, s.n_test, seed, stream=1 + i)
        splits[kind] = _noisy_split(clean, meta, seed, stream=1 + i)
    return BenchData(
        train=train,
        splits=splits,
        shape=(SIDE, SIDE),
        noise=NOISE,
        probes={"scan": scan_probe(seed)},
    )


def models(s: Bumps2dSizes, data: BenchData) -> dict:
    d = SIDE * SIDE

    def network(label, build):
        return lambda device: TorchBench(build, train_config(s), NOISE, device, label)

    return {
        **vn_models(s, d),
        "ConvAE": network("ConvAE", partial(ConvAutoencoder, side=SIDE, channels=s.conv_channels)),
        "VAE": network("VAE", partial(MLPVAE, dim=d, hidden=s.vae_hidden, latent=16)),
        "SlotDecoder": network(
            "SlotDecoder",
            partial(
                SlotDecoder,
                dim=d,
                slots=ID_BUMPS[1],
                latent=8,
                hidden=s.slot_hidden,
                decoder_hidden=24,
            ),
        ),
        **classical_models(s, NOISE, (SIDE, SIDE)),
        "Trivial": lambda device: TrivialBench((SIDE, SIDE)),
    }


def bytes_needed(s: Bumps2dSizes) -> float:
    """Images (float64: train, clean/noisy/hidden per split and the scan probe), the baselines'
    float32 copies and the settle's per-chunk masked Gram matrices."""
    d = SIDE * SIDE
    signals = 8.0 * d * (s.n_train + 3 * len(SPLITS) * s.n_test + 3 * SCAN * SCAN)
    return signals + 4.0 * d * s.n_train * 3 + 3 * 64 * s.vn_atoms**2 * 8.0


def plots(results: dict, cells: list[dict], out) -> list[Path]:
    """Heat map of each model's reconstruction error over the bump centre's position (scan
    probe, first seed); the held-out checkerboard cells are hatched. (The masked-task errors of
    the probe are in the cells; with a random quadrant hidden they map the quadrant, not the
    position, so they are not drawn.)"""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    seed = min(c["seed"] for c in cells)
    first = {c["model"]: c for c in cells if c["seed"] == seed and c["probes"]}
    order = [m for m in results["models"] if m in first]
    maps = {m: np.reshape(first[m]["probes"]["scan"]["recon"], (SCAN, SCAN)) for m in order}
    fig, axes = plt.subplots(1, len(maps), figsize=(2.6 * len(maps) + 1.2, 3.2), squeeze=False)
    vmax = max(float(np.percentile(v, 99)) for v in maps.values())
    for ax, (name, err) in zip(axes[0], maps.items()):
        im = ax.imshow(err, cmap="magma", vmin=0, vmax=vmax, extent=(0, SIDE, SIDE, 0))
        for r, c in HELD_CELLS:
            ax.add_patch(
                Rectangle(
                    (c * CELL, r * CELL),
                    CELL,
                    CELL,
                    fill=False,
                    hatch="//",
                    ec="w",
                    lw=0,
                    alpha=0.5,
                )
            )
        ax.set_title(f"{name}\nmean {err.mean():.3f}", fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.colorbar(im, ax=axes[0].tolist(), shrink=0.8, label="recon NMSE")
    fig.suptitle(
        f"Reconstruction error over the bump centre's position (one bump, seed {seed}; "
        "hatched = held-out cells)",
        fontsize=10,
    )
    path = Path(out) / "position_heatmap.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return [path]


FAMILY = Family(
    name="bumps2d",
    description="2D Gaussian bumps on 32 x 32 images; ID centres on half a 4 x 4 checkerboard; "
    "OOD = held-out cells, more bumps, mixed",
    splits=SPLITS,
    sizes=sizes,
    make_data=make_data,
    models=models,
    random_hidden=random_hidden,
    bytes_needed=bytes_needed,
    plots=plots,
)

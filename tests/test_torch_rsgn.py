"""Torch RSGN against the NumPy reference forward pass, conversion round trip, gradients."""

import dataclasses

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

from atomspark.networks.rsgn.dynamics import forward as np_forward  # noqa: E402
from atomspark.networks.rsgn.model import RSGNConfig, init_params  # noqa: E402
from atomspark.networks.torch_path.convert import rsgn_from_torch, rsgn_to_torch  # noqa: E402

SMALL = dict(n_nodes=24, dim=3, d_hidden=8, d_in=5, n_classes=3, n_steps=3, affinity_rank=4)


def _config(mode):
    extra = dict(radius=2.0, k_nearest=6, inhibition_radius=0.3) if mode == "sparse" else {}
    return RSGNConfig(mode=mode, **SMALL, **extra)


@pytest.mark.parametrize("mode", ["published", "sparse"])
def test_forward_matches_numpy_reference(mode, rng):
    config = _config(mode)
    params = init_params(config, seed=1)
    tokens = rng.standard_normal((4, 7, 5))
    ref = np_forward(params, config, tokens)
    module = rsgn_to_torch(params, config)
    scores, alpha = module(torch.from_numpy(tokens))
    np.testing.assert_allclose(alpha.detach().numpy(), ref.propagation.alpha, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(scores.detach().numpy(), ref.scores, rtol=1e-9, atol=1e-12)
    if mode == "sparse":
        assert np.array_equal(alpha.detach().numpy() == 0, ref.propagation.alpha == 0)
    assert 0 < np.count_nonzero(ref.propagation.alpha > config.cutoff)


@pytest.mark.parametrize("mode", ["published", "sparse"])
def test_round_trip_is_bit_identical(mode):
    config = _config(mode)
    params = init_params(config, seed=2)
    back, config_back = rsgn_from_torch(rsgn_to_torch(params, config))
    assert config_back == config
    for name, arr in params.dense_arrays().items():
        got = getattr(back, name)
        assert got.dtype == arr.dtype and np.array_equal(got, arr), name
    if mode == "sparse":
        a, b = params.edge_affinity, back.edge_affinity
        assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
        assert np.array_equal(a.data, b.data)


def test_gradients_are_finite_and_match_finite_differences(rng):
    config = _config("published")
    params = init_params(config, seed=3)
    tokens = torch.from_numpy(rng.standard_normal((3, 6, 5)))
    labels = torch.tensor([0, 1, 2])
    module = rsgn_to_torch(params, config)
    loss = torch.nn.functional.cross_entropy(module(tokens)[0], labels)
    loss.backward()
    for name, p in module.named_parameters():
        assert torch.isfinite(p.grad).all(), name
    # central differences on a few entries of w_h and positions
    for name, idx in (("w_h", (1, 2)), ("positions", (4, 0)), ("affinity_u", (2, 1))):
        grad = getattr(module, name).grad[idx].item()
        vals = []
        for sign in (1.0, -1.0):
            p2 = dataclasses.replace(params)
            arr = getattr(params, name).copy()
            arr[idx] += sign * 1e-6
            setattr(p2, name, arr)
            with torch.no_grad():
                m2 = rsgn_to_torch(p2, config)
                vals.append(torch.nn.functional.cross_entropy(m2(tokens)[0], labels).item())
        fd = (vals[0] - vals[1]) / 2e-6
        assert abs(grad - fd) <= 1e-6 + 1e-5 * abs(fd), (name, grad, fd)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_spark_on_a_node_keeps_gradients_finite(dtype):
    """Sparse ignition uses the geodesic distance, whose arccosh has an infinite slope at 0:
    a spark point exactly on a node (training toward a narrow ignition gets there) must not
    turn the positions' gradient into NaN."""
    config = dataclasses.replace(_config("sparse"), n_steps=0, ignition_sigma=0.05)
    module = rsgn_to_torch(init_params(config, seed=4), config).to(dtype)
    tokens = torch.zeros(1, 2, 5, dtype=dtype)
    with torch.no_grad():  # put node 0 exactly where the spark of a zero token lands
        module.positions[0] = module.spark_points(tokens)[0, 0]
    alpha = module.ignition(tokens)
    assert alpha[0, 0] > 0.99
    alpha.sum().backward()
    assert torch.isfinite(module.positions.grad).all()


@pytest.mark.parametrize("mode", ["published", "sparse"])
def test_positions_that_left_the_ball_are_projected_in_the_forward_pass(mode, rng):
    """The released code keeps the raw position parameter and projects it in the forward pass:
    a node past the ball is seen at norm 0.95, the exported model computes the same function,
    and only project_(positions=True) rewrites the parameter."""
    config = _config(mode)
    params = init_params(config, seed=4)
    module = rsgn_to_torch(params, config)
    with torch.no_grad():
        module.positions[0] *= 1.2 / float(module.positions[0].norm())
        module.thresholds[1] = -2.0  # an unbounded threshold (no clamp without the homeostat)
    tokens = rng.standard_normal((4, 7, 5))
    scores, alpha = module(torch.from_numpy(tokens))
    exported, _ = rsgn_from_torch(module)
    assert np.linalg.norm(exported.positions[0]) == pytest.approx(0.95)
    assert exported.thresholds[1] == -2.0
    ref = np_forward(exported, config, tokens)
    np.testing.assert_allclose(scores.detach().numpy(), ref.scores, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(alpha.detach().numpy(), ref.propagation.alpha, atol=1e-12)
    module.project_(positions=False, thresholds=False)
    assert float(module.positions[0].norm()) == pytest.approx(1.2)
    assert float(module.thresholds[1]) == -2.0
    module.project_()
    assert float(module.positions[0].norm()) == pytest.approx(0.95)
    assert float(module.thresholds[1]) == config.threshold_bounds[0]
    module.project_in_forward = False  # the earlier rule: the parameter is the position
    assert torch.equal(module.node_positions(), module.positions)


@pytest.mark.parametrize("mode", ["published", "sparse"])
def test_resting_subtracted_threshold_matches_numpy_reference(mode, rng):
    config = dataclasses.replace(_config(mode), threshold_rule="resting-subtracted")
    params = init_params(config, seed=5)
    params.thresholds = rng.uniform(-0.3, 0.6, config.n_nodes)
    tokens = rng.standard_normal((4, 7, 5))
    ref = np_forward(params, config, tokens)
    scores, alpha = rsgn_to_torch(params, config)(torch.from_numpy(tokens))
    np.testing.assert_allclose(alpha.detach().numpy(), ref.propagation.alpha, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(scores.detach().numpy(), ref.scores, rtol=1e-9, atol=1e-12)
    assert np.any(ref.propagation.alpha > config.cutoff)

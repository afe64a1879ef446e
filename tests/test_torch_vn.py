"""Torch VN path against the NumPy reference: settle codes, gradients, Atomic-Hebb."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

from atomspark.networks.torch_path.convert import vn_from_torch, vn_to_torch  # noqa: E402
from atomspark.networks.torch_path.vn_torch import joint_energy, settle  # noqa: E402
from atomspark.networks.vn.model import VNModel  # noqa: E402
from atomspark.networks.vn.settle import settle as np_settle  # noqa: E402

# tol 1e-8: above the float64 rounding floor of the restart test (E(z) - E(g) ~ 1e-20 near the
# fixed point), where torch's and NumPy's matmul roundings could flip an accept and shift the
# iteration count by a few steps; at 1e-8 the two paths run the same steps.
SETTLE = dict(tol=1e-8, max_iter=200, sweeps=60)


def _model(topk=None, seed=0):
    return VNModel.random(12, [(16, 8), (10, 6)], lam=[0.5, 0.3], seed=seed, topk=topk)


def _t(a):
    return None if a is None else torch.from_numpy(a)


@pytest.mark.parametrize("method", ["ista", "fista"])
@pytest.mark.parametrize("masked", [False, True])
def test_settle_matches_numpy_reference(method, masked, rng):
    model = _model()
    x = rng.standard_normal((5, 12))
    mask = (rng.random((5, 12)) > 0.3).astype(float) if masked else None
    h_top = rng.standard_normal((5, 6)) * 0.5
    ref = np_settle(model, x, mask=mask, h_top=h_top, method=method, **SETTLE)
    tm = vn_to_torch(model)
    out = settle(tm, _t(x), _t(mask), _t(h_top), method=method, **SETTLE)
    assert out.converged == bool(ref.converged.all())
    for g_ref, g in zip(ref.codes, out.codes):
        g = g.detach().numpy()
        assert 0 < np.count_nonzero(g_ref) < g_ref.size  # sparse, not trivially zero
        np.testing.assert_allclose(g, g_ref, rtol=1e-6, atol=1e-8)
    energy = joint_energy(tm, out.codes, _t(x), _t(mask), _t(h_top)).detach().numpy()
    np.testing.assert_allclose(energy, ref.energy, rtol=1e-9)
    # the same iteration (FISTA with function-value restart), step for step: a sample may stop one
    # iteration apart, where the stopping test sits within rounding of its threshold (torch and
    # NumPy sum in different orders; seen once in 1,000-odd iterations)
    assert np.abs(out.iterations.numpy() - ref.iterations).max() <= 1


def test_settle_with_topk_matches_reference(rng):
    """With top-k the problem is non-convex, so a different momentum rule (the torch path once
    ran monotone FISTA) can end at a different code; the same iteration cannot. Iteration counts
    agree to rounding: near a top-k switch the restart test sits at the float64 noise floor."""
    model = _model(topk=3)
    x = rng.standard_normal((12, 12))
    ref = np_settle(model, x, method="fista", **SETTLE)
    out = settle(vn_to_torch(model), _t(x), method="fista", **SETTLE)
    top = out.codes[-1].detach().numpy()
    assert np.all(np.count_nonzero(top, axis=1) <= 3)
    for g_ref, g in zip(ref.codes, out.codes):
        np.testing.assert_allclose(g.detach().numpy(), g_ref, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(out.iterations.numpy(), ref.iterations, rtol=0.02)


def test_round_trip_is_bit_identical():
    model = _model(topk=2)
    back = vn_from_torch(vn_to_torch(model))
    for a, b in zip(model.layers, back.layers):
        assert a.S.dtype == b.S.dtype and np.array_equal(a.S, b.S) and np.array_equal(a.U, b.U)
        assert a.lam == b.lam and a.topk == b.topk


def test_unrolled_gradient_matches_finite_differences(rng):
    """d loss / d S_1 through a fixed number of proximal steps equals central differences."""
    model = VNModel.random(6, [(5, 4)], lam=0.1, seed=3)
    x = torch.from_numpy(rng.standard_normal((3, 6)))
    target = torch.from_numpy(rng.standard_normal((3, 6)))
    kw = dict(method="fista", tol=0.0, max_iter=15, sweeps=1)

    def loss_of(tm):
        g = settle(tm, x, **kw).codes[0]
        return ((g @ tm.S[0].T - target) ** 2).sum()

    tm = vn_to_torch(model)
    loss_of(tm).backward()
    grad = tm.S[0].grad.numpy()
    eps = 1e-6
    S0 = model.layers[0].S
    fd = np.zeros_like(S0)
    for idx in np.ndindex(S0.shape):
        vals = []
        for sign in (1.0, -1.0):
            S = S0.copy()
            S[idx] += sign * eps
            m = VNModel.from_arrays([S], [model.layers[0].U], 0.1)
            with torch.no_grad():
                vals.append(float(loss_of(vn_to_torch(m))))
        fd[idx] = (vals[0] - vals[1]) / (2 * eps)
    assert np.abs(grad).max() > 1e-3
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("normalize", [True, False])
def test_atomic_hebb_matches_reference(normalize, rng):
    from atomspark.networks.torch_path.vn_torch import atomic_hebb
    from atomspark.networks.vn.hebb import atomic_hebb as np_hebb

    model = _model()
    x = rng.standard_normal((6, 12))
    mask = (rng.random((6, 12)) > 0.2).astype(float)
    ref_settle = np_settle(model, x, mask=mask, method="fista", **SETTLE)
    ref = np_hebb(model, x, ref_settle, 0.3, 0.2, mask=mask, normalize=normalize)
    tm = vn_to_torch(model)
    codes = [torch.from_numpy(g) for g in ref_settle.codes]
    atomic_hebb(tm, _t(x), codes, 0.3, 0.2, mask=_t(mask), normalize=normalize)
    got = vn_from_torch(tm)
    for a, b, old in zip(ref.layers, got.layers, model.layers):
        assert not np.allclose(a.S, old.S)  # the update did something
        np.testing.assert_allclose(b.S, a.S, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(b.U, a.U, rtol=1e-12, atol=1e-14)


def test_single_layer_settle_matches_reference(rng):
    model = VNModel.random(8, [(10, 4)], lam=0.2, seed=5)
    x = rng.standard_normal((6, 8))
    kw = dict(tol=1e-8, max_iter=300, sweeps=5)
    ref = np_settle(model, x, method="fista", **kw)
    out = settle(vn_to_torch(model), _t(x), method="fista", **kw)
    assert ref.converged.all() and out.converged
    assert out.sweeps == int(ref.sweeps.max()) == 1  # one converged block solve is the answer
    np.testing.assert_allclose(out.codes[0].detach().numpy(), ref.codes[0], rtol=1e-6, atol=1e-8)

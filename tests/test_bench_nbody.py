"""nbody: the integrator conserves energy where it must, the OOD splits are disjoint from ID by
construction, the GNN is a true message-passing model over present bodies, and the family runs
end to end in --quick (tables, finite values, rollout, engine vs reference)."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("torch")  # the bench package imports its torch runner (Python 3.11 env)

from atomspark.scenarios.bench import nbody_physics as phys  # noqa: E402
from atomspark.scenarios.bench.nbody_data import SPLITS, make_split

ENERGY_TOLERANCE = 1e-2  # max relative energy error over 20 steps of dt = 0.1 at 20 substeps


def _systems(strengths, n_bodies=4, n=40, seed=0):
    rng = np.random.default_rng(seed)
    return phys.random_systems(rng, n, n_bodies, np.tile(np.asarray(strengths, float), (n, 1)))


def _energy_error(s, substeps):
    traj = phys.simulate(s, 20, 0.1, substeps)
    end = phys.Systems(traj[:, -1, :, :2], traj[:, -1, :, 2:], s.mass, s.charge, s.strengths)
    e0, e1 = phys.energy(s), phys.energy(end)
    kinetic = 0.5 * np.sum(s.mass * np.sum(s.vel**2, axis=-1), axis=1)
    return np.max(np.abs(e1 - e0) / (np.abs(e0) + kinetic))


@pytest.mark.parametrize(
    "strengths",
    [[1.5, 0, 0, 0], [0, 0, 3, 0], [0, 0, 0, 3], [1.5, 0, 3, 3]],
    ids=["gravity", "magnetic", "spring", "all-conservative"],
)
def test_energy_conserved_to_tolerance_with_second_order_convergence(strengths):
    s = _systems(strengths, n_bodies=6)
    coarse, fine = _energy_error(s, 10), _energy_error(s, 20)
    assert fine < ENERGY_TOLERANCE
    if strengths[0] or strengths[3]:  # potential forces: error O(h^2)
        assert 3.0 < coarse / fine < 5.0
    else:  # the magnetic rotation alone keeps |v| exactly
        assert fine < 1e-12


def test_drag_only_removes_energy():
    s = _systems([0, 1.0, 0, 0])
    traj = phys.simulate(s, 10, 0.1)
    kinetic = 0.5 * np.sum(s.mass[:, None] * np.sum(traj[..., 2:] ** 2, axis=-1), axis=-1)
    assert np.all(np.diff(kinetic, axis=1) < 0)
    # linear drag alone: v(t) = v0 exp(-gamma t / m), exactly
    expected = s.vel * np.exp(-1.0 * 1.0 / s.mass)[..., None]
    assert np.allclose(traj[:, -1, :, 2:], expected, rtol=1e-10)


@pytest.mark.parametrize("seed", [0, 1])
def test_ood_splits_disjoint_from_id(seed):
    """Every OOD system differs from every ID system in its number of forces or bodies."""
    data = {name: make_split(name, 20, seed, stream=1) for name in SPLITS}
    signature = {
        name: set(zip((s.strengths > 0).sum(axis=1).tolist(), s.n_bodies.tolist()))
        for name, s in data.items()
    }
    assert all(f == 1 and b in (3, 4) for f, b in signature["id"])
    for name in list(SPLITS)[1:]:
        assert not signature[name] & signature["id"], name
    assert all(f >= 2 for f, _ in signature["combined"] | signature["combined_count"])
    assert {b for _, b in signature["more"]} <= {5, 6}
    assert {b for _, b in signature["fewer"]} == {2}


def test_gnn_equivariant_and_blind_to_padding():
    torch = pytest.importorskip("torch")
    from atomspark.scenarios.bench.nbody_models import BodyGNN

    torch.manual_seed(0)
    net = BodyGNN(hidden=16).double()
    tokens = torch.randn(3, 6, 6, dtype=torch.float64)
    context = torch.rand(3, 4, dtype=torch.float64)
    present = torch.tensor([[1, 1, 1, 0, 0, 0]] * 3, dtype=torch.bool)
    out = net(tokens, context, present)
    perm = torch.tensor([2, 0, 1, 3, 4, 5])
    assert torch.allclose(net(tokens[:, perm], context, present), out[:, perm])
    junk = tokens.clone()
    junk[:, 3:] = 100.0  # padded bodies send no messages and get no output
    assert torch.allclose(net(junk, context, present), out)
    assert torch.all(out[:, 3:] == 0)
    moved = tokens.clone()
    moved[:, 1, :2] += 0.5  # another body's position reaches body 0 through the messages
    assert not torch.allclose(net(moved, context, present)[:, 0], out[:, 0])


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    pytest.importorskip("torch")
    from atomspark.scenarios.cli.main import main

    out = tmp_path_factory.mktemp("nbody")
    assert main(["bench", "nbody", "--quick", "--out", str(out), "--device", "cpu"]) == 0
    return out


@pytest.mark.torch
def test_quick_run_tables_and_finite_values(quick_run):
    from atomspark.scenarios.bench.nbody import ROLLOUT
    from atomspark.scenarios.bench.tables import finite_values

    results = json.loads((quick_run / "results.json").read_text())
    models = ["VN", "VN-1", "MLP", "GNN", "Transformer", "GappyPCA", "DictLasso", "Persistence"]
    assert results["splits"] == list(SPLITS) and list(results["models"]) == models
    assert results["missing_cells"] == []
    assert np.all(np.isfinite(finite_values(results)))
    for m in results["models"].values():
        rollout = m["extra_metrics"][ROLLOUT]
        assert list(rollout) == list(SPLITS)
        assert all(np.isfinite(v["mean"]) and v["mean"] >= 0 for v in rollout.values())
    table = (quick_run / "results.md").read_text()
    assert table.count("| model | " + " | ".join(SPLITS) + " |") == 5  # 2 tasks x 2 + rollout
    assert f"## {ROLLOUT}" in table


def test_vn_readout_reads_the_output_through_the_top_codes():
    """nbody's layered VN is an input -> output model: its prediction of the next state is the
    state at t plus the scaled readout of the top layer's codes, settled on the input alone;
    on a task whose output is a linear map of the input, the fitted readout explains most of
    the change that persistence leaves."""
    from atomspark.scenarios.bench.vn_bench import VNBenchConfig
    from atomspark.scenarios.bench.vn_readout import VNReadout

    rng = np.random.default_rng(0)
    n, d_in, d_out = 600, 12, 4
    atoms = rng.standard_normal((d_in, 6))
    codes = rng.standard_normal((n, 6)) * (rng.random((n, 6)) < 0.4)
    x = codes @ atoms.T
    change = 0.1 * x[:, :d_out] @ rng.standard_normal((d_out, d_out))
    vectors = np.concatenate([x, x[:, :d_out] + change], axis=1)
    cfg = VNBenchConfig(
        atoms=24, lam=0.01, epochs=2, layers=2, atoms2=24, lam2=0.005, interface=16, joint_epochs=1
    )
    model = VNReadout(cfg, np.arange(d_in), np.arange(d_in, d_in + d_out), lambda v: v[:, :d_out])
    model.fit(vectors[:500], 0)
    test = vectors[500:]
    pred, first = model.predict_with_codes(test, np.ones_like(test))
    top = model.encode(test[:, :d_in])[-1]
    expected = test[:, :d_out] + model.scale * (top @ model.readout.T)
    assert np.allclose(pred[:, d_in:], expected) and np.array_equal(pred[:, :d_in], test[:, :d_in])
    assert first.shape == (100, cfg.atoms)
    left = np.mean((pred[:, d_in:] - test[:, d_in:]) ** 2) / np.mean(change[500:] ** 2)
    assert left < 0.5, left
    assert model.n_params() == d_in * 24 + 16 * (24 + 24) + d_out * 24

"""Running saved models on the engine: kinds, equality with the references, bad input."""

import numpy as np
import pytest
from atomspark.networks import rsgn
from atomspark.networks.vn import VNModel, settle
from atomspark.scenarios.runs.engine import concat_profiles, load_model, run_loaded, run_vn
from atomspark.sim.core import AtomsparkError


def test_vn_file_runs_to_the_reference_fixed_point(tmp_path, rng):
    model = VNModel.random(10, [(16, 4)], lam=0.2, seed=5)
    model.save(tmp_path / "vn.npz")
    loaded = load_model(tmp_path / "vn.npz")
    x = rng.standard_normal((3, 10))
    run = run_loaded(loaded, x, steps=3000)
    ref = settle(model, x, tol=1e-12, max_iter=20000)
    np.testing.assert_allclose(run.outputs[0], ref.codes[0], atol=1e-8)
    assert run.profile.steps == 3 * 3000 and run.n_samples == 3


def test_rsgn_file_runs_to_the_reference_scores(tmp_path, rng):
    cfg = rsgn.RSGNConfig(
        mode="sparse",
        n_nodes=20,
        dim=2,
        d_hidden=6,
        d_in=3,
        n_classes=4,
        n_steps=2,
        k_nearest=3,
        cutoff=0.2,
        affinity_rank=2,
    )
    params = rsgn.init_params(cfg, seed=2)
    rsgn.save_model(tmp_path / "r.npz", params, cfg)
    tokens = rng.standard_normal((2, 5, 3))
    run = run_loaded(load_model(tmp_path / "r.npz"), tokens)
    np.testing.assert_allclose(run.outputs, rsgn.forward(params, cfg, tokens).scores, atol=1e-12)


def test_concat_keeps_time_order(rng):
    model = VNModel.random(4, [(6, 2)], lam=0.1, seed=0)
    a = run_vn(model, rng.standard_normal(4), steps=5).profile
    b = run_vn(model, 5 * rng.standard_normal(4), steps=7).profile
    both = concat_profiles([a, b])
    np.testing.assert_array_equal(both.events[:5], a.events)
    np.testing.assert_array_equal(both.events[5:], b.events)
    np.testing.assert_array_equal(both.unit_events[0], a.unit_events[0] + b.unit_events[0])


def test_bad_files_and_shapes_are_named(tmp_path):
    (tmp_path / "junk.npz").write_bytes(b"junk")
    with pytest.raises(AtomsparkError, match="not an .npz archive"):
        load_model(tmp_path / "junk.npz")
    model = VNModel.random(4, [(6, 2)], lam=0.1, seed=0)
    with pytest.raises(AtomsparkError, match="expects 4 features"):
        run_vn(model, np.ones((2, 5)))


def test_event_log_is_a_raster_of_the_profile(rng):
    from atomspark.networks.vn_compile import compile_vn_model
    from atomspark.sim.engine import Engine

    model = VNModel.random(6, [(8, 3), (5, 2)], lam=0.1, seed=0)
    engine = Engine(compile_vn_model(model, rng.standard_normal(6)))
    prof = engine.run(25, record_events=True)
    for p, name in enumerate(prof.population_names):
        steps, units = engine.event_log[name]
        np.testing.assert_array_equal(np.bincount(steps, minlength=25), prof.events[:, p])
        np.testing.assert_array_equal(
            np.bincount(units, minlength=prof.population_sizes[p]), prof.unit_events[p]
        )

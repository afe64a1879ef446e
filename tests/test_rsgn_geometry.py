"""Poincare-ball geometry: metric axioms, closed forms, maps and curvature scaling."""

import numpy as np
import pytest
from atomspark.networks.rsgn.geometry import (
    exp_map0,
    log_map0,
    mobius_add,
    pairwise_distances,
    poincare_distance,
    project_to_ball,
)
from atomspark.sim.core import AtomsparkError


def _points(rng, n, dim, c=1.0, max_norm=0.9):
    """Random points inside the ball of curvature c, spread over radii up to max_norm/sqrt(c)."""
    v = rng.standard_normal((n, dim))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v * rng.uniform(0.0, max_norm, (n, 1)) / np.sqrt(c)


@pytest.mark.parametrize("c", [0.5, 1.0, 2.0])
def test_metric_axioms(c):
    rng = np.random.default_rng(0)
    p = _points(rng, 40, 3, c)
    d = pairwise_distances(p, c=c)
    assert np.allclose(d, d.T)
    assert np.all(np.diag(d) == 0)
    off = d[~np.eye(len(p), dtype=bool)]
    assert np.all(off > 0)
    # triangle inequality d(i,k) <= d(i,j) + d(j,k) for all triples
    assert np.all(d[:, None, :] <= d[:, :, None] + d[None, :, :] + 1e-9)


def test_distance_from_origin_is_two_artanh_norm():
    rng = np.random.default_rng(1)
    x = _points(rng, 25, 4)
    d = poincare_distance(np.zeros(4), x)
    assert np.allclose(d, 2 * np.arctanh(np.linalg.norm(x, axis=1)))


def test_distance_matches_mobius_form_and_pairwise():
    rng = np.random.default_rng(2)
    c = 1.7
    x, y = _points(rng, 30, 3, c), _points(rng, 30, 3, c)
    mob = 2 / np.sqrt(c) * np.arctanh(np.sqrt(c) * np.linalg.norm(mobius_add(-x, y, c), axis=1))
    assert np.allclose(poincare_distance(x, y, c), mob, rtol=1e-9, atol=1e-12)
    assert np.allclose(pairwise_distances(x, y, c)[np.arange(30), np.arange(30)], mob)


def test_mobius_identities():
    rng = np.random.default_rng(3)
    x = _points(rng, 10, 3)
    assert np.allclose(mobius_add(np.zeros(3), x), x)
    assert np.allclose(mobius_add(-x, x), 0, atol=1e-12)
    assert np.all(np.linalg.norm(mobius_add(x, x[::-1]), axis=1) < 1)


@pytest.mark.parametrize("c", [0.3, 1.0, 4.0])
def test_exp_log_round_trip(c):
    rng = np.random.default_rng(4)
    v = rng.standard_normal((20, 3))
    y = exp_map0(v, c)
    assert np.all(np.sqrt(c) * np.linalg.norm(y, axis=1) < 1)
    assert np.allclose(log_map0(y, c), v, rtol=1e-8)
    # the geodesic distance from the origin equals the tangent length times 2 (the metric factor)
    assert np.allclose(poincare_distance(np.zeros(3), y, c), 2 * np.linalg.norm(v, axis=1))
    x = _points(rng, 20, 3, c)
    assert np.allclose(exp_map0(log_map0(x, c), c), x)


def test_curvature_scaling():
    """Scaling points by 1/sqrt(c) maps the unit ball onto the ball of curvature c, and
    distances shrink by 1/sqrt(c)."""
    rng = np.random.default_rng(5)
    p = _points(rng, 15, 3)
    for c in (0.25, 2.0, 9.0):
        assert np.allclose(
            pairwise_distances(p / np.sqrt(c), c=c), pairwise_distances(p) / np.sqrt(c)
        )


def test_project_to_ball():
    x = np.array([[0.0, 0.5], [3.0, 4.0], [0.6, 0.8]])
    out = project_to_ball(x, 0.9)
    assert np.allclose(np.linalg.norm(out, axis=1), [0.5, 0.9, 0.9])
    assert np.allclose(out[1] / np.linalg.norm(out[1]), [0.6, 0.8])
    # released-code behaviour: only points that left the ball are rescaled
    out = project_to_ball(np.array([[0.0, 0.97], [0.0, 2.0]]), 0.95, trigger_norm=1.0)
    assert np.allclose(out, [[0.0, 0.97], [0.0, 0.95]])
    assert np.allclose(np.linalg.norm(project_to_ball(x, 0.9, c=4.0), axis=1)[1], 0.45)


def test_points_on_or_outside_ball_rejected():
    with pytest.raises(AtomsparkError, match="poincare_distance y.*outside"):
        poincare_distance(np.zeros(2), np.array([1.0, 0.0]))
    with pytest.raises(AtomsparkError, match="pairwise_distances p.*index \\(1,\\)"):
        pairwise_distances(np.array([[0.1, 0.0], [0.0, 1.5]]))
    with pytest.raises(AtomsparkError, match="curvature 4"):
        log_map0(np.array([0.6, 0.0]), c=4.0)
    with pytest.raises(AtomsparkError, match="NaN"):
        poincare_distance(np.array([np.nan, 0.0]), np.zeros(2))
    with pytest.raises(AtomsparkError, match="curvature c"):
        poincare_distance(np.zeros(2), np.zeros(2), c=-1.0)
    with pytest.raises(AtomsparkError, match="max_norm"):
        project_to_ball(np.zeros(2), 1.2)

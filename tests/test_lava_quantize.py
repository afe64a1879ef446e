"""Quantisation and the integer VN atom (no Lava needed: runs in both environments)."""

from __future__ import annotations

import numpy as np
import pytest
from atomspark.mapping.quantize import (
    quantize_eta,
    quantize_lif,
    quantize_lif_graph,
    quantize_vn_graph,
    quantize_weights,
    vn_quantization_report,
)
from atomspark.networks.vn.model import VNModel
from atomspark.networks.vn_compile import compile_vn_model
from atomspark.sim import fixed_point as fx
from atomspark.sim.core import AtomsparkError
from atomspark.sim.engine import Engine
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.units.lif import LIFParams
from atomspark.sim.units.vn_fixed import (
    VNFixedParams,
    lava_sparse_accumulate,
    vn_fixed_step,
)


def test_weights_fit_lava_and_error_is_half_a_step(rng):
    w = rng.standard_normal((7, 5))
    q = quantize_weights(w)
    assert np.array_equal(fx.lava_dense_weights(q.mantissa), q.mantissa)  # Lava keeps them
    assert np.abs(q.mantissa).max() > 127  # the 8 bits are used, not wasted
    step = 2.0 ** (q.weight_exp + 1)  # mixed signs: even mantissas
    assert q.max_abs_error <= step / 2 + 1e-12
    assert q.max_abs_error == pytest.approx(np.abs(q.mantissa * 2.0**q.weight_exp - w).max())


def test_one_sign_weights_use_all_256_levels():
    q = quantize_weights([[0.0, 0.5, 1.0]])
    assert q.mantissa.max() * 2 > 255  # the exponent is minimal: one finer would clip
    assert np.array_equal(fx.lava_dense_weights(q.mantissa), q.mantissa)
    assert quantize_weights([[0.0, 0.5, 1.0]], min_exp=0).weight_exp == 0


def test_eta_mantissa_is_12_bit_and_close():
    for eta in (0.9, 0.37, 1e-3):
        mant, shift = quantize_eta(eta)
        assert 2**11 <= mant < 2**12
        assert abs(mant * 2.0**-shift - eta) <= 2.0 ** -(shift + 1)


def _python_int_step(g, g_sent, c, a_in, drive, thresh, eta_mant, eta_shift):
    """Independent oracle: one atom at a time, Python ints, floor division for the shift."""
    out = []
    for i in range(len(g)):
        ci = c[i] + a_in[i]
        x = g[i] + (eta_mant * (drive[i] - ci)) // (2**eta_shift)
        gi = (abs(x) - thresh[i]) * (1 if x > 0 else -1) if abs(x) > thresh[i] else 0
        out.append((gi, ci, gi - g_sent[i]))
    return out


def test_vn_fixed_step_matches_python_int_oracle(rng):
    n = 20
    g, c = rng.integers(-3000, 3000, n), rng.integers(-50000, 50000, n)
    a_in, drive = rng.integers(-9000, 9000, n), rng.integers(-60000, 60000, n)
    thresh, sent = rng.integers(0, 400, n), rng.integers(-3000, 3000, n)
    g_new, g_sent, c_new, dg, wraps, clips = vn_fixed_step(
        g, sent, c, a_in, drive, thresh, 3001, 17
    )
    assert wraps == 0 and clips == 0  # all values well inside 24 bits
    expected = _python_int_step(*(x.tolist() for x in (g, sent, c, a_in, drive, thresh)), 3001, 17)
    assert g_new.tolist() == [e[0] for e in expected]
    assert c_new.tolist() == [e[1] for e in expected]
    assert dg.tolist() == [e[2] for e in expected]
    assert np.array_equal(g_sent, g_new)


def test_sparse_accumulate_floors_and_wraps_like_lavas_int32_port():
    w = np.array([[3, -5]])
    assert lava_sparse_accumulate(w, np.array([1, 1]), -1)[0].tolist() == [-1]  # floor(-2 / 2)
    assert lava_sparse_accumulate(w, np.array([1, 2]), 2)[0].tolist() == [-28]
    # 254 * 2**24 = 4261412864 does not fit int32: Lava's port keeps it modulo 2**32
    out, wraps = lava_sparse_accumulate(np.array([[254, 254]]), np.array([2**23, 2**23]), 0)
    assert out.tolist() == [254 * 2**24 - 2**32] and wraps == 1


def test_vn_fixed_params_reject_values_outside_24_bits():
    with pytest.raises(AtomsparkError, match="24-bit"):
        VNFixedParams(8, 2048, 12, np.array([2**23]), np.array([0]))
    with pytest.raises(AtomsparkError, match="eta_mant"):
        VNFixedParams(8, 4096, 12, np.array([1]), np.array([0]))
    with pytest.raises(AtomsparkError, match="integer"):
        VNFixedParams(8, 2048, 12, np.array([1.5]), np.array([0]))
    with pytest.raises(AtomsparkError, match="thresh"):
        VNFixedParams(8, 2048, 12, np.array([1]), np.array([-1]))
    with pytest.raises(AtomsparkError, match="eta_shift"):
        VNFixedParams(8, 2048, 64, 0, 0)


@pytest.fixture(scope="module")
def vn_graph():
    model = VNModel.random(8, [(12, 4)], lam=0.1, seed=3)
    return compile_vn_model(model, np.random.default_rng(1).standard_normal(8))


def test_vn_quantization_error_shrinks_with_more_fraction_bits(vn_graph):
    coarse = vn_quantization_report(vn_graph, quantize_vn_graph(vn_graph, 5), 60)
    fine = vn_quantization_report(vn_graph, quantize_vn_graph(vn_graph, 12), 60)
    assert fine.code_max_abs_error < coarse.code_max_abs_error
    assert fine.active_set_agreement >= coarse.active_set_agreement
    assert fine.active_set_agreement == 1.0
    assert fine.weight_max_abs_error == pytest.approx(coarse.weight_max_abs_error)
    assert 0 < fine.weight_max_abs_error < 0.01  # 8-bit Gram mantissas, |G| <= 2


def test_fixed_vn_net_tracks_float_engine_codes(vn_graph):
    """The integer atoms' codes stay near the float engine's (in float units)."""
    fixed = Engine(quantize_vn_graph(vn_graph, 12))
    steps = 60
    fixed.run(steps)
    g_fixed = fixed.state["vn_layer0"]["g"] / 2.0**12
    engine = Engine(vn_graph)
    engine.run(steps, record=(("vn_layer0", "g"),))
    g_float = engine.traces[("vn_layer0", "g")][-1]
    assert np.count_nonzero(g_float) > 0
    assert np.abs(g_fixed - g_float).max() < 0.1
    assert np.array_equal(g_fixed != 0, g_float != 0)


def test_quantize_lif_scales_like_lava():
    p = LIFParams(du=0.25, dv=0.125, vth=2.0, bias=0.5)
    q = quantize_lif(p, scale=10.0)
    assert q.du == 1024 - 1 and q.dv == 512  # Lava adds 1 to du
    assert q.vth == 20
    assert int(q.bias_mant) << int(q.bias_exp) == 320  # 0.5 * 10 * 2**6
    with pytest.raises(AtomsparkError, match="12-bit"):
        quantize_lif(LIFParams(du=0.0, dv=0.1, vth=1.0), scale=1.0)  # du 0 -> -1


def test_small_lif_weights_get_a_negative_exponent_and_keep_eight_bits(rng):
    pops = [Population(n, 8, LIFParams(du=0.5, dv=0.25, vth=1.0)) for n in ("a", "b", "c")]
    big, small = rng.uniform(-0.5, 0.5, (8, 8)), rng.uniform(-0.01, 0.01, (8, 8))
    gq = quantize_lif_graph(Graph(pops, [Projection("a", "b", big), Projection("a", "c", small)]))
    scale = 254.0 / np.abs(big).max()
    p_small = gq.projections[1]
    assert gq.projections[0].weight_exp == 0 and p_small.weight_exp < 0
    approx = p_small.weights.toarray() * 2.0**p_small.weight_exp / scale
    assert np.abs(approx - small).max() <= 2.0**p_small.weight_exp / scale  # one even step
    assert np.abs(approx - small).max() < 0.01 * np.abs(small).max()
    Engine(gq).run(5)  # the engine accepts the shifted projection


def test_lif_graph_quantization_keeps_spike_counts_close(rng):
    a = Population("a", 10, LIFParams(du=0.5, dv=0.25, vth=1.0, bias=rng.uniform(0.1, 0.4, 10)))
    b = Population("b", 6, LIFParams(du=0.25, dv=0.5, vth=1.0))
    w = rng.uniform(0.0, 0.5, (6, 10))
    g = Graph([a, b], [Projection("a", "b", w)])
    gq = quantize_lif_graph(g)
    steps = 100
    pf, pq = Engine(g).run(steps), Engine(gq).run(steps)
    for i in range(2):
        total_f, total_q = pf.unit_events[i], pq.unit_events[i]
        assert total_f.sum() > 20
        assert np.abs(total_f - total_q).max() <= 0.1 * total_f.max() + 1

"""Lava export run on Lava's Loihi2SimCfg: bit-exact in fixed point, within tolerance in float.

Run with .venv-lava/bin/python -m pytest tests/test_lava_export.py (Python 3.10).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("lava")
pytestmark = pytest.mark.lava

from atomspark.mapping.lava.bundle import from_graph  # noqa: E402
from atomspark.mapping.lava.export import (  # noqa: E402
    FLOAT_TOLERANCE,
    export_lava,
    run_lava,
    verify_lava,
)
from atomspark.mapping.quantize import quantize_vn_graph  # noqa: E402
from atomspark.networks.vn.model import VNModel  # noqa: E402
from atomspark.networks.vn_compile import compile_vn_model  # noqa: E402
from atomspark.sim.engine import Engine  # noqa: E402
from atomspark.sim.graph import Graph, Population, Projection  # noqa: E402
from atomspark.sim.units.lif import LIFFixedParams  # noqa: E402
from atomspark.sim.units.vn_fixed import VNFixedParams  # noqa: E402

STEPS = 30


def lif_fixed_graph(rng) -> Graph:
    a = Population(
        "a",
        6,
        LIFFixedParams(du=300, dv=500, vth=40, bias_mant=rng.integers(0, 800, 6), bias_exp=2),
    )
    b = Population("b", 5, LIFFixedParams(du=1000, dv=200, vth=60))
    return Graph(
        [a, b],
        [
            Projection("a", "b", rng.integers(-60, 60, (5, 6)) * 2, weight_exp=3),
            Projection("b", "b", rng.integers(-20, 20, (5, 5)) * 2, weight_exp=1),
        ],
    )


@pytest.fixture(scope="module")
def vn_graph():
    model = VNModel.random(8, [(10, 6), (6, 3)], lam=0.05, seed=4)
    return compile_vn_model(model, np.random.default_rng(2).standard_normal(8))


def test_fixed_point_lif_network_is_bit_exact_with_engine(rng):
    g = lif_fixed_graph(rng)
    report = verify_lava(g, STEPS)
    assert report.tolerance == 0.0 and report.passed
    assert report.lava_vs_reference == {"a": 0.0, "b": 0.0}
    assert report.lava_vs_engine == {"a": 0.0, "b": 0.0}
    assert min(report.lava_events.values()) > 10  # the comparison saw real activity
    assert report.lava_events["a"] == int(Engine(g).run(STEPS).unit_events[0].sum())


def test_vn_settle_fixed_point_bit_exact_and_float_within_tolerance(vn_graph):
    fixed_graph = quantize_vn_graph(vn_graph, 12)
    fixed = verify_lava(fixed_graph, STEPS)
    assert fixed.arithmetic == "fixed" and fixed.tolerance == 0.0 and fixed.passed
    assert fixed.lava_vs_engine == {"vn_layer0": 0.0, "vn_layer1": 0.0}  # engine == Lava
    assert all(err == 0.0 for err in fixed.lava_vs_reference.values())
    assert min(fixed.lava_events.values()) > 10
    prof = Engine(fixed_graph).run(STEPS)
    assert fixed.lava_events == {
        name: int(prof.unit_events[i].sum()) for i, name in enumerate(fixed_graph.index)
    }

    floating = verify_lava(vn_graph, STEPS)
    assert floating.arithmetic == "float" and floating.passed
    assert set(floating.lava_vs_engine) == {"vn_layer0", "vn_layer1"}
    assert max(floating.lava_vs_engine.values()) <= FLOAT_TOLERANCE


def test_lava_vn_codes_settle_to_engine_codes(vn_graph):
    """Codes read back from Lava (g_init + sum of change events) equal the engine's codes."""
    outputs = run_lava(from_graph(vn_graph), STEPS)
    engine = Engine(vn_graph)
    engine.run(STEPS, record=(("vn_layer0", "g"),))
    g_lava = np.cumsum(outputs["vn_layer0"], axis=0)
    g_engine = engine.traces[("vn_layer0", "g")]
    assert np.count_nonzero(g_engine[-1]) > 0
    np.testing.assert_allclose(g_lava, g_engine, atol=FLOAT_TOLERANCE, rtol=0)


def test_run_bundle_entry_point(tmp_path, rng):
    out = export_lava(lif_fixed_graph(rng), tmp_path / "bundle")
    proc = subprocess.run(
        [sys.executable, str(out / "run_bundle.py"), "--steps", "20", "--verify"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "a:" in proc.stdout and "max |error| {'a': 0.0, 'b': 0.0}" in proc.stdout
    assert "engine: max |error| {'a': 0.0, 'b': 0.0}" in proc.stdout


def test_fixed_vn_overflows_bit_exact_with_engine():
    """A saturating source drives two 8-bit connections whose int32 outputs wrap and whose sum
    wraps the target's 24-bit c: Lava (its int32 ports, the VNAtom model) equals the engine."""
    rng = np.random.default_rng(3)
    src = Population(
        "s", 4, VNFixedParams(0, 4095, 0, drive=rng.integers(-(2**21), 2**21, 4), thresh=5)
    )
    tgt = Population(
        "t", 3, VNFixedParams(4, 3000, 12, drive=rng.integers(-9000, 9000, 3), thresh=7, n_inputs=2)
    )
    graph = Graph(
        [src, tgt],
        [
            Projection("s", "t", rng.integers(-127, 128, (3, 4)) * 2, weight_exp=3, channel=0),
            Projection("t", "t", np.array([[200, 0, 0], [0, 180, 0], [0, 0, 90]]), channel=1),
        ],
    )
    report = verify_lava(graph, 12)
    assert report.passed and report.lava_vs_engine == {"s": 0.0, "t": 0.0}
    assert report.engine_wraps > 0 and report.engine_clips > 0
    assert report.lava_events["t"] > 0

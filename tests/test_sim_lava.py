"""Step-for-step equality of the fixed-point LIF engine with Lava's bit-accurate LIF + Dense."""

from __future__ import annotations

import numpy as np
import pytest
from atomspark.sim import fixed_point as fx
from atomspark.sim.engine import Engine
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.units.lif import LIFFixedParams


@pytest.mark.lava
def test_engine_matches_lava_lif_dense_fixed_point_with_wraps_and_clips():
    pytest.importorskip("lava")
    from lava.magma.core.run_conditions import RunSteps
    from lava.magma.core.run_configs import Loihi2SimCfg
    from lava.proc.dense.process import Dense
    from lava.proc.lif.process import LIF
    from lava.proc.monitor.process import Monitor

    n, steps, w_exp = 10, 50, 6
    rng = np.random.default_rng(0)
    raw_w = rng.integers(-256, 256, (n, n))
    params = dict(du=200, dv=100, vth=3000, bias_mant=rng.integers(-1000, 4096, n), bias_exp=6)

    lif = LIF(shape=(n,), **params)
    dense = Dense(weights=raw_w, weight_exp=w_exp)
    lif.s_out.connect(dense.s_in)
    dense.a_out.connect(lif.a_in)
    monitors = {}
    for name in ("u", "v"):
        monitors[name] = Monitor()
        monitors[name].probe(getattr(lif, name), steps)
    monitors["s"] = Monitor()
    monitors["s"].probe(lif.s_out, steps)
    try:
        lif.run(condition=RunSteps(num_steps=steps), run_cfg=Loihi2SimCfg(select_tag="fixed_pt"))
        lava = {
            k: np.asarray(m.get_data()[lif.name][v]).reshape(steps, n)
            for (k, m), v in zip(monitors.items(), ("u", "v", "s_out"))
        }
    finally:
        lif.stop()

    w = fx.lava_dense_weights(raw_w)
    graph = Graph(
        [Population("lif", n, LIFFixedParams(**params))],
        [Projection("lif", "lif", w, weight_exp=w_exp)],
    )
    eng = Engine(graph)
    prof = eng.run(steps, record=(("lif", "u"), ("lif", "v")))
    assert np.array_equal(eng.traces[("lif", "u")], lava["u"])
    assert np.array_equal(eng.traces[("lif", "v")], lava["v"])
    spikes = np.array([prof.events[t, 0] for t in range(steps)])
    assert np.array_equal(spikes, (lava["s"] != 0).sum(axis=1))
    assert prof.wraps.sum() > 0 and prof.clips.sum() > 0

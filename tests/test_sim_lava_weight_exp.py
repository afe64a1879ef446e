"""Negative weight exponents (Lava's right shift of each step's summed input) against Lava's
bit-accurate Dense, for mixed, excitatory and inhibitory weights; plus the engine-only checks."""

from __future__ import annotations

import numpy as np
import pytest
from atomspark.sim import fixed_point as fx
from atomspark.sim.core import AtomsparkError
from atomspark.sim.engine import Engine
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.units.lif import LIFFixedParams

N_SRC, N_TGT, STEPS = 12, 6, 40
# (name, weight range, weight_exp): one target per sign mode; "exc" also gets a second, mixed
# projection, so two right-shifted sums meet in one input (each must be shifted on its own).
TARGETS = (("mix", (-256, 256), -3), ("exc", (0, 256), -2), ("inh", (-255, 1), -4))


def _raw_weights() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    w = {name: rng.integers(lo, hi, (N_TGT, N_SRC)) for name, (lo, hi), _ in TARGETS}
    w["exc2"] = rng.integers(-256, 256, (N_TGT, N_SRC))
    return w


SRC = dict(du=300, dv=200, vth=900, bias_mant=np.arange(N_SRC) * 40 + 300, bias_exp=6)
TGT = dict(du=500, dv=300, vth=400, bias_mant=0, bias_exp=0)


def _engine_traces(raw: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    pops = [Population("src", N_SRC, LIFFixedParams(**SRC))]
    pops += [Population(name, N_TGT, LIFFixedParams(**TGT)) for name, _, _ in TARGETS]
    projs = [
        Projection("src", name, fx.lava_dense_weights(raw[name]), weight_exp=exp)
        for name, _, exp in TARGETS
    ]
    projs.append(Projection("src", "exc", fx.lava_dense_weights(raw["exc2"]), weight_exp=-1))
    eng = Engine(Graph(pops, projs))
    eng.run(STEPS, record=tuple((name, var) for name, _, _ in TARGETS for var in ("u", "v")))
    return {f"{name}.{var}": eng.traces[(name, var)] for (name, var) in eng.traces}


@pytest.mark.lava
def test_negative_weight_exp_matches_lava_dense_for_every_sign_mode():
    pytest.importorskip("lava")
    from lava.magma.core.run_conditions import RunSteps
    from lava.magma.core.run_configs import Loihi2SimCfg
    from lava.proc.dense.process import Dense
    from lava.proc.lif.process import LIF
    from lava.proc.monitor.process import Monitor

    raw = _raw_weights()
    src = LIF(shape=(N_SRC,), **SRC)
    tgts = {name: LIF(shape=(N_TGT,), **TGT) for name, _, _ in TARGETS}
    for name, _, exp in TARGETS:
        dense = Dense(weights=raw[name], weight_exp=exp)
        src.s_out.connect(dense.s_in)
        dense.a_out.connect(tgts[name].a_in)
    extra = Dense(weights=raw["exc2"], weight_exp=-1)
    src.s_out.connect(extra.s_in)
    extra.a_out.connect(tgts["exc"].a_in)
    monitors = {}
    for name, proc in tgts.items():
        for var in ("u", "v"):
            monitors[(name, var)] = Monitor()
            monitors[(name, var)].probe(getattr(proc, var), STEPS)
    try:
        src.run(condition=RunSteps(num_steps=STEPS), run_cfg=Loihi2SimCfg(select_tag="fixed_pt"))
        lava = {
            f"{name}.{var}": np.asarray(m.get_data()[tgts[name].name][var]).reshape(STEPS, N_TGT)
            for (name, var), m in monitors.items()
        }
    finally:
        src.stop()

    ours = _engine_traces(raw)
    for key, trace in lava.items():
        assert np.array_equal(ours[key], trace), key
    for name, _, _ in TARGETS:  # every sign mode carried nonzero, shifted input
        assert np.any(lava[f"{name}.u"] != 0), name


def test_right_shift_floors_each_projections_summed_input():
    """Two sources fire together into one unit: (3 + 4) >> 2 = 1 per projection, not
    3 >> 2 + 4 >> 2 = 1 + 1 nor (3 + 4 + ...) summed across projections; negatives floor."""
    src = LIFFixedParams(du=0, dv=0, vth=10, bias_mant=1000, bias_exp=0)
    tgt = LIFFixedParams(du=4095, dv=4095, vth=100000, bias_mant=0, bias_exp=0)
    pops = [Population("s", 2, src), Population("t", 2, tgt)]
    w1 = np.array([[3, 4], [-3, -4]])  # sums 7 and -7: >> 2 gives 1 and -2
    w2 = np.array([[5, 0], [0, 0]])  # 5 >> 1 = 2
    eng = Engine(Graph(pops, [Projection("s", "t", w1, weight_exp=-2),
                              Projection("s", "t", w2, weight_exp=-1)]))  # fmt: skip
    eng.run(3, record=(("t", "u"),))
    # u decays fully each step (du + 1 = 4096), so u is the shifted input << 6 of that step
    assert eng.traces[("t", "u")][2].tolist() == [(1 + 2) << 6, -2 << 6]


def test_negative_weight_exp_needs_uniform_delays_and_a_fixed_point_target():
    w = np.ones((2, 2), np.int64)
    with pytest.raises(AtomsparkError, match="one delay for all synapses"):
        Projection("a", "b", w, delays=np.array([[1, 2], [1, 1]]), weight_exp=-1)
    from atomspark.sim.units.lif import LIFParams

    pops = [
        Population("a", 2, LIFParams(0.1, 0.1, 1.0)),
        Population("b", 2, LIFParams(0.1, 0.1, 1.0)),
    ]
    with pytest.raises(AtomsparkError, match="only for fixed-point"):
        Graph(pops, [Projection("a", "b", w, weight_exp=-1)])

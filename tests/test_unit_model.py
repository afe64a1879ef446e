"""The unit-model interface: a model declared in one module runs on the engine, and every part
that dispatches by model (graph checks, engine, quantisation, Lava and NIR export) rejects a
parameter class that is not registered, with one line naming it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from atomspark.mapping.lava.bundle import from_graph
from atomspark.mapping.nir_export import to_nir
from atomspark.mapping.quantize import quantize_lif_graph, quantize_vn_graph
from atomspark.sim.core import AtomsparkError
from atomspark.sim.engine import Engine
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.unit_model import UnitModel, model_of, register, registered_models
from atomspark.sim.units.lif import LIFParams
from relay_example.model import RELAY, RelayParams


def _relay_chain(w: np.ndarray) -> Graph:
    return Graph(
        [
            Population("a", w.shape[1], RelayParams(2.0)),
            Population("b", w.shape[0], RelayParams(0.5)),
        ],
        [Projection("a", "b", w)],
    )


def test_a_model_in_one_module_runs_on_the_engine():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((5, 4))
    x = rng.standard_normal((6, 4)) * (rng.random((6, 4)) < 0.6)
    eng = Engine(_relay_chain(w))
    prof = eng.run(6, inputs={"a": x}, record=(("a", "last"), ("b", "last")))
    a, b = eng.traces[("a", "last")], eng.traces[("b", "last")]
    touched = np.abs(x) > 0
    assert np.array_equal(a[touched], 2.0 * x[touched])  # a relays at the step of its input
    expect_b = 0.5 * (w @ (2.0 * x[:-1]).T).T  # b one step later (delay 1)
    got_b = np.where(np.abs(expect_b) > 0, b[1:], 0.0)
    np.testing.assert_allclose(got_b, expect_b, rtol=1e-12, atol=1e-12)
    assert prof.events[:, 0].tolist() == np.count_nonzero(x, axis=1).tolist()


def test_the_builtin_models_are_registered_by_name():
    names = {m.name for m in registered_models()}
    assert {"lif", "lif_fixed", "vn", "vn_fixed", "rsgn", RELAY.name} <= names
    assert model_of(LIFParams(du=0.1, dv=0.1, vth=1.0)).name == "lif"


class Unregistered:
    is_fixed_point = False
    n_channels = 1
    dtype = "float64"
    payload_bits = 0

    def check_size(self, name, size):
        pass

    def init_state(self, size):
        return {}


def test_an_unknown_model_is_an_error_in_the_graph():
    with pytest.raises(AtomsparkError, match="Unregistered: not a registered unit model"):
        Population("x", 3, Unregistered())


@dataclass(frozen=True)
class MuteParams(RelayParams):
    """A relay registered under another name and given no exports."""


MUTE = register(UnitModel("mute_example", MuteParams, RELAY.update, RELAY.kernel_args,
                          RELAY.initially_pending, ("last",), graded=True))  # fmt: skip


def test_models_without_an_export_say_so():
    graph = Graph(
        [Population("a", 2, MuteParams(2.0)), Population("b", 2, MuteParams(0.5))],
        [Projection("a", "b", np.ones((2, 2)))],
    )
    with pytest.raises(AtomsparkError, match="'mute_example' .* has no Lava export"):
        from_graph(graph)
    with pytest.raises(AtomsparkError, match="float LIF populations only"):
        quantize_lif_graph(graph)
    with pytest.raises(AtomsparkError, match="float VN populations only"):
        quantize_vn_graph(graph)
    pytest.importorskip("nir")
    _, unsupported = to_nir(graph)
    assert any("MuteParams has no NIR primitive" in u for u in unsupported)


def test_registering_a_second_model_for_the_same_parameters_is_refused():
    clash = UnitModel("relay_clash", RelayParams, RELAY.update, RELAY.kernel_args,
                      RELAY.initially_pending, ("last",), True)  # fmt: skip
    with pytest.raises(AtomsparkError, match="already the parameters of 'relay_example'"):
        register(clash)
    assert register(RELAY) is RELAY  # registering the same declaration again is harmless


@pytest.mark.lava
def test_the_worked_example_exports_to_lava_and_verifies(tmp_path):
    """docs/architecture.md's relay, with its Lava module, runs on Lava exactly as on the engine
    and the reference, and travels through a bundle: a model on par with the built-ins."""
    pytest.importorskip("lava")
    import relay_example.lava_side  # noqa: F401  (registers the relay's LavaUnit)
    from atomspark.mapping.lava.export import export_lava, load_bundle, verify_lava

    rng = np.random.default_rng(3)
    graph = Graph(
        [
            Population("drive", 4, LIFParams(du=0.2, dv=0.1, vth=1.0, bias=[0.3, 0.5, 0.7, 0.9])),
            Population("relay", 3, RelayParams(1.5)),
        ],
        [Projection("drive", "relay", rng.standard_normal((3, 4)))],
    )
    report = verify_lava(graph, 16)
    assert report.passed, report
    assert report.lava_events["relay"] > 0
    net = load_bundle(export_lava(graph, tmp_path / "bundle"))
    assert [p.model for p in net.populations] == ["lif", "relay"]
    assert verify_lava(tmp_path / "bundle", 16).passed

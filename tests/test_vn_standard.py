"""A VN settle on standard Lava processes only (mapping/vn_standard.py): the float form follows
the VN engine's iterates, the fixed form is deployable and bit-exact on Lava, features without
a standard form are refused in one line."""

from __future__ import annotations

import json

import numpy as np
import pytest
from atomspark.mapping.deployment import deployment_report
from atomspark.mapping.vn_standard import codes, standard_code_error, vn_standard_graph
from atomspark.networks.vn.model import VNModel
from atomspark.networks.vn_compile import compile_vn, compile_vn_model
from atomspark.scenarios.cli.main import main
from atomspark.sim.core import AtomsparkError
from atomspark.sim.engine import Engine


def _vn_graph(layers, topk=None, masked=False):
    model = VNModel.random(12, layers, lam=0.05, seed=0)
    x = np.random.default_rng(1).normal(size=12)
    mask = (np.arange(12) % 3 != 0).astype(float) if masked else None
    if topk is not None:
        return compile_vn([ly.S for ly in model.layers], [ly.U for ly in model.layers], 0.05, x,
                          topk=topk)  # fmt: skip
    return compile_vn_model(model, x, mask=mask)


@pytest.mark.parametrize("layers, masked", [([(16, 4)], True), ([(16, 4), (8, 3)], False)])
def test_float_standard_form_follows_the_vn_engine(layers, masked):
    graph = _vn_graph(layers, masked=masked)
    std = vn_standard_graph(graph)
    assert [p.params.__class__.__name__ for p in std.populations] == ["SigmaDeltaParams"] * (
        2 * len(layers)
    )
    vn, sd = Engine(graph), Engine(std)
    vn.run(150, record=tuple((p.name, "g") for p in graph.populations))
    sd.run(150, record=tuple((p.name, "act") for p in std.populations))
    for p in graph.populations:
        ref = vn.traces[(p.name, "g")]
        assert np.abs(ref[-1]).max() > 0.1  # codes settle to something
        assert np.abs(codes(sd.traces, std, p.name) - ref).max() < 1e-12  # every step


def test_fixed_standard_form_is_deployable_and_near_float():
    graph = _vn_graph([(16, 4), (8, 3)])
    std = vn_standard_graph(graph, frac_bits=12)
    rep = deployment_report(std, "loihi2")
    assert rep.fits and rep.deployable_on_chip
    assert {r["lava_process"] for r in rep.processes} == {"SigmaDelta", "Sparse"}
    assert rep.network["compartments"] == 2 * sum(p.size for p in graph.populations)
    custom = deployment_report(graph, "loihi2")
    assert not custom.deployable_on_chip  # float VNAtom: custom neuron code
    err = standard_code_error(graph, std, 200, frac_bits=12)
    assert 0 < err < 1.0  # 8-bit weights of I - eta G (measured 0.85 on this model)


def test_top_k_and_non_vn_models_are_refused_in_one_line():
    with pytest.raises(AtomsparkError, match="topk: top-k needs a population-wide sort") as err:
        vn_standard_graph(_vn_graph([(16, 4)], topk=3))
    assert "\n" not in str(err.value)
    with pytest.raises(AtomsparkError, match="has no standard-process form"):
        vn_standard_graph(vn_standard_graph(_vn_graph([(16, 4)])))


def test_cli_standard_export_writes_a_deployable_bundle(tmp_path, capsys):
    path = tmp_path / "vn.npz"
    VNModel.random(12, [(16, 4), (8, 3)], lam=0.05, seed=0).save(path)
    out = tmp_path / "bundle"
    args = ["export", str(path), "--to", "lava", "--standard", "--fixed", "--report", "--out"]
    assert main(args + [str(out), "--steps", "50"]) == 0
    hw = json.loads((out / "metadata.json").read_text())["hardware_run"]
    assert hw["deployable_on_chip"] and hw["host_processes"] == []
    assert {r["lava_process"] for r in hw["processes"]} == {"SigmaDelta", "Sparse"}
    assert json.loads((out / "deployment.json").read_text())["deployable_on_chip"]
    assert "deployable on chip: yes" in capsys.readouterr().out
    assert (
        main(["export", str(path), "--to", "nir", "--standard", "--out", str(tmp_path / "n")]) == 2
    )
    assert not (tmp_path / "n").exists()


@pytest.mark.lava
@pytest.mark.parametrize("frac_bits", [12, None])
def test_standard_vn_bundle_verifies_on_lava(tmp_path, frac_bits):
    pytest.importorskip("lava")
    from atomspark.mapping.lava.export import export_lava, verify_lava

    std = vn_standard_graph(_vn_graph([(16, 4), (8, 3)]), frac_bits=frac_bits)
    report = verify_lava(export_lava(std, tmp_path / "b"), 40)
    assert report.passed, report  # fixed: bit-exact against the engine and the reference
    assert sum(report.lava_events.values()) > 50

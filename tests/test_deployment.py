"""Deployment report (`export --to lava --report`): per-core use against the chip's limits, what
does not fit and why, and the hardware run configuration written into the bundle."""

from __future__ import annotations

import json

import numpy as np
from atomspark.mapping.deployment import deployment_report
from atomspark.mapping.quantize import quantize_vn_graph
from atomspark.networks import rsgn
from atomspark.networks.rsgn_compile import compile_rsgn_tokens
from atomspark.networks.vn import VNModel
from atomspark.networks.vn_compile import compile_vn_model
from atomspark.scenarios.runs.export import export_model
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.units.lif import LIFFixedParams, LIFParams


def test_fixed_point_vn_fits_one_core_with_exact_counts():
    model = VNModel.random(16, [(24, 8), (12, 4)], lam=[0.1, 0.1], seed=0)
    graph = quantize_vn_graph(compile_vn_model(model, np.ones(16)))
    rep = deployment_report(graph, "loihi2")
    assert rep.fits and rep.problems == [] and len(rep.cores) == 1
    (core,) = rep.cores
    assert core.compartments == 36
    assert core.synapses == 1280  # the 36 x 36 Gram blocks less 16 entries quantised to 0
    assert core.fan_in_axons == core.fan_out_axons == 36  # every atom reaches the core once
    assert rep.peak_use["compartments"] == 36 / 8192
    assert any("36/8192" in line for line in rep.lines())


def test_synapse_memory_is_counted_per_stored_weight():
    """A 5 -> 3 fixed-point LIF projection with two zero weights: 13 synapses, 13 B on Loihi 2
    (8-bit weights, 1 B each in the hardware description)."""
    w = np.arange(1, 16, dtype=float).reshape(3, 5)
    w[0, 1] = w[2, 4] = 0.0
    lif = LIFFixedParams(du=100, dv=200, vth=50)
    graph = Graph([Population("a", 5, lif), Population("b", 3, lif)], [Projection("a", "b", w)])
    (core,) = deployment_report(graph, "loihi2").cores
    assert (core.synapses, core.synaptic_memory_bytes) == (13, 13.0)


def test_rsgn_node_layout_breaks_the_axon_limit_and_the_split_layout_fits():
    cfg = rsgn.RSGNConfig(mode="published", n_nodes=96, d_hidden=64, n_classes=4, n_steps=2)
    params = rsgn.init_params(cfg, seed=0)
    tokens = np.random.default_rng(0).standard_normal((8, cfg.d_in))
    graph = compile_rsgn_tokens(params, cfg, tokens)
    whole = deployment_report(graph, "loihi2", positions=params.positions, layout="node")
    assert not whole.fits and whole.cores == []
    # one node's 64 compartments receive 64 x 95 distinct sources: above 4096 input axons
    assert any("fan-in 6080 exceeds 4096" in p for p in whole.problems)
    rep = deployment_report(graph, "loihi2", positions=params.positions)
    assert rep.fits and rep.layout == "split" and "W_h" in rep.took
    assert max(c.fan_in_axons for c in rep.cores) <= 4096
    assert max(c.synapses for c in rep.cores) <= rep.limits["synapses"]
    assert any("float populations" in n for n in rep.notes)  # and it is not fixed point


def test_a_unit_beyond_any_core_is_named_without_a_traceback():
    n = 4200  # one unit receives from 4200 sources: more than a core's 4096 input axons
    pops = [
        Population("src", n, LIFParams(0.1, 0.1, 1.0)),
        Population("dst", 1, LIFParams(0.1, 0.1, 1.0)),
    ]
    graph = Graph(pops, [Projection("src", "dst", np.ones((1, n)))])
    rep = deployment_report(graph, "loihi2")
    assert not rep.fits and rep.cores == []
    assert rep.problems[0].startswith("placement:")
    assert any("receives from 4200 sources" in p for p in rep.problems)


def test_export_report_and_bundle_hardware_run_config(tmp_path):
    path = tmp_path / "vn.npz"
    VNModel.random(12, [(16, 4)], lam=0.2, seed=0).save(path)
    logged = []
    out = tmp_path / "bundle"
    result = export_model(path, "lava", out, fixed=True, report=True, log=logged.append)
    assert result["deployment"]["fits"] and (out / "deployment.json").is_file()
    rep = json.loads((out / "deployment.json").read_text())
    assert rep["cores"][0]["compartments"] == 16 and rep["limits"]["fan_in_axons"] == 4096
    assert any(line.startswith("[deploy] loihi2: fits") for line in logged)
    hw = json.loads((out / "metadata.json").read_text())["hardware_run"]
    assert hw["run_config"].endswith("Loihi2HwCfg") and hw["select_tag"] == "fixed_pt"
    assert hw["tested"] is False and "untested" in hw["note"]
    assert hw["host_processes"] == ["VNAtom"]  # a Python-only ProcessModel: not on the chip
    assert "--loihi2" in (out / "run_bundle.py").read_text()

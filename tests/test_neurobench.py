"""NeuroBench metrics from engine runs: definitions on a hand-built network, and agreement with
NeuroBench itself on the torch modules of lava-dl networks (committed figures from
benchmarks/neurobench_crosscheck.py; rerun live where neurobench is installed)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from atomspark.sim.engine import Engine
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.neurobench import neurobench_metrics
from atomspark.sim.units.lif import LIFFixedParams

ROOT = Path(__file__).resolve().parents[1]
CROSS = ROOT / "docs" / "results" / "neurobench" / "crosscheck.json"


def test_definitions_on_a_hand_built_network():
    # 3 sources firing on fixed steps into 2 targets; one zero weight that NeuroBench skips
    src = LIFFixedParams(du=4095, dv=4095, vth=0)
    tgt = LIFFixedParams(du=4095, dv=0, vth=2**17 - 1)  # never fires
    w = np.array([[5, 0, 7], [3, 2, 0]])
    import scipy.sparse as sp

    rows, cols = np.indices(w.shape)
    full = sp.csr_matrix((w.ravel(), (rows.ravel(), cols.ravel())), shape=w.shape)
    g = Graph([Population("s", 3, src), Population("t", 2, tgt)], [Projection("s", "t", full)])
    drive = np.zeros((4, 3))
    drive[0, 0] = drive[1, 1] = drive[2, 0] = drive[3, 2] = 1  # unit 0 twice, 1 and 2 once
    prof = Engine(g).run(4, inputs={"s": drive})
    m = neurobench_metrics(g, prof, n_samples=2)
    # nonzero fan-out: unit 0 -> 2, unit 1 -> 1, unit 2 -> 1; events 2, 1, 1
    assert m["synaptic_operations"]["effective_acs"] == (2 * 2 + 1 + 1) / 2
    assert m["synaptic_operations"]["effective_macs"] == 0
    assert m["synaptic_operations"]["dense"] == 6 * 4 / 2  # every connection every step
    assert m["activation_sparsity"] == pytest.approx(1 - 4 / (5 * 4))
    assert m["connection_sparsity"] == pytest.approx(2 / 6)
    assert m["parameter_count"] == 6 and m["footprint_bytes"] > 0
    only_s = neurobench_metrics(g, prof, 2, populations=["s"])
    assert only_s["activation_sparsity"] == pytest.approx(1 - 4 / 12)


def _engine(name: str) -> dict:
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import neurobench_crosscheck as cc
    finally:
        sys.path.pop(0)
    return cc.engine_side(name)


def _agree(engine: dict, nb: dict, weights_shared: bool) -> None:
    assert engine["activation_sparsity"] == pytest.approx(nb["ActivationSparsity"], abs=1e-12)
    ops, nbo = engine["synaptic_operations"], nb["SynapticOperations"]
    assert ops["effective_acs"] == nbo["Effective_ACs"]
    assert ops["effective_macs"] == nbo["Effective_MACs"]
    assert ops["dense"] == nbo["Dense"]
    assert engine["spikes_per_layer"] == nb["spikes_per_layer"]
    if not weights_shared:  # dense layers only: one weight, one synapse
        assert round(engine["connection_sparsity"], 4) == nb["ConnectionSparsity"]
        assert engine["parameter_count"] == nb["ParameterCount"]


@pytest.mark.parametrize("name", ["mnist", pytest.param("pilotnet_snn", marks=pytest.mark.slow)])
def test_engine_agrees_with_committed_neurobench_figures(name):
    pytest.importorskip("h5py")
    case = json.loads(CROSS.read_text())["cases"][name]
    engine = _engine(name)
    assert engine["synaptic_operations"] == case["engine"]["synaptic_operations"]
    assert engine["spikes_per_layer"] == case["engine"]["spikes_per_layer"]
    _agree(engine, case["neurobench"], weights_shared=name != "mnist")


@pytest.mark.torch
def test_torch_modules_spike_like_the_engine():
    pytest.importorskip("snntorch")
    pytest.importorskip("h5py")
    import sys

    import torch

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import neurobench_crosscheck as cc
    finally:
        sys.path.pop(0)
    from atomspark.networks.torch_path.netx_torch import NetxTorch

    net, ng, inputs, steps = cc.case_inputs("mnist")
    model = NetxTorch(net)
    data = cc.torch_data(ng, inputs, steps, net.layers[0].shape)
    spikes = np.zeros(len(model.neurons), np.int64)
    hooks = [n.register_forward_hook(lambda m, i, o, k=k: spikes.__setitem__(
        k, spikes[k] + int(o[0].sum()))) for k, n in enumerate(model.neurons)]  # fmt: skip
    with torch.no_grad():
        for sample in data:
            model.reset()
            for t in range(steps):
                model(sample[t][None])
    for h in hooks:
        h.remove()
    assert spikes.tolist() == cc.engine_side("mnist")["spikes_per_layer"]
    assert spikes.sum() > 0


@pytest.mark.torch
def test_neurobench_live_when_installed():
    pytest.importorskip("neurobench")
    pytest.importorskip("h5py")
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import neurobench_crosscheck as cc
    finally:
        sys.path.pop(0)
    _agree(cc.engine_side("mnist"), cc.neurobench_side("mnist"), weights_shared=False)


def test_doc_table_is_the_committed_crosscheck():
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import neurobench_crosscheck as cc
    finally:
        sys.path.pop(0)
    doc = (ROOT / "docs" / "neurobench.md").read_text(encoding="utf-8")
    block = doc.split("<!-- neurobench:begin -->\n")[1].split("\n<!-- neurobench:end")[0]
    assert block + "\n" == cc.render(json.loads(CROSS.read_text())), (
        "docs/neurobench.md is stale: rerun benchmarks/neurobench_crosscheck.py --render"
    )

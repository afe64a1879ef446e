"""An imported NIR graph exported to Lava: its closed graph (inputs and biases as spike sources)
against the import's own run, the fixed-point form and its quantisation report, the command and
its refusals. The Lava runs (tests/test_nir_lava_run.py, -m lava) check the bundles on Lava."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from atomspark.mapping.lava.bundle import reference_run
from atomspark.mapping.lava.export import load_bundle, process_table
from atomspark.mapping.nir_lava import nir_lava, producer_clock, quantization_report
from atomspark.networks.nir_closed import closed_graph
from atomspark.networks.nir_file import read_nir
from atomspark.networks.nir_graph import convention, nir_graph
from atomspark.networks.nir_run import run_nir
from atomspark.scenarios.cli.main import main
from atomspark.sim.core import AtomsparkError
from atomspark.sim.run_folder import read_marker

pytest.importorskip("h5py")
nir = pytest.importorskip("nir")

DATA = Path(__file__).parent / "data" / "nir"
CASES = {
    "snntorch_recurrent": "snntorch",
    "snntorch_conv": "snntorch",
    "norse_cells": "norse",
    "sinabs_conv": "sinabs",
}


def closed_case(name: str):
    """The recorded case's closed graph on its recorded input, and the producer's reference."""
    ref = dict(np.load(DATA / f"{name}.npz"))
    ng = nir_graph(read_nir(DATA / f"{name}.nir"), convention(CASES[name]))
    (inp,) = ng.inputs
    return closed_graph(ng, {inp: ref["input"]}, len(ref["input"])), ref


@pytest.mark.parametrize("name", sorted(CASES))
def test_closed_graph_runs_as_the_import(name):
    """Biases as a spike source into the same current: the same spikes as the import's run (and
    so the producer's), every NIR neuron node."""
    closed, ref = closed_case(name)
    rasters = closed.producer_clock(closed.run())
    run = run_nir(closed.nir, {next(iter(closed.nir.inputs)): ref["input"]}, closed.steps)
    for node, r in rasters.items():
        np.testing.assert_array_equal(r, run.spikes[node], err_msg=node)
        if f"s:{node}" in ref:
            np.testing.assert_array_equal(r, ref[f"s:{node}"], err_msg=node)
    assert closed.sources["drives"].shape[1] == len(closed.nir.drives) > 0


@pytest.mark.parametrize("name", sorted(CASES))
def test_float_bundle_reference_equals_the_engine(name):
    """The NumPy reference of Lava's timing runs the float LavaNet as the engine runs it: sources
    stream their trains, spikes equal entry by entry (the Lava run checks the same on Lava)."""
    closed, ref = closed_case(name)
    nl = nir_lava(closed, fixed=False)
    engine = closed.run()
    reference = reference_run(nl.net, closed.total)
    for p in nl.net.populations:
        np.testing.assert_array_equal(reference[p.name] != 0, engine[p.name] != 0, err_msg=p.name)
    rows = {r["name"]: r for r in process_table(nl.net)}
    assert rows["input"]["lava_process"] == "RingBuffer" and rows["drives"]["standard_lava_process"]
    on_producer = producer_clock(nl, reference)
    for node, r in on_producer.items():
        if f"s:{node}" in ref:
            np.testing.assert_array_equal(r, ref[f"s:{node}"] != 0, err_msg=node)


@pytest.mark.parametrize("name", sorted(CASES))
def test_fixed_point_report_and_reference(name):
    """Fixed point: the engine's integer graph and the NumPy reference of Lava's bit-accurate
    LIF agree on every spike; the quantisation report counts what differs from float."""
    closed, _ = closed_case(name)
    nl = nir_lava(closed, fixed=True)
    engine = closed.run(nl.graph)
    reference = reference_run(nl.net, closed.total)
    for p in nl.net.populations:
        np.testing.assert_array_equal(reference[p.name] != 0, engine[p.name] != 0, err_msg=p.name)
    q = quantization_report(nl)
    rows = [r for r in q["nodes"].values() if r["fires"]]
    same = sum(r["entries"] - r["spikes_differ"] for r in rows) / sum(r["entries"] for r in rows)
    assert q["spike_agreement"] == same > 0.85  # recorded cases: 0.90 (Norse) to 0.995
    for row in q["nodes"].values():
        assert row["spikes_float"] > 0 or not row["fires"]
        assert row["spikes_differ"] >= abs(row["spikes_float"] - row["spikes_fixed"])
        if not row["fires"]:  # readouts keep Loihi's largest threshold: they never fire
            assert row["spikes_fixed"] == 0 and 0 < row["v_max_rel_error"] < 1
    # 8-bit mantissas at the projection's own exponent: within half a step of 2**-7 of max |w|
    assert all(w["max_rel_error"] <= 2.0**-7 for w in q["projections"].values())


def test_export_command_writes_a_streaming_bundle(tmp_path, capsys):
    out = tmp_path / "exp"
    assert main(["export", str(DATA / "snntorch_recurrent.nir"), "--to", "lava", "--producer",
                 "snntorch", "--input", "rate:0.3:2", "--steps", "30", "--fixed", "--report",
                 "--out", str(out)]) == 0  # fmt: skip
    res = json.loads((out / "export.json").read_text())
    assert res["kind"] == "nir" and res["arithmetic"] == "fixed"
    assert res["deployable_on_chip"] and res["deployment"]["deployable_on_chip"]
    procs = {r["lava_process"] for r in res["processes"]}
    assert procs == {"RingBuffer", "LIF", "Sparse"}
    assert 0 < res["quantization"]["spike_agreement"] <= 1
    net = load_bundle(out)  # the bundle reads back, its spike trains checked
    src = net.population("input")
    assert src.arrays["spikes"].shape == (30 + 2, 6) and src.arrays["spikes"].sum() > 0
    dep = json.loads((out / "deployment.json").read_text())
    assert any(r["lava_process"] == "RingBuffer" for r in dep["processes"])
    assert "deployable on chip: yes" in capsys.readouterr().out
    assert read_marker(out)["state"] == "finished"
    out2 = tmp_path / "float"
    assert main(["export", str(DATA / "sinabs_conv.nir"), "--to", "lava", "--producer", "sinabs",
                 "--steps", "10", "--out", str(out2)]) == 0  # fmt: skip
    assert not json.loads((out2 / "export.json").read_text())["deployable_on_chip"]


@pytest.mark.parametrize(
    "extra, match",
    [
        (["--to", "nir"], "--to nir: a NIR graph exports to lava"),
        (["--to", "lava", "--standard"], "--standard: not for a NIR graph"),
        (["--to", "lava", "--layout", "split"], "--layout split: not for a NIR graph"),
        (["--to", "lava", "--input", "uniform"], "use zero or rate:P"),
        (["--to", "lava", "--steps", "0"], "--steps"),
    ],
)
def test_export_refusals_leave_nothing(tmp_path, capsys, extra, match):
    out = tmp_path / "exp"
    args = ["export", str(DATA / "norse_cells.nir"), "--producer", "norse", "--out", str(out)]
    assert main(args + extra) == 2
    err = capsys.readouterr().err
    assert match in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_producer_flag_is_refused_for_a_model_file(tmp_path, capsys):
    assert main(["export", str(tmp_path / "m.npz"), "--to", "lava", "--producer", "norse",
                 "--out", str(tmp_path / "o")]) == 2  # fmt: skip
    assert "--producer: only for a NIR graph" in capsys.readouterr().err


def test_lava_refuses_a_reset_it_cannot_run(tmp_path):
    n = 3
    lif = nir.LIF(tau=np.full(n, 4.0), r=np.ones(n), v_leak=np.zeros(n), v_threshold=np.ones(n),
                  v_reset=np.full(n, 0.5))  # fmt: skip
    g = nir.NIRGraph(
        nodes={"input": nir.Input(input_type={"input": np.array([n])}),
               "w": nir.Linear(weight=np.eye(n) * 2), "x": lif,
               "output": nir.Output(output_type={"output": np.array([n])})},
        edges=[("input", "w"), ("w", "x"), ("x", "output")],
    )  # fmt: skip
    nir.write(str(tmp_path / "r.nir"), g)
    ng = nir_graph(read_nir(tmp_path / "r.nir"), convention("nir"))
    closed = closed_graph(ng, {"input": np.zeros((4, n))}, 4)
    with pytest.raises(AtomsparkError, match="NIR node 'x': v_reset = 0.5; Lava's LIF") as err:
        nir_lava(closed, fixed=False)
    assert "\n" not in str(err.value)


def test_lava_refuses_a_delay_longer_than_one_step(tmp_path):
    """A Delay node gives an engine delay Lava's Sparse cannot deliver: one line, nothing run."""
    n = 3
    lif = nir.LIF(tau=np.full(n, 4.0), r=np.ones(n), v_leak=np.zeros(n), v_threshold=np.ones(n))
    g = nir.NIRGraph(
        nodes={"input": nir.Input(input_type={"input": np.array([n])}),
               "w": nir.Linear(weight=np.eye(n) * 2), "d": nir.Delay(delay=np.full(n, 2.0)),
               "x": lif, "output": nir.Output(output_type={"output": np.array([n])})},
        edges=[("input", "w"), ("w", "d"), ("d", "x"), ("x", "output")],
    )  # fmt: skip
    nir.write(str(tmp_path / "d.nir"), g)
    ng = nir_graph(read_nir(tmp_path / "d.nir"), convention("nir"))
    closed = closed_graph(ng, {"input": np.zeros((4, n))}, 4)
    with pytest.raises(AtomsparkError, match="input->x delays: Lava's Sparse delivers") as err:
        nir_lava(closed, fixed=False)
    assert "\n" not in str(err.value)

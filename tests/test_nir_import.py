"""NIR import: the producers' own files replayed against the producers' own runs (committed
references from tests/nir_producer_cases.py), NIR's other nodes against a NumPy reading of NIR's
equations, nested subgraphs, the `import` command, and every refusal."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from atomspark.networks.nir_file import is_nir_file, read_nir
from atomspark.networks.nir_graph import convention, nir_graph
from atomspark.networks.nir_run import run_nir
from atomspark.scenarios.cli.main import main
from atomspark.sim.core import AtomsparkError
from atomspark.sim.run_folder import read_marker

h5py = pytest.importorskip("h5py")
nir = pytest.importorskip("nir")

DATA = Path(__file__).parent / "data" / "nir"
CASES = {
    "snntorch_recurrent": "snntorch",
    "snntorch_conv": "snntorch",
    "norse_cells": "norse",
    "sinabs_conv": "sinabs",
}
V_RTOL = 1e-6  # voltage, relative to the layer's largest |v|: the producers run in float32


def compare(ref: dict, ng, run) -> dict:
    """Spikes equal step by step; each voltage within V_RTOL of its layer's scale. Returns the
    worst relative voltage difference and the spike count per node."""
    worst, spikes = {}, {}
    for key in ref:
        if key == "input":
            continue
        kind, node = key.split(":")
        if kind == "s":
            np.testing.assert_array_equal(run.spikes[node], ref[key], err_msg=node)
            spikes[node] = int(ref[key].sum())
        else:
            scale = max(1.0, float(np.abs(ref[key]).max()))
            diff = float(np.abs(run.v[node] - ref[key]).max()) / scale
            assert diff <= V_RTOL, (node, diff)
            worst[node] = diff
    return {"v_rel": worst, "spikes": spikes}


def replay(name: str, folder: Path = DATA) -> dict:
    ref = dict(np.load(folder / f"{name}.npz"))
    ng = nir_graph(read_nir(folder / f"{name}.nir"), convention(CASES[name]))
    (inp,) = ng.inputs
    run = run_nir(ng, {inp: ref["input"]}, len(ref["input"]))
    return compare(ref, ng, run)


@pytest.mark.parametrize("name", sorted(CASES))
def test_producer_file_replays_the_producers_run(name):
    out = replay(name)
    assert sum(out["spikes"].values()) > 50  # not a silent network: every case spikes
    assert all(n > 0 for n in out["spikes"].values())


@pytest.mark.producers
@pytest.mark.parametrize("name", sorted(CASES))
def test_producer_regenerates_its_reference(name, tmp_path):
    """Where the library is installed: build, write and run the case again in the library; the
    fresh file and run replay on the engine, and the run equals the committed reference."""
    import nir_producer_cases as cases

    case = next(c for c in cases.CASES if c.name == name)
    pytest.importorskip(case.producer)  # the library has the convention's name
    fresh = cases.run_case(case, tmp_path)
    np.savez(tmp_path / f"{name}.npz", **fresh)
    replay(name, tmp_path)
    committed = np.load(DATA / f"{name}.npz")
    for key in committed.files:
        np.testing.assert_allclose(fresh[key], committed[key], rtol=0, atol=1e-5, err_msg=key)


def test_snntorch_recurrent_edge_takes_one_step():
    ng = nir_graph(read_nir(DATA / "snntorch_recurrent.nir"), convention("snntorch"))
    rec = [p for p in ng.graph.projections if p.source == p.target]
    assert len(rec) == 1 and rec[0].uniform_delay == 1  # snnTorch's spk(t-1) @ V
    assert ng.offsets == {"input": 0, "1": 1, "3.lif": 2}


# --- NIR's other nodes against NIR's equations in NumPy (forward Euler, one step per unit) ---


def _chain_reference(nodes: list, x: np.ndarray) -> list[np.ndarray]:
    """A chain of NIR nodes run as nirtorch runs it: every node within the step, in order;
    returns each neuron node's voltage after the step (after its reset)."""
    states, delays, traces = {}, {}, {i: [] for i, n in enumerate(nodes) if _is_neuron(n)}
    for t in range(len(x)):
        y = x[t]
        for i, n in enumerate(nodes):
            if isinstance(n, nir.Scale):
                y = n.scale * y
            elif isinstance(n, nir.Affine):
                y = n.weight @ y + n.bias
            elif isinstance(n, nir.Linear):
                y = n.weight @ y
            elif isinstance(n, nir.Delay):
                buf = delays.setdefault(i, [np.zeros_like(y)] * int(n.delay[0]))
                buf.append(y)
                y = buf.pop(0)
            elif isinstance(n, nir.Conv1d):
                y = np.array([sum(np.convolve(y.reshape(n.weight.shape[1], -1)[c],
                              n.weight[o, c][::-1], "valid") for c in range(n.weight.shape[1]))
                              + n.bias[o] for o in range(n.weight.shape[0])]).reshape(-1)  # fmt: skip
            elif isinstance(n, nir.Threshold):
                y = (y > n.threshold).astype(float)
                traces[i].append(y)
            elif isinstance(n, nir.I):
                states[i] = states.get(i, 0.0) + n.r * y
                traces[i].append(states[i])
                y = states[i]
            elif isinstance(n, nir.IF):
                v = states.get(i, 0.0) + n.r.reshape(-1) * y
                z = (v > n.v_threshold.reshape(-1)).astype(float)
                states[i] = np.where(z > 0, n.v_reset.reshape(-1), v)
                traces[i].append(states[i])
                y = z
    return [np.array(traces[i]) for i in sorted(traces)]


def _is_neuron(n) -> bool:
    return isinstance(n, nir.Threshold | nir.I | nir.IF)


def _write_chain(path: Path, nodes: list, n_in: int) -> None:
    names = [f"n{i}" for i in range(len(nodes))]
    g = {"input": nir.Input(input_type={"input": np.array([n_in])})}
    g.update(zip(names, nodes))
    out_shape = np.array([np.asarray(nodes[-1].r).size])
    g["output"] = nir.Output(output_type={"output": out_shape})
    chain = ["input", *names, "output"]
    nir.write(str(path), nir.NIRGraph(nodes=g, edges=list(zip(chain[:-1], chain[1:]))))


def test_scale_delay_affine_threshold_linear_integrator_match_nir_equations(tmp_path, rng):
    nodes = [
        nir.Scale(scale=rng.uniform(0.5, 2.0, 6)),
        nir.Delay(delay=np.full(6, 2.0)),
        nir.Affine(weight=rng.normal(0, 1, (5, 6)), bias=rng.normal(0, 0.3, 5)),
        nir.Threshold(threshold=np.full(5, 0.4)),
        nir.Linear(weight=rng.normal(0, 1, (3, 5))),
        nir.I(r=np.full(3, 0.7)),
    ]
    _write_chain(tmp_path / "g.nir", nodes, 6)
    x = (rng.random((40, 6)) < 0.4).astype(float)
    want_thr, want_int = _chain_reference(nodes, x)
    ng = nir_graph(read_nir(tmp_path / "g.nir"), convention("nir"))
    run = run_nir(ng, {"input": x}, 40)
    np.testing.assert_array_equal(run.spikes["n3"], want_thr)
    assert want_thr.sum() > 10
    np.testing.assert_allclose(run.v["n5"], want_int, rtol=0, atol=1e-9)


def test_conv1d_into_if_matches_nir_equations(tmp_path, rng):
    w = rng.normal(0, 1.2, (3, 2, 3))
    nodes = [nir.Conv1d(input_shape=8, weight=w, stride=1, padding=0, dilation=1, groups=1,
                        bias=rng.normal(0, 0.1, 3)),  # fmt: skip
             nir.IF(r=np.ones((3, 6)), v_threshold=np.ones((3, 6)))]  # fmt: skip
    g = {"input": nir.Input(input_type={"input": np.array([2, 8])}), "c": nodes[0], "i": nodes[1],
         "output": nir.Output(output_type={"output": np.array([3, 6])})}  # fmt: skip
    edges = [("input", "c"), ("c", "i"), ("i", "output")]
    nir.write(str(tmp_path / "c.nir"), nir.NIRGraph(nodes=g, edges=edges))
    x = (rng.random((30, 16)) < 0.5).astype(float)
    (want,) = _chain_reference(nodes, x)
    run = run_nir(nir_graph(read_nir(tmp_path / "c.nir"), convention("nir")), {"input": x}, 30)
    np.testing.assert_allclose(run.v["i"], want, rtol=0, atol=1e-9)
    assert run.spikes["i"].sum() > 10


def test_nested_subgraph_runs_as_its_flat_graph(tmp_path, rng):
    """The same LIF -> Linear -> LIF network, flat and with the second half in a subgraph."""
    lif = lambda n: nir.LIF(tau=np.full(n, 4.0), r=np.full(n, 4.0), v_leak=np.zeros(n),  # noqa: E731
                            v_threshold=np.ones(n))  # fmt: skip
    w1, w2 = rng.normal(0.5, 1, (4, 5)), rng.normal(0.5, 1, (3, 4))
    inp = nir.Input(input_type={"input": np.array([5])})
    out = nir.Output(output_type={"output": np.array([3])})
    flat = nir.NIRGraph(
        nodes={"input": inp, "w1": nir.Linear(weight=w1), "a": lif(4), "w2": nir.Linear(weight=w2),
               "b": lif(3), "output": out},
        edges=[("input", "w1"), ("w1", "a"), ("a", "w2"), ("w2", "b"), ("b", "output")],
    )  # fmt: skip
    sub = nir.NIRGraph(
        nodes={"in": nir.Input(input_type={"input": np.array([4])}), "w2": nir.Linear(weight=w2),
               "b": lif(3), "out": nir.Output(output_type={"output": np.array([3])})},
        edges=[("in", "w2"), ("w2", "b"), ("b", "out")],
    )  # fmt: skip
    nested = nir.NIRGraph(
        nodes={"input": inp, "w1": nir.Linear(weight=w1), "a": lif(4), "sub": sub, "output": out},
        edges=[("input", "w1"), ("w1", "a"), ("a", "sub"), ("sub", "output")],
    )  # fmt: skip
    nir.write(str(tmp_path / "flat.nir"), flat)
    nir.write(str(tmp_path / "nested.nir"), nested)
    x = (rng.random((40, 5)) < 0.5).astype(float)
    runs = [run_nir(nir_graph(read_nir(tmp_path / f), convention("nir")), {"input": x}, 40)
            for f in ("flat.nir", "nested.nir")]  # fmt: skip
    np.testing.assert_array_equal(runs[0].spikes["b"], runs[1].spikes["sub.b"])
    assert runs[0].spikes["b"].sum() > 5


# --- the command, and what is refused ----------------------------------------------------------


def test_import_command_profiles_a_producer_file(tmp_path, capsys):
    out = tmp_path / "imp"
    assert main(["import", str(DATA / "sinabs_conv.nir"), "--producer", "sinabs", "--input",
                 "rate:0.3:1", "--samples", "2", "--steps", "20", "--out", str(out)]) == 0  # fmt: skip
    res = json.loads((out / "import.json").read_text())
    assert res["format"] == "nir" and res["producer"] == "sinabs"
    p = res["prediction"]
    assert p["cores"] >= 1 and p["energy_per_inference_j"] > 0 and p["synops_per_inference"] > 0
    assert res["neurobench"]["synaptic_operations"]["effective_acs"] > 0
    assert res["gpu"] is None  # no GPU figure, never the dense equivalent of the chip's steps
    text = capsys.readouterr().out
    assert "relay (input)" in text and "[import] no GPU figure" in text
    assert "dense equivalent of the same" not in text
    assert read_marker(out)["state"] == "finished"  # marked complete after its last file


def test_content_decides_nir_or_netx():
    assert is_nir_file(DATA / "norse_cells.nir")
    assert not is_nir_file(Path(__file__).parent / "data" / "netx" / "mnist.net")


def _graph_with(node, n_in=3):
    return nir.NIRGraph(
        nodes={"input": nir.Input(input_type={"input": np.array([n_in])}), "x": node,
               "output": nir.Output(output_type={"output": np.array([n_in])})},
        edges=[("input", "x"), ("x", "output")],
    )  # fmt: skip


def _refused(tmp_path, graph, producer="nir", match=""):
    path = tmp_path / "bad.nir"
    nir.write(str(path), graph)
    with pytest.raises(AtomsparkError, match=match) as err:
        nir_graph(read_nir(path), convention(producer))
    assert "\n" not in str(err.value)
    return str(err.value)


def test_refusals_name_the_node_and_the_field(tmp_path):
    n = 3
    cuba_li = nir.CubaLI(tau_syn=np.ones(n), tau_mem=np.ones(n), r=np.ones(n), v_leak=np.zeros(n))
    assert "'x'" in _refused(tmp_path, _graph_with(cuba_li), match="type 'CubaLI'")
    lif = nir.LIF(tau=np.array([2.0, 3.0, 2.0]), r=np.ones(n), v_leak=np.zeros(n),
                  v_threshold=np.ones(n))  # fmt: skip
    _refused(tmp_path, _graph_with(lif), match="node 'x' \\(LIF\\): 'tau' differs")
    leak = nir.LIF(tau=np.full(n, 5.0), r=np.ones(n), v_leak=np.ones(n), v_threshold=np.ones(n))
    _refused(tmp_path, _graph_with(leak), "sinabs", match="'v_leak' must be 0")
    fast = nir.LIF(tau=np.full(n, 1e-5), r=np.ones(n), v_leak=np.zeros(n), v_threshold=np.ones(n))
    _refused(tmp_path, _graph_with(fast), "nir", match="'tau' = 1e-05 gives a decay")
    _refused(tmp_path, _graph_with(nir.Linear(weight=np.eye(n))), match="no neuron node")
    cuba = nir.CubaLIF(tau_syn=np.full(n, 2.0), tau_mem=np.full(n, 2.0), r=np.ones(n),
                       v_leak=np.zeros(n), v_threshold=np.ones(n))  # fmt: skip
    _refused(tmp_path, _graph_with(cuba), "sinabs", match="sinabs writes no CubaLIF")


def test_output_reading_a_weighted_sum_is_refused(tmp_path):
    lif = nir.LIF(tau=np.full(3, 5.0), r=np.ones(3), v_leak=np.zeros(3), v_threshold=np.ones(3))
    g = nir.NIRGraph(
        nodes={"input": nir.Input(input_type={"input": np.array([3])}), "l": lif,
               "w": nir.Linear(weight=np.eye(3)),
               "output": nir.Output(output_type={"output": np.array([3])})},
        edges=[("input", "l"), ("l", "w"), ("w", "output")],
    )  # fmt: skip
    _refused(tmp_path, g, match="node 'output' \\(Output\\): reads 'w'")


def test_bad_files_are_refused_before_reading(tmp_path):
    with pytest.raises(AtomsparkError, match="not an HDF5 file"):
        (tmp_path / "x.nir").write_bytes(b"not hdf5")
        read_nir(tmp_path / "x.nir")
    ext = tmp_path / "other.h5"
    with h5py.File(ext, "w") as f:
        f["w"] = np.ones((2, 2))
    path = tmp_path / "link.nir"
    nir.write(str(path), _graph_with(nir.Linear(weight=np.eye(3))))
    with h5py.File(path, "a") as f:
        g = f["node/nodes/x"]
        del g["weight"]
        g["weight"] = h5py.ExternalLink(str(ext), "w")
    with pytest.raises(AtomsparkError, match="'weight' is a link"):
        read_nir(path)
    big = tmp_path / "big.nir"
    nir.write(str(big), _graph_with(nir.Linear(weight=np.eye(3))))
    with h5py.File(big, "a") as f:
        g = f["node/nodes/x"]
        del g["weight"]
        g.create_dataset("weight", shape=(2**14, 2**13), dtype="f8")  # 1 GiB, never written
    with pytest.raises(AtomsparkError, match="above the limit"):
        read_nir(big)


def test_command_refusal_leaves_nothing(tmp_path, capsys):
    out = tmp_path / "imp"
    assert main(["import", str(DATA / "snntorch_conv.nir"), "--out", str(out)]) == 2  # dt = 1
    err = capsys.readouterr().err
    assert "check --producer and --dt" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()
    assert main(["import", str(DATA / "norse_cells.nir"), "--producer", "norse", "--input",
                 "uniform", "--out", str(out)]) == 2  # fmt: skip
    assert "use zero or rate:P[:SEED]" in capsys.readouterr().err and not out.exists()


def test_sweep_runs_import_cells_over_producer_files(tmp_path):
    """A grid over imported graphs: one cell per producer file and hardware, each the command's
    own result."""
    from atomspark.scenarios.sweep.cell import execute_cell
    from atomspark.scenarios.sweep.run import plan_grid

    grid = tmp_path / "grid.toml"
    grid.write_text(
        'kind = "import"\n[set]\ninput = "rate:0.3:1"\nsteps = 20\n'
        '[axes]\nhardware = ["loihi2", "loihi1-davies"]\n'
        f'[[variants]]\nname = "sinabs"\n[variants.set]\nnetwork = "{DATA / "sinabs_conv.nir"}"\n'
        'producer = "sinabs"\n'
        f'[[variants]]\nname = "norse"\n[variants.set]\nnetwork = "{DATA / "norse_cells.nir"}"\n'
        'producer = "norse"\n'
    )
    plan = plan_grid(grid)
    assert len(plan.cells) == 4
    records = [execute_cell("import", c, str(tmp_path / "out")) for c in plan.cells]
    assert all(r["status"] == "done" for r in records)
    by = {(r["result"]["producer"], r["result"]["hardware"]): r["result"] for r in records}
    assert set(by) == {(p, h) for p in ("sinabs", "norse") for h in ("loihi2", "loihi1-davies")}
    for p in ("sinabs", "norse"):
        a, b = by[(p, "loihi2")]["prediction"], by[(p, "loihi1-davies")]["prediction"]
        assert a["events_per_inference"] == b["events_per_inference"] > 0
        assert a["energy_per_inference_j"] != b["energy_per_inference_j"]

"""lava-dl netx import: layer types and parameters, bit-exact replay of lava-dl's own runs
(committed reference traces from benchmarks/netx_lava_reference.py), delays, bad files."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
from atomspark.mapping.hardware import DEFAULT_CHIP
from atomspark.networks.netx_file import read_netx
from atomspark.networks.netx_graph import NETX_BIAS_EXP, conv_matrix, netx_dense_weights, netx_graph
from atomspark.scenarios.cli.main import main
from atomspark.sim.core import AtomsparkError
from atomspark.sim.engine import Engine

h5py = pytest.importorskip("h5py")
DATA = Path(__file__).parent / "data" / "netx"
MNIST, PILOTNET = DATA / "mnist.net", DATA / "pilotnet_snn.net"


def _digest(row: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(row, dtype=np.int64).tobytes()).hexdigest()


def _replay(net_path: Path, ref_path: Path) -> None:
    """Run the engine on the reference's input and compare every layer's u and v, every step."""
    ref = np.load(ref_path)
    ng = netx_graph(read_netx(net_path))
    eng = Engine(ng.graph)
    steps = int(ref["steps"])
    pops = ng.layer_populations if ng.input_is_bias else ng.layer_populations[1:]
    if ng.input_is_bias:
        bias = ref["input_bias"].astype(np.int64) << NETX_BIAS_EXP
        eng.reset({ng.input_population: {"bias": bias}})
        inputs = None
    else:
        inputs = {ng.input_population: ref["input_spikes"]}
    eng.run(steps, inputs=inputs, record=tuple((n, v) for n in pops for v in ("u", "v")))
    for i, name in enumerate(pops):
        for var in ("u", "v"):
            ours = eng.traces[(name, var)]
            if f"{var}_{i}" in ref:
                assert np.array_equal(ours, ref[f"{var}_{i}"]), (name, var)
            else:
                assert [_digest(r) for r in ours] == list(ref[f"{var}sha_{i}"]), (name, var)
        assert np.array_equal(np.count_nonzero(eng.traces[(name, "v")], axis=1),
                              ref[f"vnonzero_{i}"])  # fmt: skip
    assert sum(np.count_nonzero(eng.traces[(n, "v")]) for n in pops) > 0  # not a silent run


def test_mnist_dense_replays_lava_dl_bit_exact():
    _replay(MNIST, DATA / "mnist_lava_reference.npz")


@pytest.mark.slow
def test_pilotnet_conv_replays_lava_dl_bit_exact():
    _replay(PILOTNET, DATA / "pilotnet_lava_reference.npz")


@pytest.mark.slow
def test_pilotnet_notebook_input_is_silent_in_lava_and_engine():
    """benchmark.ipynb's `neuron.bias = image` changes no Lava Var: the input layer stays 0."""
    ref = np.load(DATA / "pilotnet_notebook_lava_reference.npz")
    assert not ref["input_bias"].any() and not ref["vnonzero_0"].any()
    assert ref["vnonzero_1"].any()  # the conv layers still run on their own biases
    _replay(PILOTNET, DATA / "pilotnet_notebook_lava_reference.npz")


def test_layer_types_and_lif_parameters():
    net = read_netx(PILOTNET)
    assert [ly.kind for ly in net.layers] == ["input"] + ["conv"] * 5 + ["dense"] * 4
    conv4 = net.layers[4]
    assert conv4.shape == (64, 4, 22) and conv4.stride == (2, 1) and conv4.padding == (1, 0)
    assert net.layers[6].flatten_before and net.steps_per_sample == 16
    ng = netx_graph(net)
    p = ng.graph.population("L1_conv").params
    assert (p.du, p.dv, p.vth) == (4095, 1024, 25)  # Lava du = iDecay - 1
    bias = np.asarray(p.bias_mant).reshape(-1)
    assert np.array_equal(bias[:24], net.layers[1].bias)  # channel-fastest (x, y, c) order
    assert np.array_equal(bias[24:48], net.layers[1].bias)
    assert ng.graph.population("L9_dense").params.vth == 131071
    mn = netx_graph(read_netx(MNIST))
    assert mn.graph.population("input").size == 784 and not mn.input_is_bias


def test_conv_matrix_is_pytorch_conv2d():
    rng = np.random.default_rng(1)
    ci, h, w, co, g = 4, 7, 9, 6, 2
    kern = rng.integers(-5, 6, (co, ci // g, 3, 2))
    from atomspark.networks.netx_file import NetxLayer

    stride, pad, dil = (2, 1), (1, 0), (1, 2)
    ho = (h + 2 * pad[0] - dil[0] * 2 - 1) // stride[0] + 1
    wo = (w + 2 * pad[1] - dil[1] * 1 - 1) // stride[1] + 1
    layer = NetxLayer("conv", (co, ho, wo), None, kern, None, stride, pad, dil, g)
    mat = conv_matrix(layer, (ci, h, w), "test")
    x = rng.integers(0, 3, (ci, h, w))
    xp = np.pad(x, ((0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    want = np.zeros((co, ho, wo), np.int64)
    for o in range(co):
        grp = o // (co // g)
        for c in range(ci // g):
            for ky in range(3):
                for kx in range(2):
                    patch = xp[grp * (ci // g) + c, ky * dil[0] :, kx * dil[1] :]
                    want[o] += kern[o, c, ky, kx] * patch[:: stride[0], :: stride[1]][:ho, :wo]
    got = mat @ x.transpose(2, 1, 0).reshape(-1)  # (x, y, c) order in and out
    assert np.array_equal(got.reshape(wo, ho, co).transpose(2, 1, 0), want)


@pytest.mark.parametrize("lo,hi", [(-98, 131), (0, 200), (-200, 0), (-4, 6)])
def test_dense_rescaling_keeps_the_stored_weights(lo, hi):
    from atomspark.sim import fixed_point as fx

    w = np.random.default_rng(2).integers(lo, hi, (5, 7)) * 2
    w = np.clip(w, -254, 254)  # -256 alone would be clipped to -255 by an inhibitory synapse
    shifted, bits, exp, mode = netx_dense_weights(w, "test")
    eff = fx.lava_dense_weights(shifted, bits, mode)
    assert exp <= 0 and np.array_equal(eff, w << -exp)  # nothing lost, only rescaled


def _write(path: Path, layers: dict) -> Path:
    with h5py.File(path, "w") as f:
        for k, spec in layers.items():
            g = f.create_group(f"layer/{k}")
            for key, val in spec.items():
                if key == "neuron":
                    n = g.create_group("neuron")
                    for nk, nv in val.items():
                        n[nk] = nv
                else:
                    g[key] = val
    return path


LIF = {"type": "CUBA", "iDecay": 4096, "vDecay": 0, "vThMant": 1}


def test_dense_delays_shift_arrival(tmp_path):
    w = np.array([[64.0, 64.0]])
    path = _write(tmp_path / "d.net", {"0": {"type": np.bytes_("dense"), "shape": [1],
                  "weight": w, "delay": np.array([0.0, 3.0]), "neuron": LIF}})  # fmt: skip
    ng = netx_graph(read_netx(path))
    proj = ng.graph.projections[0]
    assert proj.delays.toarray().tolist() == [[1, 4]]  # Lava delay d arrives as engine delay d+1
    eng = Engine(ng.graph)
    spikes = np.zeros((8, 2))
    spikes[0] = 1
    eng.run(8, inputs={"input": spikes}, record=(("L0_dense", "u"),))
    u = eng.traces[("L0_dense", "u")][:, 0]
    assert u[1] > 0 and u[2] == 0 and u[4] > 0  # two arrivals, 3 steps apart


def test_shape_only_input_layer_feeds_a_conv_from_outside(tmp_path):
    kern = np.zeros((1, 1, 1, 1))
    kern[0, 0, 0, 0] = 64
    path = _write(tmp_path / "c.net", {
        "0": {"type": np.bytes_("input"), "shape": [1, 2, 3]},
        "1": {"type": np.bytes_("conv"), "shape": [1, 2, 3], "weight": kern, "neuron": LIF},
    })  # fmt: skip
    ng = netx_graph(read_netx(path))
    assert not ng.input_is_bias and ng.graph.population("input").size == 6
    eng = Engine(ng.graph)
    drive = np.zeros((3, 6))
    drive[0, 4] = 1
    eng.run(3, inputs={"input": drive}, record=(("L1_conv", "u"),))
    u = eng.traces[("L1_conv", "u")]
    assert u[1, 4] == 64 << 6 and np.count_nonzero(u) == 1  # one tap, one step later


@pytest.mark.parametrize(
    "layers,fragment",
    [
        ({}, "no 'layer' group"),
        ({"0": {"type": np.bytes_("pool"), "shape": [4]}}, "type 'pool' is not supported"),
        ({"0": {"type": np.bytes_("dense"), "shape": [1], "weight": [[1.5]], "neuron": LIF}},
         "must hold integers"),
        ({"0": {"type": np.bytes_("dense"), "shape": [1], "weight": [[1.0]],
                "neuron": {"type": "RF_PHASE", "vThMant": 1}}}, "neuron type 'RF_PHASE'"),
    ],
)  # fmt: skip
def test_bad_file_gives_one_line(tmp_path, capsys, layers, fragment):
    path = tmp_path / "bad.net"
    if layers:
        _write(path, layers)
    else:
        with h5py.File(path, "w") as f:
            f["x"] = 1
    out = tmp_path / "out"
    assert main(["import", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert fragment in err and "\n" not in err and "Traceback" not in err
    assert not out.exists()


def test_not_hdf5_and_missing_file(tmp_path):
    junk = tmp_path / "junk.net"
    junk.write_text("hello")
    with pytest.raises(AtomsparkError, match="not an HDF5 file"):
        read_netx(junk)
    with pytest.raises(AtomsparkError, match="is not a file"):
        read_netx(tmp_path / "none.net")


def test_import_cli_writes_a_prediction(tmp_path, capsys):
    out = tmp_path / "imp"
    assert main(["import", str(MNIST), "--input", "rate:0.2", "--samples", "2", "--out",
                 str(out)]) == 0  # fmt: skip
    import json

    res = json.loads((out / "import.json").read_text())
    p = res["prediction"]
    assert p["cores"] >= 1 and p["synops_per_inference"] > 0
    assert p["dynamic_energy_per_inference_j"] == pytest.approx(
        sum(v for k, v in p["breakdown_j"].items() if k != "static")
    )  # the parts add up (dynamic is not just energy minus static)
    text = capsys.readouterr().out
    assert (
        f"[import] {DEFAULT_CHIP}:" in text and "[import] NeuroBench: activation sparsity" in text
    )
    nb = res["neurobench"]
    assert 0 < nb["activation_sparsity"] < 1 and nb["synaptic_operations"]["effective_acs"] > 0

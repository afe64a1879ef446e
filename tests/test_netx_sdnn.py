"""lava-dl netx sigma-delta (SDNN) import: the units netx builds per layer, the PilotNet SDNN
replayed bit for bit against lava-dl's own run on Lava (committed reference from
benchmarks/netx_lava_reference.py), and one-line refusals of what the engine does not run."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
from atomspark.networks.netx_file import read_netx
from atomspark.networks.netx_graph import netx_graph
from atomspark.scenarios.cli.main import main
from atomspark.sim.core import AtomsparkError
from atomspark.sim.engine import Engine

h5py = pytest.importorskip("h5py")
DATA = Path(__file__).parent / "data" / "netx"
SDNN_NET, SDNN_REF = DATA / "pilotnet_sdnn.net", DATA / "pilotnet_sdnn_lava_reference.npz"
SD = {"type": "SDNN", "vThMant": 6, "activation": "relu"}


def _digest(row: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(row, dtype=np.int64).tobytes()).hexdigest()


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


def test_pilotnet_sdnn_replays_lava_dl_bit_exact():
    """Every layer's sigma, act and residue (Sigma: sigma), every step, and the encoder's act."""
    ref = np.load(SDNN_REF)
    ng = netx_graph(read_netx(SDNN_NET))
    steps = int(ref["steps"])
    pops = ng.layer_populations[1:]  # lava-dl's layers after the skipped input layer
    record = [(ng.input_population, "act")]
    record += [(n, v) for n in pops for v in ("sigma", "act", "residue")]
    frames = ref["input_frames"].astype(np.int64)[ref["input_frame_index"]]
    eng = Engine(ng.graph)
    eng.run(steps, inputs={ng.input_population: frames}, record=tuple(record))
    enc = eng.traces[(ng.input_population, "act")]
    assert [_digest(r) for r in enc] == list(ref["encoder_actsha"])
    compared = 0
    for i, name in enumerate(pops):
        for var in ("sigma", "act", "residue"):
            ours = eng.traces[(name, var)]
            if f"{var}_{i}" in ref:
                assert np.array_equal(ours, ref[f"{var}_{i}"]), (name, var)
            elif f"{var}sha_{i}" in ref:
                assert [_digest(r) for r in ours] == list(ref[f"{var}sha_{i}"]), (name, var)
            else:
                continue
            compared += 1
        nonzero = np.count_nonzero(eng.traces[(name, "sigma")], axis=1)
        assert np.array_equal(nonzero, ref[f"sigmanonzero_{i}"])
    assert compared == 8 * 3 + 1 and len(pops) == 9
    out = eng.traces[(pops[-1], "sigma")][:, 0]
    assert np.count_nonzero(np.diff(out)) >= 3  # the output moves with the frames: not silent
    assert np.count_nonzero(np.diff(frames, axis=0).any(1)) >= 5  # the frames change


def test_pilotnet_sdnn_layers_are_netx_units():
    net = read_netx(SDNN_NET)
    assert [ly.kind for ly in net.layers] == ["input"] + ["conv"] * 5 + ["dense"] * 4
    ng = netx_graph(net)
    assert ng.input_is_encoder and not ng.input_is_bias
    enc = ng.graph.population("L0_input").params
    assert (enc.kind, int(enc.vth), enc.spike_exp, enc.state_exp) == ("delta", 6, 6, 0)
    p = ng.graph.population("L1_conv").params
    assert (p.kind, int(p.vth), p.spike_exp, p.state_exp, p.act) == ("sigma_delta", 6, 6, 6, "relu")
    bias = np.asarray(p.bias).reshape(-1)
    assert np.array_equal(bias[:24], net.layers[1].bias) and np.array_equal(bias[24:48], bias[:24])
    assert ng.graph.population("L9_dense").params.kind == "sigma"
    first, second = ng.graph.projections[:2]
    assert first.uniform_delay == 2 and second.uniform_delay == 1  # encoder buffers one step


def test_dense_sdnn_from_relay_spikes(tmp_path):
    """Without an input layer netx feeds binary spikes (input_message_bits 0): a spike of the
    relay adds the weight to sigma one step later; a ReLU unit with bias sends at step 0."""
    path = _write(tmp_path / "s.net", {"0": {"type": np.bytes_("dense"), "shape": [2],
                  "weight": np.array([[64.0], [-64.0]]), "bias": np.array([0.0, 7.0]),
                  "neuron": SD}})  # fmt: skip
    ng = netx_graph(read_netx(path))
    eng = Engine(ng.graph)
    spikes = np.zeros((4, 1))
    spikes[0] = 1
    eng.run(4, inputs={"input": spikes}, record=(("L0_dense", "sigma"), ("L0_dense", "act")))
    sigma, act = eng.traces[("L0_dense", "sigma")], eng.traces[("L0_dense", "act")]
    assert sigma[0].tolist() == [0, 0] and sigma[1].tolist() == [64, -64]
    assert act[0].tolist() == [0, 7 << 12]  # bias 7 in output units, held times 2**12


def synthetic_sdnn(path: Path) -> Path:
    """tests/data/netx/sdnn_delays.net: three SDNN dense layers fed binary spikes (no input
    layer), seeded integer weights and biases, per-synapse delays 0-3 on the second layer and
    per-output delays on the Sigma readout."""
    rng = np.random.default_rng(7)
    sd = SD | {"vThMant": 2}

    def w(o, i):
        return (2 * rng.integers(-15, 16, (o, i))).astype(np.float32)

    return _write(path, {
        "0": {"type": np.bytes_("dense"), "shape": [16], "weight": w(16, 24),
              "bias": rng.integers(-3, 9, 16).astype(np.float32), "neuron": sd},
        "1": {"type": np.bytes_("dense"), "shape": [8], "weight": w(8, 16),
              "bias": rng.integers(-3, 9, 8).astype(np.float32),
              "delay": rng.integers(0, 4, (8, 16)).astype(np.float32), "neuron": sd},
        "2": {"type": np.bytes_("dense"), "shape": [3], "weight": w(3, 8),
              "delay": np.array([0.0, 2.0, 5.0], np.float32),
              "neuron": sd | {"sigma_output": True}},
    })  # fmt: skip


def test_sdnn_delays_and_binary_input_replay_lava_dl_bit_exact(tmp_path):
    """Binary input spikes (netx's input_message_bits 0), graded spikes through DelayDense with
    per-synapse and per-output delays, a Sigma readout: every layer, every step, against
    benchmarks/netx_lava_reference.py tests/data/netx/sdnn_delays.net --stub-torch-imports
    --steps 30 --rate 0.4 (lava-dl 0.6.0, Lava 0.10)."""
    net_path = DATA / "sdnn_delays.net"
    fresh = read_netx(synthetic_sdnn(tmp_path / "fresh.net"))
    for a, b in zip(read_netx(net_path).layers, fresh.layers):  # the committed file is this one
        assert np.array_equal(a.weight, b.weight) and np.array_equal(a.delay, b.delay)
    ref = np.load(DATA / "sdnn_delays_lava_reference.npz")
    ng = netx_graph(read_netx(net_path))
    pops = ng.layer_populations[1:]
    eng = Engine(ng.graph)
    steps = int(ref["steps"])
    record = [(n, v) for n in pops for v in ("sigma", "act", "residue")]
    eng.run(steps, inputs={"input": ref["input_spikes"]}, record=tuple(record))
    compared = 0
    for i, name in enumerate(pops):
        for var in ("sigma", "act", "residue"):
            if f"{var}_{i}" in ref:
                assert np.array_equal(eng.traces[(name, var)], ref[f"{var}_{i}"]), (name, var)
                compared += 1
    assert compared == 7
    assert all(np.count_nonzero(ref[f"sigma_{i}"]) > 0 for i in range(3))  # every layer active


@pytest.mark.parametrize(
    "neuron,extra,fragment",
    [
        (SD | {"activation": "sigmoid"}, {}, "layer 0 neuron: 'activation' 'sigmoid'"),
        (SD | {"messageBits": 0}, {}, "layer 0 neuron: 'messageBits' 0"),
        (SD | {"sigma_output": True}, {"bias": np.array([1.0, 2.0])}, "layer 0: 'bias' on a sigma"),
        (SD, {"bias": np.array([1.0, 4000.0])}, "layer 0: L0_dense.bias"),
    ],
)  # fmt: skip
def test_sdnn_fields_the_engine_cannot_run_are_refused(tmp_path, capsys, neuron, extra, fragment):
    spec = {"type": np.bytes_("dense"), "shape": [2], "weight": np.ones((2, 3)), "neuron": neuron}
    path = _write(tmp_path / "bad.net", {"0": spec | extra})
    out = tmp_path / "out"
    assert main(["import", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert fragment in err and "\n" not in err and "Traceback" not in err
    assert not out.exists()


def test_mixed_lif_and_sdnn_layers_are_refused(tmp_path):
    lif = {"type": "CUBA", "iDecay": 4096, "vDecay": 0, "vThMant": 1}
    path = _write(tmp_path / "m.net", {
        "0": {"type": np.bytes_("dense"), "shape": [2], "weight": np.ones((2, 3)), "neuron": SD},
        "1": {"type": np.bytes_("dense"), "shape": [1], "weight": np.ones((1, 2)), "neuron": lif},
    })  # fmt: skip
    with pytest.raises(AtomsparkError, match="NET layer 1: mixes SDNN and LIF neurons"):
        netx_graph(read_netx(path))

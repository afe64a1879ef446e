"""Crafted netx HDF5 files, each imported through the CLI in its own process: refused in one line
(exit 2) naming the layer, before their data is read: links and external storage leaving the
file, declared sizes beyond memory, fields of the wrong type, shape or range. A signal, a
traceback or a silent success fails. Files are crafted here, in tmp_path."""

from __future__ import annotations

import numpy as np
import pytest
from test_untrusted_models import assert_one_line_refusal, run_cli

h5py = pytest.importorskip("h5py")
LIF = {"type": np.bytes_("CUBA"), "iDecay": 4096, "vDecay": 0, "vThMant": 1}


def _neuron(g, **changes):
    n = g.create_group("neuron")
    for k, v in {**LIF, **changes}.items():
        n[k] = v


def dense_net(path, weight=None, in_shape=(1, 2, 2), out_shape=(3,), t_sample=None, **neuron):
    """input layer of (1, 2, 2) units, then a dense layer of 3 (weight (3, 4) by default)."""
    with h5py.File(path, "w") as f:
        g = f.create_group("layer/0")
        g["type"], g["shape"] = np.bytes_("input"), list(in_shape)
        _neuron(g)
        g = f.create_group("layer/1")
        g["type"], g["shape"] = np.bytes_("dense"), list(out_shape)
        g["weight"] = np.ones((3, 4)) if weight is None else weight
        _neuron(g, **neuron)
        if t_sample is not None:
            f.create_group("simulation")["tSample"] = t_sample
    return path


def conv_net(path, weight=None, **geometry):
    """input (1, 4, 4), then a conv layer (2, 4, 4) with a 1x1 kernel."""
    with h5py.File(path, "w") as f:
        g = f.create_group("layer/0")
        g["type"], g["shape"] = np.bytes_("input"), [1, 4, 4]
        _neuron(g)
        g = f.create_group("layer/1")
        g["type"], g["shape"] = np.bytes_("conv"), [2, 4, 4]
        g["weight"] = np.ones((2, 1, 1, 1)) if weight is None else weight
        for k, v in geometry.items():
            g[k] = v
        _neuron(g)
    return path


def _edit(path, edit):
    with h5py.File(path, "a") as f:
        edit(f)
    return path


def _drop_layer_1(f):
    del f["layer/1"]


def _external_storage(tmp_path):
    other = tmp_path / "secret.bin"
    other.write_bytes(np.arange(12, dtype="<f8").tobytes())
    path = dense_net(tmp_path / "n.net")

    def edit(f):
        del f["layer/1/weight"]
        f["layer/1"].create_dataset("weight", (3, 4), "<f8", external=[(str(other), 0, 96)])

    return _edit(path, edit)


def _external_link(tmp_path):
    other = dense_net(tmp_path / "other.net")

    def edit(f):
        del f["layer/1/weight"]
        f["layer/1/weight"] = h5py.ExternalLink(str(other), "/layer/1/weight")

    return _edit(dense_net(tmp_path / "n.net"), edit)


def _soft_link(tmp_path):
    def edit(f):
        del f["layer/1/weight"]
        f["layer/1/weight"] = h5py.SoftLink("/layer/0/shape")

    return _edit(dense_net(tmp_path / "n.net"), edit)


def _gzip_huge_weight(tmp_path):
    def edit(f):
        del f["layer/1/weight"]
        f["layer/1"].create_dataset(
            "weight", (1, 10**9), "<f4", chunks=(1, 10**6), compression="gzip"
        )

    return _edit(dense_net(tmp_path / "n.net"), edit)


def _dataset_for_group(tmp_path):
    def edit(f):
        del f["layer/1"]
        f["layer/1"] = np.zeros(3)

    return _edit(dense_net(tmp_path / "n.net"), edit)


def _type(value):
    def make(tmp_path):
        def edit(f):
            del f["layer/1/type"]
            f["layer/1/type"] = value

        return _edit(dense_net(tmp_path / "n.net"), edit)

    return make


def _sigma_array(tmp_path):
    def edit(f):
        n = f["layer/1/neuron"]
        del n["type"]
        n["type"], n["sigma_output"] = np.bytes_("SDNN"), [1, 0]

    return _edit(dense_net(tmp_path / "n.net"), edit)


PROBES = {
    "external storage": (_external_storage, "stores its data in another file"),
    "external link": (_external_link, "is a link to another file"),
    "soft link": (_soft_link, "netx files hold no links"),
    "input 10**11 units": (
        lambda t: _edit(dense_net(t / "n.net", in_shape=(10000, 10000, 1000)), _drop_layer_1),
        "needs about",
    ),
    "gzip weight (1, 10**9)": (_gzip_huge_weight, "NET layer 1: weight of shape (1, 1000000000)"),
    "dataset for a group": (_dataset_for_group, "NET layer 1: must be a group"),
    "empty type": (_type(np.array([], dtype="S1")), "'type' must be one string"),
    "non-ASCII type": (_type(np.bytes_("d\xe9nse".encode())), "'type' must be ASCII"),
    "NaN tSample": (lambda t: dense_net(t / "n.net", t_sample=np.nan), "'tSample' must hold integers"),
    "array tSample": (lambda t: dense_net(t / "n.net", t_sample=[1, 2]), "'tSample' has 2 values"),
    "string tSample": (lambda t: dense_net(t / "n.net", t_sample=np.bytes_("8")), "'tSample' must hold numbers"),
    "array sigma_output": (_sigma_array, "'sigma_output' has 2 values"),
    "5-D conv weight": (lambda t: conv_net(t / "n.net", np.ones((2, 1, 1, 1, 1))), "needs 4 axes"),
    "stride 0": (lambda t: conv_net(t / "n.net", stride=0), "'stride' must be >= 1"),
    "negative dilation": (lambda t: conv_net(t / "n.net", dilation=-1), "'dilation' must be >= 1"),
    "weight of the wrong shape": (lambda t: dense_net(t / "n.net", np.ones((4, 3))), "does not fit"),
    "weight 1e30": (lambda t: dense_net(t / "n.net", np.full((3, 4), 1e30)), "NET layer 1: 'weight' holds 1e+30"),
    "vThMant beyond 17 bits": (lambda t: dense_net(t / "n.net", vThMant=2**20), "NET layer 1"),
}  # fmt: skip


@pytest.mark.parametrize("probe", list(PROBES))
def test_crafted_netx_file_is_refused_in_one_line(tmp_path, probe):
    make, needle = PROBES[probe]
    path = make(tmp_path)
    out = tmp_path / "out"
    assert_one_line_refusal(run_cli(["import", str(path), "--out", str(out)]), needle)
    assert not out.exists()


def test_the_crafted_base_network_imports(tmp_path):
    out = tmp_path / "out"
    proc = run_cli(["import", str(dense_net(tmp_path / "n.net")), "--out", str(out)])
    assert proc.returncode == 0, proc.stderr[-400:]
    proc = run_cli(["import", str(conv_net(tmp_path / "c.net")), "--out", str(tmp_path / "o2")])
    assert proc.returncode == 0, proc.stderr[-400:]

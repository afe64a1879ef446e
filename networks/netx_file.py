"""Read lava-dl's netx HDF5 network description (`*.net`) into plain layer records.

The format (lava-dl `lava.lib.dl.netx.hdf5`, BSD-3): a group `layer/<i>` per layer with `type`
('input', 'conv', 'flatten', 'dense', ...), `shape` (C, H, W) or (n,), integer-valued `weight`
and `bias` arrays, conv `stride`/`padding`/`dilation` in (H, W) order and `groups`, an optional
`delay`, and a `neuron` group: type 'CUBA'/'LOIHI' (Loihi CUBA-LIF: iDecay, vDecay, vThMant) or
'SDNN' (sigma-delta: vThMant, activation, optional sigma_output, whose presence alone makes the
layer a Sigma, as in netx). Values are Loihi fixed point already.
Only the records are built here; networks/netx_graph.py turns them into an engine Graph. netx
0.6 itself builds no 'pool', 'convT', 'unpool', 'average' or 'concat' layer (it raises
NotImplementedError), so those types are refused here in one line too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from atomspark.networks.hdf5_open import open_hdf5
from atomspark.networks.netx_checks import (
    check_conv_geometry,
    check_file_contents,
    read_int,
    read_ints,
    read_text,
    require_group,
    weight_shape,
)
from atomspark.sim.core import AtomsparkError
from atomspark.sim.memory import require_memory

LIF_TYPES = ("CUBA", "LOIHI")
SDNN_TYPES = ("SDNN",)
LAYER_TYPES = ("input", "conv", "flatten", "dense")


@dataclass(frozen=True)
class NetxNeuron:
    """Neuron parameters of one layer as stored: kind 'lif' or 'sdnn'."""

    kind: str
    vth: int
    i_decay: int = 0  # 12-bit current decay (LIF); Lava's du = i_decay - 1
    v_decay: int = 0  # 12-bit voltage decay (LIF); Lava's dv
    sigma_output: bool = False  # SDNN output layer: a Sigma, not a SigmaDelta
    message_bits: int | None = None
    activation: str = "relu"  # SDNN: the file's 'activation' (netx runs ReLU whatever it says)


@dataclass(frozen=True)
class NetxLayer:
    """One layer: kind 'input', 'conv' or 'dense'; shape (C, H, W) for input/conv, (n,) dense."""

    kind: str
    shape: tuple[int, ...]
    neuron: NetxNeuron | None
    weight: np.ndarray | None = None  # conv (out, in/groups, kH, kW); dense (out, in)
    bias: np.ndarray | None = None  # per channel (conv) or per unit (dense); None: no bias
    stride: tuple[int, int] = (1, 1)  # (H, W)
    padding: tuple[int, int] = (0, 0)
    dilation: tuple[int, int] = (1, 1)
    groups: int = 1
    delay: np.ndarray | None = None  # dense only: per synapse, per output or per input
    flatten_before: bool = False  # a 'flatten' layer precedes this dense layer
    input_weight: int = 64  # input layers: the image transform (weight, bias)
    input_bias: int = 0

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))


@dataclass(frozen=True)
class NetxNetwork:
    path: str
    layers: list[NetxLayer] = field(default_factory=list)
    steps_per_sample: int | None = None  # simulation/tSample when present

    def table(self) -> str:
        """One line per layer: type, shape, kernel/stride/padding, parameters."""
        lines = [f"{'layer':<6}{'type':<7}{'shape':<16}{'kernel':<8}{'stride':<8}{'pad':<8}neuron"]
        for i, ly in enumerate(self.layers):
            ker = "x".join(map(str, ly.weight.shape[2:])) if ly.kind == "conv" else ""
            st = "x".join(map(str, ly.stride)) if ly.kind == "conv" else ""
            pd = "x".join(map(str, ly.padding)) if ly.kind == "conv" else ""
            n = ly.neuron
            neuron = "-" if n is None else f"{n.kind} vth={n.vth}"
            if n is not None and n.kind == "lif":
                neuron += f" iDecay={n.i_decay} vDecay={n.v_decay}"
            elif n is not None:
                neuron += " sigma" if n.sigma_output else f" {n.activation}"
            shape = "x".join(map(str, ly.shape))
            lines.append(f"{i:<6}{ly.kind:<7}{shape:<16}{ker:<8}{st:<8}{pd:<8}{neuron}")
        return "\n".join(lines)


def read_netx(path: str | Path) -> NetxNetwork:
    """Parse a netx HDF5 file; any problem raises AtomsparkError with one line naming it."""
    h5py, f, p = open_hdf5(path, "NET", "netx", "lava-dl netx .net", locking=False)
    with f:
        check_file_contents(h5py, f, p)
        if "layer" not in f:
            raise AtomsparkError(f"NET: {p} has no 'layer' group: not a netx network description")
        top = require_group(h5py, f["layer"], "'layer'")
        keys = sorted(top.keys(), key=lambda k: int(k) if k.isdigit() and len(k) < 10 else -1)
        if not keys or not all(k.isdigit() and len(k) < 10 for k in keys):
            raise AtomsparkError(f"NET: {p} 'layer' group must hold layers named 0, 1, ...")
        layers, flatten, prev = [], False, None
        for k in keys:
            g = require_group(h5py, top[k], f"layer {k}")
            if "neuron" in g:
                require_group(h5py, g["neuron"], f"layer {k} neuron")
            kind = _text(g, "type", f"layer {k}")
            if kind == "flatten":
                flatten = True
                continue
            if kind not in LAYER_TYPES:
                raise AtomsparkError(
                    f"NET layer {k}: type {kind!r} is not supported (supported: "
                    f"{', '.join(LAYER_TYPES)})"
                )
            if kind != "input":
                shape = tuple(int(v) for v in _layer_shape(g, f"layer {k}"))
                weight_shape(g, kind, f"layer {k}", shape, prev)
            layers.append(_layer(g, kind, f"layer {k}", flatten))
            prev, flatten = layers[-1].shape, False
        steps = None
        if "simulation" in f:
            sim = require_group(h5py, f["simulation"], "simulation")
            steps = (
                read_int(sim, "tSample", "simulation", default=-1, low=1)
                if "tSample" in sim
                else None
            )
    check_network_size(p, layers)
    if not layers:
        raise AtomsparkError(f"NET: {p} describes no layers")
    return NetxNetwork(str(p), layers, steps)


def _text(g, key: str, where: str) -> str:
    return read_text(g, key, where)


def _int(g, key: str, where: str, default: int | None = None) -> int:
    return read_int(g, key, where, default)


def _ints(g, key: str, where: str, default=None) -> np.ndarray | None:
    """An integer-valued array (stored as float or int), as int64; type and range checked."""
    v = read_ints(g, key, where)
    return default if v is None else v


def _layer_shape(g, where: str) -> np.ndarray:
    """'shape': one to three positive integers (checked before anything else is read)."""
    shape = read_ints(g, "shape", where, max_size=3)
    if shape is None or shape.size == 0 or shape.min() < 1:
        raise AtomsparkError(f"NET {where}: 'shape' missing or not positive")
    return shape.reshape(-1)


def check_network_size(path, layers) -> None:
    """Units and synapses the engine graph will hold, against the memory guard (before it is
    built): about 64 bytes per unit of state and 16 per synapse."""
    units = sum(ly.size for ly in layers)
    synapses = 0
    for ly in layers:
        if ly.kind == "conv":
            synapses += ly.size * int(np.prod(ly.weight.shape[1:]))
        elif ly.weight is not None:
            synapses += int(ly.weight.size)
    require_memory(
        f"NET: {path} ({units} units, {synapses} synapses)",
        64.0 * units + 16.0 * synapses,
        "give a smaller network",
    )


def _pair(g, key: str, where: str, default: int) -> tuple[int, int]:
    v = _ints(g, key, where)
    if v is None:
        return (default, default)
    v = v.reshape(-1)
    if v.size == 1:
        return (int(v[0]), int(v[0]))
    if v.size != 2:
        raise AtomsparkError(f"NET {where}: '{key}' must be one or two integers")
    return (int(v[0]), int(v[1]))


def _neuron(g, where: str) -> NetxNeuron | None:
    if "neuron" not in g:
        return None
    n = g["neuron"]
    kind = _text(n, "type", f"{where} neuron")
    bits = _int(n, "messageBits", where, default=-1)
    bits = None if bits < 0 else bits
    if kind in LIF_TYPES:
        return NetxNeuron(
            "lif",
            vth=_int(n, "vThMant", where),
            i_decay=_int(n, "iDecay", where),
            v_decay=_int(n, "vDecay", where),
            message_bits=bits,
        )
    if kind in SDNN_TYPES:
        read_int(n, "sigma_output", where, default=0, low=0, high=1)  # checked; netx reads presence
        act = read_text(n, "activation", f"{where} neuron") if "activation" in n else "relu"
        return NetxNeuron("sdnn", vth=_int(n, "vThMant", where), sigma_output="sigma_output" in n,
                          message_bits=bits, activation=act)  # fmt: skip
    raise AtomsparkError(
        f"NET {where}: neuron type {kind!r} is not supported (supported: CUBA/LOIHI LIF, SDNN)"
    )


def _layer(g, kind: str, where: str, flatten: bool) -> NetxLayer:
    shape_raw = _layer_shape(g, where)
    neuron = _neuron(g, where)
    if kind == "input":
        shape = tuple(int(s) for s in shape_raw)
        return NetxLayer("input", shape, neuron, input_weight=_int(g, "weight", where, 64),
                         input_bias=_int(g, "bias", where, 0))  # fmt: skip
    weight = _ints(g, "weight", where)
    if weight is None:
        raise AtomsparkError(f"NET {where}: {kind} layer has no 'weight'")
    bias = _ints(g, "bias", where)
    if kind == "conv":
        shape = tuple(int(s) for s in shape_raw)
        if len(shape) != 3 or weight.ndim < 4:
            raise AtomsparkError(f"NET {where}: conv needs a (C, H, W) shape and a 4-D weight")
        if weight.ndim != 4 or weight.shape[0] != shape[0]:
            raise AtomsparkError(
                f"NET {where}: weight has {weight.shape[0]} output channels, shape says {shape[0]}"
            )
        geometry = (_pair(g, "stride", where, 1), _pair(g, "padding", where, 0),
                    _pair(g, "dilation", where, 1), _int(g, "groups", where, 1))  # fmt: skip
        check_conv_geometry(where, *geometry)
        return NetxLayer("conv", shape, neuron, weight, bias, *geometry)
    n_out = int(np.prod(shape_raw))
    if weight.size == 0 or weight.size % n_out:
        raise AtomsparkError(
            f"NET {where}: weight of shape {weight.shape} does not fit the layer's {n_out} "
            "outputs ('shape')"
        )
    weight = weight.reshape(n_out, -1)
    delay = _ints(g, "delay", where)
    if delay is not None and delay.min(initial=0) < 0:
        raise AtomsparkError(f"NET {where}: 'delay' must be >= 0")
    return NetxLayer("dense", (n_out,), neuron, weight, bias, delay=delay, flatten_before=flatten)

"""Build an engine Graph (Loihi fixed point) from a netx network read by netx_file.py.

A network is all CUBA-LIF or all sigma-delta (SDNN); SDNN layers become the engine's sigma-delta
units as networks/netx_sdnn.py describes, on the same synapses as below.

Semantics follow lava-dl netx 0.6 on Lava 0.10 (`hdf5.Network` with its `blocks`):
- LIF layers are Lava LIFs with du = iDecay - 1, dv = vDecay, vth = vThMant, bias_mant = the
  layer's bias (per channel for conv), bias_exp = 6.
- Dense layers: netx rescales the stored 8-bit weights to use the synapse's range (its
  `optimize_weight_bits`: a left shift by `scale_bits` and weight_exp = -scale_bits), then Lava's
  bit-accurate Dense clips/truncates them to num_weight_bits and right-shifts each step's summed
  input by -weight_exp. Reproduced by `netx_dense_weights` + `fixed_point.lava_dense_weights`,
  with the exponent folded into the integer weights (exact: see `_dense_projection`).
- Dense layers keep every synapse, zero weights included (Loihi stores the whole matrix).
- Conv layers are unrolled into ordinary projections (one synapse per kernel tap and channel
  pair, zero taps included, as a Loihi conv stores its kernel): PyTorch conv2d indexing on the
  stored (out, in, kH, kW) kernel; netx's flip and transpose of the kernel for Lava's
  convolution give the same map. Lava's fixed conv clamps its output to 24 bits; the engine
  wraps at 32 bits and counts wraps, so a difference would show in Profile.wraps.
- Units are ordered as Lava orders them, (x, y, c) row-major (WHC), so engine and Lava state
  arrays compare index by index; a dense layer after a flatten reads (c, y, x) order as netx's
  `transpose([2, 1, 0]).flatten()` does.
- A layer without a neuron group: netx's default is iDecay 0 (a persistent current), vDecay
  4096 (v = u + bias each step) and vThMant 1 << 17, outside the engine's fixed-point LIF
  widths (du, dv 12-bit unsigned, vth 17-bit unsigned). The engine uses du 4095, dv 0, vth 2**17 - 1: v is the same running sum as netx's
  (checked on Lava), u is the step's input instead of the sum, and v spikes one mantissa step
  (64) earlier. Such layers are not bit-exact in u.
- A network without an input layer, or whose input layer has no neuron (netx then only takes its
  shape), gets a relay population `input` (vth 0, no decay, no bias): an external input of 1 at
  step t makes it spike at step t, as a spike source feeding netx's first layer would.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from atomspark.networks.netx_file import NetxLayer, NetxNetwork
from atomspark.networks.netx_sdnn import ENCODER_DELAY, sdnn_params
from atomspark.sim import fixed_point as fx
from atomspark.sim.core import AtomsparkError
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.units.lif import LIFFixedParams

NETX_BIAS_EXP = 6  # netx get_neuron_params: 'bias_exp': 6 for CUBA/LOIHI layers
RELAY = LIFFixedParams(du=4095, dv=4095, vth=0)


@dataclass(frozen=True)
class NetxGraph:
    """The engine graph, the population of each layer, and its (C, H, W) or (n,) shape."""

    graph: Graph
    layer_populations: list[str]
    layer_shapes: list[tuple[int, ...]]
    input_population: str
    input_is_bias: bool  # True: a netx input layer (driven through its bias), else a relay
    input_is_encoder: bool = False  # an SDNN input layer: a delta encoder fed graded frames


def netx_dense_weights(weight: np.ndarray, where: str) -> tuple[np.ndarray, int, int, str]:
    """netx's rescaling of 8-bit dense weights: (shifted weights, num_weight_bits, weight_exp,
    sign mode). Weights beyond netx's range [-256, 254] are clipped as netx does."""
    w = np.asarray(weight, np.int64)
    if w.size == 0:
        raise AtomsparkError(f"NET {where}: empty weight")
    if (w.max() > 254 and w.min() < 0) or (w.min() < -256 and w.max() > 0):
        w = np.clip(w, -256, 254)
    wmax, wmin = int(w.max()), int(w.min())
    if wmax < 0:
        mode, signed, scale = "inhibitory", 0, -256 / wmin
    elif wmin >= 0:
        mode, signed, scale = "excitatory", 0, (255 / wmax if wmax else 1.0)
    else:  # a zero maximum leaves only the negative side to bound the scale, as in netx
        mode, signed, scale = "mixed", 1, min(127 / wmax if wmax else np.inf, -128 / wmin)
    scale_bits = int(np.floor(np.log2(scale))) + signed
    if scale_bits < 0:
        raise AtomsparkError(
            f"NET {where}: weights up to {max(wmax, -wmin)} do not fit netx's 8-bit synapse"
        )
    n = 8
    while n > 0 and np.any(w % (1 << n)):
        n -= 1
    n -= signed
    return w << scale_bits, 8 - scale_bits - n, -scale_bits, mode


def conv_matrix(layer: NetxLayer, in_shape: tuple[int, int, int], where: str) -> sp.csr_matrix:
    """(n_out, n_in) integer matrix of a conv layer, both sides in (x, y, c) row-major order."""
    ci, hi, wi = in_shape
    co, ho, wo = layer.shape
    w = layer.weight
    kh, kw = w.shape[2:]
    (sh, sw), (ph, pw), (dh, dw), g = layer.stride, layer.padding, layer.dilation, layer.groups
    if g < 1 or ci % g or co % g or w.shape[1] != ci // g:
        raise AtomsparkError(
            f"NET {where}: kernel {w.shape} does not fit {ci} input channels in {g} group(s)"
        )
    if (hi + 2 * ph - dh * (kh - 1) - 1) // sh + 1 != ho or (
        wi + 2 * pw - dw * (kw - 1) - 1
    ) // sw + 1 != wo:
        raise AtomsparkError(
            f"NET {where}: output shape {layer.shape} does not follow from input {in_shape}, "
            f"kernel {kh}x{kw}, stride {sh}x{sw}, padding {ph}x{pw}"
        )
    y, x, ky, kx = (a.ravel() for a in np.meshgrid(
        np.arange(ho), np.arange(wo), np.arange(kh), np.arange(kw), indexing="ij"))  # fmt: skip
    iy, ix = y * sh - ph + ky * dh, x * sw - pw + kx * dw
    ok = (iy >= 0) & (iy < hi) & (ix >= 0) & (ix < wi)
    y, x, ky, kx, iy, ix = (a[ok] for a in (y, x, ky, kx, iy, ix))
    cig, cog = ci // g, co // g
    out_c = np.arange(co)[None, :, None]
    loc_c = np.arange(cig)[None, None, :]
    in_c = (out_c // cog) * cig + loc_c
    rows = (x * ho + y)[:, None, None] * co + out_c + 0 * loc_c
    cols = (ix * hi + iy)[:, None, None] * ci + in_c
    data = w[out_c, loc_c, ky[:, None, None], kx[:, None, None]]
    mat = sp.coo_matrix(
        (data.ravel(), (rows.ravel(), cols.ravel())), shape=(co * ho * wo, ci * hi * wi)
    )
    return mat.tocsr()


def _flatten_order(shape: tuple[int, ...]) -> np.ndarray:
    """For each unit in (x, y, c) order, its index in netx's (c, y, x) flattened order."""
    if len(shape) != 3:
        return np.arange(int(np.prod(shape)))
    c, h, w = shape
    x, y, ch = np.meshgrid(np.arange(w), np.arange(h), np.arange(c), indexing="ij")
    return (ch * h * w + y * w + x).ravel()


def _layer_bias(layer: NetxLayer, where: str):
    """The layer's bias per unit in (x, y, c) order (a conv's per-channel bias tiled), or 0."""
    if layer.bias is None or layer.kind == "input":
        return 0
    b = layer.bias.reshape(-1)
    if layer.kind == "conv" and b.size == layer.shape[0]:
        b = np.tile(b, layer.size // b.size)  # (x, y, c) order: channel is fastest
    if b.size not in (1, layer.size):
        raise AtomsparkError(f"NET {where}: bias of size {b.size} does not fit the layer")
    return b


def _lif(layer: NetxLayer, where: str) -> LIFFixedParams:
    n = layer.neuron
    if n is None:  # no neuron group: an approximation of netx's default (module docstring)
        return LIFFixedParams(du=4095, dv=0, vth=2**17 - 1)
    bias = _layer_bias(layer, where)
    if not 1 <= n.i_decay <= 4096:
        raise AtomsparkError(f"NET {where}: iDecay must be in [1, 4096], got {n.i_decay}")
    return LIFFixedParams(du=n.i_decay - 1, dv=n.v_decay, vth=n.vth, bias_mant=bias,
                          bias_exp=NETX_BIAS_EXP)  # fmt: skip


def _neuron_kind(net: NetxNetwork) -> str:
    """'sdnn' or 'lif' (a layer without a neuron group is netx's default LIF); one per network."""
    kinds = ["lif" if ly.neuron is None else ly.neuron.kind for ly in net.layers
             if ly.kind != "input" or ly.neuron is not None]  # fmt: skip
    if len(set(kinds)) > 1:
        i = next(i for i, ly in enumerate(net.layers)
                 if (ly.neuron.kind if ly.neuron else "lif") != kinds[0])  # fmt: skip
        raise AtomsparkError(
            f"NET layer {i}: mixes {kinds[0].upper()} and "
            f"{'LIF' if kinds[0] == 'sdnn' else 'SDNN'} neurons; networks of one neuron type "
            "are imported"
        )
    return kinds[0] if kinds else "lif"


def _params(layer: NetxLayer, where: str, kind: str):
    if kind == "sdnn":
        return sdnn_params(layer, where, _layer_bias(layer, where))
    return _lif(layer, where)


def netx_graph(net: NetxNetwork, input_bias: np.ndarray | None = None) -> NetxGraph:
    """Engine graph of `net`. input_bias: bias_mant of a netx input layer in (x, y, c) order
    (default 0, which is what an input layer without a bias gets)."""
    pops, projs, names, shapes = [], [], [], []
    first = net.layers[0]
    kind = _neuron_kind(net)
    has_input = first.kind == "input" and first.neuron is not None
    bias_driven = has_input and kind == "lif"
    encoder = has_input and kind == "sdnn"  # graded frames enter through the delta encoder
    layers, prev_shape, start = net.layers, None, 0
    if not has_input:  # external spikes enter through a relay population
        relay_shape = first.shape if first.kind == "input" else (first.weight.shape[1],)
        if first.kind == "input":
            layers, start = net.layers[1:], 1
        pops.append(Population("input", int(np.prod(relay_shape)), RELAY))
        names.append("input")
        shapes.append(tuple(relay_shape))
        prev_shape = tuple(relay_shape)
    for i, layer in enumerate(layers, start):
        where = f"layer {i}"
        name = f"L{i}_{layer.kind}"
        try:
            params = _params(layer, where, kind)
        except AtomsparkError as exc:  # bit-width checks of the unit model name the layer
            text = str(exc)
            raise AtomsparkError(
                text if text.startswith("NET ") else f"NET {where}: {text}"
            ) from None
        if layer.kind == "input":
            if i:
                raise AtomsparkError(f"NET {where}: an input layer must come first")
            if input_bias is not None and bias_driven:
                params = LIFFixedParams(du=params.du, dv=params.dv, vth=params.vth,
                                        bias_mant=input_bias, bias_exp=NETX_BIAS_EXP)  # fmt: skip
        try:
            pops.append(Population(name, layer.size, params))
        except AtomsparkError as exc:  # bit widths checked by the unit model: name the layer
            raise AtomsparkError(f"NET {where}: {exc}") from None
        if layer.kind == "conv":
            if prev_shape is None or len(prev_shape) != 3:
                raise AtomsparkError(f"NET {where}: a conv layer needs a (C, H, W) layer before it")
            delay = ENCODER_DELAY if encoder and len(names) == 1 else 1
            mat = conv_matrix(layer, prev_shape, where)
            projs.append(Projection(names[-1], name, mat, delays=delay))
        elif layer.kind == "dense":
            extra = ENCODER_DELAY - 1 if encoder and len(names) == 1 else 0
            projs.append(_dense_projection(layer, names[-1], name, prev_shape, where, extra))
        names.append(name)
        shapes.append(layer.shape)
        prev_shape = layer.shape
    graph = Graph(pops, projs)
    return NetxGraph(graph, names, shapes, names[0], bias_driven, encoder)


def effective_dense_weights(layer: NetxLayer, where: str) -> np.ndarray:
    """The integer weights a Loihi Dense applies, (out, in) in the file's input order.

    Lava right-shifts each step's summed input by -weight_exp. netx shifted the weights left by
    the same amount and Lava's truncation only drops bits below it, so every weight is a
    multiple of 2**-weight_exp and the shift folds into the weights exactly (any delays work).
    """
    shifted, bits, exp, mode = netx_dense_weights(layer.weight, where)
    w = fx.lava_dense_weights(shifted, bits, mode)
    if np.any(w % (1 << -exp)):
        raise AtomsparkError(f"NET {where}: weights do not fold their exponent {exp} exactly")
    return w >> -exp


def _dense_projection(
    layer, source: str, target: str, prev_shape, where: str, extra_delay: int = 0
) -> Projection:
    n_in = int(np.prod(prev_shape))
    if layer.weight.shape[1] != n_in:
        raise AtomsparkError(
            f"NET {where}: weight has {layer.weight.shape[1]} inputs, the layer before has {n_in}"
        )
    w = effective_dense_weights(layer, where)[:, _flatten_order(prev_shape)]
    delays = 1 + extra_delay
    if layer.delay is not None:
        d = np.minimum(layer.delay, 62)  # netx clamps delays to 62
        if d.size == 1:
            d = np.full(w.shape, int(d.reshape(-1)[0]))
        elif d.ndim == 1 and d.size == w.shape[0]:
            d = np.repeat(d[:, None], w.shape[1], axis=1)
        elif d.ndim == 1 and d.size == w.shape[1]:
            d = np.repeat(d[None, :], w.shape[0], axis=0)[:, _flatten_order(prev_shape)]
        elif d.shape == layer.weight.shape:
            d = d[:, _flatten_order(prev_shape)]
        else:
            raise AtomsparkError(f"NET {where}: delay of shape {d.shape} fits no weight axis")
        delays = d + 1 + extra_delay  # Lava's delay 0 is Dense's one-step buffer: engine's 1
        delays = int(delays.flat[0]) if np.all(delays == delays.flat[0]) else delays
    if not np.isscalar(delays):
        delays = _all_entries(delays)
    return Projection(source, target, _all_entries(w), delays=delays)


def _all_entries(dense: np.ndarray) -> sp.csr_matrix:
    """Every entry stored, zeros included: a Loihi Dense keeps its whole weight matrix, and the
    engine then counts the same synaptic operations."""
    rows, cols = np.indices(dense.shape)
    return sp.csr_matrix((dense.ravel(), (rows.ravel(), cols.ravel())), shape=dense.shape)

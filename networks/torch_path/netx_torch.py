"""The torch modules of a netx network, for NeuroBench: nn.Conv2d / nn.Linear connection
layers and a Loihi fixed-point LIF that is an snntorch SpikingNeuron (NeuroBench's hooks look
for those), computing exactly what the event engine and Lava compute.

Timing follows Lava: a connection layer turns this step's spikes into the current its neurons
receive next step, so NeuroBench's connection hooks see each layer's spikes in the step they
are emitted, as the engine counts its synaptic operations. Use with
`neurobench.models.SNNTorchModel`: `net(x_t)` returns (spikes, voltage) of the last layer;
x_t is the input layer's bias_mant (batch, C, H, W) or the input spikes (batch, n).
"""

from __future__ import annotations

import numpy as np
import snntorch as snn
import torch
from atomspark.networks.netx_file import NetxNetwork
from atomspark.networks.netx_graph import NETX_BIAS_EXP, effective_dense_weights
from atomspark.sim import fixed_point as fx
from torch import nn


def _decay(x: torch.Tensor, d: int) -> torch.Tensor:
    prod = x * (fx.DECAY_UNITY - d)
    return torch.sign(prod) * (prod.abs() >> fx.DECAY_SHIFT)


def _wrap32(x: torch.Tensor) -> torch.Tensor:
    return ((x + 2**31) & (2**32 - 1)) - 2**31


class LoihiLIF(snn.Leaky):
    """Lava's PyLifModelBitAcc in torch int64 (see sim/fixed_point.lif_fixed_reference_step)."""

    def __init__(self, du: int, dv: int, vth: int, bias_mant: np.ndarray | int = 0) -> None:
        super().__init__(beta=1.0, init_hidden=False)
        self.du, self.dv, self.vth = int(du), int(dv), int(vth)
        bias = torch.as_tensor(np.asarray(bias_mant, np.int64)) << NETX_BIAS_EXP
        self.register_buffer("bias", bias)
        self.u = self.v = None

    def reset_state(self) -> None:
        self.u = self.v = None

    def forward(self, a_in: torch.Tensor, bias: torch.Tensor | None = None):
        a = _wrap32(a_in.to(torch.int64))
        if self.u is None:
            self.u = torch.zeros_like(a)
            self.v = torch.zeros_like(a)
        cur = _wrap32(
            _decay(self.u, self.du + fx.CURRENT_DECAY_OFFSET) + _wrap32(a << fx.ACT_SHIFT)
        )
        half = fx.STATE_MAX
        cur = torch.where(
            cur > half, cur - 2 * half, torch.where(cur <= -half, cur + 2 * half, cur)
        )
        b = self.bias if bias is None else bias << NETX_BIAS_EXP
        v = (_decay(self.v, self.dv) + cur + b).clamp(-fx.V_LIMIT, fx.V_LIMIT)
        spikes = v > (self.vth << fx.VTH_SHIFT)
        self.u, self.v = cur, torch.where(spikes, torch.zeros_like(v), v)
        return spikes.to(torch.float64), self.v.to(torch.float64)


class NetxTorch(nn.Module):
    """Connection layers (`conns[k]` feeds neuron layer k; None for an input layer) and LIFs."""

    def __init__(self, net: NetxNetwork) -> None:
        super().__init__()
        conns, neurons = [], []
        first = net.layers[0]
        shape_only = first.kind == "input" and first.neuron is None  # spikes come from outside
        layers = net.layers[1:] if shape_only else net.layers
        for i, layer in enumerate(layers, int(shape_only)):
            where = f"layer {i}"
            n = layer.neuron
            bias = 0 if layer.bias is None else layer.bias.reshape(-1)
            if layer.kind == "input":
                conns.append(None)
            elif layer.kind == "conv":
                co, ci_g, kh, kw = layer.weight.shape
                conv = nn.Conv2d(ci_g * layer.groups, co, (kh, kw), layer.stride, layer.padding,
                                 layer.dilation, layer.groups, bias=False, dtype=torch.float64)  # fmt: skip
                conv.weight.data = torch.as_tensor(layer.weight, dtype=torch.float64)
                conns.append(conv)
                bias = np.reshape(bias, (-1, 1, 1)) if np.ndim(bias) else bias
            else:
                w = effective_dense_weights(layer, where)
                lin = nn.Linear(w.shape[1], w.shape[0], bias=False, dtype=torch.float64)
                lin.weight.data = torch.as_tensor(w, dtype=torch.float64)
                conns.append(nn.Sequential(nn.Flatten(), lin) if layer.flatten_before else lin)
            neurons.append(LoihiLIF(n.i_decay - 1, n.v_decay, n.vth, bias))
        self.shapes = [tuple(layer.shape) for layer in layers]
        self.input_is_bias = first.kind == "input" and not shape_only
        self.conns = nn.ModuleList([c if c is not None else nn.Identity() for c in conns])
        self.neurons = nn.ModuleList(neurons)
        self.pending: list[torch.Tensor | None] = [None] * len(neurons)

    def reset(self) -> None:
        self.pending = [None] * len(self.neurons)
        for n in self.neurons:
            n.reset_state()

    def forward(self, x: torch.Tensor):
        spikes = []
        for k, neuron in enumerate(self.neurons):
            if k == 0 and self.input_is_bias:
                s, v = neuron(torch.zeros_like(x, dtype=torch.int64), bias=x.to(torch.int64))
            else:
                a = self.pending[k]
                if a is None:  # nothing has arrived yet
                    a = torch.zeros((x.shape[0],) + self.shapes[k], dtype=torch.int64)
                s, v = neuron(a)
            spikes.append(s)
        for k in range(len(self.neurons)):
            if k == 0 and self.input_is_bias:
                continue
            src = x.to(torch.float64) if k == 0 else spikes[k - 1]
            self.pending[k] = self.conns[k](src).round().to(torch.int64)
        return spikes[-1], v

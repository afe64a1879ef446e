"""LavaNet: the network as Lava will run it (populations + one-step graded/binary connections),
built from a sim Graph with every Lava restriction checked, plus its plain NumPy reference run.

The reference run follows Lava's LoihiProtocol timing exactly: a connection sends at step t what
it accumulated from its source's output at step t-1, which is the engine's delay-1 projection.
In fixed point each connection's output wraps to 32 bits (Lava's int32 port), as the engine's
per-channel accumulators of an integer VN population do.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from atomspark.sim import fixed_point as fx
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.units_lif import LIFFixedParams, LIFParams, _per_unit
from atomspark.sim.units_vn import VNParams
from atomspark.sim.units_vn_fixed import (
    VNFixedParams,
    lava_sparse_accumulate,
    lava_weight_mantissas,
    vn_fixed_step,
)
from atomspark.sim.validation import AtomsparkError

MODELS = ("lif", "vn")
ARITHMETIC = ("float", "fixed")


@dataclass(frozen=True)
class LavaPopulation:
    """One Lava neuron Process: model 'lif' or 'vn', arithmetic 'float' or 'fixed'.

    scalars: du, dv, vth (LIF); eta, event_threshold (VN float); eta_mant, eta_shift, frac_bits,
    c_shift (VN fixed). arrays (per unit): bias_mant, bias_exp / bias, u_init, v_init (LIF);
    drive, thresh, g_init (VN)."""

    name: str
    model: str
    arithmetic: str
    size: int
    scalars: dict
    arrays: dict

    def __post_init__(self) -> None:
        if self.model not in MODELS or self.arithmetic not in ARITHMETIC:
            raise AtomsparkError(
                f"{self.name}: model/arithmetic must be in {MODELS} x {ARITHMETIC}, "
                f"got {self.model!r}/{self.arithmetic!r}"
            )


@dataclass(frozen=True)
class LavaConnection:
    """Sparse connection source -> target; weights (n_target, n_source) CSR; graded payloads when
    the source is a VN population. Fixed point: weights are Lava's 8-bit integers."""

    source: str
    target: str
    weights: sp.csr_matrix
    weight_exp: int = 0
    graded: bool = False


@dataclass(frozen=True)
class LavaNet:
    populations: list[LavaPopulation]
    connections: list[LavaConnection] = field(default_factory=list)

    @property
    def arithmetic(self) -> str:
        modes = {p.arithmetic for p in self.populations}
        if len(modes) != 1:
            raise AtomsparkError(f"populations mix arithmetic modes {sorted(modes)}")
        return modes.pop()

    def population(self, name: str) -> LavaPopulation:
        for p in self.populations:
            if p.name == name:
                return p
        raise AtomsparkError(f"population {name!r}: not in the network")


def from_graph(graph: Graph) -> LavaNet:
    """Translate a sim Graph; raises an AtomsparkError for anything Lava cannot run identically."""
    if not isinstance(graph, Graph):
        raise AtomsparkError(f"graph: expected an atomspark.sim.graph.Graph, got {type(graph)}")
    pops = [_population(p.name, p.size, p.params) for p in graph.populations]
    conns = []
    for proj in graph.projections:
        label = f"projection {proj.source}->{proj.target}"
        if proj.delay.size and np.any(proj.delay != 1):
            raise AtomsparkError(
                f"{label} delays: Lava's Sparse delivers after exactly one step; only delay 1 is "
                f"exported, got delays in [{proj.delay.min()}, {proj.delay.max()}]"
            )
        _check_channel(label, graph.population(proj.target), proj.channel)
        n_tgt, n_src = proj.shape
        fan_out = sp.csr_matrix((proj.data, proj.indices, proj.indptr), shape=(n_src, n_tgt))
        weights = sp.csr_matrix(fan_out.T)
        weights.sort_indices()
        tgt = graph.population(proj.target)
        if tgt.is_fixed_point:
            weights.data = lava_weight_mantissas(label, weights.data).astype(np.float64)
            weights.eliminate_zeros()
        src = graph.population(proj.source)
        conns.append(
            LavaConnection(
                proj.source,
                proj.target,
                weights,
                int(proj.weight_exp),
                graded=isinstance(src.params, (VNParams, VNFixedParams)),
            )
        )
    net = LavaNet(pops, conns)
    _ = net.arithmetic
    return net


def _check_channel(label: str, target, channel: int) -> None:
    """Lava's LIF has one input current. An integer VN target may spread its projections over
    channels (separate 32-bit accumulators, as separate Sparse processes have): the values are
    the same either way, because c wraps modulo 2**24 and 2**32 is a multiple of it."""
    if channel != 0 and not isinstance(target.params, VNFixedParams):
        raise AtomsparkError(f"{label} channel: Lava's LIF has one input current (channel 0)")


def _population(name: str, size: int, params) -> LavaPopulation:
    if isinstance(params, VNFixedParams):
        state = params.init_state(size)
        scalars = {
            "frac_bits": int(params.frac_bits),
            "eta_mant": int(params.eta_mant),
            "eta_shift": int(params.eta_shift),
            "c_shift": int(params.c_shift),
        }
        arrays = {"drive": state["drive"], "thresh": state["thresh"], "g_init": state["g"]}
        return LavaPopulation(name, "vn", "fixed", size, scalars, arrays)
    if isinstance(params, LIFFixedParams):
        state = params.init_state(size)
        arrays = {
            "bias_mant": _per_unit("bias_mant", params.bias_mant, size, np.int64),
            "bias_exp": _per_unit("bias_exp", params.bias_exp, size, np.int64),
            "u_init": state["u"],
            "v_init": state["v"],
        }
        scalars = {"du": int(params.du), "dv": int(params.dv), "vth": int(params.vth)}
        return LavaPopulation(name, "lif", "fixed", size, scalars, arrays)
    if isinstance(params, LIFParams):
        if params.refractory != 0 or params.v_reset != 0 or params.du2 is not None:
            raise AtomsparkError(
                f"{name}: Lava's LIF has no refractory period, resets v to 0 and has one current; "
                f"got refractory={params.refractory}, v_reset={params.v_reset}, du2={params.du2}"
            )
        state = params.init_state(size)
        arrays = {"bias": state["bias"], "u_init": state["u"], "v_init": state["v"]}
        scalars = {"du": float(params.du), "dv": float(params.dv), "vth": float(params.vth)}
        return LavaPopulation(name, "lif", "float", size, scalars, arrays)
    if isinstance(params, VNParams):
        if params.topk is not None:
            raise AtomsparkError(
                f"{name}.topk: hard top-k needs a population-wide sort; not exported"
            )
        state = params.init_state(size)
        arrays = {
            "drive": state["drive"].astype(np.float64),
            "thresh": state["thresh"].astype(np.float64),
            "g_init": state["g"].astype(np.float64),
        }
        scalars = {"eta": float(params.eta), "event_threshold": float(params.event_threshold)}
        return LavaPopulation(name, "vn", "float", size, scalars, arrays)
    raise AtomsparkError(f"{name}: no Lava export for unit model {type(params).__name__}")


def reference_run(net: LavaNet, steps: int) -> dict[str, np.ndarray]:
    """Run `net` in plain NumPy with Lava's timing; returns each population's output per step,
    (steps, size): spikes (0/1) for LIF, sent code changes dg for VN (the first event of an
    atom carries its whole initial code, so g_sent = cumsum(dg) as in the engine)."""
    state = {p.name: _init_state(p) for p in net.populations}
    out = {p.name: np.zeros((steps, p.size), _out_dtype(p)) for p in net.populations}
    prev = {p.name: np.zeros(p.size, _out_dtype(p)) for p in net.populations}
    for t in range(steps):
        a_in = {p.name: np.zeros(p.size, _in_dtype(p)) for p in net.populations}
        for conn in net.connections:
            tgt = net.population(conn.target)
            if tgt.arithmetic == "fixed":
                w = conn.weights.astype(np.int64)
                a_in[conn.target] += lava_sparse_accumulate(w, prev[conn.source], conn.weight_exp)[
                    0
                ]
            else:
                a_in[conn.target] += conn.weights @ prev[conn.source]
        for p in net.populations:
            prev[p.name] = _step(p, state[p.name], a_in[p.name])
            out[p.name][t] = prev[p.name]
    return out


def _out_dtype(p: LavaPopulation):
    return np.int64 if p.arithmetic == "fixed" else np.float64


_in_dtype = _out_dtype


def _init_state(p: LavaPopulation) -> dict:
    if p.model == "lif":
        return {"u": p.arrays["u_init"].copy(), "v": p.arrays["v_init"].copy()}
    g0 = p.arrays["g_init"].copy()
    return {"g": g0, "g_sent": np.zeros_like(g0), "c": np.zeros_like(g0)}


def _step(p: LavaPopulation, s: dict, a_in: np.ndarray) -> np.ndarray:
    k, a = p.scalars, p.arrays
    if p.model == "lif" and p.arithmetic == "fixed":
        bias = a["bias_mant"] << a["bias_exp"]
        s["u"], s["v"], spikes, _, _ = fx.lif_fixed_reference_step(
            s["u"], s["v"], a_in, k["du"], k["dv"], k["vth"], bias
        )
        return spikes.astype(np.int64)
    if p.model == "lif":
        s["u"] = s["u"] * (1 - k["du"]) + a_in
        s["v"] = s["v"] * (1 - k["dv"]) + s["u"] + a["bias"]
        spikes = s["v"] > k["vth"]
        s["v"][spikes] = 0.0
        return spikes.astype(np.float64)
    if p.arithmetic == "fixed":
        s["g"], s["g_sent"], s["c"], dg, _, _ = vn_fixed_step(
            s["g"],
            s["g_sent"],
            s["c"],
            a_in,
            a["drive"],
            a["thresh"],
            k["eta_mant"],
            k["eta_shift"],
        )
        return dg
    s["c"] = s["c"] + a_in
    x = s["g"] + k["eta"] * (a["drive"] - s["c"])
    s["g"] = np.sign(x) * np.maximum(np.abs(x) - a["thresh"], 0.0)
    d = s["g"] - s["g_sent"]
    send = d != 0 if k["event_threshold"] == 0 else np.abs(d) > k["event_threshold"]
    s["g_sent"] = np.where(send, s["g"], s["g_sent"])
    return np.where(send, d, 0.0)


def to_graph(net: LavaNet) -> Graph:
    """The engine Graph that runs `net` (the inverse of from_graph), so that a LavaNet or a
    bundle can be checked against the engine too. Float VN thresholds come back as
    lam = thresh / eta (equal up to rounding); integer VN connections get one channel each."""
    pops = [Population(p.name, p.size, _unit_params(net, p)) for p in net.populations]
    next_channel: dict[str, int] = {}
    projs = []
    for c in net.connections:
        tgt = net.population(c.target)
        ch = 0
        if tgt.model == "vn" and tgt.arithmetic == "fixed":
            ch = next_channel.get(c.target, 0)
            next_channel[c.target] = ch + 1
        projs.append(Projection(c.source, c.target, c.weights, weight_exp=c.weight_exp, channel=ch))
    return Graph(pops, projs)


def _unit_params(net: LavaNet, p: LavaPopulation):
    k, a = p.scalars, p.arrays
    if p.model == "lif" and p.arithmetic == "fixed":
        return LIFFixedParams(
            du=k["du"],
            dv=k["dv"],
            vth=k["vth"],
            bias_mant=a["bias_mant"],
            bias_exp=a["bias_exp"],
            v_init=a["v_init"],
            u_init=a["u_init"],
        )
    if p.model == "lif":
        return LIFParams(
            du=k["du"],
            dv=k["dv"],
            vth=k["vth"],
            bias=a["bias"],
            v_init=a["v_init"],
            u_init=a["u_init"],
        )
    if p.arithmetic == "fixed":
        n_inputs = sum(c.target == p.name for c in net.connections)
        return VNFixedParams(
            frac_bits=k["frac_bits"],
            eta_mant=k["eta_mant"],
            eta_shift=k["eta_shift"],
            drive=a["drive"],
            thresh=a["thresh"],
            c_shift=k["c_shift"],
            g_init=a["g_init"],
            n_inputs=max(n_inputs, 1),
        )
    return VNParams(
        eta=k["eta"],
        lam=a["thresh"] / k["eta"],
        drive=a["drive"],
        event_threshold=k["event_threshold"],
        g_init=a["g_init"],
    )

"""LavaNet: the network as Lava will run it (populations + one-step graded/binary connections),
built from a sim Graph with every Lava restriction checked, plus its plain NumPy reference run.

Outputs per population and step: spikes (LIF), code changes dg (VN), and for RSGN nodes two
records: the sent vector payloads x_j = alpha_j h_j flattened to (N * d,) under the population's
name, and the activations alpha (N,) under `alpha_record(name)`; in fixed point these are the
integer unit's Q.10 payloads and Q.12 activations (sim/units/rsgn_fixed.py).

The reference run follows Lava's LoihiProtocol timing exactly: a connection sends at step t what
it accumulated from its source's output at step t-1, which is the engine's delay-1 projection.
In fixed point each connection's output wraps to 32 bits (Lava's int32 port), as the engine's
per-channel accumulators of an integer VN population do (integer RSGN nodes wrap their summed
message themselves).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from atomspark.sim import fixed_point as fx
from atomspark.sim.core import AtomsparkError
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.unit_model import add_hook, model_of
from atomspark.sim.units.lif import LIFFixedParams, LIFParams
from atomspark.sim.units.per_unit import per_unit
from atomspark.sim.units.rsgn import RSGNNodeParams, rsgn_emitted, rsgn_node_step
from atomspark.sim.units.rsgn_fixed import RSGNFixedParams, emitted_payloads, step_nodes
from atomspark.sim.units.vn import VNParams
from atomspark.sim.units.vn_fixed import (
    VNFixedParams,
    lava_sparse_accumulate,
    lava_weight_mantissas,
    vn_fixed_step,
)

MODELS = ("lif", "vn", "rsgn")
ARITHMETIC = ("float", "fixed")
RSGN_UNIT_MODELS = ("rsgn", "rsgn_fixed")  # their projections keep stored zero weights (flags)


def alpha_record(name: str) -> str:
    """Name of the record holding an RSGN population's activations alpha per step."""
    return f"{name}.alpha"


@dataclass(frozen=True)
class LavaPopulation:
    """One Lava neuron Process: model 'lif', 'vn' or 'rsgn', arithmetic 'float' or 'fixed'.

    scalars: du, dv, vth (LIF); eta, event_threshold (VN float); eta_mant, eta_shift, frac_bits,
    c_shift (VN fixed); width, temperature, signal_gain, cutoff, layer_norm_eps, event_rule
    (RSGN float); width, w_h_shift, m_shift, signal_gain, inv_t_mant, inv_t_shift, cutoff,
    layer_norm_eps, event_rule (RSGN fixed, the integers of RSGNFixedParams). arrays (per unit):
    bias_mant, bias_exp / bias, u_init, v_init (LIF); drive, thresh, g_init (VN); thresholds,
    alpha_init, h_init (N, d), the shared w_h (fixed: w_h_mant), b_h, ln_gain, ln_bias and the
    pools as member CSR pool_indptr, pool_indices (row i = the nodes of node i's pool) (RSGN)."""

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

    @property
    def output_size(self) -> int:
        """Length of one step's output: N * d vector payload for RSGN nodes, else one per unit."""
        return self.size * int(self.scalars["width"]) if self.model == "rsgn" else self.size


@dataclass(frozen=True)
class LavaConnection:
    """Sparse connection source -> target; weights (n_target, n_source) CSR; graded payloads when
    the source is a VN or RSGN population. Fixed point: weights are Lava's 8-bit integers. RSGN:
    weights are per node (W^T, stored zeros kept: each stored entry is a synapse); build_lava
    expands them to the per-component kron(W^T, I_d)."""

    source: str
    target: str
    weights: sp.csr_matrix
    weight_exp: int = 0
    graded: bool = False

    def __post_init__(self) -> None:
        label = f"projection {self.source}->{self.target}"
        object.__setattr__(self, "weight_exp", fx.check_weight_exp(label, self.weight_exp))


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
            if not np.any(weights.data):
                raise AtomsparkError(
                    f"{label}: every weight mantissa is 0 (or none is stored), so it would deliver nothing on the "
                    "chip; rescale the model before quantising or drop the projection"
                )
            if model_of(tgt.params).name not in RSGN_UNIT_MODELS:
                weights.eliminate_zeros()
        src = graph.population(proj.source)
        conns.append(
            LavaConnection(
                proj.source,
                proj.target,
                weights,
                int(proj.weight_exp),
                graded=model_of(src.params).graded,
            )
        )
    net = LavaNet(pops, conns)
    _ = net.arithmetic
    return net


def _check_channel(label: str, target, channel: int) -> None:
    """Lava's LIF has one input current. An integer VN target may spread its projections over
    channels (separate 32-bit accumulators, as separate Sparse processes have): the values are
    the same either way, because c wraps modulo 2**24 and 2**32 is a multiple of it."""
    if channel != 0 and model_of(target.params).name != "vn_fixed":
        raise AtomsparkError(f"{label} channel: Lava's LIF has one input current (channel 0)")


def _population(name: str, size: int, params) -> LavaPopulation:
    """The population's Lava description, from its unit model's "lava" hook (registered below);
    a model without one cannot be exported."""
    return model_of(params).hook("lava", "Lava export")(name, size, params)


def _vn_fixed_population(name: str, size: int, params: VNFixedParams) -> LavaPopulation:
    state = params.init_state(size)
    scalars = {
        "frac_bits": int(params.frac_bits),
        "eta_mant": int(params.eta_mant),
        "eta_shift": int(params.eta_shift),
        "c_shift": int(params.c_shift),
    }
    arrays = {"drive": state["drive"], "thresh": state["thresh"], "g_init": state["g"]}
    return LavaPopulation(name, "vn", "fixed", size, scalars, arrays)


def _lif_fixed_population(name: str, size: int, params: LIFFixedParams) -> LavaPopulation:
    state = params.init_state(size)
    arrays = {
        "bias_mant": per_unit("bias_mant", params.bias_mant, size, np.int64),
        "bias_exp": per_unit("bias_exp", params.bias_exp, size, np.int64),
        "u_init": state["u"],
        "v_init": state["v"],
    }
    scalars = {"du": int(params.du), "dv": int(params.dv), "vth": int(params.vth)}
    return LavaPopulation(name, "lif", "fixed", size, scalars, arrays)


def _lif_population(name: str, size: int, params: LIFParams) -> LavaPopulation:
    if params.refractory != 0 or params.v_reset != 0 or params.du2 is not None:
        raise AtomsparkError(
            f"{name}: Lava's LIF has no refractory period, resets v to 0 and has one current; "
            f"got refractory={params.refractory}, v_reset={params.v_reset}, du2={params.du2}"
        )
    state = params.init_state(size)
    arrays = {"bias": state["bias"], "u_init": state["u"], "v_init": state["v"]}
    scalars = {"du": float(params.du), "dv": float(params.dv), "vth": float(params.vth)}
    return LavaPopulation(name, "lif", "float", size, scalars, arrays)


def _vn_population(name: str, size: int, params: VNParams) -> LavaPopulation:
    if params.topk is not None:
        raise AtomsparkError(f"{name}.topk: hard top-k needs a population-wide sort; not exported")
    state = params.init_state(size)
    arrays = {
        "drive": state["drive"].astype(np.float64),
        "thresh": state["thresh"].astype(np.float64),
        "g_init": state["g"].astype(np.float64),
    }
    scalars = {"eta": float(params.eta), "event_threshold": float(params.event_threshold)}
    return LavaPopulation(name, "vn", "float", size, scalars, arrays)


def _pool_members(fan_out_indptr, fan_out_indices, size: int) -> dict[str, np.ndarray]:
    """The pools as member CSR (row i = the nodes of node i's pool) from the kernels' fan-out CSR
    (row i = the pools node i belongs to)."""
    members = sp.csr_matrix(
        (np.ones(fan_out_indices.size), fan_out_indices, fan_out_indptr), shape=(size, size)
    ).T.tocsr()
    members.sort_indices()
    return {
        "pool_indptr": members.indptr.astype(np.int64),
        "pool_indices": members.indices.astype(np.int64),
    }


def _pool_matrix(p: LavaPopulation) -> sp.csr_matrix:
    """An RSGN population's pool matrix (N, N) from its member CSR."""
    a = p.arrays
    return sp.csr_matrix(
        (np.ones(a["pool_indices"].size), a["pool_indices"], a["pool_indptr"]),
        shape=(p.size, p.size),
    )


def _rsgn_population(name: str, size: int, params: RSGNNodeParams) -> LavaPopulation:
    k = params.kernel_arrays
    state = params.init_state(size)
    arrays = {
        "thresholds": k.thresholds.copy(),
        "w_h": k.w_h.copy(),
        "b_h": k.b_h.copy(),
        "ln_gain": k.ln_gain.copy(),
        "ln_bias": k.ln_bias.copy(),
        **_pool_members(k.pool_indptr, k.pool_indices, size),
        "alpha_init": state["alpha"],
        "h_init": state["h"],
    }
    scalars = {
        "width": params.width,
        "temperature": float(params.temperature),
        "signal_gain": float(params.signal_gain),
        "cutoff": float(params.cutoff),
        "layer_norm_eps": float(params.layer_norm_eps),
        "event_rule": bool(params.event_rule),
    }
    return LavaPopulation(name, "rsgn", "float", size, scalars, arrays)


RSGN_FIXED_SCALARS = ("w_h_shift", "m_shift", "signal_gain", "inv_t_mant", "inv_t_shift", "cutoff",
                      "layer_norm_eps")  # fmt: skip


def _rsgn_fixed_population(name: str, size: int, params: RSGNFixedParams) -> LavaPopulation:
    """Integer RSGN nodes: RSGNFixedParams' integers, named as RSGNFixedNodes takes them."""
    k = params.kernel_arrays
    state = params.init_state(size)
    arrays = {
        "thresholds": k["thresholds"].copy(),
        "w_h_mant": k["wh"].copy(),
        "b_h": k["bh"].copy(),
        "ln_gain": k["lng"].copy(),
        "ln_bias": k["lnb"].copy(),
        **_pool_members(k["pool_indptr"], k["pool_indices"], size),
        "alpha_init": state["alpha"],
        "h_init": state["h"],
    }
    scalars = {"width": params.width, **{f: int(getattr(params, f)) for f in RSGN_FIXED_SCALARS}}
    scalars["event_rule"] = bool(params.event_rule)
    return LavaPopulation(name, "rsgn", "fixed", size, scalars, arrays)


for _model, _export in (
    ("vn", _vn_population),
    ("vn_fixed", _vn_fixed_population),
    ("lif", _lif_population),
    ("lif_fixed", _lif_fixed_population),
    ("rsgn", _rsgn_population),
    ("rsgn_fixed", _rsgn_fixed_population),
):
    add_hook(_model, "lava", _export)


def rsgn_node_params(p: LavaPopulation) -> RSGNNodeParams:
    """The engine's RSGN unit parameters of an RSGN LavaPopulation (validated on use)."""
    k, a = p.scalars, p.arrays
    return RSGNNodeParams(
        thresholds=a["thresholds"],
        w_h=a["w_h"],
        b_h=a["b_h"],
        ln_gain=a["ln_gain"],
        ln_bias=a["ln_bias"],
        pool=_pool_matrix(p),
        temperature=k["temperature"],
        signal_gain=k["signal_gain"],
        cutoff=k["cutoff"],
        layer_norm_eps=k["layer_norm_eps"],
        event_rule=bool(k["event_rule"]),
        alpha_init=a["alpha_init"],
        h_init=a["h_init"],
    )


def rsgn_fixed_params(p: LavaPopulation) -> RSGNFixedParams:
    """The engine's integer RSGN unit parameters of a fixed-point RSGN LavaPopulation."""
    k, a = p.scalars, p.arrays
    return RSGNFixedParams(
        thresholds=a["thresholds"],
        w_h_mant=a["w_h_mant"],
        b_h=a["b_h"],
        ln_gain=a["ln_gain"],
        ln_bias=a["ln_bias"],
        pool=_pool_matrix(p),
        event_rule=bool(k["event_rule"]),
        alpha_init=a["alpha_init"],
        h_init=a["h_init"],
        **{f: int(k[f]) for f in RSGN_FIXED_SCALARS},
    )


def sent_payloads(p: LavaPopulation, alpha: np.ndarray, h: np.ndarray) -> np.ndarray:
    """An RSGN population's sent payloads per step, (steps, N * d), from its alpha (steps, N) and
    h (steps, N, d) traces: alpha h (float) or the integer unit's (h alpha) >> 12 (fixed), zero
    rows for silent nodes."""
    cut = p.scalars["cutoff"]
    if p.arithmetic == "fixed":
        x = np.stack([emitted_payloads(a, hh, cut) for a, hh in zip(alpha, h)])
    else:
        x = np.stack([rsgn_emitted(a, hh, cut) for a, hh in zip(alpha, h)])
    return x.reshape(len(alpha), -1)


def output_records(p: LavaPopulation) -> dict[str, int]:
    """The per-step records a population produces on Lava and in reference_run: name -> size."""
    if p.model == "rsgn":
        return {p.name: p.output_size, alpha_record(p.name): p.size}
    return {p.name: p.size}


def event_counts(net: LavaNet, outputs: dict[str, np.ndarray]) -> dict[str, int]:
    """Events each population sent over a run: nonzero outputs (spikes, VN changes); RSGN: nodes
    with alpha > cutoff (one vector event each, whatever its payload)."""
    counts = {}
    for p in net.populations:
        if p.model == "rsgn":
            counts[p.name] = int(
                np.count_nonzero(outputs[alpha_record(p.name)] > p.scalars["cutoff"])
            )
        else:
            counts[p.name] = int(np.count_nonzero(outputs[p.name]))
    return counts


def reference_run(net: LavaNet, steps: int) -> dict[str, np.ndarray]:
    """Run `net` in plain NumPy with Lava's timing; returns each population's output per step,
    (steps, size): spikes (0/1) for LIF, sent code changes dg for VN (the first event of an
    atom carries its whole initial code, so g_sent = cumsum(dg) as in the engine); RSGN: sent
    payloads (steps, N * d) and alpha (steps, N) (see output_records). An RSGN population's first
    step emits its ignition and updates nothing, as the engine's step 0 and RSGNNodes do."""
    state = {p.name: _init_state(p) for p in net.populations}
    out = {
        key: np.zeros((steps, size), _out_dtype(p))
        for p in net.populations
        for key, size in output_records(p).items()
    }
    prev = {p.name: np.zeros(p.output_size, _out_dtype(p)) for p in net.populations}
    for t in range(steps):
        a_in = {p.name: np.zeros(p.output_size, _in_dtype(p)) for p in net.populations}
        flags = {p.name: np.zeros(p.size) for p in net.populations if p.model == "rsgn"}
        for conn in net.connections:
            tgt = net.population(conn.target)
            if tgt.model == "rsgn":
                src = net.population(conn.source)
                sent = prev[conn.source].reshape(src.size, -1)
                w = conn.weights.astype(np.int64) if tgt.arithmetic == "fixed" else conn.weights
                a_in[conn.target] += (w @ sent).ravel()
                flags[conn.target] += _pattern(conn.weights) @ state[conn.source]["sent"]
            elif tgt.arithmetic == "fixed":
                w = conn.weights.astype(np.int64)
                a_in[conn.target] += lava_sparse_accumulate(w, prev[conn.source], conn.weight_exp)[
                    0
                ]
            else:
                a_in[conn.target] += conn.weights @ prev[conn.source]
        for p in net.populations:
            if p.model == "rsgn":
                prev[p.name] = _rsgn_step(p, state[p.name], a_in[p.name], flags[p.name] > 0)
                out[alpha_record(p.name)][t] = state[p.name]["alpha"]
            else:
                prev[p.name] = _step(p, state[p.name], a_in[p.name])
            out[p.name][t] = prev[p.name]
    return out


def _pattern(weights: sp.csr_matrix) -> sp.csr_matrix:
    """1 at every stored synapse (zero weights included): who receives an event from whom."""
    return sp.csr_matrix(
        (np.ones(weights.indices.size), weights.indices, weights.indptr), shape=weights.shape
    )


def _rsgn_step(p: LavaPopulation, s: dict, a_in: np.ndarray, received: np.ndarray) -> np.ndarray:
    """Reference of RSGNNodes / RSGNFixedNodes: ignition on the first step, then the unit's
    population update (rsgn_node_step, or the integer step_nodes on the raw summed messages);
    returns the sent payloads flattened and keeps the sender flags in s["sent"] for the flag
    connection."""
    cutoff, event_rule = p.scalars["cutoff"], p.scalars["event_rule"]
    if s["ignited"]:
        m = a_in.reshape(p.size, -1)
        if p.arithmetic == "fixed":
            step_nodes(s["alpha"], s["h"], m, received, s["kernel"], event_rule)
        else:
            s["alpha"], s["h"], _ = rsgn_node_step(
                s["alpha"], s["h"], m, received, s["kernel"], event_rule
            )
    s["ignited"] = True
    s["sent"] = (s["alpha"] > cutoff).astype(np.float64)
    if p.arithmetic == "fixed":
        return emitted_payloads(s["alpha"], s["h"], cutoff).ravel()
    return rsgn_emitted(s["alpha"], s["h"], cutoff).ravel()


def _rsgn_params(p: LavaPopulation) -> RSGNNodeParams | RSGNFixedParams:
    return rsgn_fixed_params(p) if p.arithmetic == "fixed" else rsgn_node_params(p)


def _out_dtype(p: LavaPopulation):
    return np.int64 if p.arithmetic == "fixed" else np.float64


_in_dtype = _out_dtype


def _init_state(p: LavaPopulation) -> dict:
    if p.model == "rsgn":
        return {
            "alpha": p.arrays["alpha_init"].copy(),
            "h": p.arrays["h_init"].copy(),
            "kernel": _rsgn_params(p).kernel_arrays,
            "ignited": False,
            "sent": np.zeros(p.size),
        }
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
    if p.model == "rsgn":
        return _rsgn_params(p)
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

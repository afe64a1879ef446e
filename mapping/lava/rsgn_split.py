"""RSGN in the split layout, as the chip runs it: three kinds of neuron programs on separate cores,
the connections between them, and the schedule of one model step.

Kinds (compartment index within a kind):
* ``sum`` (message-sum cores, index k n + j, feature-major): A[j, k] accumulates
  m_raw[j, k] = sum_i W_ij x_i[k] through a per-feature copy of W (a graded Sparse) and sends
  m = wrap32(m_raw) >>> m_shift_j (fixed point; float: m = m_raw).
* ``transform`` (node cores, index j d + c, node-major): B[j, c] accumulates
  sum_k m[j, k] W_h[k, c] through the block-diagonal W_h (fixed: two Sparse, hi and lo 8-bit
  parts, when W_h is split), forms h_new = sat(S >>> wh_shift + b_h) and z = h_new + h, and sends
  the terms its node's norm needs: h_new^2, z, z^2 (fixed: as 24-bit parts, so every sum is
  exact). One step later it applies LayerNorm with the node's mu and 1/std, scales by the node's
  activation, and sends the payload x = alpha h >>> 12 and its state h.
* ``norm`` (node cores, index j, beside the node's transform compartments): R[j] sums the terms,
  computes ||h_new|| (integer square root), the soft threshold (sigmoid table), the event rule,
  LayerNorm's mu and 1/std (square root and one reciprocal); sends its pre-pool activation a to
  the members of its inhibition pool (the pool exchange, two 24-bit parts in fixed point), then
  divides by its pool's sum and sends (a >>> 28, mu, 1/std, alpha) back to its d transform
  compartments; it also sends the sender flag (alpha > cutoff) along W's synapse pattern.

Schedule: every connection is a Lava Sparse (one step of delay), so one model step takes PERIOD
chip steps, one phase each: emit (transform), sum, transform, norm, pool; chip step t (from 1)
is in phase (t - 1) % PERIOD. Chip step 1 emits the ignition; model step s ends at chip step
1 + PERIOD s. Every program runs every chip step and sends zeros outside its phases.

A stream of samples in one run (node["stream_period"], split_run.run_split_stream_lava): chip
step 1 is idle, then each sample has a reset phase, "load" (the programs take the sample's
ignition from the input and drop the previous sample's state), and its schedule as above.

The same program classes run in the NumPy reference (`reference_run`, kind-level) and inside the
Lava ProcessModels (mapping/lava/procs/rsgn_split.py, one process per core and kind), so the two
cannot differ in arithmetic; fixed point equals the engine's integer unit bit for bit
(sim/units/rsgn_fixed.py), float equals the float unit up to summation order.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp
from atomspark.mapping.lava.net import LavaNet, LavaPopulation
from atomspark.mapping.split_readout import readout_product
from atomspark.sim.core import AtomsparkError
from atomspark.sim.units import rsgn_fixed as rf
from numba import njit

PERIOD = 5
PHASES = ("emit", "sum", "transform", "norm", "pool")
PART_BITS = 24  # fixed point: a value sent in two parts v = (hi << 24) + lo, lo in [0, 2**24)
KINDS = ("sum", "transform", "norm")
MAX_POOL = 128  # pool sums of 24-bit parts stay below 2**31
CONTROL = ("act", "mu", "inv", "alpha")  # norm -> transform, one value per node each
IGNITION = {"transform": ("alpha0", "h0"), "norm": ("alpha0",)}  # a stream's input, per sample


def phase_of(t: int) -> str:
    """The phase of chip step t (t = 1 is the first)."""
    return PHASES[(t - 1) % PERIOD]


def chip_steps(engine_steps: int) -> int:
    """Chip steps that run the engine's `engine_steps` (ignition + K model steps)."""
    return 1 + PERIOD * (engine_steps - 1)


def stream_period(engine_steps: int) -> int:
    """Chip steps per sample of a stream: the load (the reset phase), then chip_steps."""
    return 1 + chip_steps(engine_steps)


def stream_phase(t: int, period: int) -> str:
    """The phase of chip step t in a stream of samples `period` chip steps apart: step 1 idle
    (the input sends the first ignition), then per sample a load and the samples' schedule."""
    if t < 2:
        return "idle"
    u = (t - 2) % period
    return "load" if u == 0 else PHASES[(u - 1) % PERIOD]


def stream_steps(samples: int, engine_steps: int, drain: int) -> int:
    """Chip steps of a stream of `samples`: the idle step, every sample's period, and `drain`
    more for the last sample's readout to arrive."""
    return 1 + samples * stream_period(engine_steps) + drain


def stream_load_step(sample: int, engine_steps: int) -> int:
    """The chip step at which sample `sample` (from 0) is loaded."""
    return 2 + sample * stream_period(engine_steps)


@dataclass(frozen=True)
class Channel:
    """One connection kind: source kind's out port -> target kind's in port through `weights`
    (target kind size, source kind size); graded: payloads (else 1-bit spikes)."""

    name: str
    source: str
    source_port: str
    target: str
    target_port: str
    weights: sp.csr_matrix
    graded: bool = True


# ------------------------------------------------------------------ the model's parameters


@dataclass(frozen=True)
class SplitModel:
    """The node parameters a split deployment needs (from an RSGN LavaPopulation) and W^T."""

    arithmetic: str
    n: int
    d: int
    w_t: sp.csr_matrix  # (target, source) node weights, stored zeros kept (fixed: mantissas)
    pool: sp.csr_matrix  # members: row i = the nodes whose activation enters node i's pool sum
    event_rule: bool
    node: dict = field(repr=False)  # per-node arrays and scalars (see from_population)

    @property
    def two_part_w_h(self) -> bool:
        return "wh_lo" in self.node


def with_readout(model: SplitModel, shift: int, engine_steps: int) -> SplitModel:
    """`model` whose transform programs send the readout's products r (shift: fixed point's
    mapping/split_readout.Readout.shift) at the last emit of `engine_steps` engine steps."""
    node = {**model.node, "readout_emit": int(engine_steps), "readout_shift": int(shift)}
    return replace(model, node=node)


def split_model(net: LavaNet) -> SplitModel:
    """The SplitModel of a one-population RSGN LavaNet (its only connection is W)."""
    from atomspark.mapping.lava.units import lava_unit
    from atomspark.mapping.lava.units.rsgn import rsgn_fixed_params, rsgn_node_params

    if len(net.populations) != 1 or not lava_unit(net.populations[0]).vector_payload:
        raise AtomsparkError("split layout: needs one population of vector nodes (RSGN)")
    p: LavaPopulation = net.populations[0]
    conns = [c for c in net.connections if c.source == p.name and c.target == p.name]
    if len(conns) != 1:
        raise AtomsparkError("split layout: expected the one recurrent projection W")
    w_t = sp.csr_matrix(conns[0].weights)
    members = sp.csr_matrix(
        (np.ones(p.arrays["pool_indices"].size), p.arrays["pool_indices"], p.arrays["pool_indptr"]),
        shape=(p.size, p.size),
    )
    if np.diff(members.indptr).max(initial=0) > MAX_POOL:
        raise AtomsparkError(f"split layout: a pool above {MAX_POOL} nodes is not supported")
    if p.arithmetic == "fixed":
        par = rsgn_fixed_params(p)
        k = par.kernel_arrays
        node = {
            "thresholds": k["thresholds"], "m_shift": k["m_shift"], "bh": k["bh"],
            "lng": k["lng"], "lnb": k["lnb"], "consts": k["consts"],
            "pool_size": k["pool_size"], "wh": np.asarray(par.w_h_mant, np.int64),
            "wh_shift": int(par.w_h_shift),
        }  # fmt: skip
        if hasattr(par, "w_h_lo_mant"):  # W_h in two 8-bit parts (rsgn_fixed_split)
            node["wh_lo"] = np.asarray(par.w_h_lo_mant, np.int64)
            node["lo_shift"] = int(par.w_h_lo_shift)
            node["wh_shift"] = int(par.w_h_shift) + int(par.w_h_lo_shift)
        w_t = sp.csr_matrix((w_t.data.astype(np.int64), w_t.indices, w_t.indptr), w_t.shape)
    else:
        par = rsgn_node_params(p)
        k = par.kernel_arrays
        node = {
            "thresholds": k.thresholds, "bh": k.b_h, "lng": k.ln_gain, "lnb": k.ln_bias,
            "consts": k.consts, "pool_size": k.pool_size, "wh": k.w_h,
        }  # fmt: skip
    node["alpha0"] = np.asarray(p.arrays["alpha_init"])
    node["h0"] = np.asarray(p.arrays["h_init"])
    return SplitModel(p.arithmetic, p.size, par.width, w_t, members, bool(par.event_rule), node)


def part_channels(model: SplitModel) -> dict[str, tuple[str, ...]]:
    """The channels that carry each value (fixed point: two 24-bit parts, name and name_lo)."""
    two = ("", "_lo") if model.arithmetic == "fixed" else ("",)
    wh = ("", "_lo") if model.two_part_w_h else ("",)
    return {
        "wh": tuple(f"wh{s}" for s in wh),
        "hn2": tuple(f"hn2{s}" for s in two),
        "z": ("z",),
        "z2": tuple(f"z2{s}" for s in two),
        "pool": tuple(f"pool{s}" for s in two),
    }


def channels(model: SplitModel) -> list[Channel]:
    """Every connection of the split layout at kind level (module docstring)."""
    n, d = model.n, model.d
    coo = model.w_t.tocoo()  # (target j, source i, w)
    k = np.arange(d)
    rows = (k[None, :] * n + coo.row[:, None]).ravel()
    cols = (coo.col[:, None] * d + k[None, :]).ravel()
    vals = np.repeat(coo.data, d)
    out = [
        Channel("payload", "transform", "x", "sum", "payload",
                sp.csr_matrix((vals, (rows, cols)), shape=(n * d, n * d))),
        Channel("flag", "norm", "flag", "norm", "flag",
                sp.csr_matrix((np.ones(coo.nnz), (coo.row, coo.col)), shape=(n, n)), graded=False),
    ]  # fmt: skip
    j, kk, c = np.meshgrid(np.arange(n), k, k, indexing="ij")  # A[j, kk] -> B[j, c]
    wh_rows, wh_cols = (j * d + c).ravel(), (kk * n + j).ravel()
    parts = part_channels(model)
    wh_mats = [model.node["wh"]] + ([model.node["wh_lo"]] if model.two_part_w_h else [])
    for name, mat in zip(parts["wh"], wh_mats):
        vals = np.broadcast_to(mat[None, :, :], (n, d, d)).ravel()  # vals[j, kk, c] = W_h[kk, c]
        out.append(Channel(name, "sum", "m", "transform", name,
                           sp.csr_matrix((vals, (wh_rows, wh_cols)), shape=(n * d, n * d))))  # fmt: skip
    gather = sp.csr_matrix(
        (np.ones(n * d), (np.repeat(np.arange(n), d), np.arange(n * d))), shape=(n, n * d)
    )
    for value in ("hn2", "z", "z2"):
        for name in parts[value]:
            out.append(Channel(name, "transform", name, "norm", name, gather))
    for name in parts["pool"]:
        out.append(Channel(name, "norm", name, "norm", name, model.pool))
    spread = sp.csr_matrix(gather.T)
    for name in CONTROL:
        out.append(Channel(name, "norm", name, "transform", name, spread))
    return out


def kind_sizes(model: SplitModel) -> dict[str, int]:
    return {"sum": model.n * model.d, "transform": model.n * model.d, "norm": model.n}


# ------------------------------------------------------------------ the three programs


def _rshift(v: np.ndarray, k) -> np.ndarray:
    """Round-to-nearest right shift (the integer unit's >>>), elementwise; k >= 0."""
    k = np.asarray(k, np.int64)
    half = np.where(k > 0, np.left_shift(np.int64(1), np.maximum(k - 1, 0)), 0)
    return (v + half) >> k


def _sat(v: np.ndarray) -> tuple[np.ndarray, int]:
    clipped = np.clip(v, -rf.STATE_LIMIT, rf.STATE_LIMIT)
    return clipped, int(np.count_nonzero(clipped != v))


def _parts(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """v = (hi << PART_BITS) + lo with lo in [0, 2**PART_BITS): two 24-bit graded payloads."""
    return v >> PART_BITS, v & ((1 << PART_BITS) - 1)


def _join(inputs: dict, name: str) -> np.ndarray:
    """A value sent in two parts (fixed) or whole (float), summed by its connections."""
    whole = inputs[name].astype(np.int64) if f"{name}_lo" in inputs else inputs[name]
    if f"{name}_lo" in inputs:
        return (whole << PART_BITS) + inputs[f"{name}_lo"].astype(np.int64)
    return whole


class Program:
    """One kind's program over a set of its compartments; `step(inputs)` is one chip step:
    inputs {in port: summed input}, returns {out port: values} (zeros outside its phases)."""

    kind = ""

    def __init__(self, model: SplitModel, index: np.ndarray) -> None:
        self.fixed = model.arithmetic == "fixed"
        self.dtype = np.int64 if self.fixed else np.float64
        self.index = np.asarray(index, np.int64)
        self.t = 0
        self.wraps = 0
        self.clips = 0
        self.outputs = self.out_ports(model)
        self.period = int(model.node.get("stream_period", 0))  # a stream: chip steps per sample

    def zeros(self) -> dict[str, np.ndarray]:
        return {port: np.zeros(size, self.dtype) for port, size in self.outputs.items()}

    def step(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        self.t += 1
        out = self.zeros()
        phase = stream_phase(self.t, self.period) if self.period else phase_of(self.t)
        getattr(self, f"_{phase}", lambda i, o: None)(inputs, out)
        return out


def out_ports(kind: str, model: SplitModel, size: int) -> dict[str, int]:
    parts = part_channels(model)
    if kind == "sum":
        return {"m": size}
    if kind == "transform":
        names = ["x", "h", "r"] + [c for v in ("hn2", "z", "z2") for c in parts[v]]
        return {name: size for name in names}
    return {name: size for name in ("flag", *parts["pool"], *CONTROL)}


def in_ports(kind: str, model: SplitModel) -> tuple[str, ...]:
    parts = part_channels(model)
    if kind == "sum":
        return ("payload",)
    if kind == "transform":
        return (*parts["wh"], *CONTROL, *IGNITION["transform"])
    return ("flag", *parts["hn2"], *parts["z"], *parts["z2"], *parts["pool"], *IGNITION["norm"])


class SumProgram(Program):
    """Message sums: m = wrap32(m_raw) >>> m_shift_j (fixed), m = m_raw (float)."""

    kind = "sum"

    def __init__(self, model: SplitModel, index: np.ndarray) -> None:
        super().__init__(model, index)
        if self.fixed:
            self.m_shift = model.node["m_shift"][self.index % model.n]

    def out_ports(self, model):
        return out_ports("sum", model, self.index.size)

    def _sum(self, inputs, out):
        raw = inputs["payload"]
        if not self.fixed:
            out["m"][:] = raw
            return
        out["m"][:] = _rshift(raw.astype(np.int64), self.m_shift)  # wrapped by the port


class TransformProgram(Program):
    """W_h transform, the norm's terms, then LayerNorm and the payload (module docstring)."""

    kind = "transform"

    def __init__(self, model: SplitModel, index: np.ndarray) -> None:
        super().__init__(model, index)
        nd = model.node
        j, c = self.index // model.d, self.index % model.d
        self.j = j
        self.bh, self.lng, self.lnb = nd["bh"][c], nd["lng"][c], nd["lnb"][c]
        self.h = nd["h0"].reshape(-1)[self.index].astype(self.dtype)
        self.alpha = nd["alpha0"][j].astype(self.dtype)
        self.cutoff = nd["consts"][3] if self.fixed else nd["consts"][2]
        self.lo_shift = nd.get("lo_shift", 0)
        self.wh_shift = nd.get("wh_shift", 0)
        self.parts = part_channels(model)
        self.z = np.zeros(self.index.size, self.dtype)
        self.updated = False
        self.emits = 0
        # the readout (mapping/split_readout.py): r = alpha h at emit number readout_emit
        self.readout_emit = int(nd.get("readout_emit", 0))
        self.readout_shift = int(nd.get("readout_shift", 0))

    def out_ports(self, model):
        return out_ports("transform", model, self.index.size)

    def _load(self, inputs, out):
        """A stream's reset phase: the sample's ignition h0 and its node's alpha0 arrive from
        the input; the previous sample's state is dropped."""
        self.h = inputs["h0"].astype(self.dtype)
        self.alpha = inputs["alpha0"].astype(self.dtype)
        self.z = np.zeros(self.index.size, self.dtype)
        self.updated = False
        self.emits = 0

    def _transform(self, inputs, out):
        if self.fixed:
            s = inputs["wh"].astype(np.int64)
            if "wh_lo" in inputs:
                s = (s << self.lo_shift) + inputs["wh_lo"].astype(np.int64)
            hn, clips = _sat(_rshift(s, self.wh_shift) + self.bh)
            self.clips += clips
        else:
            hn = inputs["wh"] + self.bh
        self.z = hn + self.h
        for value, v in (("hn2", hn * hn), ("z", self.z), ("z2", self.z * self.z)):
            names = self.parts[value]
            if len(names) == 2:
                out[names[0]][:], out[names[1]][:] = _parts(v)
            else:
                out[names[0]][:] = v
        self.updated = True

    def _emit(self, inputs, out):
        if self.updated:  # chip step 1 emits the ignition; later emits follow an update
            act, mu, inv = inputs["act"], inputs["mu"], inputs["inv"]
            self.alpha = inputs["alpha"].astype(self.dtype)
            if self.fixed:
                act, mu, inv = (v.astype(np.int64) for v in (act, mu, inv))
                y = _rshift((self.z - mu) * inv, 20)
                y = _rshift(y * self.lng, rf.ALPHA_FRAC) + self.lnb
                self.h, clips = _sat(_rshift(y * act, rf.ALPHA_FRAC))
                self.clips += clips
            else:
                y = ((self.z - mu) * inv * self.lng + self.lnb) * act
                self.h = np.where(act == 0.0, 0.0, y)
        sending = self.alpha > self.cutoff
        if self.fixed:
            x = _rshift(self.h * self.alpha, rf.ALPHA_FRAC)
        else:
            x = self.h * self.alpha
        out["x"][:] = np.where(sending, x, 0)
        out["h"][:] = self.h
        self.emits += 1
        if self.emits == self.readout_emit:
            out["r"][:] = readout_product(self.h, self.alpha, self.fixed, self.readout_shift)


class NormProgram(Program):
    """Norm, soft threshold, LayerNorm statistics, pool exchange and divisive normalisation."""

    kind = "norm"

    def __init__(self, model: SplitModel, index: np.ndarray) -> None:
        super().__init__(model, index)
        nd = model.node
        self.d = model.d
        self.theta = nd["thresholds"][self.index]
        self.pool_size = nd["pool_size"][self.index]
        self.consts = nd["consts"]
        self.alpha = nd["alpha0"][self.index].astype(self.dtype)
        self.event_rule = model.event_rule
        self.received = np.zeros(self.index.size, bool)
        self.a = np.zeros(self.index.size, self.dtype)
        self.mu = np.zeros(self.index.size, self.dtype)
        self.inv = np.zeros(self.index.size, self.dtype)
        self.parts = part_channels(model)
        self.cutoff = self.consts[3] if self.fixed else self.consts[2]

    def out_ports(self, model):
        return out_ports("norm", model, self.index.size)

    def _load(self, inputs, out):
        """A stream's reset phase: the node's alpha0 from the input, the rest cleared."""
        self.alpha = inputs["alpha0"].astype(self.dtype)
        self.received = np.zeros(self.index.size, bool)
        for v in (self.a, self.mu, self.inv):
            v[:] = 0

    def _emit(self, inputs, out):
        out["flag"][:] = self.alpha > self.cutoff

    def _sum(self, inputs, out):
        self.received = inputs["flag"] > 0

    def _norm(self, inputs, out):
        sq, tot, sz2 = _join(inputs, "hn2"), inputs["z"], _join(inputs, "z2")
        if self.fixed:
            tot = tot.astype(np.int64)
            norm_fixed(sq, tot, sz2, self.alpha, self.received, self.theta, self.consts,
                       rf.SIGMOID_LUT, self.event_rule, self.d, self.a, self.mu, self.inv)  # fmt: skip
            hi, lo = _parts(self.a)
            out[self.parts["pool"][0]][:], out[self.parts["pool"][1]][:] = hi, lo
            return
        temperature, gain, cutoff, ln_eps, _ = self.consts
        a = 1.0 / (1.0 + np.exp(-((self.alpha + gain * np.sqrt(sq) - self.theta) / temperature)))
        if self.event_rule:
            a = np.where(((self.alpha > cutoff) | self.received) & (a > cutoff), a, 0.0)
        self.a = a
        self.mu = tot / self.d
        self.inv = 1.0 / np.sqrt(np.maximum(sz2 / self.d - self.mu * self.mu, 0.0) + ln_eps)
        out["pool"][:] = a

    def _pool(self, inputs, out):
        pool_sum = _join(inputs, "pool")
        if self.fixed:
            alpha = np.zeros(self.index.size, np.int64)
            pool_fixed(self.a, pool_sum, self.pool_size, alpha)
            act = _rshift(self.a, rf.PRE_SHIFT)
        else:
            inh_eps = self.consts[4]
            alpha = np.where(
                self.a > 0.0, np.clip(self.a * self.pool_size / (pool_sum + inh_eps), 0, 1), 0.0
            )
            act = self.a.copy()
        if self.event_rule:
            silent = alpha <= self.cutoff
            alpha[silent] = 0
            act[silent] = 0
        self.alpha = alpha.astype(self.dtype)
        out["act"][:], out["mu"][:], out["inv"][:], out["alpha"][:] = act, self.mu, self.inv, alpha


PROGRAMS = {"sum": SumProgram, "transform": TransformProgram, "norm": NormProgram}


@njit(cache=True)
def norm_fixed(sq, tot, sz2, alpha, received, theta, consts, lut, event_rule, d, a_out, mu_out,
               inv_out):  # fmt: skip
    """The norm core's integer arithmetic per node (sim/units/rsgn_fixed.node_update's steps
    between h_new and LayerNorm): a (Q.40), mu and 1/std from the summed terms. The variance
    sum (z - mu)^2 is sum z^2 - 2 mu sum z + d mu^2, exact in integers."""
    gain, inv_t_mant, inv_t_shift, cutoff, ln_eps, rd = (
        consts[0], consts[1], consts[2], consts[3], consts[4], consts[5])  # fmt: skip
    for j in range(sq.size):
        norm = rf.isqrt(sq[j])
        s = alpha[j] + ((gain * norm) >> rf.H_FRAC) - theta[j]
        u = (s * inv_t_mant) >> inv_t_shift
        a = rf.activation(u, lut)
        if event_rule and not ((alpha[j] > cutoff or received[j]) and a > (cutoff << rf.PRE_SHIFT)):
            a = 0
        a_out[j] = a
        mu_out[j] = 0
        inv_out[j] = 0
        if a == 0:
            continue
        mu = (tot[j] * rd) >> rf.RD_SHIFT
        var = sz2[j] - 2 * mu * tot[j] + d * mu * mu
        var = (((var >> 12) * rd) >> (rf.RD_SHIFT - 12)) + ln_eps
        mu_out[j] = mu
        inv_out[j] = (np.int64(1) << rf.INV_STD_BITS) // rf.isqrt(var)


@njit(cache=True)
def pool_fixed(a, pool_sum, pool_size, alpha_out):
    for j in range(a.size):
        alpha_out[j] = rf.pool_normalise(a[j], pool_sum[j], pool_size[j])


# ------------------------------------------------------------------ the NumPy reference run


@dataclass
class SplitRun:
    """States per model step (engine steps: ignition first): alpha (S, N), h (S, N, d), payloads
    x (S, N, d); wraps: 32-bit connection sums that wrapped (the engine wraps W's message sums
    alike); clips: 24-bit saturations the programs counted."""

    alpha: np.ndarray
    h: np.ndarray
    x: np.ndarray
    wraps: int
    clips: int
    r: np.ndarray | None = None  # the readout products (n d,) sent at emit readout_emit
    scores: np.ndarray | None = None  # the readout accumulator's class scores (Lava run)


def _accumulate(ch: Channel, sent: np.ndarray, fixed: bool) -> tuple[np.ndarray, int]:
    """A Sparse connection's output and how many sums wrapped: integer sums wrap to 32 bits
    as Lava's int32 port does (the engine wraps only W's message sums)."""
    if not fixed:
        return ch.weights @ sent, 0
    total = ch.weights.astype(np.int64) @ sent.astype(np.int64)
    wrapped = ((total + 2**31) % 2**32) - 2**31
    return wrapped, int(np.count_nonzero(wrapped != total))


def _schedule(model: SplitModel, steps: int, ignition=None):
    """Run the split schedule in NumPy for `steps` chip steps, kind by kind (one program per
    kind over all its compartments), with Lava's one-step delay on every connection; yields
    (t, programs, what each kind sent, wraps so far) after every step. `ignition(t)`: a
    stream's input arriving at chip step t ({kind: {port: values}}, or None)."""
    sizes = kind_sizes(model)
    progs = {kind: PROGRAMS[kind](model, np.arange(sizes[kind])) for kind in KINDS}
    chans = channels(model)
    fixed = model.arithmetic == "fixed"
    sent = {kind: progs[kind].zeros() for kind in KINDS}
    wraps = 0
    for t in range(1, steps + 1):
        inputs = {kind: {} for kind in KINDS}
        for ch in chans:
            got, wrapped = _accumulate(ch, sent[ch.source][ch.source_port], fixed)
            wraps += wrapped
            port = inputs[ch.target]
            port[ch.target_port] = port.get(ch.target_port, 0) + got
        for kind, ports in ((ignition and ignition(t)) or {}).items():
            inputs[kind].update(ports)
        for kind in KINDS:
            for p in in_ports(kind, model):
                inputs[kind].setdefault(p, np.zeros(sizes[kind], progs[kind].dtype))
        sent = {kind: progs[kind].step(inputs[kind]) for kind in KINDS}
        yield t, progs, sent, wraps


def reference_run(model: SplitModel, engine_steps: int) -> SplitRun:
    """Run the split schedule in NumPy (`_schedule`) for the engine's `engine_steps`."""
    n, d = model.n, model.d
    alpha, h, x = [], [], []
    wraps, r, progs = 0, None, {}
    for t, progs, sent, wrapped in _schedule(model, chip_steps(engine_steps)):
        wraps = wrapped
        if phase_of(t) == "emit":
            alpha.append(progs["norm"].alpha.copy())
            h.append(sent["transform"]["h"].reshape(n, d))
            x.append(sent["transform"]["x"].reshape(n, d))
            if len(alpha) == model.node.get("readout_emit", 0):
                r = sent["transform"]["r"].copy()
    return SplitRun(
        np.stack(alpha), np.stack(h), np.stack(x),
        wraps, sum(p.clips for p in progs.values()), r,
    )  # fmt: skip


def reference_stream(model: SplitModel, states: list[dict], engine_steps: int) -> np.ndarray:
    """A stream of samples through the split schedule in NumPy, as the one Lava run runs it
    (split_run.run_split_stream_lava): each sample's ignition ({alpha, h} in the model's formats)
    arrives in its load phase; returns the readout products r (B, n d) each sample's last emit
    sends (the readout's shift as `model` holds it, with_readout)."""
    period = stream_period(engine_steps)
    node = {**model.node, "stream_period": period, "readout_emit": int(engine_steps)}
    model = replace(model, node=node)
    d = model.d

    def ignition(t: int):
        if stream_phase(t, period) != "load":
            return None
        s = states[(t - 2) // period]
        alpha = np.asarray(s["alpha"])
        h0 = np.asarray(s["h"]).reshape(-1)
        return {"transform": {"h0": h0, "alpha0": np.repeat(alpha, d)}, "norm": {"alpha0": alpha}}

    out = []
    for t, progs, sent, _ in _schedule(model, 1 + len(states) * period, ignition):
        if stream_phase(t, period) == "emit" and progs["transform"].emits == engine_steps:
            out.append(sent["transform"]["r"].copy())
    return np.stack(out)

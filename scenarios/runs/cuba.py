"""The CUBA benchmark network (Brette et al. 2007; Brian2's CUBA example) for the engine and Brian2.

4000 current-based LIF neurons, 80 % excitatory / 20 % inhibitory, random 2 % connectivity,
exponential synaptic currents (tau_e 5 ms, tau_i 10 ms), tau_m 20 ms, 5 ms refractory period.
Voltages are in mV above the -60 mV reset; the leak reversal El = -49 mV lies above the -50 mV
threshold (with El at the reset the network is silent). The engine graph is Brian2's model step
for step: exact exponential decays, a spike's jump entering v through the propagator element of
Brian2's "exact" integration (CubaConfig.synaptic_scale), and v held at the reset for Brian2's
number of refractory steps (CubaConfig.refractory_steps); on a small network the engine's spikes
equal Brian2's (tests/test_cuba_model.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from atomspark.sim.core import AtomsparkError, require_int, require_positive
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.units.lif import LIFParams


@dataclass(frozen=True)
class CubaConfig:
    """Sizes, time constants (s) and synaptic jumps (mV) of the CUBA network."""

    n: int = 4000
    exc_fraction: float = 0.8
    p_conn: float = 0.02
    dt: float = 0.1e-3
    taum: float = 20e-3
    taue: float = 5e-3
    taui: float = 10e-3
    we: float = 1.62
    wi: float = -9.0
    threshold: float = 10.0  # mV above reset (-50 mV)
    el_above_reset: float = 11.0  # mV above reset (El = -49 mV)
    refractory: float = 5e-3
    seed: int = 0

    def __post_init__(self) -> None:
        require_int("n", self.n, minimum=2)
        require_int("seed", self.seed, minimum=0)
        for name in ("dt", "taum", "taue", "taui", "threshold"):
            require_positive(name, getattr(self, name))
        require_positive("refractory", self.refractory, allow_zero=True)
        for name in ("exc_fraction", "p_conn"):
            v = float(getattr(self, name))
            if not 0.0 < v <= 1.0:
                raise AtomsparkError(f"{name}: must lie in (0, 1], got {v!r}")

    @property
    def n_exc(self) -> int:
        return int(round(self.exc_fraction * self.n))

    def synaptic_scale(self, tau: float) -> float:
        """v's change over one step caused by a synaptic variable of 1 mV decaying with time
        constant tau: tau / (tau - taum) (exp(-dt/tau) - exp(-dt/taum)), the coupling of the
        exact solution (Brian2's "exact" method, NEST's iaf_psc_exp); dt/taum exp(-dt/taum) when
        tau == taum. dt/taum, the rectangle rule, makes every PSP 0.8-1.3 % too large here."""
        kv, ku = np.exp(-self.dt / self.taum), np.exp(-self.dt / tau)
        if np.isclose(tau, self.taum, rtol=1e-12, atol=0.0):
            return float(self.dt / self.taum * kv)
        return float(tau / (tau - self.taum) * (ku - kv))

    @property
    def refractory_steps(self) -> int:
        """Steps after the spike step during which v is held at the reset. Brian2 integrates v
        again at the step where t - lastspike reaches the refractory period, so it holds v for
        round(refractory / dt) - 1 steps (49 for 5 ms at 0.1 ms)."""
        return max(int(round(self.refractory / self.dt)) - 1, 0)

    def steps(self, duration: float) -> int:
        """Number of dt steps in `duration` seconds."""
        return int(round(require_positive("duration", duration) / self.dt))


@dataclass(frozen=True)
class CubaNetwork:
    """Synapse list (pre -> post, unique pairs, no self loops) and initial voltages (mV)."""

    config: CubaConfig
    pre: np.ndarray
    post: np.ndarray
    v0: np.ndarray

    @property
    def excitatory(self) -> np.ndarray:
        """Per synapse: True when its source is excitatory (the first n_exc neurons)."""
        return self.pre < self.config.n_exc

    @property
    def n_synapses(self) -> int:
        return int(self.pre.size)


def cuba_network(config: CubaConfig | None = None) -> CubaNetwork:
    """Draw the random connectivity and the initial voltages (uniform between reset and threshold)."""
    cfg = config or CubaConfig()
    rng = np.random.default_rng(cfg.seed)
    if cfg.n > DENSE_DRAW_LIMIT:
        return _sparse_cuba_network(cfg, rng)
    mask = rng.random((cfg.n, cfg.n)) < cfg.p_conn  # mask[i, j]: synapse i -> j
    np.fill_diagonal(mask, False)
    v0 = rng.random(cfg.n) * cfg.threshold
    pre, post = np.nonzero(mask)
    return CubaNetwork(cfg, pre.astype(np.int64), post.astype(np.int64), v0)


DENSE_DRAW_LIMIT = 10_000  # above this many neurons an n x n random mask would not fit memory


def _sparse_cuba_network(cfg: CubaConfig, rng: np.random.Generator) -> CubaNetwork:
    """The same random graph law without an n x n mask (large networks): each neuron's number
    of targets is Binomial(n - 1, p_conn), the targets are drawn without replacement."""
    counts = rng.binomial(cfg.n - 1, cfg.p_conn, cfg.n)
    pre = np.repeat(np.arange(cfg.n, dtype=np.int64), counts)
    post = np.empty(pre.size, np.int64)
    start = 0
    for i, c in enumerate(counts):
        picks = rng.choice(cfg.n - 1, c, replace=False)
        post[start : start + c] = np.sort(picks + (picks >= i))  # skip the self loop
        start += c
    v0 = rng.random(cfg.n) * cfg.threshold
    return CubaNetwork(cfg, pre, post, v0)


def cuba_graph(net: CubaNetwork, dtype: str = "float64") -> Graph:
    """Engine graph: one LIF population, excitatory synapses on channel 0, inhibitory on 1.

    u and u2 hold each synaptic variable times its one-step coupling into v
    (CubaConfig.synaptic_scale), so that v <- v exp(-dt/taum) + u + u2 + bias is the exact
    solution sampled every step; v is held for CubaConfig.refractory_steps after a spike."""
    cfg = net.config
    n, exc = cfg.n, net.excitatory
    w_e = sp.csr_matrix(
        (np.full(exc.sum(), cfg.we * cfg.synaptic_scale(cfg.taue)), (net.post[exc], net.pre[exc])),
        shape=(n, n),
    )
    w_i = sp.csr_matrix(
        (np.full((~exc).sum(), cfg.wi * cfg.synaptic_scale(cfg.taui)),
         (net.post[~exc], net.pre[~exc])),
        shape=(n, n),
    )  # fmt: skip
    params = LIFParams(
        du=1 - np.exp(-cfg.dt / cfg.taue),
        du2=1 - np.exp(-cfg.dt / cfg.taui),
        dv=1 - np.exp(-cfg.dt / cfg.taum),
        vth=cfg.threshold,
        v_reset=0.0,
        refractory=cfg.refractory_steps,
        v_init=net.v0,
        bias=(1 - np.exp(-cfg.dt / cfg.taum)) * cfg.el_above_reset,
        dtype=dtype,
    )
    return Graph(
        [Population("cuba", n, params)],
        [Projection("cuba", "cuba", w_e, channel=0), Projection("cuba", "cuba", w_i, channel=1)],
    )


def brian2_cuba(net: CubaNetwork, target: str = "numpy"):
    """Brian2 network of the same neurons and synapses (scope started here); returns
    (brian2.Network, SpikeMonitor). target: Brian2 runtime codegen target ("numpy" or "cython")."""
    import brian2 as b2

    cfg = net.config
    b2.start_scope()
    b2.prefs.codegen.target = target
    eqs = """dv/dt = (ge + gi - (v - El)) / taum : volt (unless refractory)
             dge/dt = -ge / taue : volt
             dgi/dt = -gi / taui : volt"""
    ns = dict(
        taum=cfg.taum * b2.second,
        taue=cfg.taue * b2.second,
        taui=cfg.taui * b2.second,
        El=(-60.0 + cfg.el_above_reset) * b2.mV,
    )
    dt = cfg.dt * b2.second
    grp = b2.NeuronGroup(
        cfg.n,
        eqs,
        threshold=f"v > {-60.0 + cfg.threshold}*mV",
        reset="v = -60*mV",
        refractory=cfg.refractory * b2.second,
        method="exact",
        namespace=ns,
        dt=dt,
    )
    grp.v = (-60.0 + net.v0) * b2.mV
    exc = net.excitatory
    se = b2.Synapses(grp, grp, on_pre=f"ge += {cfg.we}*mV", dt=dt)
    se.connect(i=net.pre[exc], j=net.post[exc])
    si = b2.Synapses(grp, grp, on_pre=f"gi += {cfg.wi}*mV", dt=dt)
    si.connect(i=net.pre[~exc], j=net.post[~exc])
    mon = b2.SpikeMonitor(grp)
    return b2.Network(grp, se, si, mon), mon

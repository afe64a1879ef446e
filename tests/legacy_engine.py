"""The event-driven engine: steps a Graph, delivering graded events through delay ring buffers.

Each step: (1) every population updates the units that received input for this step or are
still pending, and lists the units that emit; (2) each projection fans those events out into the
ring slot of their delivery step (delay >= 1, so the order of populations does not matter).
Projections with one delay for all synapses (the common case) take kernels_fanout's uniform path:
one slot per call, and full rows (dense Gram columns) as contiguous multiply-adds. LIF
populations sweep all their units in index order instead of walking the touched and pending
lists when at least `dense_fraction` of them are busy (sim/kernels/lif.py; same results).
Python loops over steps and populations only, with every kernel's arrays bound once per run;
all per-unit and per-event work is in the Numba kernels.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from atomspark.sim import fixed_point as fx
from atomspark.sim.core import (
    AtomsparkError,
    as_finite_array,
    require_int,
    require_positive,
)
from atomspark.sim.graph import Graph, Population
from atomspark.sim.kernels import common as k
from atomspark.sim.kernels import fanout as kf
from atomspark.sim.kernels import lif as kl
from atomspark.sim.kernels import rsgn as kr
from atomspark.sim.kernels import vn_fixed as kvf
from atomspark.sim.profile import Profile
from atomspark.sim.units.lif import FLOAT_DTYPES, LIFFixedParams, LIFParams
from atomspark.sim.units.rsgn import RSGNNodeParams
from atomspark.sim.units.vn import VNParams
from atomspark.sim.units.vn_fixed import VNFixedParams

DENSE_FRACTION = 0.15  # LIF dense/sparse crossover measured at 4000 units: ~0.15-0.2 pending
_NEVER = 2**62


@dataclass
class PopulationBuffers:
    """Ring buffers, touched lists, pending list and emit buffers of one population."""

    ring: np.ndarray  # (channels, ring_length, size)
    tflag: np.ndarray  # (ring_length, size) uint8: unit already listed in this slot
    tidx: np.ndarray  # (ring_length, size) units touched per slot
    tcount: np.ndarray  # (ring_length,)
    pend: np.ndarray  # (size,) units to update next step regardless of input
    pcount: np.ndarray  # (2,): pending count; 1 when the list is stale (after a dense sweep)
    work: np.ndarray  # (size,) scratch list of units updated this step
    emit_idx: np.ndarray  # (size,)
    emit_val: np.ndarray  # (size,) payload of each emitted event
    n_emit: int = 0


@dataclass(frozen=True)
class Outgoing:
    """One projection as its source population's fan-out sees it (kernel-ready arrays)."""

    target: int
    channel: int
    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray  # weights in the target's arithmetic (fixed point: shifted by weight_exp)
    delay: np.ndarray  # per synapse (a zero-stride view when uniform)
    uniform_delay: int | None
    full_rows: bool  # no target repeated within a row: a full row is a contiguous multiply-add
    right_shift: int = 0  # -weight_exp < 0 (fixed point): each step's summed input >> right_shift


class Engine:
    """Runs a Graph; state (per population dict of arrays) persists across calls to run()."""

    def __init__(self, graph: Graph, dense_fraction: float | None = DENSE_FRACTION) -> None:
        """dense_fraction: a LIF population sweeps all its units in index order (no list
        bookkeeping) when touched + pending units >= this fraction of its size; 0 = always,
        None = never. The results are the same either way (sim/kernels/lif.py); only speed differs."""
        if not isinstance(graph, Graph):
            raise AtomsparkError(f"graph: expected a Graph, got {type(graph).__name__}")
        if dense_fraction is not None:
            dense_fraction = float(require_positive("dense_fraction", dense_fraction, True))
            if dense_fraction > 1:
                raise AtomsparkError(f"dense_fraction: must lie in [0, 1], got {dense_fraction}")
        self.graph = graph
        self.dense_fraction = dense_fraction
        self._dense_min = [
            _NEVER if dense_fraction is None else int(np.ceil(dense_fraction * p.size))
            for p in graph.populations
        ]
        self.t = 0
        self.state: dict[str, dict[str, np.ndarray]] = {}
        self.buffers: list[PopulationBuffers] = []
        self.nnz: list[np.ndarray] = []
        for pop in graph.populations:
            self.state[pop.name] = pop.params.init_state(pop.size)
            self.buffers.append(self._make_buffers(pop, graph.ring_length))
        self._outgoing = self._prepare_projections()
        self._unit_events = [np.zeros(p.size, np.int64) for p in graph.populations]

    @staticmethod
    def _value_dtype(pop: Population):
        return np.int64 if pop.is_fixed_point else FLOAT_DTYPES[pop.params.dtype]

    def _make_buffers(self, pop: Population, ring_length: int) -> PopulationBuffers:
        n, dt = pop.size, self._value_dtype(pop)
        st = self.state[pop.name]
        if isinstance(pop.params, RSGNNodeParams):
            first = pop.params.initially_pending(st)
            self.nnz.append(np.zeros(1, np.int64))
        elif isinstance(pop.params, VNFixedParams):
            first = (st["drive"] != 0) | (st["g"] != 0)
            self.nnz.append(np.array([np.count_nonzero(st["g"])], np.int64))
        elif isinstance(pop.params, VNParams):
            first = (st["drive"] != 0) | (st["g"] != 0)
            self.nnz.append(np.zeros(1, np.int64))
        elif isinstance(pop.params, LIFParams):
            first = (st["u"] != 0) | (st["v"] != 0) | (st["bias"] != 0)
            self.nnz.append(np.zeros(1, np.int64))
        else:
            first = (st["u"] != 0) | (st["v"] != 0) | (st["bias"] != 0)
            self.nnz.append(np.zeros(1, np.int64))
        tail = getattr(pop.params, "payload_shape", ())  # vector events (RSGN): (d,)
        pend = np.zeros(n, np.int64)
        idx = np.flatnonzero(first)
        pend[: idx.size] = idx
        return PopulationBuffers(
            ring=np.zeros((pop.params.n_channels, ring_length, n) + tail, dt),
            tflag=np.zeros((ring_length, n), np.uint8),
            tidx=np.zeros((ring_length, n), np.int64),
            tcount=np.zeros(ring_length, np.int64),
            pend=pend,
            pcount=np.array([idx.size, 0], np.int64),  # [count, 1 when the list is stale]
            work=np.zeros(n, np.int64),
            emit_idx=np.zeros(n, np.int64),
            emit_val=np.zeros((n,) + tail, dt),
        )

    def _prepare_projections(self) -> list[list[Outgoing]]:
        """Per source population, the arrays each outgoing projection's fan-out kernel reads."""
        out: list[list[Outgoing]] = [[] for _ in self.graph.populations]
        for proj in self.graph.projections:
            s, t = self.graph.index[proj.source], self.graph.index[proj.target]
            tgt = self.graph.populations[t]
            data = proj.data
            if tgt.is_fixed_point and proj.weight_exp > 0:
                scaled = proj.data.astype(np.int64) << proj.weight_exp  # < 2**31 (Graph checks)
                data = scaled.astype(np.int32)
            elif not tgt.is_fixed_point:
                data = data.astype(self._value_dtype(tgt), copy=False)
            out[s].append(
                Outgoing(
                    target=t,
                    channel=proj.channel,
                    indptr=proj.indptr,
                    indices=proj.indices,
                    data=np.ascontiguousarray(data),
                    delay=proj.delay,
                    uniform_delay=proj.uniform_delay,
                    full_rows=not proj.repeats_targets,
                    right_shift=max(-proj.weight_exp, 0) if tgt.is_fixed_point else 0,
                )
            )
        return out

    def _check_inputs(self, inputs, steps) -> dict[int, np.ndarray]:
        checked = {}
        for name, arr in (inputs or {}).items():
            pop = self.graph.population(name)
            if isinstance(pop.params, RSGNNodeParams):
                raise AtomsparkError(
                    f"inputs[{name!r}]: RSGN nodes take no external input; their ignition is "
                    f"the initial state (alpha_init, h_init)"
                )
            dt = self._value_dtype(pop)
            a = as_finite_array(f"inputs[{name!r}]", arr, ndim=2)
            if a.shape != (steps, pop.size):
                raise AtomsparkError(
                    f"inputs[{name!r}]: expected shape ({steps}, {pop.size}), got {a.shape}"
                )
            if pop.is_fixed_point and np.any(a != np.round(a)):
                raise AtomsparkError(f"inputs[{name!r}]: a fixed-point population needs integers")
            checked[self.graph.index[name]] = a.astype(dt)
        return checked

    def run(
        self,
        steps: int,
        inputs: dict[str, np.ndarray] | None = None,
        record: tuple = (),
        record_events: bool = False,
    ) -> Profile:
        """Advance `steps` steps. inputs: {population: (steps, size) array} added to channel 0 of
        each step's input; record: (population, state name) pairs stored in self.traces;
        record_events: keep every event's (step, unit) in self.event_log[population] (a raster)."""
        steps = require_int("steps", steps, minimum=0)
        ext = self._check_inputs(inputs, steps)
        g = self.graph
        prof = Profile.empty([p.name for p in g.populations], g.sizes, steps)
        self.traces = {}
        for pair in record:
            if not (isinstance(pair, tuple | list) and len(pair) == 2):
                raise AtomsparkError(f"record: expected (population, state) pairs, got {pair!r}")
            name, var = pair
            if var not in self.state[g.population(name).name]:
                raise AtomsparkError(f"record: population {name!r} has no state {var!r}")
            self.traces[(name, var)] = np.zeros(
                (steps,) + self.state[name][var].shape, self.state[name][var].dtype
            )
        log: dict[str, list] = {p.name: [] for p in g.populations} if record_events else {}
        R = g.ring_length
        n_pop = len(g.populations)
        bufs = self.buffers
        updates = [self._bind_update(p) for p in range(n_pop)]
        fans = [[self._bind_fan_out(p, out, R) for out in self._outgoing[p]] for p in range(n_pop)]
        payload_bits = [pop.params.payload_bits for pop in g.populations]
        names = [pop.name for pop in g.populations]
        for step in range(steps):
            t = self.t
            slot = t % R
            for p in range(n_pop):
                buf = bufs[p]
                if p in ext:
                    k.add_input(slot, ext[p][step], buf.ring[0], buf.tflag, buf.tidx, buf.tcount)
                n_upd, buf.n_emit, active, wraps, clips = updates[p](slot)
                prof.updates[step, p] = n_upd
                prof.active[step, p] = active
                if wraps or clips:
                    prof.wraps[step, p] = wraps
                    prof.clips[step, p] = clips
            for p in range(n_pop):
                n_emit = bufs[p].n_emit
                if n_emit == 0:
                    continue
                k.count_events(bufs[p].emit_idx, n_emit, self._unit_events[p])
                if record_events:
                    log[names[p]].append((step, bufs[p].emit_idx[:n_emit].copy()))
                prof.events[step, p] = n_emit
                prof.payload_bits[step, p] = n_emit * payload_bits[p]
                synops = 0
                for fan in fans[p]:
                    synops += fan(n_emit, t)
                prof.synops[step, p] = synops
            for (name, var), trace in self.traces.items():
                trace[step] = self.state[name][var]
            self.t += 1
        prof.unit_events = [u.copy() for u in self._unit_events]
        self.event_log = {
            name: (
                np.concatenate([np.full(u.size, s, np.int64) for s, u in entries] or [[]]),
                np.concatenate([u for _, u in entries] or [[]]).astype(np.int64),
            )
            for name, entries in log.items()
        }
        return prof

    def _bind_fan_out(self, p: int, out: Outgoing, R: int) -> Callable[[int, int], int]:
        """One projection's fan-out kernel with its arrays bound once per run: a call with the
        number of emitted events and the current step delivers them and returns synaptic ops."""
        buf, tb = self.buffers[p], self.buffers[out.target]
        src = (buf.emit_idx, buf.emit_val)
        csr = (out.indptr, out.indices, out.data)
        if buf.emit_val.ndim == 2 or out.uniform_delay is None:
            kernel = kr.fan_out_vector if buf.emit_val.ndim == 2 else kf.fan_out
            tail = (tb.ring[out.channel], tb.tflag, tb.tidx, tb.tcount)

            def fan(n_emit: int, t: int) -> int:
                return kernel(*src, n_emit, *csr, out.delay, t, *tail)

            return fan
        delay, tcount, full = out.uniform_delay, tb.tcount, out.full_rows
        # per delivery slot: that slot's accumulator, touched flags and touched list (views)
        views = [(tb.ring[out.channel, s], tb.tflag[s], tb.tidx[s]) for s in range(R)]
        if out.right_shift:
            return self._bind_shifted_fan_out(src, csr, out, tb, views)

        def fan_uniform(n_emit: int, t: int) -> int:
            slot = (t + delay) % R
            acc, flag, tidx = views[slot]
            return kf.fan_out_uniform(*src, n_emit, *csr, full, acc, flag, tidx, tcount, slot)

        return fan_uniform

    @staticmethod
    def _bind_shifted_fan_out(src, csr, out: Outgoing, tb: PopulationBuffers, views):
        """Fan-out of a projection with weight_exp < 0, as Lava's Dense/Sparse do it: the step's
        events are summed per target in a private accumulator, then shifted right (floor) and
        added to the delivery slot. Only the shifted sum is exact, so it cannot go straight into
        the slot that other projections share."""
        n = tb.tflag.shape[1]
        stage, sflag = np.zeros(n, np.int64), np.zeros(n, np.uint8)
        stidx, stcount = np.zeros(n, np.int64), np.zeros(1, np.int64)
        delay, tcount, full, shift = out.uniform_delay, tb.tcount, out.full_rows, out.right_shift

        def fan_shifted(n_emit: int, t: int) -> int:
            slot = (t + delay) % len(views)
            synops = kf.fan_out_uniform(*src, n_emit, *csr, full, stage, sflag, stidx, stcount, 0)
            kf.flush_shifted(stage, sflag, stidx, stcount, shift, *views[slot], tcount, slot)
            return synops

        return fan_shifted

    def _fan_out(self, buf: PopulationBuffers, out: Outgoing, R: int) -> int:
        """Deliver the population's emitted events along one projection now (one-off call of
        the kernel run() binds); returns synaptic ops."""
        p = next(i for i, b in enumerate(self.buffers) if b is buf)
        return self._bind_fan_out(p, out, R)(buf.n_emit, self.t)

    def _bind_update(self, p: int) -> Callable[[int], tuple[int, int, int, int, int]]:
        """The population's update kernel with its arrays bound once per run: a call with the
        ring slot returns (updates, events, active units, wraps, clips)."""
        pop = self.graph.populations[p]
        st, par, buf = self.state[pop.name], pop.params, self.buffers[p]
        common = (buf.ring, buf.tflag, buf.tidx, buf.tcount, buf.pend, buf.pcount, buf.work)
        emit = (buf.emit_idx, buf.emit_val)
        pcount, nnz, dense_min = buf.pcount, self.nnz[p], self._dense_min[p]
        if isinstance(par, VNParams):
            dt = FLOAT_DTYPES[par.dtype]
            args = common + (st["g"], st["g_sent"], st["c"], st["drive"], st["thresh"],
                             dt(par.eta), dt(par.event_threshold), int(par.topk or 0), nnz) + emit  # fmt: skip

            def update(slot: int) -> tuple[int, int, int, int, int]:
                n_upd, n_emit = k.vn_step(slot, *args)
                return n_upd, n_emit, int(nnz[0]), 0, 0

        elif isinstance(par, LIFParams):
            dt = FLOAT_DTYPES[par.dtype]
            consts = np.array(
                [1 - par.du, 1 - (par.du2 or 0.0), 1 - par.dv, par.vth, par.v_reset], dt
            )
            args = common + (st["u"], st["u2"], st["v"], st["refr"], st["bias"], consts,
                             int(par.refractory), dense_min) + emit  # fmt: skip

            def update(slot: int) -> tuple[int, int, int, int, int]:
                n_upd, n_emit = kl.lif_float_step(slot, *args)
                return n_upd, n_emit, int(pcount[0]), 0, 0

        elif isinstance(par, LIFFixedParams):
            args = common + (st["u"], st["v"], st["bias"], int(par.du), int(par.dv),
                             int(par.vth) << fx.VTH_SHIFT, dense_min) + emit  # fmt: skip

            def update(slot: int) -> tuple[int, int, int, int, int]:
                n_upd, n_emit, wraps, clips = kl.lif_fixed_step(slot, *args)
                return n_upd, n_emit, int(pcount[0]), wraps, clips

        elif isinstance(par, RSGNNodeParams):
            arr = par.kernel_arrays
            args = common + (
                st["alpha"], st["h"], st["alpha_pre"], st["pool_sum"], st["pool_messages"],
                st["ignited"], arr.thresholds, arr.w_h, arr.b_h, arr.ln_gain, arr.ln_bias,
                arr.pool_indptr, arr.pool_indices, arr.pool_size, arr.consts, arr.resting,
                bool(par.event_rule),
            ) + emit  # fmt: skip

            def update(slot: int) -> tuple[int, int, int, int, int]:
                n_upd, n_emit, active = kr.rsgn_step(slot, *args)
                return n_upd, n_emit, active, 0, 0

        elif isinstance(par, VNFixedParams):
            args = common + (st["g"], st["g_sent"], st["c"], st["drive"], st["thresh"],
                             int(par.eta_mant), int(par.eta_shift), nnz) + emit  # fmt: skip

            def update(slot: int) -> tuple[int, int, int, int, int]:
                n_upd, n_emit, wraps, clips = kvf.vn_fixed_kernel(slot, *args)
                return n_upd, n_emit, int(nnz[0]), wraps, clips

        else:  # pragma: no cover - Population validates the type
            raise AtomsparkError(f"{pop.name}: unsupported unit model")
        return update

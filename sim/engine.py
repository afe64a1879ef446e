"""The event-driven engine: steps a Graph, delivering graded events through delay ring buffers.

Each step: (1) every population updates the units that received input for this step or are
still pending, and lists the units that emit; (2) each projection fans those events out into the
ring slot of their delivery step (delay >= 1, so the order of populations does not matter).
Projections with one delay for all synapses (the common case) take kernels_fanout's uniform path:
one slot per call, and full rows (dense Gram columns) as contiguous multiply-adds.
Python loops over steps and populations only; all per-unit and per-event work is in kernels.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from atomspark.sim import fixed_point as fx
from atomspark.sim import kernels as k
from atomspark.sim import kernels_fanout as kf
from atomspark.sim import kernels_rsgn as kr
from atomspark.sim import kernels_vn_fixed as kvf
from atomspark.sim.graph import Graph, Population
from atomspark.sim.profile import Profile
from atomspark.sim.units_lif import FLOAT_DTYPES, LIFFixedParams, LIFParams
from atomspark.sim.units_rsgn import RSGNNodeParams
from atomspark.sim.units_vn import VNParams
from atomspark.sim.units_vn_fixed import VNFixedParams
from atomspark.sim.validation import AtomsparkError, as_finite_array, require_int


@dataclass
class PopulationBuffers:
    """Ring buffers, touched lists, pending list and emit buffers of one population."""

    ring: np.ndarray  # (channels, ring_length, size)
    tflag: np.ndarray  # (ring_length, size) uint8: unit already listed in this slot
    tidx: np.ndarray  # (ring_length, size) units touched per slot
    tcount: np.ndarray  # (ring_length,)
    pend: np.ndarray  # (size,) units to update next step regardless of input
    pcount: np.ndarray  # (1,)
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


class Engine:
    """Runs a Graph; state (per population dict of arrays) persists across calls to run()."""

    def __init__(self, graph: Graph) -> None:
        if not isinstance(graph, Graph):
            raise AtomsparkError(f"graph: expected a Graph, got {type(graph).__name__}")
        self.graph = graph
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
            pcount=np.array([idx.size], np.int64),
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
            if tgt.is_fixed_point and proj.weight_exp:
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
        for name, var in record:
            if var not in self.state[g.population(name).name]:
                raise AtomsparkError(f"record: population {name!r} has no state {var!r}")
            self.traces[(name, var)] = np.zeros(
                (steps,) + self.state[name][var].shape, self.state[name][var].dtype
            )
        log: dict[str, list] = {p.name: [] for p in g.populations} if record_events else {}
        R = g.ring_length
        for step in range(steps):
            slot = self.t % R
            for p, pop in enumerate(g.populations):
                buf = self.buffers[p]
                if p in ext:
                    k.add_input(slot, ext[p][step], buf.ring[0], buf.tflag, buf.tidx, buf.tcount)
                self._update(p, pop, buf, slot, prof, step)
            for p, pop in enumerate(g.populations):
                buf = self.buffers[p]
                if buf.n_emit == 0:
                    continue
                k.count_events(buf.emit_idx, buf.n_emit, self._unit_events[p])
                if record_events:
                    log[pop.name].append((step, buf.emit_idx[: buf.n_emit].copy()))
                prof.events[step, p] = buf.n_emit
                prof.payload_bits[step, p] = buf.n_emit * pop.params.payload_bits
                for out in self._outgoing[p]:
                    prof.synops[step, p] += self._fan_out(buf, out, R)
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

    def _fan_out(self, buf: PopulationBuffers, out: Outgoing, R: int) -> int:
        """Deliver the population's emitted events along one projection; returns synaptic ops."""
        tb = self.buffers[out.target]
        if buf.emit_val.ndim == 2:  # vector payloads (RSGN)
            return kr.fan_out_vector(
                buf.emit_idx, buf.emit_val, buf.n_emit, out.indptr, out.indices, out.data,
                out.delay, self.t, tb.ring[out.channel], tb.tflag, tb.tidx, tb.tcount,
            )  # fmt: skip
        if out.uniform_delay is None:
            return kf.fan_out(
                buf.emit_idx, buf.emit_val, buf.n_emit, out.indptr, out.indices, out.data,
                out.delay, self.t, tb.ring[out.channel], tb.tflag, tb.tidx, tb.tcount,
            )  # fmt: skip
        slot = (self.t + out.uniform_delay) % R
        return kf.fan_out_uniform(
            buf.emit_idx, buf.emit_val, buf.n_emit, out.indptr, out.indices, out.data,
            out.full_rows, tb.ring[out.channel, slot], tb.tflag[slot], tb.tidx[slot], tb.tcount,
            slot,
        )  # fmt: skip

    def _update(
        self, p: int, pop: Population, buf: PopulationBuffers, slot: int, prof: Profile, step: int
    ) -> None:
        st, par = self.state[pop.name], pop.params
        common = (slot, buf.ring, buf.tflag, buf.tidx, buf.tcount, buf.pend, buf.pcount, buf.work)
        if isinstance(par, VNParams):
            dt = FLOAT_DTYPES[par.dtype]
            n_upd, n_emit = k.vn_step(
                *common,
                st["g"],
                st["g_sent"],
                st["c"],
                st["drive"],
                st["thresh"],
                dt(par.eta),
                dt(par.event_threshold),
                int(par.topk or 0),
                self.nnz[p],
                buf.emit_idx,
                buf.emit_val,
            )
            active = int(self.nnz[p][0])
        elif isinstance(par, LIFParams):
            dt = FLOAT_DTYPES[par.dtype]
            consts = np.array(
                [1 - par.du, 1 - (par.du2 or 0.0), 1 - par.dv, par.vth, par.v_reset], dt
            )
            n_upd, n_emit = k.lif_float_step(
                *common,
                st["u"],
                st["u2"],
                st["v"],
                st["refr"],
                st["bias"],
                consts,
                int(par.refractory),
                buf.emit_idx,
                buf.emit_val,
            )
            active = int(buf.pcount[0])
        elif isinstance(par, LIFFixedParams):
            n_upd, n_emit, wraps, clips = k.lif_fixed_step(
                *common,
                st["u"],
                st["v"],
                st["bias"],
                int(par.du),
                int(par.dv),
                int(par.vth) << fx.VTH_SHIFT,
                buf.emit_idx,
                buf.emit_val,
            )
            prof.wraps[step, p] = wraps
            prof.clips[step, p] = clips
            active = int(buf.pcount[0])
        elif isinstance(par, RSGNNodeParams):
            arr = par.kernel_arrays
            n_upd, n_emit, active = kr.rsgn_step(
                *common,
                st["alpha"],
                st["h"],
                st["alpha_pre"],
                st["pool_sum"],
                st["pool_messages"],
                st["ignited"],
                arr.thresholds,
                arr.w_h,
                arr.b_h,
                arr.ln_gain,
                arr.ln_bias,
                arr.pool_indptr,
                arr.pool_indices,
                arr.pool_size,
                arr.consts,
                bool(par.event_rule),
                buf.emit_idx,
                buf.emit_val,
            )
        elif isinstance(par, VNFixedParams):
            n_upd, n_emit, wraps, clips = kvf.vn_fixed_kernel(
                *common,
                st["g"],
                st["g_sent"],
                st["c"],
                st["drive"],
                st["thresh"],
                int(par.eta_mant),
                int(par.eta_shift),
                self.nnz[p],
                buf.emit_idx,
                buf.emit_val,
            )
            prof.wraps[step, p] = wraps
            prof.clips[step, p] = clips
            active = int(self.nnz[p][0])
        else:  # pragma: no cover - Population validates the type
            raise AtomsparkError(f"{pop.name}: unsupported unit model")
        buf.n_emit = n_emit
        prof.updates[step, p] = n_upd
        prof.active[step, p] = active

"""The event-driven engine: runs a Graph, delivering graded events through delay ring buffers.

Each step: (1) every population updates the units that received input for this step or are
still pending, and lists the units that emit; (2) each projection fans those events out into the
ring slot of their delivery step (delay >= 1, so the order of populations does not matter).
Projections with one delay for all synapses (the common case) take sim/kernels/fanout.py's uniform path:
one slot per call, and full rows (dense Gram columns) as contiguous multiply-adds. LIF
populations sweep all their units in index order instead of walking the touched and pending
lists when at least `dense_fraction` of them are busy (sim/kernels/lif.py; same results).

A whole run is one call of a compiled loop (run_loop.py) generated for the graph's structure:
no Python per step. Each population's kernel comes from its unit model (unit_model.py), so the
engine knows no model by name. Compile once, run many: an Engine is built once per graph;
`reset` starts a new sample (new drives or initial states, everything else kept); many samples
run through networks/sample_runner.py's SampleRunner, which resets one Engine per sample.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from atomspark.sim.core import AtomsparkError, as_finite_array, require_int, require_positive
from atomspark.sim.graph import Graph, Population, astype_held_once
from atomspark.sim.memory import require_memory, run_record_bytes
from atomspark.sim.profile import Profile
from atomspark.sim.run_loop import Counters, EventLog, Fan, ShiftStage, compiled_loop, loop_source
from atomspark.sim.run_loop_grouped import group_items, grouped_source, typed_list
from atomspark.sim.unit_model import Buffers, model_of
from atomspark.sim.units.lif import FLOAT_DTYPES
from numba import typeof

DENSE_FRACTION = 0.15  # LIF dense/sparse crossover measured at 4000 units: ~0.15-0.2 pending
_NEVER = 2**62
# Graphs of more populations run the grouped loop (run_loop_grouped.py), whose compile time does
# not grow with their number; up to this many, one block per population (run_loop.py) is cheaper
# per step and its compile is still short.
UNROLLED_MAX_POPULATIONS = 4
_LOG_START = 1 << 16  # initial capacity of an event log (grown by doubling)
_EMPTY = np.zeros(0)  # the state array of a fan-out or input that is not direct
_NO_LOG = EventLog(*(np.zeros(0, np.int64),) * 3)  # the grouped loop's logs when none is kept


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
    n_emit: int = 0  # events of the last step run (emit_idx[:n_emit], emit_val[:n_emit])

    def for_kernels(self) -> Buffers:
        """The buffers as every update kernel receives them (unit_model.Buffers)."""
        return Buffers(self.ring, self.tflag, self.tidx, self.tcount, self.pend, self.pcount,
                       self.work, self.emit_idx, self.emit_val)  # fmt: skip


@dataclass(frozen=True)
class Outgoing:
    """One projection as its source population's fan-out sees it (kernel-ready arrays)."""

    source: int
    target: int
    channel: int
    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray  # weights in the target's arithmetic (fixed point: shifted by weight_exp)
    delay: np.ndarray  # per synapse (a zero-stride view when uniform)
    uniform_delay: int | None
    full_rows: bool  # no target repeated within a row: a full row is a contiguous multiply-add
    right_shift: int = 0  # -weight_exp < 0 (fixed point): each step's summed input >> right_shift
    uniform_weight: object = None  # the one weight of every synapse (float targets), else None


class Engine:
    """Runs a Graph; state (per population dict of arrays) persists across calls to run()."""

    def __init__(
        self,
        graph: Graph,
        dense_fraction: float | None = DENSE_FRACTION,
        lean: bool = True,
        exact: bool = False,
    ) -> None:
        """dense_fraction: a LIF population sweeps all its units in index order (no list
        bookkeeping) when touched + pending units >= this fraction of its size; 0 = always,
        None = never. lean: a population whose model has a LeanKernel that applies to the
        sample (float LIF with a bias on every unit) runs it, with no bookkeeping at all
        (sim/kernels/lif_lean.py); the results are the same either way. exact: when False, a
        lean population whose every input has delay 1 takes its model's DirectKernel (input
        added straight into the synaptic state: faster, but float sums are rounded in another
        order, so spikes may drift from the general path's); True keeps every result
        bit-identical to the general kernels."""
        if not isinstance(graph, Graph):
            raise AtomsparkError(f"graph: expected a Graph, got {type(graph).__name__}")
        if dense_fraction is not None:
            dense_fraction = float(require_positive("dense_fraction", dense_fraction, True))
            if dense_fraction > 1:
                raise AtomsparkError(f"dense_fraction: must lie in [0, 1], got {dense_fraction}")
        for name, flag in (("lean", lean), ("exact", exact)):
            if not isinstance(flag, bool):
                raise AtomsparkError(f"{name}: expected True or False, got {flag!r}")
        self.graph = graph
        self.dense_fraction = dense_fraction
        self.lean_allowed = lean
        self.exact = exact
        self._direct_weights: dict = {}  # (projection, decay) -> weights / decay (cached)
        self._narrow: dict[int, np.ndarray] = {}  # projection -> uint16 target indices (cached)
        self._spelled_out: dict[int, np.ndarray] = {}  # projection -> per-synapse weights (cached)
        self._grouped_plans: dict = {}  # way of running -> grouped loop and its grouping
        self.models = [model_of(p.params) for p in graph.populations]
        self._dense_min = [
            _NEVER if dense_fraction is None else int(np.ceil(dense_fraction * p.size))
            for p in graph.populations
        ]
        self._outgoing = self._prepare_projections()
        self.reset()

    @staticmethod
    def _value_dtype(pop: Population):
        return np.int64 if pop.is_fixed_point else FLOAT_DTYPES[pop.params.dtype]

    def reset(self, state: dict[str, dict[str, np.ndarray]] | None = None) -> None:
        """Start a new sample: step 0, empty buffers, every population's initial state from its
        parameters, with `state` {population: {name: array}} overriding entries its unit model
        lets a sample set (e.g. a VN drive, RSGN ignition). Projections and the compiled loop are
        kept, so a new sample costs no graph building or compilation."""
        g = self.graph
        fresh = {p.name: p.params.init_state(p.size) for p in g.populations}
        for name, values in (state or {}).items():
            pop = g.population(name)
            model = self.models[g.index[name]]
            for var, value in values.items():
                if var not in model.sample_state:
                    raise AtomsparkError(
                        f"state[{name!r}][{var!r}]: a sample may set {list(model.sample_state)} "
                        f"of a {model.name} population"
                    )
                ref = fresh[name][var]
                arr = np.asarray(value)
                if arr.shape != ref.shape:
                    raise AtomsparkError(
                        f"state[{name!r}][{var!r}]: expected shape {ref.shape}, got {arr.shape}"
                    )
                if pop.is_fixed_point and np.any(arr != np.round(arr)):
                    raise AtomsparkError(f"state[{name!r}][{var!r}]: fixed point needs integers")
                checked = as_finite_array(f"state[{name!r}][{var!r}]", arr)
                fresh[name][var] = np.array(checked, dtype=ref.dtype, order="C")  # a copy
        self.t = 0
        self.state = fresh
        self.counters = [
            np.array([m.initial_counter(fresh[p.name])], np.int64)
            for m, p in zip(self.models, g.populations)
        ]
        self.buffers = [self._make_buffers(i, p) for i, p in enumerate(g.populations)]
        self._unit_events = [np.zeros(p.size, np.int64) for p in g.populations]
        self.lean = self._lean_populations()
        self._args = [
            m.lean.kernel_args(
                p.params, self.state[p.name], np.zeros(-(-p.size // 8) * 8, np.uint8)
            )
            if lean
            else m.kernel_args(p.params, self.state[p.name], c, d)
            for m, p, c, d, lean in zip(
                self.models, g.populations, self.counters, self._dense_min, self.lean
            )
        ]
        self.direct = self._direct_channels()

    def _lean_populations(self) -> list[bool]:
        """Per population: whether this sample runs its model's LeanKernel (decided at reset).
        Every projection into it must be a plain uniform-delay fan-out of scalar events."""
        g = self.graph
        plain_in = [True] * len(g.populations)
        for o in self._outgoing:
            if self._base_kind(o) != "uniform":
                plain_in[o.target] = False
        return [
            self.lean_allowed and m.lean is not None and ok
            and m.lean.applies(p.params, self.state[p.name])
            for m, p, ok in zip(self.models, g.populations, plain_in)
        ]  # fmt: skip

    def _direct_channels(self) -> list[list[tuple[np.ndarray, float]]]:
        """Per population: its DirectKernel's (state array, decay) per channel when this sample
        runs it (lean, not exact, every incoming projection of delay 1), else []."""
        delay1 = [True] * len(self.graph.populations)
        for o in self._outgoing:
            delay1[o.target] &= o.uniform_delay == 1
        return [
            m.lean.direct.channels(args)
            if lean and not self.exact and m.lean.direct is not None and ok
            else []
            for m, lean, ok, args in zip(self.models, self.lean, delay1, self._args)
        ]

    def _fan_kind(self, o: Outgoing) -> str:
        """The fan-out kernel of a projection in this sample (run_loop.FAN_KINDS)."""
        kind = self._base_kind(o)
        if kind == "uniform" and self.direct[o.target]:
            return "direct"
        return "plain" if kind == "uniform" and self.lean[o.target] else kind

    def _fan_weights(self, j: int, o: Outgoing):
        """A lean target's fan-out takes one scalar weight when all are equal, else the array;
        a direct one takes them divided by the channel's decay (in float64, then rounded to
        the target's dtype once)."""
        kind = self._fan_kind(o)
        scalar = o.uniform_weight is not None and kind in ("plain", "direct")
        w = o.uniform_weight if scalar else self._per_synapse_weights(j, o)
        if kind != "direct":
            return w
        decay = self.direct[o.target][o.channel][1]
        if (j, decay) not in self._direct_weights:
            scaled = np.asarray(w, np.float64) / decay
            self._direct_weights[(j, decay)] = (
                o.data.dtype.type(scaled) if np.ndim(w) == 0 else scaled.astype(o.data.dtype)
            )
        return self._direct_weights[(j, decay)]

    def _per_synapse_weights(self, j: int, o: Outgoing) -> np.ndarray:
        """o.data with one entry per synapse: weights held once are spelled out (and cached) for
        the kernels that read a weight per synapse."""
        if o.data.strides != (0,) or o.data.size < 2:
            return o.data
        if j not in self._spelled_out:
            self._spelled_out[j] = np.ascontiguousarray(o.data)
        return self._spelled_out[j]

    def _fan_indices(self, j: int, o: Outgoing) -> np.ndarray:
        """A lean target of at most 65,536 units gets its fan-outs' target indices as uint16:
        half the bytes per synapse of int32 (CUBA at 40,000 neurons, interleaved pairs on a shared
        machine: 4-10 % less CPU time) and no negative-index check per synapse."""
        if self._fan_kind(o) not in ("plain", "direct") or self.graph.sizes[o.target] > 1 << 16:
            return o.indices
        if j not in self._narrow:
            self._narrow[j] = o.indices.astype(np.uint16)
        return self._narrow[j]

    def _base_kind(self, o: Outgoing) -> str:
        """The fan-out kernel a projection takes into a general (not lean) target."""
        if getattr(self.graph.populations[o.source].params, "payload_shape", ()):
            return "vector"
        if o.uniform_delay is None:
            return "delayed"
        if o.right_shift:
            return "shifted"
        return "uniform"

    def _make_buffers(self, i: int, pop: Population) -> PopulationBuffers:
        n, dt = pop.size, self._value_dtype(pop)
        first = self.models[i].initially_pending(pop.params, self.state[pop.name])
        tail = pop.params.payload_shape  # vector events (RSGN): (d,)
        R = self.graph.ring_length
        pend = np.zeros(n, np.int64)
        idx = np.flatnonzero(first)
        pend[: idx.size] = idx
        return PopulationBuffers(
            ring=np.zeros((pop.params.n_channels, R, n) + tail, dt),
            tflag=np.zeros((R, n), np.uint8),
            tidx=np.zeros((R, n), np.int64),
            tcount=np.zeros(R, np.int64),
            pend=pend,
            pcount=np.array([idx.size, 0], np.int64),  # [count, 1 when the list is stale]
            work=np.zeros(n, np.int64),
            emit_idx=np.zeros(n, np.int64),
            emit_val=np.zeros((n,) + tail, dt),
        )

    def _prepare_projections(self) -> list[Outgoing]:
        """Per projection, the arrays its fan-out kernel reads (built once per engine)."""
        out = []
        for proj in self.graph.projections:
            s, t = self.graph.index[proj.source], self.graph.index[proj.target]
            tgt = self.graph.populations[t]
            data = proj.data
            if tgt.is_fixed_point and proj.weight_exp > 0:
                scaled = proj.data.astype(np.int64) << proj.weight_exp  # < 2**31 (Graph checks)
                data = scaled.astype(np.int32)
            elif not tgt.is_fixed_point:
                data = astype_held_once(data, self._value_dtype(tgt))
            else:
                data = np.ascontiguousarray(data)
            out.append(
                Outgoing(
                    source=s,
                    target=t,
                    channel=proj.channel,
                    indptr=proj.indptr,
                    indices=proj.indices,
                    data=data,  # float weights that are all equal stay held once (zero stride)
                    delay=proj.delay,
                    uniform_delay=proj.uniform_delay,
                    full_rows=not proj.repeats_targets,
                    right_shift=max(-proj.weight_exp, 0) if tgt.is_fixed_point else 0,
                    uniform_weight=_uniform_value(data) if not tgt.is_fixed_point else None,
                )
            )
        return out

    def _check_inputs(self, inputs, steps) -> dict[int, np.ndarray]:
        checked = {}
        for name, arr in (inputs or {}).items():
            pop = self.graph.population(name)
            model = self.models[self.graph.index[name]]
            if not model.accepts_input:
                raise AtomsparkError(
                    f"inputs[{name!r}]: {model.name} units take no external input; set their "
                    f"initial state ({', '.join(model.sample_state)}) with Engine.reset instead"
                )
            dt = self._value_dtype(pop)
            a = as_finite_array(f"inputs[{name!r}]", arr, ndim=2)
            if a.shape != (steps, pop.size):
                raise AtomsparkError(
                    f"inputs[{name!r}]: expected shape ({steps}, {pop.size}), got {a.shape}"
                )
            if pop.is_fixed_point and np.any(a != np.round(a)):
                raise AtomsparkError(f"inputs[{name!r}]: a fixed-point population needs integers")
            checked[self.graph.index[name]] = np.ascontiguousarray(a, dtype=dt)
        return checked

    def _check_record(self, record) -> list[tuple[str, str]]:
        pairs = []
        for pair in record:
            if not (isinstance(pair, tuple | list) and len(pair) == 2):
                raise AtomsparkError(f"record: expected (population, state) pairs, got {pair!r}")
            name, var = pair
            if var not in self.state[self.graph.population(name).name]:
                raise AtomsparkError(f"record: population {name!r} has no state {var!r}")
            pairs.append((name, var))
        return pairs

    def run(
        self,
        steps: int,
        inputs: dict[str, np.ndarray] | None = None,
        record: tuple = (),
        record_events: bool = False,
    ) -> Profile:
        """Advance `steps` steps in one compiled call. inputs: {population: (steps, size) array}
        added to channel 0 of each step's input; record: (population, state name) pairs stored
        in self.traces; record_events: keep every event's (step, unit) in self.event_log[population]
        (a raster)."""
        steps = require_int("steps", steps, minimum=0)
        ext = self._check_inputs(inputs, steps)
        pairs = self._check_record(record)
        g = self.graph
        traced = sum(self.state[n][v].nbytes for n, v in pairs)
        require_memory(
            f"steps {steps}",
            run_record_bytes(steps, len(g.populations)) + float(steps) * traced,
            "use fewer steps",
        )
        prof = Profile.empty([p.name for p in g.populations], g.sizes, steps)
        self.traces = {
            (name, var): np.zeros(
                (steps,) + self.state[name][var].shape, self.state[name][var].dtype
            )
            for name, var in pairs
        }
        bufs = tuple(b.for_kernels() for b in self.buffers)
        fans = tuple(
            Fan(bufs[o.target], o.indptr, self._fan_indices(j, o), self._fan_weights(j, o), o.delay,
                o.uniform_delay or 0, o.full_rows, o.channel,
                _shift_stage(o, g.populations[o.target].size),
                self.direct[o.target][o.channel][0] if self.direct[o.target] else _EMPTY)
            for j, o in enumerate(self._outgoing)
        )  # fmt: skip
        direct_in = tuple((ch[0][0], ch[0][1]) if ch else (_EMPTY, 1.0) for ch in self.direct)
        no_input = np.zeros((0, 0))
        X = tuple(ext.get(p, no_input) for p in range(len(g.populations)))
        counters = Counters(prof.updates, prof.active, prof.wraps, prof.clips, prof.events,
                            prof.payload_bits, prof.synops)  # fmt: skip
        PB = np.array([p.params.payload_bits for p in g.populations], np.int64)
        TR = tuple((self.traces[pair], self.state[pair[0]][pair[1]]) for pair in pairs)
        logs = tuple(
            EventLog(np.zeros(_LOG_START, np.int64), np.zeros(_LOG_START, np.int64),
                     np.zeros(1, np.int64))
            for _ in g.populations
        ) if record_events else ()  # fmt: skip
        names, kernels, inputs = self._update_kernels(sorted(ext))
        common = (counters, PB, TR)
        if len(g.populations) <= UNROLLED_MAX_POPULATIONS:
            src = loop_source(names, [(o.source, self._fan_kind(o)) for o in self._outgoing],
                              inputs, len(pairs), record_events)  # fmt: skip
            loop = compiled_loop(src, kernels)
            fixed = (bufs, tuple(self._args), fans, X, tuple(self._unit_events), *common)
            last = (direct_in,)
        else:
            loop, fixed = self._grouped_loop(names, kernels, inputs, bufs, fans, X, direct_in,
                                             len(pairs), record_events)  # fmt: skip
            fixed += (typed_list(self._unit_events), *common)
            logs = typed_list(logs if record_events else [_NO_LOG])  # unread without events
            last = ()
        done = 0
        while True:
            done = loop(done, steps, self.t, g.ring_length, *fixed, logs, *last)
            if done == steps:
                break
            grown = [EventLog(_grown(a.steps), _grown(a.units), a.count) for a in logs]
            logs = tuple(grown) if isinstance(logs, tuple) else typed_list(grown)
        self.t += steps
        if steps:
            for buf, n_emit in zip(self.buffers, prof.events[-1]):
                buf.n_emit = int(n_emit)
        prof.unit_events = [u.copy() for u in self._unit_events]
        self.event_log = {
            p.name: (logs[i].steps[: logs[i].count[0]].copy(),
                     logs[i].units[: logs[i].count[0]].copy())
            if record_events else (np.zeros(0, np.int64), np.zeros(0, np.int64))
            for i, p in enumerate(g.populations)
        } if record_events else {}  # fmt: skip
        return prof

    def _update_kernels(self, with_input: list[int]):
        """Per population: the module-global name of its update kernel in the generated loop,
        {name: kernel}, and its input kind (run_loop.INPUT's key, None without input)."""
        n_pop = len(self.graph.populations)
        way = ["direct" if d else "lean" if lean else "" for d, lean in zip(self.direct, self.lean)]
        names = [f"update_{m.name}_{w}".rstrip("_") for m, w in zip(self.models, way)]
        kernels = {
            name: m.lean.direct.update if w == "direct" else m.lean.update if w else m.update
            for name, m, w in zip(names, self.models, way)
        }
        input_kind = {"direct": "direct", "lean": "plain", "": "listed"}
        inputs = [input_kind[way[p]] if p in with_input else None for p in range(n_pop)]
        return names, kernels, inputs

    def _grouped_loop(self, names, kernels, inputs, bufs, fans, X, direct_in, n_traces, log):
        """run_loop_grouped's loop for this graph and its arguments up to the unit event counts:
        populations grouped by kernel, input kind and Numba types, projections by fan-out kind
        and types; projections listed by source population in graph order. The grouping is
        planned once per way of running (lean and direct populations, inputs, records): the
        Numba types of the arguments follow from it, and typing them costs about 0.4 ms per
        population, too much to pay again at every sample."""
        n_pop = len(self.graph.populations)
        members = [(bufs[p], self._args[p], X[p], *direct_in[p]) for p in range(n_pop)]
        order = sorted(range(len(self._outgoing)), key=lambda j: self._outgoing[j].source)
        entries = [(fans[j], bufs[self._outgoing[j].source].emit_val) for j in order]
        way = (tuple(self.lean), tuple(map(bool, self.direct)), tuple(inputs), n_traces, log)
        if way not in self._grouped_plans:
            member_types = [typeof(m) for m in members]
            pops = group_items([(names[p], inputs[p], member_types[p]) for p in range(n_pop)])
            kinds = [self._fan_kind(self._outgoing[j]) for j in order]
            entry_types = [typeof(e) for e in entries]
            projs = group_items([(kind, t) for kind, t in zip(kinds, entry_types)])
            src = grouped_source(
                [key[:2] for key in pops.keys], [key[0] for key in projs.keys], n_traces, log
            )
            fan_ptr = np.zeros(n_pop + 1, np.int64)
            np.add.at(fan_ptr, [self._outgoing[j].source + 1 for j in order], 1)
            self._grouped_plans[way] = (compiled_loop(src, kernels), pops, projs,
                                        np.cumsum(fan_ptr))  # fmt: skip
        loop, pops, projs, fan_ptr = self._grouped_plans[way]
        fixed = (
            tuple(typed_list([members[p] for p in group]) for group in pops.members),
            tuple(typed_list([entries[i] for i in group]) for group in projs.members),
            pops.group, pops.slot, fan_ptr, projs.group, projs.slot,
            typed_list([b.emit_idx for b in bufs]), np.zeros(n_pop, np.int64),
        )  # fmt: skip
        return loop, fixed


def _uniform_value(data: np.ndarray):
    """The one value of a nonempty array whose entries are all equal (a NumPy scalar), else None."""
    if data.size and (data.strides == (0,) or np.all(data == data.flat[0])):
        return data.dtype.type(data.flat[0])
    return None


def _shift_stage(out: Outgoing, n: int) -> ShiftStage:
    """For weight_exp < 0, as Lava's Dense/Sparse do it: a private per-target accumulator of the
    step's events (stage, flags, touched list, count) and the shift; its floor-shifted sums go
    into the delivery slot. Only the shifted sum is exact, so it cannot share the slot. Other
    projections get an empty stage (the loop never reads it)."""
    m = n if out.right_shift else 0
    return ShiftStage(np.zeros(m, np.int64), np.zeros(m, np.uint8), np.zeros(m, np.int64),
                      np.zeros(1, np.int64), out.right_shift)  # fmt: skip


def _grown(arr: np.ndarray) -> np.ndarray:
    """arr with twice the capacity (contents kept)."""
    out = np.zeros(2 * arr.size, arr.dtype)
    out[: arr.size] = arr
    return out

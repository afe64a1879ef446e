"""The whole-run loop of a graph, generated and compiled by Numba: no Python per step.

A graph's populations use different unit models (different kernels and state), so one generic
compiled loop cannot call them; instead this module writes the loop for a graph's *structure*
(the unit model of each population, the kind of each projection's fan-out, which populations
get external input, what is recorded) as plain Python source, with every kernel a global, and
compiles it with Numba. The same structure reuses the compiled loop (in this process, and on disk
through Numba's cache when the source is written to the cache directory), whatever the sizes,
weights or states.

One step of the generated loop does exactly what the engine's step did as a Python loop:
(1) for each population in order: add its external input to ring slot t % R, call its model's
update kernel, store updates/active/wraps/clips; (2) for each population with events: count
them per unit, log them if asked, store events/payload bits, call each outgoing projection's
fan-out kernel in projection order and store the synaptic ops; (3) copy recorded state.
The kernels and their order are unchanged, so results are bit-identical to the stepped loop.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

import numpy as np
from atomspark.sim.unit_model import Buffers
from numba import njit

# kernels/fanout.py uniform path / per-synapse delays / vector payloads / uniform with weight_exp < 0
# / uniform into a lean target (kernels/lif_lean.py: no touched marking) / delay 1 straight into
# a direct lean target's state (weights pre-divided by the channel's decay)
FAN_KINDS = ("uniform", "delayed", "vector", "shifted", "plain", "direct")

_COMPILED: dict[str, object] = {}


class ShiftStage(NamedTuple):
    """A projection's private accumulator of one step's events, for weight_exp < 0 (fixed
    point): its sums are floor-shifted right by `shift` before they join the delivery slot."""

    acc: np.ndarray
    flags: np.ndarray
    touched: np.ndarray
    count: np.ndarray
    shift: int


class Fan(NamedTuple):
    """One projection as the loop's fan-out call sees it."""

    target: Buffers  # the target population's buffers
    indptr: np.ndarray
    indices: np.ndarray
    weights: object  # per-synapse array, or one scalar (uniform weights into a lean target)
    delay: np.ndarray  # per synapse (kind "delayed")
    uniform_delay: int  # the one delay (kinds "uniform", "plain", "shifted")
    full_rows: bool
    channel: int
    stage: ShiftStage  # used by kind "shifted" only (empty otherwise)
    into: np.ndarray  # kind "direct": the target's state array of this channel (else empty)


class Counters(NamedTuple):
    """Per-step, per-population counters of the run (Profile's arrays, (steps, populations))."""

    updates: np.ndarray
    active: np.ndarray
    wraps: np.ndarray
    clips: np.ndarray
    events: np.ndarray
    payload_bits: np.ndarray
    synops: np.ndarray


class EventLog(NamedTuple):
    """One population's raster: (step, unit) of its first `count[0]` events."""

    steps: np.ndarray
    units: np.ndarray
    count: np.ndarray


# The loop's arguments, by name (the engine builds them; every per-population entry is a tuple
# indexed by population, every per-projection entry a tuple indexed by projection):
#   first_step, steps, t0, R       resume at first_step; absolute time t0; ring length R
#   buffers[p]                     Buffers of population p
#   args[p]                        the own-arguments tuple of p's update kernel
#   fans[j]                        Fan of projection j
#   inputs[p]                      (steps, size) external input of p (empty if none)
#   unit_events[p]                 per-unit event counts of p
#   counters                       Counters
#   payload_bits[p]                bits per event of p
#   traces[i]                      (trace array, state array) of recorded pair i
#   logs[p]                        EventLog of p (when events are logged)
#   direct_in[p]                   (state array, decay) that p's external input goes into when
#                                  p is a direct lean population (else an empty array and 1)
HEADER = """\
def run_loop(first_step, steps, t0, R, buffers, args, fans, inputs, unit_events, counters,
             payload_bits, traces, logs, direct_in):
"""

# Each population's buffers and arguments and each projection's Fan, taken out of their tuples
# once before the step loop (in the loop every access may cost reference counting; measured:
# a few per cent of a CUBA step at 4000 neurons in float32).
HOIST_POP = "    buf_{p} = buffers[{p}]\n    arg_{p} = args[{p}]\n"
HOIST_FAN = "    fan_{j} = fans[{j}]\n"
STEP = """\
    for step in range(first_step, steps):
        t = t0 + step
        slot = t % R
"""

# A log must hold one more step's events (at most the population's size): else return the step
# reached, the engine grows the logs and calls again from there.
LOG_ROOM = """\
        if logs[{p}].count[0] + buf_{p}.emit_idx.size > logs[{p}].steps.size:
            return step
"""

# External input of population p into channel 0 of this step's slot.
INPUT = {
    "listed": "        k.add_input(slot, inputs[{p}][step], buf_{p}.ring[0], buf_{p}.tflag, "
    "buf_{p}.tidx, buf_{p}.tcount)\n",
    "plain": "        kll.add_input_plain(slot, inputs[{p}][step], buf_{p}.ring[0])\n",
    "direct": "        kll.add_input_direct(inputs[{p}][step], direct_in[{p}][0], direct_in[{p}][1])\n",
}

# (1) Update population p with its model's kernel; keep its event count in n_events_{p}.
UPDATE = """\
        n_updates, n_events_{p}, n_active, n_wraps, n_clips = {kernel}(slot, buf_{p}, arg_{p})
        counters.updates[step, {p}] = n_updates
        counters.active[step, {p}] = n_active
        if n_wraps or n_clips:
            counters.wraps[step, {p}] = n_wraps
            counters.clips[step, {p}] = n_clips
"""

# (2) Population p's events: count them per unit, log them, then fan them out.
EVENTS = """\
        if n_events_{p} > 0:
            emitted = buf_{p}.emit_idx
            k.count_events(emitted, n_events_{p}, unit_events[{p}])
"""
LOG = """\
            m = logs[{p}].count[0]
            logs[{p}].steps[m : m + n_events_{p}] = step
            logs[{p}].units[m : m + n_events_{p}] = emitted[:n_events_{p}]
            logs[{p}].count[0] = m + n_events_{p}
"""
EVENT_COUNTS = """\
            counters.events[step, {p}] = n_events_{p}
            counters.payload_bits[step, {p}] = n_events_{p} * payload_bits[{p}]
            synops = 0
"""

# Fan-out of one projection by kind, as text with named holes: {fan} the projection's Fan, {val}
# its source's emit_val, {n} the source's event count this step (the event units are `emitted`),
# {pad} the indentation (run_loop_grouped.py fills the same holes inside its dispatch).
_EVENTS = "emitted, {val}, {n}, {fan}.indptr, {fan}.indices, {fan}.weights"
_SLOT = "{pad}s = (t + {fan}.uniform_delay) % R\n"
_TARGET = "{fan}.target"
FAN = {
    "uniform": _SLOT + f"{{pad}}synops += kf.fan_out_uniform({_EVENTS}, {{fan}}.full_rows, "
    f"{_TARGET}.ring[{{fan}}.channel, s], {_TARGET}.tflag[s], {_TARGET}.tidx[s], "
    f"{_TARGET}.tcount, s)\n",
    "plain": _SLOT
    + f"{{pad}}synops += kll.fan_out_plain({_EVENTS}, {_TARGET}.ring[{{fan}}.channel, s])\n",
    "direct": f"{{pad}}synops += kll.fan_out_plain({_EVENTS}, {{fan}}.into)\n",
    "shifted": _SLOT + "{pad}stage = {fan}.stage\n"
    f"{{pad}}synops += kf.fan_out_uniform({_EVENTS}, {{fan}}.full_rows, stage.acc, "
    f"stage.flags, stage.touched, stage.count, 0)\n"
    f"{{pad}}kf.flush_shifted(stage.acc, stage.flags, stage.touched, stage.count, stage.shift, "
    f"{_TARGET}.ring[{{fan}}.channel, s], {_TARGET}.tflag[s], {_TARGET}.tidx[s], "
    f"{_TARGET}.tcount, s)\n",
    "delayed": f"{{pad}}synops += kf.fan_out({_EVENTS}, {{fan}}.delay, t, "
    f"{_TARGET}.ring[{{fan}}.channel], {_TARGET}.tflag, {_TARGET}.tidx, {_TARGET}.tcount)\n",
    "vector": f"{{pad}}synops += kr.fan_out_vector({_EVENTS}, {{fan}}.delay, t, "
    f"{_TARGET}.ring[{{fan}}.channel], {_TARGET}.tflag, {_TARGET}.tidx, {_TARGET}.tcount)\n",
}
SYNOPS = "            counters.synops[step, {p}] = synops\n"

# (3) Recorded state after the step.
TRACE = "        traces[{i}][0][step] = traces[{i}][1]\n"
FOOTER = "    return steps\n"


def loop_source(
    models: list[str],
    fans: list[tuple[int, str]],
    inputs: list[str | None],
    n_traces: int,
    log_events: bool,
) -> str:
    """Python source of the run loop for one graph structure (fan kinds: FAN_KINDS).

    models: module-global name of each population's update kernel; fans: (source population,
    kind) per projection in graph order; inputs: per population None (no external input),
    "listed" (added with touched marking), "plain" (a lean population: no marking) or "direct"
    (a direct lean population: into its state);
    n_traces: number of recorded (trace, state) pairs; log_events: keep every event's step and
    unit (the loop returns early, at the step it reached, when a log is too full for one more
    step's events; the caller grows the logs and calls again)."""
    src = [HEADER]
    src += [HOIST_POP.format(p=p) for p in range(len(models))]
    src += [HOIST_FAN.format(j=j) for j in range(len(fans))]
    src.append(STEP)
    if log_events:
        src += [LOG_ROOM.format(p=p) for p in range(len(models))]
    for p, kernel in enumerate(models):  # (1) every population's update, in order
        if inputs[p] is not None:
            src.append(INPUT[inputs[p]].format(p=p))
        src.append(UPDATE.format(p=p, kernel=kernel))
    for p in range(len(models)):  # (2) every population's events, fanned out in graph order
        src.append(EVENTS.format(p=p))
        if log_events:
            src.append(LOG.format(p=p))
        src.append(EVENT_COUNTS.format(p=p))
        src += [
            FAN[kind].format(
                fan=f"fan_{j}", val=f"buf_{p}.emit_val", n=f"n_events_{p}", pad=" " * 12
            )
            for j, (source, kind) in enumerate(fans)
            if source == p
        ]
        src.append(SYNOPS.format(p=p))
    src += [TRACE.format(i=i) for i in range(n_traces)]  # (3) recorded state
    src.append(FOOTER)
    return "".join(src)


def kernel_sources_digest() -> str:
    """SHA-1 of every module of the sim package. Written into the generated loop's file, so
    that a changed kernel changes that file and Numba recompiles it: Numba's cache checks only
    the file a function lives in, not the kernels it inlines from other modules."""
    digest = hashlib.sha1()
    for path in sorted(Path(__file__).resolve().parent.rglob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def compiled_loop(source: str, kernels: dict[str, object]):
    """The Numba-compiled run_loop of `source` (compiled once per source in this process).

    The source is written as a module into the Numba cache directory so that Numba's on-disk
    cache keeps the compiled loop across processes (with kernel_sources_digest in the file, so a
    changed kernel is recompiled); kernels: the update kernels it names."""
    key = hashlib.sha1(source.encode()).hexdigest()[:16]
    if key not in _COMPILED:
        header = (
            "from atomspark.sim.kernels import common as k\n"
            "from atomspark.sim.kernels import fanout as kf\n"
            "from atomspark.sim.kernels import lif_lean as kll\n"
            "from atomspark.sim.kernels import rsgn as kr\n"
        )
        imports = "".join(
            f"from {fn.py_func.__module__} import {fn.py_func.__name__} as {name}\n"
            for name, fn in sorted(kernels.items())
        )
        text = header + imports + f"# kernels: {kernel_sources_digest()}\n\n" + source
        mod = _load_module(f"atomspark_run_loop_{key}", text)
        _COMPILED[key] = njit(cache=True)(mod.run_loop)
    return _COMPILED[key]


def _load_module(name: str, text: str):
    """Import generated source from a file (Numba caches only functions that live in files)."""
    folder = Path(os.environ.get("NUMBA_CACHE_DIR") or tempfile.gettempdir()) / "atomspark_loops"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.py"
    if not path.exists() or path.read_text() != text:
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod

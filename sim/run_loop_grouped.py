"""The run loop for graphs of many populations: one dispatch per group of like populations, so
its compile time does not grow with the number of populations.

run_loop.py writes one block of code per population and per projection; LLVM then optimises
one function whose size grows with the graph, and its compile time grows faster than the size
(a chain of 20 netx layers took about a minute, 40 layers over four). This loop is written for
the graph's *kinds* instead: populations whose update kernel, input handling and Numba types
are the same form a group, held in one homogeneous tuple that the loop indexes at run time, and
likewise projections of the same fan-out kind and types. Each step walks the populations and
then their projections in graph order, as run_loop.py does, and dispatches each to its group's
code, so the same kernels run in the same order on the same buffers: results are
bit-identical to run_loop.py's. The source, and so the compiled code, is the same for a chain of
any length; only the tuples' lengths change, which costs one short compile per new length.

Indexing a tuple at run time costs a few nanoseconds per population and projection per step,
which matters only when a step itself is a few microseconds (CUBA at 4000 neurons, one
population): the engine takes this loop only for graphs of more than UNROLLED_MAX_POPULATIONS
populations (sim/engine.py).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from atomspark.sim.run_loop import FAN, INPUT
from numba import njit
from numba.typed import List

# Arguments (the engine builds them; see run_loop.py for counters, traces, logs):
#   members[g][i]    (buffers, kernel args, external input (steps, size), direct state, decay) of
#                    the i-th population of group g (every member of a group with an input
#                    kind gets external input, none of a group without)
#   fans[h][i]       (Fan, source emit_val) of the i-th projection of fan group h
#   pop_group[p], pop_slot[p]   population p's group and place in it
#   fan_ptr          projections of population p: order[fan_ptr[p]:fan_ptr[p + 1]]
#   fan_group[j], fan_slot[j]   the j-th of those (in order) projection's group and place
#   emits[p]         population p's emit_idx; n_events: scratch, one entry per population
HEADER = """\
def run_loop(first_step, steps, t0, R, members, fans, pop_group, pop_slot, fan_ptr, fan_group,
             fan_slot, emits, n_events, unit_events, counters, payload_bits, traces,
             logs):
    n_pop = pop_group.size
    for step in range(first_step, steps):
        t = t0 + step
        slot = t % R
"""
LOG_ROOM = """\
        for p in range(n_pop):
            if logs[p].count[0] + emits[p].size > logs[p].steps.size:
                return step
"""
UPDATE_LOOP = """\
        for p in range(n_pop):
            g = pop_group[p]
            i = pop_slot[p]
            n_updates = n_emitted = n_active = n_wraps = n_clips = 0
"""
# One group's update: its member, its input (when the group has any), its kernel.
UPDATE = """\
            {branch} g == {g}:
                m_{g} = members[{g}][i]
                buf_{g} = m_{g}[0]
{input}\
                n_updates, n_emitted, n_active, n_wraps, n_clips = {kernel}(slot, buf_{g}, m_{g}[1])
"""
COUNT = """\
            n_events[p] = n_emitted
            counters.updates[step, p] = n_updates
            counters.active[step, p] = n_active
            if n_wraps or n_clips:
                counters.wraps[step, p] = n_wraps
                counters.clips[step, p] = n_clips
"""
EVENTS = """\
        for p in range(n_pop):
            n = n_events[p]
            if n > 0:
                emitted = emits[p]
                k.count_events(emitted, n, unit_events[p])
"""
LOG = """\
                at = logs[p].count[0]
                logs[p].steps[at : at + n] = step
                logs[p].units[at : at + n] = emitted[:n]
                logs[p].count[0] = at + n
"""
FANS = """\
                counters.events[step, p] = n
                counters.payload_bits[step, p] = n * payload_bits[p]
                synops = 0
                for j in range(fan_ptr[p], fan_ptr[p + 1]):
                    h = fan_group[j]
"""
FAN_BRANCH = """\
                    {branch} h == {h}:
                        fan_{h}, val_{h} = fans[{h}][fan_slot[j]]
"""
SYNOPS = "                counters.synops[step, p] = synops\n"
TRACE = "        traces[{i}][0][step] = traces[{i}][1]\n"
FOOTER = "    return steps\n"

# run_loop.INPUT's lines read population p's hoisted names; here they read group g's member.
_INPUT_HOLES = {"inputs[{p}]": "m_{p}[2]", "direct_in[{p}][0]": "m_{p}[3]",
                "direct_in[{p}][1]": "m_{p}[4]"}  # fmt: skip


def _input_line(kind: str, g: int) -> str:
    line = INPUT[kind].strip()
    for hole, name in _INPUT_HOLES.items():
        line = line.replace(hole, name)
    return " " * 16 + line.format(p=g) + "\n"


def grouped_source(
    groups: Sequence[tuple[str, str | None]],
    fan_kinds: Sequence[str],
    n_traces: int,
    log_events: bool,
) -> str:
    """Python source of the grouped run loop. groups: per population group, (module-global name
    of its update kernel, its input kind: None or run_loop.INPUT's key); fan_kinds: per
    projection group, its run_loop.FAN kind."""
    src = [HEADER]
    if log_events:
        src.append(LOG_ROOM)
    src.append(UPDATE_LOOP)
    for g, (kernel, input_kind) in enumerate(groups):
        line = "" if input_kind is None else _input_line(input_kind, g)
        src.append(UPDATE.format(branch="elif" if g else "if", g=g, input=line, kernel=kernel))
    src.append(COUNT)
    src.append(EVENTS)
    if log_events:
        src.append(LOG)
    src.append(FANS)
    for h, kind in enumerate(fan_kinds):
        src.append(FAN_BRANCH.format(branch="elif" if h else "if", h=h))
        src.append(FAN[kind].format(fan=f"fan_{h}", val=f"val_{h}", n="n", pad=" " * 24))
    src.append(SYNOPS)
    src += [TRACE.format(i=i) for i in range(n_traces)]
    src.append(FOOTER)
    return "".join(src)


@dataclass(frozen=True)
class Grouping:
    """Items split into groups of equal keys, in order of first appearance."""

    keys: list[Hashable]  # per group
    group: np.ndarray  # per item: its group
    slot: np.ndarray  # per item: its place in its group
    members: list[list[int]]  # per group: its items, in order


def group_items(keys: Sequence[Hashable]) -> Grouping:
    """Group items by key (each key names a kernel and the Numba types it is called with)."""
    index: dict[Hashable, int] = {}
    members: list[list[int]] = []
    group = np.zeros(len(keys), np.int64)
    slot = np.zeros(len(keys), np.int64)
    for item, key in enumerate(keys):
        g = index.setdefault(key, len(index))
        if g == len(members):
            members.append([])
        group[item], slot[item] = g, len(members[g])
        members[g].append(item)
    return Grouping(list(index), group, slot, members)


def typed_list(items: list) -> List:
    """A Numba typed list of items of one Numba type (at least one item): the loop indexes it at
    run time, and its Numba type, unlike a tuple's, does not depend on its length (a tuple of n
    populations makes Numba unbox, copy and compile code for each of its n items: 46 s for 21
    populations). Built by cached kernels: typed List's own methods compile in every process
    (about 1.3 s per item type)."""
    out = _list_of(items[0])
    for item in items[1:]:
        _append(out, item)
    return out


@njit(cache=True)
def _list_of(first):
    out = List()
    out.append(first)
    return out


@njit(cache=True)
def _append(out, item):
    out.append(item)

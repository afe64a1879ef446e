"""One simulation on several threads: an Engine's direct lean LIF population (e.g. CUBA) stepped
by sim/kernels/lif_parallel.py, on the Engine's own state arrays.

    eng = Engine(cuba_graph(net))
    par = ParallelLIF(eng)            # one target block per thread of each run
    spikes = par.run(steps, threads=2)

The result (states, spikes per step) is bit-identical for every thread count, every blocking and
to
`eng.run(steps)` (tests/test_parallel_lif.py); the Engine's step counter advances, so serial and
parallel runs may follow each other. Graph: one float LIF population whose every unit has a bias
and whose every projection is from itself, with delay 1 (the Engine's direct lean path).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
from atomspark.sim.core import AtomsparkError, require_int
from atomspark.sim.engine import Engine
from atomspark.sim.kernels import lif_parallel as klp

MIN_BLOCK = 2048  # units per block at least (a block's update should outweigh its scheduling)


@dataclass(frozen=True)
class ParallelProfile:
    """spikes and synaptic operations per step of a parallel run, and the threads it used."""

    spikes: np.ndarray
    synops: np.ndarray
    threads: int


def block_bounds(n: int, n_blocks: int) -> np.ndarray:
    """Block starts (and n at the end): n_blocks blocks (fewer where a block would hold less
    than MIN_BLOCK units), each a multiple of 8 units."""
    nb = max(1, min(n_blocks, n // MIN_BLOCK))
    step = -(-n // nb)
    step = -(-step // 8) * 8
    return np.minimum(np.arange(0, nb + 1, dtype=np.int64) * step, n).astype(np.int64)


@dataclass(frozen=True)
class BlockSplit:
    """The projections regrouped by (target block, source) for one blocking, with the event
    lists the kernel needs (sim/kernels/lif_parallel.run_blocks)."""

    blocks: np.ndarray  # (n_blocks + 1,) starts
    ptr: np.ndarray  # (n_projections, n_blocks, n + 1) offsets into indices / weights
    indices: np.ndarray  # targets, int32
    weights: np.ndarray  # per synapse; empty when every projection is uniform
    flags: np.ndarray  # n uint8, padded to a multiple of 8
    emit: np.ndarray  # (2, n): the two event lists, alternating by step
    n_spikes: np.ndarray  # (2, n_blocks)
    ops: np.ndarray  # (n_blocks,) scratch

    @property
    def nbytes(self) -> int:
        return int(self.ptr.nbytes + self.indices.nbytes + self.weights.nbytes)


class ParallelLIF:
    """The direct lean LIF population of `engine`, stepped on several threads (module docstring).
    blocks: how many target blocks; None (default) one per thread of each run, the fastest: every
    block costs one offset lookup per spike and projection, so blocks beyond the threads only
    add work (measured in docs/performance.md). The results do not depend on it."""

    def __init__(self, engine: Engine, blocks: int | None = None) -> None:
        if not isinstance(engine, Engine):
            raise AtomsparkError(f"engine: expected an Engine, got {type(engine).__name__}")
        g = engine.graph
        if len(g.populations) != 1 or not engine.direct[0]:
            raise AtomsparkError(
                "engine: the parallel run takes one LIF population on the direct lean path "
                "(every unit biased, every projection from itself with delay 1, exact=False)"
            )
        self.blocks = None if blocks is None else require_int("blocks", blocks, minimum=1)
        self.engine = engine
        self.n = g.populations[0].size
        self._dtype = engine._args[0].u.dtype
        for j, o in enumerate(engine._outgoing):
            if o.channel not in (0, 1):
                raise AtomsparkError(f"graph: projection {j} has channel {o.channel}; 0 or 1 only")
        self._weights = [engine._fan_weights(j, o) for j, o in enumerate(engine._outgoing)]
        nan = self._dtype.type(np.nan)  # a projection with per-synapse weights
        self.uniform = np.array([w if np.ndim(w) == 0 else nan for w in self._weights],
                                self._dtype)  # fmt: skip
        self.channel = np.array([o.channel for o in engine._outgoing], np.int64)
        self._split: BlockSplit | None = None  # one blocking held at a time (a graph copy each)

    def split(self, n_blocks: int) -> BlockSplit:
        """The projections regrouped for n_blocks target blocks (built once per blocking)."""
        blocks = block_bounds(self.n, n_blocks)
        nb = blocks.size - 1
        if self._split is not None and self._split.blocks.size - 1 == nb:
            return self._split
        n = self.n
        total = sum(o.indices.size for o in self.engine._outgoing)
        indices = np.empty(total, np.int32)
        # every projection uniform: no weight stored per synapse (the kernel reads uniform[p])
        per_synapse = np.zeros(total if np.isnan(self.uniform).any() else 0, self._dtype)
        ptrs, offset = [], 0
        for o, w in zip(self.engine._outgoing, self._weights):
            end = offset + o.indices.size
            w = np.broadcast_to(np.asarray(w, self._dtype), o.indices.shape)
            ptr = klp.split_by_target_block(o.indptr, o.indices, blocks, indices[offset:end],
                                            w, per_synapse[offset:end])  # fmt: skip
            ptrs.append(ptr + offset)
            offset = end
        wide = np.int64 if offset >= 2**31 else np.int32  # offsets: 4 bytes while they fit
        ptr = np.stack(ptrs).astype(wide) if ptrs else np.zeros((0, nb, n + 1), wide)
        split = BlockSplit(
            blocks, ptr, indices, per_synapse,
            np.zeros(-(-n // 8) * 8, np.uint8), np.zeros((2, n), np.int64),
            np.zeros((2, nb), np.int64), np.zeros(nb, np.int64),
        )  # fmt: skip
        self._split = split
        return split

    def run(self, steps: int, threads: int | None = None) -> ParallelProfile:
        """Advance `steps` steps on `threads` threads (default: all Numba has); one thread runs
        the serial engine itself (Engine.run), which forks nothing."""
        steps = require_int("steps", steps, minimum=0)
        most = numba.config.NUMBA_NUM_THREADS
        threads = most if threads is None else require_int("threads", threads, minimum=1)
        if threads > most:
            raise AtomsparkError(
                f"threads: {threads} is more than the {most} Numba started; set "
                f"NUMBA_NUM_THREADS before starting Python, or ask for fewer"
            )
        if threads == 1 and self.blocks is None:  # the serial engine's direct path (no forks)
            prof = self.engine.run(steps)
            return ParallelProfile(prof.events[:, 0].copy(), prof.synops[:, 0].copy(), 1)
        sp = self.split(threads if self.blocks is None else self.blocks)
        a = self.engine._args[0]
        spikes, synops = np.zeros(steps, np.int64), np.zeros(steps, np.int64)
        before = numba.get_num_threads()
        numba.set_num_threads(threads)
        try:
            klp.run_blocks(steps, sp.blocks, a.u, a.u2, a.v, a.refr, a.bias, a.consts,
                           a.refractory, sp.flags, sp.emit, sp.n_spikes, sp.ops, sp.ptr,
                           sp.indices, sp.weights, self.uniform, self.channel, spikes,
                           synops)  # fmt: skip
        finally:
            numba.set_num_threads(before)
        self.engine.t += steps
        return ParallelProfile(spikes, synops, threads)

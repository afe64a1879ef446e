"""One simulation on several threads: an Engine's direct lean LIF population (e.g. CUBA) stepped
by sim/kernels/lif_parallel.py, on the Engine's own state arrays.

    eng = Engine(cuba_graph(net))
    par = ParallelLIF(eng)            # blocks fixed by the population size, not by threads
    spikes = par.run(steps, threads=2)

The result (states, spikes per step) is bit-identical for every thread count and to
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
MAX_BLOCKS = 16  # blocks per population at most: each costs one offset per neuron and projection


@dataclass(frozen=True)
class ParallelProfile:
    """spikes and synaptic operations per step of a parallel run, and the threads it used."""

    spikes: np.ndarray
    synops: np.ndarray
    threads: int


def block_bounds(n: int) -> np.ndarray:
    """Block starts (and n at the end): as many blocks as MIN_BLOCK allows, at most MAX_BLOCKS,
    each a multiple of 8 units; a function of n alone."""
    nb = max(1, min(MAX_BLOCKS, n // MIN_BLOCK))
    step = -(-n // nb)
    step = -(-step // 8) * 8
    return np.minimum(np.arange(0, nb + 1, dtype=np.int64) * step, n).astype(np.int64)


class ParallelLIF:
    """The direct lean LIF population of `engine`, stepped on several threads (module docstring)."""

    def __init__(self, engine: Engine) -> None:
        if not isinstance(engine, Engine):
            raise AtomsparkError(f"engine: expected an Engine, got {type(engine).__name__}")
        g = engine.graph
        if len(g.populations) != 1 or not engine.direct[0]:
            raise AtomsparkError(
                "engine: the parallel run takes one LIF population on the direct lean path "
                "(every unit biased, every projection from itself with delay 1, exact=False)"
            )
        self.engine = engine
        args = engine._args[0]
        n = g.populations[0].size
        self.blocks = block_bounds(n)
        dt = args.u.dtype
        ptrs, idx, weights, uniform, channel = [], [], [], [], []
        offset = 0
        for j, o in enumerate(engine._outgoing):
            if o.channel not in (0, 1):
                raise AtomsparkError(f"graph: projection {j} has channel {o.channel}; 0 or 1 only")
            out = np.empty(o.indices.size, np.int32)
            ptr, order = klp.split_by_target_block(o.indptr, o.indices, self.blocks, out)
            w = engine._fan_weights(j, o)
            uniform.append(dt.type(w) if np.ndim(w) == 0 else dt.type(np.nan))
            weights.append((w, order))
            ptrs.append(ptr + offset)
            idx.append(out)
            channel.append(o.channel)
            offset += o.indices.size
        wide = np.int64 if offset >= 2**31 else np.int32  # offsets: 4 bytes while they fit
        self.ptr = (np.stack(ptrs).astype(wide) if ptrs
                    else np.zeros((0, self.blocks.size - 1, n + 1), wide))  # fmt: skip
        self.indices = np.concatenate(idx) if idx else np.zeros(0, np.int32)
        self.uniform = np.array(uniform, dt)
        # every projection uniform: no weight stored per synapse (the kernel reads uniform[p])
        self.weights = np.zeros(0 if not np.isnan(self.uniform).any() else offset, dt)
        if self.weights.size:  # per synapse, in the block-split order, for every projection
            start = 0
            for w, order in weights:
                self.weights[start + order] = w
                start += order.size
        self.channel = np.array(channel, np.int64)
        nb = self.blocks.size - 1
        self._flags = np.zeros(-(-n // 8) * 8, np.uint8)  # padded: listed 8 flags at a time
        self._emit = np.zeros((2, n), np.int64)  # two event lists, alternating by step
        self._n_spikes = np.zeros((2, nb), np.int64)
        self._ops = np.zeros(nb, np.int64)

    def nbytes(self) -> int:
        """Bytes of the block-split projections (offsets, indices, per-synapse weights)."""
        return int(self.ptr.nbytes + self.indices.nbytes + self.weights.nbytes)

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
        if threads == 1:  # one thread: the serial engine's direct path (same results, no forks)
            prof = self.engine.run(steps)
            return ParallelProfile(prof.events[:, 0].copy(), prof.synops[:, 0].copy(), 1)
        a = self.engine._args[0]
        spikes, synops = np.zeros(steps, np.int64), np.zeros(steps, np.int64)
        before = numba.get_num_threads()
        numba.set_num_threads(threads)
        try:
            klp.run_blocks(steps, self.blocks, a.u, a.u2, a.v, a.refr, a.bias, a.consts,
                           a.refractory, self._flags, self._emit, self._n_spikes, self._ops,
                           self.ptr, self.indices, self.weights, self.uniform, self.channel,
                           spikes, synops)  # fmt: skip
        finally:
            numba.set_num_threads(before)
        self.engine.t += steps
        return ParallelProfile(spikes, synops, threads)

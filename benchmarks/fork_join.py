"""The cost of a step's fork and join alone: Numba's parallel loop over `blocks` blocks, once per
step, with no work in it (the shape of sim/kernels/lif_parallel.run_blocks' step loop)."""

from __future__ import annotations

import time

import numba
import numpy as np
from numba import njit, prange


@njit(parallel=True, cache=True)
def empty_steps(steps: int, blocks: int) -> np.ndarray:
    """`steps` parallel loops over `blocks` blocks that each add one to their own counter."""
    count = np.zeros(blocks, np.int64)
    for _ in range(steps + 1):
        for b in prange(blocks):
            count[b] += 1
    return count


def timed_empty_steps(steps: int, threads: int) -> dict:
    """Wall and process CPU time of `steps` empty parallel steps on `threads` threads."""
    before = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        c0, w0 = time.process_time(), time.perf_counter()
        count = empty_steps(steps, threads)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    finally:
        numba.set_num_threads(before)
    assert (count == steps + 1).all()
    return {"wall_s": wall, "cpu_s": cpu, "spikes": 0}

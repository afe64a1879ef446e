"""The trivial CUBA baseline: plain dense NumPy, every step multiplies the full weight matrices
by the spike vector (float64, one thread).

It simulates the same network as the engine and the peers (atomspark.scenarios.runs.cuba): the
same synapses, initial voltages, exact exponential decays and synaptic coupling
(CubaConfig.synaptic_scale), reset to 0 mV above reset, v held at the reset for
CubaConfig.refractory_steps after a spike, and spikes delivered one step later; the update order is the engine's LIF kernel's, so its spikes
equal the engine's in float64 (tests/test_bench_cuba.py) up to the rounding of the matrix sums.
"""

from __future__ import annotations

import time

import numpy as np
from atomspark.scenarios.runs.cuba import CubaNetwork


def dense_weights(net: CubaNetwork) -> tuple[np.ndarray, np.ndarray]:
    """(excitatory, inhibitory) dense weights, (n, n_exc) and (n, n - n_exc), in mV per spike
    times the one-step coupling into v, as the engine stores them."""
    cfg = net.config
    n, n_exc = cfg.n, cfg.n_exc
    w_e = np.zeros((n, n_exc))
    w_i = np.zeros((n, n - n_exc))
    exc = net.excitatory
    w_e[net.post[exc], net.pre[exc]] = cfg.we * cfg.synaptic_scale(cfg.taue)
    w_i[net.post[~exc], net.pre[~exc] - n_exc] = cfg.wi * cfg.synaptic_scale(cfg.taui)
    return w_e, w_i


def dense_run(
    net: CubaNetwork, w_e: np.ndarray, w_i: np.ndarray, steps: int
) -> tuple[np.ndarray, int]:
    """Run `steps` steps from the network's initial state; returns the spike count per step and
    the number of synaptic events (spikes times their out-degree)."""
    cfg = net.config
    n, n_exc = cfg.n, cfg.n_exc
    ku, ku2, kv = np.exp(-cfg.dt / cfg.taue), np.exp(-cfg.dt / cfg.taui), np.exp(-cfg.dt / cfg.taum)
    bias = (1 - kv) * cfg.el_above_reset
    refractory = cfg.refractory_steps
    u, u2, v = np.zeros(n), np.zeros(n), net.v0.copy()
    refr = np.zeros(n, np.int64)
    spikes = np.zeros(n)
    counts = np.zeros(steps, np.int64)
    out_deg = np.bincount(net.pre, minlength=n)
    synops = 0
    for step in range(steps):
        u = u * ku + w_e @ spikes[:n_exc]
        u2 = u2 * ku2 + w_i @ spikes[n_exc:]
        held = refr > 0
        refr[held] -= 1
        v = np.where(held, 0.0, v * kv + u + u2 + bias)
        fired = ~held & (v > cfg.threshold)
        v[fired] = 0.0
        refr[fired] = refractory
        spikes = fired.astype(np.float64)
        counts[step] = fired.sum()
        synops += int(out_deg[fired].sum())
    return counts, synops


def run_dense(net: CubaNetwork, steps: int) -> dict:
    """The whole run once: set-up (dense matrices) and the loop's CPU and wall time apart."""
    t0 = time.perf_counter()
    w_e, w_i = dense_weights(net)
    setup = time.perf_counter() - t0
    c0, w0 = time.process_time(), time.perf_counter()
    counts, synops = dense_run(net, w_e, w_i, steps)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    return {
        "setup_s": setup,
        "cpu_s": cpu,
        "wall_s": wall,
        "spikes": int(counts.sum()),
        "synops": synops,
    }

"""NEST (nest-simulator) as a second CUBA peer: the same neurons and synapses as the engine.

iaf_psc_exp integrates the membrane and the exponential currents exactly, like the engine and
Brian2's "exact" method. The CUBA jumps of the synaptic variables (mV of ge, gi) become
currents of we * C_m / tau_m pA (then I / C_m = ge / tau_m); delays are one step (0.1 ms, the
minimum). One thread. The network is rebuilt for every timed run (NEST cannot rewind a run);
only nest.Run is timed (process CPU time), building and preparing are reported apart.
"""

from __future__ import annotations

import time

import numpy as np
from atomspark.scenarios.runs.cuba import CubaNetwork

C_M_PF = 250.0  # NEST's default membrane capacitance; any value gives the same dynamics


def nest_cuba_run(net: CubaNetwork, steps: int, threads: int = 1) -> dict:
    """Build the network in a fresh NEST kernel and run it; returns times and spike counts."""
    import nest

    cfg = net.config
    t0 = time.perf_counter()
    nest.verbosity = nest.VerbosityLevel.ERROR
    nest.ResetKernel()
    nest.SetKernelStatus({"resolution": cfg.dt * 1e3, "local_num_threads": threads,
                          "print_time": False})  # fmt: skip
    taum_ms = cfg.taum * 1e3
    cells = nest.Create("iaf_psc_exp", cfg.n, params={
        "C_m": C_M_PF, "tau_m": taum_ms, "tau_syn_ex": cfg.taue * 1e3,
        "tau_syn_in": cfg.taui * 1e3, "t_ref": cfg.refractory * 1e3,
        "E_L": -60.0 + cfg.el_above_reset, "V_reset": -60.0, "V_th": -60.0 + cfg.threshold,
        "I_e": 0.0,
    })  # fmt: skip
    cells.V_m = -60.0 + net.v0
    exc = net.excitatory
    first = cells[0].global_id
    for mask, jump in ((exc, cfg.we), (~exc, cfg.wi)):
        nest.Connect(
            net.pre[mask] + first, net.post[mask] + first, "one_to_one",
            {"weight": np.full(mask.sum(), jump * C_M_PF / taum_ms),
             "delay": np.full(mask.sum(), cfg.dt * 1e3)},
        )  # fmt: skip
    rec = nest.Create("spike_recorder")
    nest.Connect(cells, rec)
    build_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    nest.Prepare()
    prepare_s = time.perf_counter() - t0
    c0, w0 = time.process_time(), time.perf_counter()
    nest.Run(steps * cfg.dt * 1e3)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    nest.Cleanup()
    senders = np.asarray(rec.get("events")["senders"]) - first
    out_deg = np.bincount(net.pre, minlength=cfg.n)
    return {
        "build_s": build_s,
        "prepare_s": prepare_s,
        "cpu_s": cpu,
        "wall_s": wall,
        "spikes": int(senders.size),
        "synops": int(out_deg[senders].sum()),
        "version": nest.__version__,
    }

"""Brian2 cpp_standalone as a CUBA peer, in float64 or float32: the same neurons and synapses.

The C++ project is generated and built once per precision (prefs.core.default_float_dtype) in
its own folder with Brian2's default compiler flags (prefs.codegen.cpp.extra_compile_args_gcc:
-O3 -ffast-math -march=native ..., recorded with each result), then the device is reset so that
the next precision can be built in the same process. Each timed run executes the built binary
directly and reads back Brian2's own main-loop time (results/last_run_info.txt) and the spike
monitor's array of neuron indices. That clock is the process CPU time (std::clock) on one thread
(OpenMP off) but wall time (omp_get_wtime) with OpenMP: each run records which (`loop_clock`),
beside the whole binary's wall and CPU time (process start, loading and file output included).

Brian2's generated main loop also reads the process CPU clock (std::clock(), a system call: about
0.6 us on this machine) after every step, for its maximum_run_time check, whether or not a
maximum is set. `without_step_clock` makes a twin of a built peer whose loop reads it once,
after the loop: the same simulation without that instrumentation, so that the share of Brian2's
time it takes is measured rather than guessed.
"""

from __future__ import annotations

import copy
import os
import resource
import shutil
import subprocess
import tempfile
import time

import numpy as np
from atomspark.scenarios.runs.cuba import CubaNetwork, brian2_cuba


class Brian2Peer:
    """One Brian2 cpp_standalone build of the CUBA network in one float precision."""

    def __init__(self, net: CubaNetwork, steps: int, dtype: str, threads: int = 1) -> None:
        import brian2 as b2

        self.net, self.dtype = net, dtype
        self.workdir = tempfile.mkdtemp(prefix=f"atomspark_brian2_cuba_{dtype}_")
        self.results = os.path.join(self.workdir, "results", "")  # the binary wants the slash
        b2.set_device("cpp_standalone", build_on_run=False, directory=self.workdir)
        # OpenMP off for one thread, else its thread count
        b2.prefs.devices.cpp_standalone.openmp_threads = 0 if threads == 1 else threads
        b2.prefs.core.default_float_dtype = getattr(b2, dtype)
        try:
            t0 = time.perf_counter()
            network, mon = brian2_cuba(net, "numpy")  # the standalone device generates C++
            network.run(steps * net.config.dt * b2.second)
            b2.device.build(directory=self.workdir, compile=True, run=False)
            self.compile_s = time.perf_counter() - t0
            self.spike_file = b2.device.get_array_filename(mon.variables["i"])
            self.compile_flags = " ".join(b2.prefs.codegen.cpp.extra_compile_args_gcc)
        finally:  # leave Brian2 as found: the next build starts from a fresh device
            b2.prefs.core.default_float_dtype = b2.float64
            b2.prefs.devices.cpp_standalone.openmp_threads = 0
            b2.device.reinit()
            b2.device.activate()
            b2.set_device("runtime")
        os.makedirs(self.results, exist_ok=True)
        self.setup_s = None
        self.loop_clock = "cpu" if threads == 1 else "wall"  # std::clock / omp_get_wtime
        what = "1 thread" if threads == 1 else f"{threads} threads, OpenMP"
        self.name = f"Brian2 {b2.__version__} cpp_standalone ({dtype}, {what})"

    def first_run(self, steps: int) -> float:
        return self.timed_run(steps)["wall_s"]

    def timed_run(self, steps: int) -> dict:
        """Run the binary once: Brian2's main-loop time (`loop_s`, on the clock `loop_clock`),
        the whole binary's wall and CPU time, spikes and synaptic events. `cpu_s` is the main
        loop's CPU time on one thread, the whole binary's with OpenMP (Brian2 then times its
        loop on the wall clock)."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        w0 = time.perf_counter()
        subprocess.run(["./main", "--results_dir", self.results], cwd=self.workdir, check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
        wall = time.perf_counter() - w0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        process_cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        with open(os.path.join(self.results, "last_run_info.txt")) as fh:
            run_time, completed = fh.read().split()
        if float(completed) != 1.0:
            raise RuntimeError(f"Brian2 {self.dtype} run stopped at {completed} of its duration")
        fired = np.fromfile(os.path.join(self.results, self.spike_file), np.int32)
        out_deg = np.bincount(self.net.pre, minlength=self.net.config.n)
        loop = float(run_time)
        return {"loop_s": loop, "loop_clock": self.loop_clock, "process_wall_s": wall,
                "process_cpu_s": process_cpu, "wall_s": wall,
                "cpu_s": loop if self.loop_clock == "cpu" else process_cpu,
                "spikes": int(fired.size), "synops": int(out_deg[fired].sum())}  # fmt: skip


STEP_CLOCK = (
    "        current = std::clock();\n"
    "        elapsed_realtime = (double)(current - start)/(1 * CLOCKS_PER_SEC);\n"
)
LOOP_END = "    Network::_globally_running = false;\n"


def drop_step_clock(network_cpp: str) -> str:
    """network.cpp with the per-step clock read moved after the main loop (the loop's elapsed
    time is then read once; nothing else changes)."""
    if network_cpp.count(STEP_CLOCK) != 1 or network_cpp.count(LOOP_END) != 1:
        raise RuntimeError("Brian2's network.cpp has no single per-step std::clock() read to move")
    return network_cpp.replace(STEP_CLOCK, "").replace(LOOP_END, STEP_CLOCK + LOOP_END)


def without_step_clock(peer: Brian2Peer) -> Brian2Peer:
    """A twin of a built peer in its own folder whose main loop reads the CPU clock once (only
    network.cpp is rebuilt, with the same flags)."""
    t0 = time.perf_counter()
    twin = copy.copy(peer)
    twin.workdir = peer.workdir + "_no_step_clock"
    shutil.copytree(peer.workdir, twin.workdir)
    twin.results = os.path.join(twin.workdir, "results", "")
    path = os.path.join(twin.workdir, "network.cpp")
    with open(path) as fh:
        src = drop_step_clock(fh.read())
    with open(path, "w") as fh:
        fh.write(src)
    subprocess.run(["make", "-s"], cwd=twin.workdir, check=True, stdout=subprocess.DEVNULL)
    twin.compile_s = time.perf_counter() - t0
    twin.name = f"{peer.name}, no per-step clock() call"
    return twin

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

from numba import njit

# kernels/fanout.py uniform path / per-synapse delays / vector payloads / uniform with weight_exp < 0
# / uniform into a lean target (kernels/lif_lean.py: no touched marking)
FAN_KINDS = ("uniform", "delayed", "vector", "shifted", "plain")

_COMPILED: dict[str, object] = {}


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
    "listed" (added with touched marking) or "plain" (a lean population: no marking);
    n_traces: number of recorded (trace, state) pairs; log_events: keep every event's step and
    unit (the loop returns early, at the step it reached, when a log is too full for one more
    step's events; the caller grows the logs and calls again)."""
    L = [
        "def run_loop(s0, steps, t0, R, B, A, F, X, U, P, PB, TR, LOG):",
        "    upd, act, wr, cl, ev, pb, sy = P",
        "    for step in range(s0, steps):",
        "        t = t0 + step",
        "        slot = t % R",
    ]
    if log_events:
        for p in range(len(models)):
            L.append(f"        if LOG[{p}][2][0] + B[{p}][7].size > LOG[{p}][0].size:")
            L.append("            return step")
    for p, update in enumerate(models):
        b = f"B[{p}]"
        if inputs[p] == "listed":
            L.append(f"        k.add_input(slot, X[{p}][step], {b}[0][0], {b}[1], {b}[2], {b}[3])")
        elif inputs[p] == "plain":
            L.append(f"        kll.add_input_plain(slot, X[{p}][step], {b}[0][0])")
        L += [
            f"        n, e{p}, a, w, c = {update}(slot, {b}, A[{p}])",
            f"        upd[step, {p}] = n",
            f"        act[step, {p}] = a",
            "        if w or c:",
            f"            wr[step, {p}] = w",
            f"            cl[step, {p}] = c",
        ]
    for p in range(len(models)):
        b = f"B[{p}]"
        L += [
            f"        if e{p} > 0:",
            f"            k.count_events({b}[7], e{p}, U[{p}])",
        ]
        if log_events:
            L += [
                f"            m = LOG[{p}][2][0]",
                f"            LOG[{p}][0][m : m + e{p}] = step",
                f"            LOG[{p}][1][m : m + e{p}] = {b}[7][:e{p}]",
                f"            LOG[{p}][2][0] = m + e{p}",
            ]
        L += [
            f"            ev[step, {p}] = e{p}",
            f"            pb[step, {p}] = e{p} * PB[{p}]",
            "            syn = 0",
        ]
        for j, (src, kind) in enumerate(fans):
            if src != p:
                continue
            f = f"F[{j}]"  # (target buffers, indptr, indices, data, delay, uniform delay, full, ch)
            tb = f"{f}[0]"
            head = f"{b}[7], {b}[8], e{p}, {f}[1], {f}[2], {f}[3]"
            if kind == "uniform":
                L += [
                    f"            s = (t + {f}[5]) % R",
                    f"            syn += kf.fan_out_uniform({head}, {f}[6], {tb}[0][{f}[7], s], "
                    f"{tb}[1][s], {tb}[2][s], {tb}[3], s)",
                ]
            elif kind == "plain":
                L += [
                    f"            s = (t + {f}[5]) % R",
                    f"            syn += kll.fan_out_plain({head}, {tb}[0][{f}[7], s])",
                ]
            elif kind == "shifted":  # F[j][8]: (stage, flags, touched, count, shift)
                st = f"{f}[8]"
                L += [
                    f"            s = (t + {f}[5]) % R",
                    f"            syn += kf.fan_out_uniform({head}, {f}[6], {st}[0], {st}[1], "
                    f"{st}[2], {st}[3], 0)",
                    f"            kf.flush_shifted({st}[0], {st}[1], {st}[2], {st}[3], {st}[4], "
                    f"{tb}[0][{f}[7], s], {tb}[1][s], {tb}[2][s], {tb}[3], s)",
                ]
            else:
                kernel = "kr.fan_out_vector" if kind == "vector" else "kf.fan_out"
                L.append(
                    f"            syn += {kernel}({head}, {f}[4], t, {tb}[0][{f}[7]], {tb}[1], "
                    f"{tb}[2], {tb}[3])"
                )
        L.append(f"            sy[step, {p}] = syn")
    for i in range(n_traces):
        L.append(f"        TR[{i}][0][step] = TR[{i}][1]")
    L.append("    return steps")
    return "\n".join(L) + "\n"


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

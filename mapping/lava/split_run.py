"""Run the split RSGN on Lava's Loihi2SimCfg: one Process per core and kind (or, `merged`, one
per kind: the same compartments and connections in fewer host processes, for models whose core
count would start hundreds of Python processes), a Lava Sparse for every pair of processes a
channel connects, recorders for the states at each model step's emit phase, and, given a
readout, its standard processes (mapping/split_readout.py: GradedVec partials, a RingBuffer
sinks accumulating the class scores, a RingBuffer source sending the bias)."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from atomspark.mapping.lava.rsgn_split import (
    IGNITION,
    KINDS,
    PERIOD,
    SplitModel,
    SplitRun,
    channels,
    chip_steps,
    in_ports,
    stream_load_step,
    stream_period,
    stream_steps,
    with_readout,
)
from atomspark.mapping.split_readout import (
    READOUT_DELAY,
    Readout,
    feature_matrix,
    join_scores,
    readout_groups,
    score_matrix,
)
from atomspark.sim.core import AtomsparkError, require_int

GRADED_BITS = 24  # Lava's graded spike payload (24-bit words in the fixed-point models)
MAX_PROCESSES = 24  # above this a Lava run merges each kind's cores into one Process


def process_groups(model: SplitModel, cores: list[dict], merged: bool) -> list[dict]:
    """{kind, core, index} per Lava process: one per (core, kind), or one per kind (merged)."""
    if merged:
        out = []
        for kind in KINDS:
            idx = [c["index"] for c in cores if c["kind"] == kind]
            out.append({"kind": kind, "core": -1, "index": np.sort(np.concatenate(idx))})
        return out
    return [{"kind": c["kind"], "core": c["core"], "index": c["index"]} for c in cores]


def _sparse(weights: sp.spmatrix, fixed: bool, name: str):
    from lava.proc.sparse.process import Sparse

    w = sp.csr_matrix(sp.csr_matrix(weights).astype(np.int32 if fixed else np.float64))
    return Sparse(weights=w, num_message_bits=GRADED_BITS, name=name)


def _wire_readout(readout: Readout, model: SplitModel, cores, groups, procs, steps: int):
    """The readout's processes and connections (mapping/split_readout.py); returns its sinks,
    one accumulator per part of W."""
    from lava.proc.graded.process import GradedVec
    from lava.proc.io.sink import RingBuffer as Sink
    from lava.proc.io.source import RingBuffer as Source

    fixed, d = readout.fixed, model.d
    parts = readout_groups(cores, d, readout.node_cores_per_group)
    feat = feature_matrix(model.n, d, parts)
    n_acc = len(readout.parts())
    sinks = [Sink(shape=(readout.classes,), buffer=steps) for _ in range(n_acc)]
    if fixed:  # products -> feature partials (GradedVec relays) -> the accumulators
        targets = []
        for g in range(len(parts)):
            partial = GradedVec(shape=(d,), vth=0)
            for a, sink in enumerate(sinks):
                block = score_matrix(readout, len(parts), a)[:, g * d : (g + 1) * d]
                conn = _sparse(block, True, f"cls_w{a}:{g}")
                partial.s_out.connect(conn.s_in)
                conn.a_out.connect(sink.a_in)
            targets.append((partial.a_in, feat[g * d : (g + 1) * d], f"features:{g}"))
    else:  # float: the two stages composed into one Sparse per transform process
        targets = [
            (sinks[0].a_in, sp.csr_matrix(score_matrix(readout, len(parts)) @ feat), "cls_w")
        ]
    for i, g in enumerate(groups):
        if g["kind"] != "transform":
            continue
        for port, mat, name in targets:
            block = mat[:, g["index"]]
            if block.nnz:
                conn = _sparse(block, fixed, f"{name}<-{i}")
                procs[i].s_r.connect(conn.s_in)
                conn.a_out.connect(port)
    dtype = np.int32 if fixed else np.float64
    bias = Source(data=np.asarray(readout.bias, dtype)[:, None])
    conn = _sparse(sp.identity(readout.classes, format="csr"), fixed, "bias")
    bias.s_out.connect(conn.s_in)
    conn.a_out.connect(sinks[0].a_in)
    return sinks


def _read_sinks(readout: Readout, sinks) -> np.ndarray:
    """The accumulators' records (C, steps), joined into scores (split_readout.join_scores)."""
    return join_scores(readout, [np.asarray(s.data.get()).copy() for s in sinks])


def _build(model: SplitModel, cores: list[dict], merged: bool) -> tuple[list[dict], list]:
    """The programs' Processes and their Sparse connections: (process groups, processes)."""
    from atomspark.mapping.lava.procs.rsgn_split import PROCESSES
    from lava.proc.sparse.process import Sparse

    fixed = model.arithmetic == "fixed"
    light = replace(model, w_t=None, pool=None)  # what the programs read
    groups = process_groups(model, cores, merged)
    blocks = []  # (channel, source group, target group, weights)
    for ch in channels(model):
        for si, src in enumerate(groups):
            for ti, tgt in enumerate(groups):
                if (src["kind"], tgt["kind"]) != (ch.source, ch.target):
                    continue
                block = ch.weights[tgt["index"]][:, src["index"]]
                if block.nnz:
                    blocks.append((ch, si, ti, block))
    connected = [{ch.target_port for ch, _, ti, _ in blocks if ti == i} for i in range(len(groups))]
    if model.node.get("stream_period"):  # a stream: every program loads its sample's ignition
        connected = [c | set(IGNITION.get(g["kind"], ())) for c, g in zip(connected, groups)]
    procs = []
    for i, g in enumerate(groups):
        ins = tuple(p for p in in_ports(g["kind"], model) if p in connected[i])
        procs.append(PROCESSES[g["kind"]](model=light, index=g["index"], inputs=ins,
                                          name=f"{g['kind']}{i}"))  # fmt: skip
    for ch, si, ti, block in blocks:
        w = sp.csr_matrix(block.astype(np.int32 if fixed else np.float64))
        conn = Sparse(weights=w, num_message_bits=GRADED_BITS if ch.graded else 0,
                      name=f"{ch.name}:{si}->{ti}")  # fmt: skip
        getattr(procs[si], f"s_{ch.source_port}").connect(conn.s_in)
        conn.a_out.connect(getattr(procs[ti], f"a_{ch.target_port}"))
    return groups, procs


def _run(procs, steps: int, fixed: bool, reads) -> list:
    """Run `steps` chip steps on Loihi2SimCfg; the values of `reads` (callables) before stop."""
    from lava.magma.core.run_conditions import RunSteps
    from lava.magma.core.run_configs import Loihi2SimCfg

    tag = "fixed_pt" if fixed else "floating_pt"
    try:
        procs[0].run(condition=RunSteps(num_steps=steps), run_cfg=Loihi2SimCfg(select_tag=tag))
        return [read() for read in reads]
    finally:
        procs[0].stop()


def run_split_lava(
    model: SplitModel,
    cores: list[dict],
    engine_steps: int,
    merged: bool = False,
    readout: Readout | None = None,
) -> SplitRun:
    """Run ignition + (engine_steps - 1) model steps on Loihi2SimCfg; states at every emit, and
    with a readout its class scores (accumulator units) in SplitRun.scores."""
    from atomspark.mapping.lava.procs.recorder import Recorder

    engine_steps = require_int("steps", engine_steps, minimum=1)
    fixed = model.arithmetic == "fixed"
    if readout is not None:
        model = with_readout(model, readout.shift, engine_steps)
    last_emit = chip_steps(engine_steps)
    steps = last_emit + (READOUT_DELAY[model.arithmetic] if readout is not None else 0)
    groups, procs = _build(model, cores, merged)
    reads = []
    if readout is not None:  # the accumulator's sum arrives READOUT_DELAY after the product
        sinks = _wire_readout(readout, model, cores, groups, procs, steps)
        reads.append(lambda: _read_sinks(readout, sinks)[:, steps - 1])
    records = {}
    with tempfile.TemporaryDirectory(prefix="atomspark_split_") as tmp:
        for i, g in enumerate(groups):
            ports = {"transform": ("x", "h"), "norm": ("alpha_rec",)}.get(g["kind"], ())
            for port in ports:
                path = str(Path(tmp) / f"{i}_{port}.npy")
                rec = Recorder(size=g["index"].size, steps=steps, path=path)
                getattr(procs[i], f"s_{port}").connect(rec.a_in)
                records[(i, port)] = path
        got = _run(procs, steps, fixed, reads)
        data = {key: np.load(path) for key, path in records.items()}
    emit = np.arange(0, last_emit, PERIOD)  # chip steps 1, 1 + PERIOD, ... (0-based rows)
    n, d = model.n, model.d
    dtype = np.int64 if fixed else np.float64
    alpha = np.zeros((emit.size, n), dtype)
    flat = {port: np.zeros((emit.size, n * d), dtype) for port in ("x", "h")}
    for (i, port), rec in data.items():
        idx = groups[i]["index"]
        if port == "alpha_rec":
            alpha[:, idx] = rec[emit]
        else:
            flat[port][:, idx] = rec[emit]
    run = SplitRun(alpha, flat["h"].reshape(-1, n, d), flat["x"].reshape(-1, n, d), 0, 0)
    if got:
        run.scores = got[0].astype(dtype)
    return run


def _wire_inputs(model: SplitModel, groups, procs, states: list[dict], engine_steps: int,
                 steps: int) -> None:  # fmt: skip
    """A stream's input: per kind and ignition value a RingBuffer source holding every sample's
    value in the column of the chip step before its load (zeros elsewhere), through a Sparse of
    ones to each process of that kind."""
    from lava.proc.io.source import RingBuffer as Source

    fixed = model.arithmetic == "fixed"
    n, d = model.n, model.d
    dtype = np.int32 if fixed else np.float64
    values = {  # kind-level index order (rsgn_split module docstring)
        ("transform", "h0"): [np.asarray(s["h"]).reshape(-1) for s in states],
        ("transform", "alpha0"): [np.repeat(np.asarray(s["alpha"]), d) for s in states],
        ("norm", "alpha0"): [np.asarray(s["alpha"]) for s in states],
    }
    for (kind, port), per_sample in values.items():
        size = n * d if kind == "transform" else n
        data = np.zeros((size, steps), dtype)
        for s, v in enumerate(per_sample):
            data[:, stream_load_step(s, engine_steps) - 2] = v  # sent one step before the load
        source = Source(data=data)
        ones = sp.identity(size, format="csr")
        for i, g in enumerate(groups):
            if g["kind"] == kind:
                conn = _sparse(ones[g["index"]], fixed, f"{port}->{i}")
                source.s_out.connect(conn.s_in)
                conn.a_out.connect(getattr(procs[i], f"a_{port}"))


def run_split_stream_lava(
    model: SplitModel,
    cores: list[dict],
    states: list[dict],
    engine_steps: int,
    readout: Readout,
    merged: bool = True,
) -> np.ndarray:
    """A stream of samples in ONE Lava run: each sample's ignition `states` ({alpha, h} in the
    model's formats) streamed in by RingBuffer sources, loaded by the programs in their reset
    phase, run for `engine_steps` engine steps and read out; returns the scores (B, C) in
    accumulator units, one row per sample (split_readout.py)."""
    engine_steps = require_int("steps", engine_steps, minimum=1)
    if not states:
        raise AtomsparkError("stream: no samples")
    fixed = model.arithmetic == "fixed"
    model = with_readout(model, readout.shift, engine_steps)
    model = replace(model, node={**model.node, "stream_period": stream_period(engine_steps)})
    delay = READOUT_DELAY[model.arithmetic]
    steps = stream_steps(len(states), engine_steps, delay)
    groups, procs = _build(model, cores, merged)
    _wire_inputs(model, groups, procs, states, engine_steps, steps)
    sinks = _wire_readout(readout, model, cores, groups, procs, steps)
    (data,) = _run(procs, steps, fixed, [lambda: _read_sinks(readout, sinks)])
    # the chip step at which each sample's scores arrive
    last = [stream_load_step(s, engine_steps) + chip_steps(engine_steps) + delay
            for s in range(len(states))]  # fmt: skip
    return data[:, np.array(last) - 1].T.astype(np.int64 if fixed else np.float64)

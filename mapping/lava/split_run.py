"""Run the split RSGN on Lava's Loihi2SimCfg: one Process per core and kind (or, `merged`, one
per kind: the same compartments and connections in fewer host processes, for models whose core
count would start hundreds of Python processes), a Lava Sparse for every pair of processes a
channel connects, and recorders for the states at each model step's emit phase."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from atomspark.mapping.lava.rsgn_split import (
    KINDS,
    PERIOD,
    SplitModel,
    SplitRun,
    channels,
    chip_steps,
    in_ports,
)
from atomspark.sim.core import require_int

GRADED_BITS = 24  # Lava's graded spike payload (24-bit words in the fixed-point models)


def process_groups(model: SplitModel, cores: list[dict], merged: bool) -> list[dict]:
    """{kind, core, index} per Lava process: one per (core, kind), or one per kind (merged)."""
    if merged:
        out = []
        for kind in KINDS:
            idx = [c["index"] for c in cores if c["kind"] == kind]
            out.append({"kind": kind, "core": -1, "index": np.sort(np.concatenate(idx))})
        return out
    return [{"kind": c["kind"], "core": c["core"], "index": c["index"]} for c in cores]


def run_split_lava(
    model: SplitModel, cores: list[dict], engine_steps: int, merged: bool = False
) -> SplitRun:
    """Run ignition + (engine_steps - 1) model steps on Loihi2SimCfg; states at every emit."""
    from atomspark.mapping.lava.procs.recorder import Recorder
    from atomspark.mapping.lava.procs.rsgn_split import PROCESSES
    from lava.magma.core.run_conditions import RunSteps
    from lava.magma.core.run_configs import Loihi2SimCfg
    from lava.proc.sparse.process import Sparse

    engine_steps = require_int("steps", engine_steps, minimum=1)
    fixed = model.arithmetic == "fixed"
    light = replace(model, w_t=None, pool=None)  # what the programs read
    groups = process_groups(model, cores, merged)
    chans = channels(model)
    steps = chip_steps(engine_steps)
    blocks = []  # (channel, source group, target group, weights)
    for ch in chans:
        for si, src in enumerate(groups):
            for ti, tgt in enumerate(groups):
                if (src["kind"], tgt["kind"]) != (ch.source, ch.target):
                    continue
                block = ch.weights[tgt["index"]][:, src["index"]]
                if block.nnz:
                    blocks.append((ch, si, ti, block))
    connected = [{ch.target_port for ch, _, ti, _ in blocks if ti == i} for i in range(len(groups))]
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
    records = {}
    with tempfile.TemporaryDirectory(prefix="atomspark_split_") as tmp:
        for i, g in enumerate(groups):
            ports = {"transform": ("x", "h"), "norm": ("alpha_rec",)}.get(g["kind"], ())
            for port in ports:
                path = str(Path(tmp) / f"{i}_{port}.npy")
                rec = Recorder(size=g["index"].size, steps=steps, path=path)
                getattr(procs[i], f"s_{port}").connect(rec.a_in)
                records[(i, port)] = path
        tag = "fixed_pt" if fixed else "floating_pt"
        try:
            procs[0].run(condition=RunSteps(num_steps=steps), run_cfg=Loihi2SimCfg(select_tag=tag))
        finally:
            procs[0].stop()
        data = {key: np.load(path) for key, path in records.items()}
    emit = np.arange(0, steps, PERIOD)  # chip steps 1, 1 + PERIOD, ... (0-based rows)
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
    return SplitRun(alpha, flat["h"].reshape(-1, n, d), flat["x"].reshape(-1, n, d), 0, 0)

"""Export a sim Graph to Lava: build the Lava process graph, write/read a bundle, verify it.

* `build_lava(net, steps, record_dir)` makes the Processes (lava.proc.lif LIF, lava.proc.sparse
  Sparse with binary or graded messages, atomspark's VNAtom, RSGNNodes and RSGNFixedNodes) and a
  Recorder per output record (RSGN: payloads and alpha).
* `export_lava(graph_or_net, out_dir)` writes weights.npz, metadata.json and run_bundle.py.
* `load_bundle(out_dir)` reads it back, rejecting a corrupt or incomplete bundle.
* `verify_lava(source, steps)` runs the network on Lava's Loihi2SimCfg and compares every
  population's per-step output with the event engine (sim/) running the same graph and with the
  NumPy reference of Lava's timing: bit-exact in fixed point (LIF spikes; integer VN change
  events, payload for payload; integer RSGN alpha and sent vector payloads per step), within
  `FLOAT_TOLERANCE` in float (VN codes; RSGN alpha and sent vector payloads per step, plus
  exact event counts).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from atomspark.mapping.lava.bundle import (
    event_counts,
    from_graph,
    reference_run,
    to_graph,
)
from atomspark.mapping.lava.bundle_check import (
    ARITHMETIC,
    check_array_values,
    check_bundle_graph,
    check_file_name,
    check_population_fields,
    checked_weights,
    is_bundle_array,
)
from atomspark.mapping.lava.net import LavaConnection, LavaNet, LavaPopulation
from atomspark.mapping.lava.units import lava_unit
from atomspark.networks.model_io import load_arrays, save_arrays
from atomspark.sim.core import AtomsparkError, atomic_write_text, require_int
from atomspark.sim.graph import Graph
from atomspark.sim.profile import Profile

BUNDLE_KIND = "lava_bundle"
BUNDLE_VERSION = 1
WEIGHTS_FILE = "weights.npz"
META_FILE = "metadata.json"
ENTRY_FILE = "run_bundle.py"
META_LIMIT = 64 * 1024**2  # metadata.json holds names and scalars: a few KiB per population
GRADED_MESSAGE_BITS = 24  # Loihi 2 graded spike payload used for VN change events
FLOAT_TOLERANCE = 1e-9  # max |Lava - reference| per output in float (summation order only)
SELECT_TAG = {"fixed": "fixed_pt", "float": "floating_pt"}
# Connections are lava.proc.sparse's Sparse: a standard Lava process.
CONNECTION_PROCESS = "Sparse"


def lava_process(p: LavaPopulation) -> str:
    """The Lava Process class that runs population `p`."""
    return lava_unit(p).process_name(p)


def process_table(net: LavaNet) -> list[dict]:
    """Per Lava process of the bundle (each population, then each connection): its name, Process
    class and whether it is a standard Lava process (lava-nc's own Process and ProcessModels,
    compiled for a chip by Intel's toolchain) or one with atomspark's Python neuron code."""
    rows = [{"name": p.name, "lava_process": lava_process(p),
             "standard_lava_process": lava_unit(p).standard} for p in net.populations]  # fmt: skip
    rows += [{"name": f"{c.source}->{c.target}", "lava_process": CONNECTION_PROCESS,
              "standard_lava_process": True} for c in net.connections]  # fmt: skip
    return rows


def deployable_on_chip(net: LavaNet) -> bool:
    """A bundle can be compiled for a Loihi 2 chip only in fixed point and only when every one of
    its processes is a standard Lava process (process_table)."""
    return net.arithmetic == "fixed" and all(r["standard_lava_process"] for r in process_table(net))


def hardware_run_config(net: LavaNet) -> dict:
    """What a Loihi user would select to run the bundle on the chip, and what is known about it.
    Written into metadata.json; never executed here (no Loihi 2 system, no lava-loihi)."""
    table = process_table(net)
    procs = sorted({r["lava_process"] for r in table} | {CONNECTION_PROCESS})
    host = sorted({r["lava_process"] for r in table if not r["standard_lava_process"]})
    return {
        "run_config": "lava.magma.core.run_configs.Loihi2HwCfg",
        "select_tag": SELECT_TAG[net.arithmetic],
        "run_condition": "RunSteps(num_steps=N)",
        "command": "python run_bundle.py --steps N --loihi2",
        "requires": "Intel lava-loihi (INRC) and a Loihi 2 system (e.g. Kapoho Point)",
        "processes": table,
        "neurocore_processes": [p for p in procs if p not in host],
        "host_processes": host,
        "deployable_on_chip": deployable_on_chip(net),
        "tested": False,
        "note": (
            "untested: atomspark has no Loihi hardware or lava-loihi. "
            + (
                f"{', '.join(host)} have only Python ProcessModels (no neurocore microcode), so "
                "Loihi2HwCfg would run them on the host CPU, not on the chip."
                if host
                else f"{', '.join(procs)} are standard Lava processes."
            )
            + ("" if net.arithmetic == "fixed" else " Float arithmetic does not run on the chip.")
        ),
    }


_ENTRY_SOURCE = '''"""Run this atomspark Lava bundle: python run_bundle.py --steps N [--out outputs.npz].

Needs lava-nc 0.10 and atomspark (for its VNAtom and RSGN ProcessModels) in the running
environment.
--loihi2: run on a Loihi 2 system with Loihi2HwCfg (needs Intel's lava-loihi extension and
access to a Loihi 2 system; UNTESTED by atomspark, see metadata.json "hardware_run").
"""

import sys
from pathlib import Path

from atomspark.mapping.lava.export import run_bundle_cli

if __name__ == "__main__":
    sys.exit(run_bundle_cli(Path(__file__).resolve().parent, sys.argv[1:]))
'''


def as_lava_net(source: Graph | LavaNet | str | Path) -> LavaNet:
    """A LavaNet from a sim Graph, a LavaNet, or a bundle directory."""
    if isinstance(source, LavaNet):
        return source
    if isinstance(source, Graph):
        return from_graph(source)
    if isinstance(source, (str, Path)):
        return load_bundle(source)
    raise AtomsparkError(f"source: expected a Graph, LavaNet or bundle path, got {type(source)}")


# ---------------------------------------------------------------- building and running on Lava


def build_lava(net: LavaNet, steps: int, record_dir: str | Path) -> dict:
    """Create and connect the Lava Processes; returns {'procs': {name: proc}, 'recorders': ...}."""
    from atomspark.mapping.lava.procs.recorder import Recorder
    from lava.proc.sparse.process import Sparse

    procs, recorders = {}, {}
    for p in net.populations:
        unit = lava_unit(p)
        procs[p.name] = unit.make_process(p)
        for key, (size, port, _) in unit.records(p).items():
            check_file_name(f"population {p.name!r:.60} record", key)
            path = str(Path(record_dir) / record_file(len(recorders)))
            recorders[key] = Recorder(size=size, steps=steps, path=path)
            getattr(procs[p.name], port).connect(recorders[key].a_in)
    for c in net.connections:
        if lava_unit(net.population(c.source)).vector_payload:
            _connect_vectors(net, c, procs, Sparse)
            continue
        fixed = net.population(c.target).arithmetic == "fixed"
        weights = c.weights.astype(np.int32) if fixed else c.weights.astype(np.float64)
        conn = Sparse(
            weights=weights,
            num_message_bits=GRADED_MESSAGE_BITS if c.graded else 0,
            weight_exp=int(c.weight_exp),
            num_weight_bits=8,
            name=f"{c.source}->{c.target}",
        )
        procs[c.source].s_out.connect(conn.s_in)
        conn.a_out.connect(procs[c.target].a_in)
    return {"procs": procs, "recorders": recorders}


def _connect_vectors(net: LavaNet, c: LavaConnection, procs: dict, sparse_cls) -> None:
    """Two Sparse connections for one vector-payload (RSGN) projection W (delay 1, like every Lava Sparse):
    the vector payloads through kron(W^T, I_d) (graded) and the sender flags through the
    synapse pattern of W^T (binary), which tells each node whether any event reached it. Fixed
    point: integer weights (8-bit mantissas, weight_exp 0: the nodes shift their summed message)."""
    width = int(net.population(c.source).scalars["width"])
    dtype = np.int32 if net.population(c.target).arithmetic == "fixed" else np.float64
    weights = c.weights.astype(dtype)
    payload = sp.kron(weights, sp.identity(width, dtype=dtype, format="csr"), format="csr")
    pattern = sp.csr_matrix(
        (np.ones(weights.indices.size, dtype), weights.indices, weights.indptr),
        shape=weights.shape,
    )
    src, tgt = procs[c.source], procs[c.target]
    conn = sparse_cls(
        weights=payload,
        num_message_bits=GRADED_MESSAGE_BITS,
        weight_exp=int(c.weight_exp),
        name=f"{c.source}->{c.target}",
    )
    src.s_out.connect(conn.s_in)
    conn.a_out.connect(tgt.a_in)
    flags = sparse_cls(weights=pattern, num_message_bits=0, name=f"{c.source}->{c.target}.flags")
    src.flag_out.connect(flags.s_in)
    flags.a_out.connect(tgt.flag_in)


def record_file(j: int) -> str:
    """File name of the j-th recorder's output: numbered, never a population's name."""
    return f"record{j}.npy"


def run_lava(
    net: LavaNet, steps: int, select_tag: str | None = None, loihi2: bool = False
) -> dict[str, np.ndarray]:
    """Run on Loihi2SimCfg (loihi2: Loihi2HwCfg, a Loihi 2 system through lava-loihi;
    untested here) for `steps`; returns each population's (steps, size) output."""
    steps = require_int("steps", steps, minimum=1)
    tag = select_tag or SELECT_TAG[net.arithmetic]
    for p in net.populations:
        if tag not in lava_unit(p).select_tags:
            raise AtomsparkError(
                f"select_tag {tag!r}: {p.name} runs as {lava_process(p)}, which has only a "
                f"{SELECT_TAG[p.arithmetic]!r} model (quantise with export --fixed for fixed_pt)"
            )
    from lava.magma.core.run_conditions import RunSteps
    from lava.magma.core.run_configs import Loihi2HwCfg, Loihi2SimCfg

    cfg = Loihi2HwCfg(select_tag=tag) if loihi2 else Loihi2SimCfg(select_tag=tag)
    with tempfile.TemporaryDirectory(prefix="atomspark_lava_") as tmp:
        built = build_lava(net, steps, tmp)
        first = next(iter(built["procs"].values()))
        try:
            first.run(condition=RunSteps(num_steps=steps), run_cfg=cfg)
        finally:
            first.stop()
        return {
            name: np.load(Path(tmp) / record_file(j), allow_pickle=False)
            for j, name in enumerate(built["recorders"])
        }


# ---------------------------------------------------------------- verification


@dataclass(frozen=True)
class VerifyReport:
    """Lava vs the event engine and vs the NumPy reference of Lava's timing.

    lava_vs_reference: max |difference| of each population's per-step output (spikes or dg).
    lava_vs_engine: integer VN: max over steps and atoms of |dg_lava - dg_engine| (the engine's
    sent changes are the steps of its g_sent trace) and of the per-step and per-unit event-count
    differences; float VN: max |g_lava - g_engine| over all steps (only with event_threshold 0);
    LIF: max |difference| of the per-step spike counts and of the per-unit spike totals; RSGN:
    max |x_lava - x_engine| of the sent payloads (under the population's name), max |alpha
    difference| (under alpha_record(name)) and the event-count error as for LIF (name + ".events").
    engine_wraps / engine_clips: fixed-point overflows the engine counted over the run."""

    arithmetic: str
    steps: int
    lava_vs_reference: dict[str, float]
    lava_vs_engine: dict[str, float]
    lava_events: dict[str, int]
    tolerance: float
    engine_wraps: int = 0
    engine_clips: int = 0

    @property
    def passed(self) -> bool:
        errors = list(self.lava_vs_reference.values()) + list(self.lava_vs_engine.values())
        return all(err <= self.tolerance for err in errors)


def compare_outputs(
    lava: dict[str, np.ndarray], reference: dict[str, np.ndarray]
) -> dict[str, float]:
    """Max |difference| per population of two runs' (steps, size) outputs."""
    errors = {}
    for name, ref in reference.items():
        got = lava[name]
        if got.shape != ref.shape:
            raise AtomsparkError(f"{name}: Lava output shape {got.shape}, expected {ref.shape}")
        diff = np.abs(got.astype(np.float64) - ref.astype(np.float64))
        errors[name] = float(diff.max(initial=0.0))
    return errors


def compare_with_engine(
    graph: Graph, net: LavaNet, lava: dict[str, np.ndarray], steps: int
) -> tuple[dict[str, float], Profile]:
    """Run the engine on `graph` and compare Lava's outputs with its traces and event counts.
    Returns ({population: max |error|}, engine Profile)."""
    from atomspark.sim.engine import Engine

    record = tuple((p.name, v) for p in net.populations for v in lava_unit(p).engine_trace)
    engine = Engine(graph)
    inputs = {p.name: lava_unit(p).engine_input(p, steps) for p in net.populations
              if lava_unit(p).engine_input is not None}  # fmt: skip
    prof = engine.run(steps, inputs=inputs, record=record)
    errors = {}
    for i, p in enumerate(net.populations):
        unit = lava_unit(p)
        sent = unit.sent(p, lava)
        count_error = max(
            np.abs(np.count_nonzero(sent, axis=1) - prof.events[:, i]).max(initial=0),
            np.abs(np.count_nonzero(sent, axis=0) - prof.unit_events[i]).max(initial=0),
        )
        errors.update(unit.engine_errors(p, lava, engine.traces, count_error))
    return errors, prof


def verify_lava(source: Graph | LavaNet | str | Path, steps: int) -> VerifyReport:
    """Run `source` on Lava (fixed_pt or floating_pt by its arithmetic) and compare with the
    event engine running the same graph (a LavaNet or bundle is turned back into one by
    `to_graph`) and with the NumPy reference of Lava's timing: bit-exact (tolerance 0) in fixed
    point, FLOAT_TOLERANCE in float."""
    net = as_lava_net(source)
    steps = require_int("steps", steps, minimum=1)
    graph = source if isinstance(source, Graph) else to_graph(net)
    reference = reference_run(net, steps)
    lava = run_lava(net, steps)
    engine, prof = compare_with_engine(graph, net, lava, steps)
    tol = 0.0 if net.arithmetic == "fixed" else FLOAT_TOLERANCE
    events = event_counts(net, lava)
    return VerifyReport(
        net.arithmetic,
        steps,
        compare_outputs(lava, reference),
        engine,
        events,
        tol,
        engine_wraps=int(prof.wraps.sum()),
        engine_clips=int(prof.clips.sum()),
    )


# ---------------------------------------------------------------- bundle


def _atomspark_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("atomspark")
    except PackageNotFoundError:
        return "unknown"


def export_lava(source: Graph | LavaNet, out_dir: str | Path) -> Path:
    """Write the bundle (weights.npz, metadata.json, run_bundle.py) to `out_dir`; returns it."""
    net = as_lava_net(source)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    arrays, pops, conns = {}, [], []
    for i, p in enumerate(net.populations):
        check_file_name(f"population {p.name!r:.60}", p.name)
        for key, val in p.arrays.items():
            arrays[f"pop{i}_{key}"] = np.asarray(val)
        pops.append(
            {
                "name": p.name,
                "model": p.model,
                "arithmetic": p.arithmetic,
                "size": p.size,
                "scalars": p.scalars,
                "arrays": sorted(p.arrays),
                "lava_process": lava_process(p),
            }
        )
    for i, c in enumerate(net.connections):
        src = net.population(c.source)
        arrays[f"conn{i}_data"] = c.weights.data
        arrays[f"conn{i}_indices"] = c.weights.indices
        arrays[f"conn{i}_indptr"] = c.weights.indptr
        conns.append(
            {
                "source": c.source,
                "target": c.target,
                "shape": list(c.weights.shape),
                "weight_exp": int(c.weight_exp),
                "graded": bool(c.graded),
                "num_message_bits": GRADED_MESSAGE_BITS if c.graded else 0,
                "delay": 1,
                "lava_process": "Sparse",
            }
        )
        if lava_unit(src).vector_payload:  # weights are per node; payloads are d-wide vectors
            conns[-1]["payload_width"] = int(src.scalars["width"])
            conns[-1]["lava_process"] = "Sparse kron(W^T, I_d) (graded) + Sparse pattern (flags)"
    save_arrays(out / WEIGHTS_FILE, BUNDLE_KIND, arrays, {"bundle_version": BUNDLE_VERSION})
    meta = {
        "kind": BUNDLE_KIND,
        "bundle_version": BUNDLE_VERSION,
        "atomspark_version": _atomspark_version(),
        "arithmetic": net.arithmetic,
        "select_tag": SELECT_TAG[net.arithmetic],
        "populations": pops,
        "projections": conns,
        "weights_sha256": hashlib.sha256((out / WEIGHTS_FILE).read_bytes()).hexdigest(),
        "hardware_run": hardware_run_config(net),
    }
    atomic_write_text(out / META_FILE, json.dumps(meta, indent=2))
    atomic_write_text(out / ENTRY_FILE, _ENTRY_SOURCE)
    return out


def load_bundle(out_dir: str | Path) -> LavaNet:
    """Read a bundle written by export_lava; a missing file, checksum mismatch, or missing
    field/array raises an AtomsparkError naming what is wrong."""
    out = Path(out_dir)
    for name in (META_FILE, WEIGHTS_FILE, ENTRY_FILE):
        if not (out / name).is_file():
            raise AtomsparkError(f"bundle {out}: incomplete, {name} is missing")
    if (out / META_FILE).stat().st_size > META_LIMIT:
        raise AtomsparkError(f"bundle {out}: {META_FILE} is larger than {META_LIMIT} bytes")
    try:
        meta = json.loads((out / META_FILE).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise AtomsparkError(f"bundle {out}: {META_FILE} is not valid JSON ({exc})") from exc
    if not isinstance(meta, dict) or meta.get("kind") != BUNDLE_KIND:
        raise AtomsparkError(f"bundle {out}: {META_FILE} is not an atomspark Lava bundle")
    if meta.get("bundle_version") != BUNDLE_VERSION:
        raise AtomsparkError(
            f"bundle {out}: version {meta.get('bundle_version')!r}, this reads {BUNDLE_VERSION}"
        )
    digest = hashlib.sha256((out / WEIGHTS_FILE).read_bytes()).hexdigest()
    if digest != meta.get("weights_sha256"):
        raise AtomsparkError(f"bundle {out}: {WEIGHTS_FILE} is corrupt (checksum mismatch)")
    arithmetic = meta.get("arithmetic")
    if arithmetic not in ARITHMETIC:
        raise AtomsparkError(f"bundle {out}: arithmetic must be one of {ARITHMETIC}")
    for key in ("populations", "projections"):
        if not isinstance(meta.get(key), list):
            raise AtomsparkError(f"bundle {out}: {META_FILE} {key} must be a list")
    arrays, _ = load_arrays(out / WEIGHTS_FILE, BUNDLE_KIND, accept=is_bundle_array)
    pops = []
    for i, p in enumerate(meta["populations"]):
        p = check_population_fields(out, i, p, arithmetic)
        pop_arrays = {}
        for key in p["arrays"]:
            arr = _array(arrays, f"pop{i}_{key}", out)
            pop_arrays[key] = check_array_values(out, f"pop{i}_{key}", arr, arithmetic)
        pops.append(
            LavaPopulation(
                p["name"], p["model"], arithmetic, p["size"], dict(p["scalars"]), pop_arrays
            )
        )
    sizes = {p.name: p.size for p in pops}
    if len(sizes) != len(pops):
        raise AtomsparkError(f"bundle {out}: population names must be unique")
    for p in pops:
        lava_unit(p)  # a kind this version cannot run is one clear error
    conns = []
    for i, c in enumerate(meta["projections"]):
        weights = checked_weights(out, i, c, sizes, arrays, arithmetic)
        conns.append(
            LavaConnection(c["source"], c["target"], weights, c["weight_exp"], c["graded"])
        )
    net = LavaNet(pops, conns)
    check_bundle_graph(out, net)
    return net


def _array(arrays: dict, key: str, out: Path) -> np.ndarray:
    if key not in arrays:
        raise AtomsparkError(f"bundle {out}: {WEIGHTS_FILE} lacks array {key!r}")
    return arrays[key]


def run_bundle_cli(bundle_dir: Path, argv: list[str]) -> int:
    """Entry point of run_bundle.py: run the bundle on Lava, print event counts, save outputs."""
    parser = argparse.ArgumentParser(description="Run an atomspark Lava bundle on Loihi2SimCfg")
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--out", type=Path, default=None, help="save outputs (.npz)")
    parser.add_argument(
        "--verify", action="store_true", help="compare with the engine and the NumPy reference"
    )
    parser.add_argument(
        "--loihi2",
        action="store_true",
        help="run on a Loihi 2 system (Loihi2HwCfg, needs lava-loihi; untested by atomspark)",
    )
    args = parser.parse_args(argv)
    try:
        return _run_bundle(bundle_dir, args)
    except AtomsparkError as exc:
        print(f"run_bundle.py: error: {exc}", file=sys.stderr)
        return 2
    except ImportError as exc:
        if (exc.name or "").split(".")[0] != "lava":
            raise
        print(
            f"run_bundle.py: error: Lava is not installed ({exc}); install lava-nc 0.10 in this "
            "environment to run the bundle",
            file=sys.stderr,
        )
        return 2


def _run_bundle(bundle_dir: Path, args: argparse.Namespace) -> int:
    if args.steps < 1:
        raise AtomsparkError(f"--steps: must be >= 1, got {args.steps}")
    net = load_bundle(bundle_dir)
    if args.loihi2:
        print(f"[bundle] Loihi2HwCfg: {hardware_run_config(net)['note']}")
    outputs = run_lava(net, args.steps, loihi2=args.loihi2)
    for name, count in event_counts(net, outputs).items():
        print(f"{name}: {count} events in {args.steps} steps")
    if args.out is not None:
        np.savez(args.out, **outputs)
    if args.verify:
        errors = compare_outputs(outputs, reference_run(net, args.steps))
        engine, _ = compare_with_engine(to_graph(net), net, outputs, args.steps)
        tol = 0.0 if net.arithmetic == "fixed" else FLOAT_TOLERANCE
        print(f"verify against the NumPy reference: max |error| {errors} (tolerance {tol})")
        print(f"verify against the engine: max |error| {engine} (tolerance {tol})")
        worst = list(errors.values()) + list(engine.values())
        return 0 if all(e <= tol for e in worst) else 1
    return 0
